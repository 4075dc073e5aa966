#!/usr/bin/env python3
"""make_golden.py — independent reference for the attention core's golden file.

Writes tests/golden/attention_cases.json: a list of attention specs (exactly the JSON that
ap::trace_json takes, see src/api/api.h) with the expected trace of each, computed here in
float64 numpy straight from the semantics in src/core/attention/attention.h. It does not read or share any
code with the C++ implementation; the C++ native tests and the wasm Node tests both compare
against its output (|a - b| <= tol * (1 + |b|), tol given per case).

Inputs are written as short decimals; the C++ reads them as float32, so this script rounds every
input to float32 first and then computes in float64. The naive softmax is the exception: its
overflow is a float32 effect, so exp and the row sum are taken in float32 to decide it.

Run (needs numpy; /usr/bin/python3 has it):
    python3 tests/golden/make_golden.py      # from the repository root; rewrites the JSON
Output is deterministic: same script, same file, byte for byte.
"""

import json
import math
import os

import numpy as np

import ref_flash_mla as ref  # FlashAttention's tiles and MLA (same directory)

F32_EXP_MAX = float(np.log(np.float32(np.finfo(np.float32).max)))  # ≈ 88.7228


# ----------------------------------------------------------------------------------------------
# The reference forward pass.

def f32(a):
    """Input as the C++ sees it: float32-rounded, then widened to float64 for the arithmetic."""
    return np.asarray(a, dtype=np.float64).astype(np.float32).astype(np.float64)


def causal_mask(T, T_total, base, causal, variant):
    m = np.zeros((T, T_total))
    if causal:
        for i in range(T):
            for j in range(T_total):
                if (j > i + base) if variant == "strict" else (j >= i + base):
                    m[i, j] = -np.inf
    return m


def window_mask(spec, T, T_total, base):
    """Sliding window w with s sinks: the query at p = base + i also loses key j when
    p - j >= w (j older than the last w positions), unless j < s."""
    m = np.zeros((T, T_total))
    w = spec.get("window")
    if w:
        s = spec.get("sinks", 0)
        for i in range(T):
            for j in range(T_total):
                if (base + i) - j >= w and j >= s:
                    m[i, j] = -np.inf
    return m


def softmax_row_stable(row):
    if np.all(np.isneginf(row)):
        return np.zeros_like(row), "empty"
    e = np.exp(row - row.max())
    return e / e.sum(), None


def softmax_row_naive(row):
    if np.all(np.isneginf(row)):
        return np.zeros_like(row), "empty"
    # Overflow is decided in float32, as the C++ computes; avoid values near the threshold so the
    # decision does not depend on the last bit of exp.
    finite = row[np.isfinite(row)]
    assert not np.any(np.abs(finite - F32_EXP_MAX) < 0.5), "naive case too close to overflow edge"
    with np.errstate(over="ignore"):
        e32 = np.exp(row.astype(np.float32))
        s32 = e32.sum(dtype=np.float32)
    if np.all(np.isfinite(e32)) and np.isfinite(s32):
        e = np.exp(row)  # no overflow: the float64 value is the reference
        return e / e.sum(), None
    # Only state what is certain: every unmasked entry overflows → inf/inf = nan everywhere
    # (masked entries: 0/inf = 0 — we require there are none, so the whole row is nan).
    assert np.all(np.isposinf(e32)), "naive case with partial overflow: result not stated reliably"
    return np.full_like(row, np.nan), "overflow"


def rope_setup(spec, head_dim, T, T_total, base):
    """RoPE from its definition: pair i of the first d_rot dimensions, read as the complex number
    a + ib, is multiplied by e^(i·position·θ_i), θ_i = rope_base^(-2i/d_rot). Pairs are
    (2i, 2i+1) interleaved, (i, i + d_rot/2) halves. Returns None when rope is off."""
    pairing = spec.get("rope", "none")
    if pairing == "none":
        return None
    d_rot = spec.get("rope_dims", head_dim)
    rope_base = float(np.float32(spec.get("rope_base", 10000)))
    theta = np.array([rope_base ** (-2.0 * i / d_rot) for i in range(d_rot // 2)])
    q_pos = np.arange(base, base + T, dtype=np.float64)
    k_pos = np.arange(T_total, dtype=np.float64)
    return {"pairing": pairing, "base": rope_base, "dims": d_rot, "theta": theta,
            "q_positions": q_pos, "k_positions": k_pos,
            "q_angles": np.outer(q_pos, theta), "k_angles": np.outer(k_pos, theta)}


def rope_pairs(pairing, d_rot):
    half = d_rot // 2
    if pairing == "interleaved":
        return np.arange(0, d_rot, 2), np.arange(1, d_rot, 2)
    return np.arange(half), np.arange(half, d_rot)


def rope_turn(m, angles, pairing, d_rot):
    """Each row r of m multiplied, pair by pair, by e^(i·angles[r]) (negative angles turn back)."""
    a, b = rope_pairs(pairing, d_rot)
    z = (m[:, a] + 1j * m[:, b]) * np.exp(1j * angles)
    out = m.copy()
    out[:, a], out[:, b] = z.real, z.imag
    return out


def alibi_setup(spec, n_head, T, T_total, base):
    """ALiBi: slopes m_h (the paper's 2^(-8h/n_head), h = 1..n_head, or the spec's own list) and
    per head the bias -m_h (p_i - p_j) between query position p_i = base + i and key j."""
    if not spec.get("alibi", False):
        return None
    if "alibi_slopes" in spec:
        slopes = f32(spec["alibi_slopes"]).reshape(-1)
    else:
        slopes = np.array([2.0 ** (-8.0 * h / n_head) for h in range(1, n_head + 1)])
    distance = (base + np.arange(T))[:, None] - np.arange(T_total)[None, :]
    return {"slopes": slopes, "bias": [-m * distance for m in slopes]}


def mla_setup(spec):
    """MLA's float32-rounded weights by name, the mask (causal and window) and the ALiBi biases."""
    x = f32(spec["x"])
    base, T_total = spec.get("base", 0), x.shape[0]
    T = T_total - base
    mask = (causal_mask(T, T_total, base, spec.get("causal", False), spec.get("mask", "strict")) +
            window_mask(spec, T, T_total, base))
    alibi = alibi_setup(spec, spec.get("n_head", 1), T, T_total, base)
    W = {name: f32(spec[name]) for name in ref.MLA_WEIGHTS if name in spec}
    return W, mask, alibi["bias"] if alibi else None


def mla_attention(spec):
    """Multi-head latent attention (ref_flash_mla.mla) under the same mask, window and ALiBi."""
    W, mask, alibi_bias = mla_setup(spec)
    _, trace = ref.mla(spec, W, mask, alibi_bias)
    if "flash_block_q" in spec:
        trace["flash"] = ref.flash_result(spec, trace["heads"], W.get("W_o"), W.get("b_o"))
    return trace


def attention(spec):
    if "W_dkv" in spec:
        return mla_attention(spec)
    n_head = spec.get("n_head", 1)
    causal = spec.get("causal", False)
    variant = spec.get("mask", "strict")
    base = spec.get("base", 0)
    scale = spec.get("scale", True)
    naive = spec.get("softmax", "stable") == "naive"

    def bias(name, width):
        return f32(spec[name]) if name in spec else np.zeros(width)

    if "x" in spec:
        x = f32(spec["x"])
        T_total = x.shape[0]
        T = T_total - base
        W_q, W_k, W_v = f32(spec["W_q"]), f32(spec["W_k"]), f32(spec["W_v"])
        Q = x[base:] @ W_q + bias("b_q", W_q.shape[1])
        K = x @ W_k + bias("b_k", W_k.shape[1])
        V = x @ W_v + bias("b_v", W_v.shape[1])
    else:
        Q, K, V = f32(spec["Q"]), f32(spec["K"]), f32(spec["V"])
        T, T_total = Q.shape[0], K.shape[0]
        assert T_total == T + base
    # Grouped-query attention: n_kv key/value heads, each read by a group of n_head / n_kv query
    # heads (query head h reads kv head h // group); n_kv = n_head is plain multi-head attention.
    n_kv = spec.get("n_kv_head", n_head)
    group = n_head // n_kv
    assert n_head % n_kv == 0 and Q.shape[1] % n_head == 0 and V.shape[1] % n_kv == 0
    head_dim = Q.shape[1] // n_head
    assert K.shape[1] == n_kv * head_dim
    d_v = V.shape[1] // n_kv
    scale_factor = 1.0 / math.sqrt(head_dim) if scale else 1.0

    mask = causal_mask(T, T_total, base, causal, variant) + window_mask(spec, T, T_total, base)
    rope = rope_setup(spec, head_dim, T, T_total, base)
    alibi = alibi_setup(spec, n_head, T, T_total, base)
    heads, contexts, empty_rows, overflow_rows = [], [], [], []
    for h in range(n_head):
        q = Q[:, h * head_dim:(h + 1) * head_dim]
        kv = h // group
        k = K[:, kv * head_dim:(kv + 1) * head_dim]
        v = V[:, kv * d_v:(kv + 1) * d_v]
        extra = {}
        if rope:
            extra["q_rot"] = rope_turn(q, rope["q_angles"], rope["pairing"], rope["dims"])
            extra["k_rot"] = rope_turn(k, rope["k_angles"], rope["pairing"], rope["dims"])
            scores = extra["q_rot"] @ extra["k_rot"].T
        else:
            scores = q @ k.T
        scaled = scores / math.sqrt(head_dim) if scale else scores.copy()
        if alibi:
            extra["bias"] = alibi["bias"][h]
            masked = scaled + alibi["bias"][h] + mask
        else:
            masked = scaled + mask
        weights = np.zeros_like(masked)
        for i in range(T):
            weights[i], status = (softmax_row_naive if naive else softmax_row_stable)(masked[i])
            if status == "empty":
                empty_rows.append({"head": h, "row": i})
            elif status == "overflow":
                overflow_rows.append({"head": h, "row": i})
        with np.errstate(invalid="ignore"):
            context = weights @ v
        heads.append({"q": q, "k": k, "v": v, **extra, "scores": scores, "scaled": scaled,
                      "masked": masked, "weights": weights,
                      "weight_row_sums": weights.sum(axis=1), "context": context})
        contexts.append(context)
    concat = np.concatenate(contexts, axis=1)
    if "W_o" in spec:
        W_o = f32(spec["W_o"])
        with np.errstate(invalid="ignore"):
            out = concat @ W_o + bias("b_o", W_o.shape[1])
    else:
        out = concat
    flash = None
    if "flash_block_q" in spec:  # FlashAttention's tiles over the same masked scores and v
        flash = ref.flash_result(spec, heads, f32(spec["W_o"]) if "W_o" in spec else None,
                                 f32(spec["b_o"]) if "b_o" in spec else None)
    result = {"T": T, "T_total": T_total, "base": base, "n_head": n_head, "head_dim": head_dim,
              "d_v": d_v, "d_out": out.shape[1], "scale_factor": scale_factor,
              "mask": mask, "heads": heads, "concat": concat, "out": out,
              "empty_rows": empty_rows, "overflow_rows": overflow_rows}
    if rope:
        result["rope"] = rope
    if alibi:
        result["alibi"] = {"slopes": alibi["slopes"]}
    if flash:
        result["flash"] = flash
    if "n_kv_head" in spec:
        result["kv_heads"] = {"n_kv_head": n_kv, "group_size": group,
                              "kv_head": [h // group for h in range(n_head)],
                              "cache_floats": T_total * n_kv * (head_dim + d_v),
                              "cache_floats_mha": T_total * n_head * (head_dim + d_v)}
    return result


# ----------------------------------------------------------------------------------------------
# The cases.

def rnd(seed, rows, cols, lo=-1.0, hi=1.0, decimals=3):
    """Random matrix rounded to short decimals; the rounded decimals are what the spec holds."""
    rng = np.random.default_rng(seed)
    return [[round(float(v), decimals) for v in row] for row in rng.uniform(lo, hi, (rows, cols))]


I2 = [[1, 0], [0, 1]]

# causal_4x4: hand-written, small, non-trivial.
X4 = [[0.5, -1, 0.25, 0], [1, 0.5, -0.5, 0.75], [-0.25, 0.5, 1, -1], [0, 1.5, 0.5, 0.25]]
WQ4 = [[1, 0, 0.5, 0], [0, 1, 0, -0.5], [0.5, 0, 1, 0], [0, 0.25, 0, 1]]
WK4 = [[0.5, 0.5, 0, 0], [0, 1, 0.25, 0], [-0.5, 0, 1, 0.5], [0, 0, -0.25, 1]]
WV4 = [[1, 2, 0, -1], [0, 1, 1, 0], [-1, 0, 0.5, 1], [0.5, 0, 0, 2]]

# kv cache: 5 tokens, d_model 3.
X5 = [[0.1, 0.2, -0.3], [0.5, -0.4, 0.25], [-0.6, 0.1, 0.8], [0.3, 0.9, -0.2], [-0.7, -0.5, 0.4]]
WQ3 = [[0.5, -0.25, 1], [0.75, 0.5, 0], [-0.5, 1, 0.25]]
WK3 = [[1, 0.25, -0.5], [0, 0.5, 0.75], [0.25, -1, 0.5]]
WV3 = [[0.2, -0.4, 0.6], [1, 0.3, -0.1], [-0.5, 0.7, 0.9]]

CASES = [
    {
        "name": "identity_2x2",
        # q = k = v = I, so scores = I, scaled = I/√2 and row 0 of the weights is
        # [e^(1/√2), 1] / (e^(1/√2) + 1) = [2.02811498 / 3.02811498, 1 / 3.02811498]
        # = [0.669762, 0.330238]; row 1 is the mirror. out = weights·I·I = weights.
        # (Not 0.6699: that figure, seen in some write-ups, is a rounding slip.)
        "description": "tutorial worked example: x = W_q = W_k = W_v = W_o = I (2x2); "
                       "weights = out = [[0.669762, 0.330238], [0.330238, 0.669762]]",
        "spec": {"x": I2, "W_q": I2, "W_k": I2, "W_v": I2, "W_o": I2},
    },
    {
        "name": "two_token_dk2",
        # scores = [[1, 1], [0, 1]]: row 0 ties → [0.5, 0.5], context [2, 3];
        # row 1 → [0.330238, 0.669762], context 0.330238·[1,2] + 0.669762·[3,4].
        "description": "classic two-token example, d_k = 2, Q, K, V given directly",
        "spec": {"Q": [[1, 0], [0, 1]], "K": [[1, 0], [1, 1]], "V": [[1, 2], [3, 4]]},
    },
    {
        "name": "causal_4x4",
        "description": "4 tokens, d_model 4, causal strict: mask 0 on/below the diagonal, -inf above",
        "spec": {"x": X4, "W_q": WQ4, "W_k": WK4, "W_v": WV4, "causal": True, "mask": "strict"},
    },
    {
        "name": "inclusive_mask_first_row_empty",
        "description": "causal, mask inclusive (j >= i), base 0: row 0 sees no key, so its weights "
                       "and context are 0 and it is listed in empty_rows",
        "spec": {"x": X4[:3], "W_q": WQ4, "W_k": WK4, "W_v": WV4, "causal": True,
                 "mask": "inclusive"},
    },
    {
        "name": "inclusive_mask_two_heads",
        "description": "mask inclusive with n_head 2: base 0 → row 0 empty in both heads; "
                       "rows 1.. see strictly earlier keys",
        "spec": {"Q": [[1, 0, 0.5, -1], [0.5, 1, 0, 0.25], [-0.5, 0.5, 1, 1]],
                 "K": [[0.25, 1, -1, 0], [1, -0.5, 0.5, 0.5], [0, 0.75, 0.25, -0.5]],
                 "V": [[1, 0], [0, 1], [0.5, -0.5]],
                 "n_head": 2, "causal": True, "mask": "inclusive"},
    },
    {
        "name": "kv_cache_base2",
        "description": "x mode, T_total 5, base 2 → 3 queries (positions 2..4), causal strict; "
                       "every field of query i equals row i+2 of kv_cache_full",
        "spec": {"x": X5, "W_q": WQ3, "W_k": WK3, "W_v": WV3, "causal": True, "base": 2},
    },
    {
        "name": "kv_cache_full",
        "description": "the full causal forward matching kv_cache_base2 (base 0, all 5 rows)",
        "spec": {"x": X5, "W_q": WQ3, "W_k": WK3, "W_v": WV3, "causal": True, "base": 0},
    },
    {
        "name": "multi_head_2",
        "description": "n_head 2, d_model 4, x 3x4, with biases b_q b_k b_v b_o and W_o",
        "spec": {
            "x": [[0.5, -0.25, 1, 0.125], [-1, 0.75, 0.5, -0.5], [0.25, 0.5, -0.75, 1]],
            "W_q": [[0.5, -0.5, 0.25, 1], [1, 0.25, -0.75, 0], [0, 0.5, 0.5, -0.25],
                    [-0.5, 0, 1, 0.75]],
            "W_k": [[0.25, 0.75, -0.5, 0], [-1, 0.5, 0, 0.25], [0.5, 0, 0.75, -0.5],
                    [0, -0.25, 0.5, 1]],
            "W_v": [[1, 0.5, -0.5, 0.25], [0, -1, 0.75, 0.5], [0.25, 0.25, 0, -1],
                    [-0.75, 0, 1, 0.5]],
            "W_o": [[0.5, 0, -0.25, 1], [0.25, 1, 0.5, 0], [-1, 0.5, 0, 0.75],
                    [0, -0.5, 1, 0.25]],
            "b_q": [0.1, -0.2, 0.3, 0], "b_k": [0, 0.5, -0.1, 0.2],
            "b_v": [-0.3, 0.1, 0, 0.4], "b_o": [0.05, -0.05, 0.1, 0],
            "n_head": 2,
        },
    },
    {
        "name": "multi_head_4_causal",
        "description": "n_head 4, d_model 8 (head_dim 2), T 5, causal strict, W_o; values from "
                       "default_rng(4x) rounded to 2 decimals",
        "spec": {"x": rnd(41, 5, 8, decimals=2), "W_q": rnd(42, 8, 8, decimals=2),
                 "W_k": rnd(43, 8, 8, decimals=2), "W_v": rnd(44, 8, 8, decimals=2),
                 "W_o": rnd(45, 8, 8, decimals=2), "n_head": 4, "causal": True},
    },
    {
        "name": "no_scale",
        "description": "scale false: scaled = scores (no 1/sqrt(head_dim)); head_dim 4",
        "spec": {"Q": [[0.5, 1, -0.5, 0], [1, 0, 0.25, -0.5], [0, -1, 0.5, 1]],
                 "K": [[1, 0.5, 0, -0.25], [-0.5, 1, 0.75, 0], [0.25, 0, -1, 0.5]],
                 "V": [[1, -1], [0.5, 2], [-0.5, 0.25]], "scale": False},
    },
    {
        "name": "large_1000_stable",
        # head_dim 4 → scaled = scores / 2, exact in float32: rows are [1000, 1001, 999],
        # [1000, 999, 1001], [1000, 1000, 1000].
        "description": "scaled scores about 1000 (1000, 1001, 999): the stable softmax subtracts "
                       "the row max and stays finite",
        "spec": {"Q": [[1000, 1, 0, 0], [1000, -1, 0, 0], [1000, 0, 0, 0]],
                 "K": [[2, 0, 0, 0], [2, 2, 0, 0], [2, -2, 0, 0]],
                 "V": [[1, 0], [0, 1], [1, 1]], "softmax": "stable"},
    },
    {
        "name": "large_1000_naive",
        "description": "same as large_1000_stable with the naive softmax: float32 exp overflows to "
                       "inf, inf/inf = nan in every row; all rows listed in overflow_rows",
        "spec": {"Q": [[1000, 1, 0, 0], [1000, -1, 0, 0], [1000, 0, 0, 0]],
                 "K": [[2, 0, 0, 0], [2, 2, 0, 0], [2, -2, 0, 0]],
                 "V": [[1, 0], [0, 1], [1, 1]], "softmax": "naive"},
    },
    {
        "name": "naive_no_overflow",
        "description": "naive softmax on small scores: no overflow, weights equal the stable ones",
        "spec": {"x": X4, "W_q": WQ4, "W_k": WK4, "W_v": WV4, "causal": True,
                 "softmax": "naive"},
    },
    {
        "name": "rectangular",
        "description": "x mode, d_model 3, W_q/W_k 3x2 (head_dim 2), W_v 3x4 (d_v 4), "
                       "W_o 4x5 (d_out 5) with b_o",
        "spec": {
            "x": [[1, 0.5, -0.5], [0, -1, 0.25], [0.75, 0.25, 1], [-0.5, 1, 0]],
            "W_q": [[0.5, -1], [1, 0.25], [-0.25, 0.75]],
            "W_k": [[1, 0.5], [-0.5, 0], [0.25, 1]],
            "W_v": [[1, 0, -0.5, 0.25], [0.5, 1, 0, -1], [0, 0.75, 1, 0.5]],
            "W_o": [[0.5, 0, 1, -0.5, 0.25], [0, 1, -0.25, 0.5, 0], [1, -0.5, 0, 0.25, 0.75],
                    [-0.25, 0.5, 0.5, 0, 1]],
            "b_o": [0.1, 0, -0.1, 0.2, 0],
        },
    },
    {
        "name": "random_x_3head_causal",
        "description": "default_rng(7..): n_head 3, d_model 6, T 4, causal, all biases and W_o "
                       "(6x5); values rounded to 3 decimals",
        "spec": {"x": rnd(7, 4, 6, -2, 2), "W_q": rnd(8, 6, 6), "W_k": rnd(9, 6, 6),
                 "W_v": rnd(10, 6, 9), "W_o": rnd(11, 9, 5),
                 "b_q": rnd(12, 1, 6)[0], "b_k": rnd(13, 1, 6)[0], "b_v": rnd(14, 1, 9)[0],
                 "b_o": rnd(15, 1, 5)[0], "n_head": 3, "causal": True},
    },
    {
        "name": "random_qkv_2head_base3",
        "description": "default_rng(20..): Q, K, V given, n_head 2, head_dim 3, d_v 2, "
                       "T 2 queries after base 3 cached keys (T_total 5), causal strict",
        "spec": {"Q": rnd(20, 2, 6, -1.5, 1.5), "K": rnd(21, 5, 6, -1.5, 1.5),
                 "V": rnd(22, 5, 4, -1.5, 1.5), "n_head": 2, "causal": True, "base": 3},
    },
    {
        "name": "random_qkv_noncausal",
        "description": "default_rng(30..): Q, K, V given, n_head 1, T 6, head_dim 5, d_v 3, "
                       "no mask; values rounded to 3 decimals",
        "spec": {"Q": rnd(30, 6, 5, -2, 2), "K": rnd(31, 6, 5, -2, 2), "V": rnd(32, 6, 3, -2, 2)},
    },
    # ---- RoPE
    {
        "name": "rope_interleaved_kv_cache",
        "description": "RoPE, interleaved pairs (2i, 2i+1), base 10000, x mode, n_head 2, head_dim 4, "
                       "T_total 5 with base 2 (queries at positions 2..4), causal, W_o; "
                       "default_rng(50..)",
        "spec": {"x": rnd(50, 5, 4), "W_q": rnd(51, 4, 8), "W_k": rnd(52, 4, 8),
                 "W_v": rnd(53, 4, 4), "W_o": rnd(54, 4, 3), "n_head": 2, "causal": True,
                 "base": 2, "rope": "interleaved"},
    },
    {
        "name": "rope_halves_partial",
        "description": "RoPE, GPT-NeoX halves, partial: rope_dims 4 of head_dim 6 (dims 4, 5 pass "
                       "unrotated), rope_base 100, Q K V given, T 3 after base 1; default_rng(55..)",
        "spec": {"Q": rnd(55, 3, 6, -2, 2), "K": rnd(56, 4, 6, -2, 2), "V": rnd(57, 4, 2),
                 "base": 1, "causal": True, "rope": "halves", "rope_dims": 4, "rope_base": 100},
    },
    {
        "name": "rope_halves_two_heads_full",
        "description": "RoPE halves over all of head_dim 4, n_head 2, no mask, biases; "
                       "default_rng(58..)",
        "spec": {"x": rnd(58, 4, 3), "W_q": rnd(59, 3, 8), "W_k": rnd(60, 3, 8), "W_v": rnd(61, 3, 4),
                 "b_q": rnd(62, 1, 8)[0], "b_k": rnd(63, 1, 8)[0], "n_head": 2, "rope": "halves"},
    },
    {
        "name": "rope_error_odd_dims",
        "description": "rope_dims 3 is odd: refused, naming rope_dims",
        "spec": {"Q": [[1, 0, 0, 1]], "K": [[0, 1, 1, 0]], "V": [[1]], "rope": "interleaved",
                 "rope_dims": 3},
        "expect": {"ok": False, "field": "rope_dims"},
    },
    {
        "name": "rope_error_base_without_rope",
        "description": "rope_base given while rope is off: refused, naming rope_base",
        "spec": {"Q": [[1, 0]], "K": [[0, 1]], "V": [[1]], "rope_base": 500},
        "expect": {"ok": False, "field": "rope_base"},
    },
    # ---- ALiBi
    {
        "name": "alibi_geometric_4head_causal",
        "description": "ALiBi with the paper's slopes 2^(-8h/4) = 1/4, 1/16, 1/64, 1/256, n_head 4, "
                       "head_dim 2, x mode, T_total 5 with base 1, causal; default_rng(64..)",
        "spec": {"x": rnd(64, 5, 4), "W_q": rnd(65, 4, 8), "W_k": rnd(66, 4, 8), "W_v": rnd(67, 4, 8),
                 "W_o": rnd(68, 8, 4), "n_head": 4, "causal": True, "base": 1, "alibi": True},
    },
    {
        "name": "alibi_own_slopes_noncausal",
        "description": "ALiBi with the slopes [0.5, 1.5] given, n_head 2, no mask: keys after the "
                       "query get a positive bias -m(i - j) > 0; Q K V given; default_rng(69..)",
        "spec": {"Q": rnd(69, 4, 4), "K": rnd(70, 4, 4), "V": rnd(71, 4, 4), "n_head": 2,
                 "alibi": True, "alibi_slopes": [0.5, 1.5]},
    },
    {
        "name": "alibi_with_rope_inclusive",
        "description": "ALiBi (geometric, n_head 2) with RoPE interleaved and the inclusive mask, "
                       "base 0: row 0 empty in both heads; default_rng(72..)",
        "spec": {"Q": rnd(72, 3, 8), "K": rnd(73, 3, 8), "V": rnd(74, 3, 2), "n_head": 2,
                 "causal": True, "mask": "inclusive", "alibi": True, "rope": "interleaved"},
    },
    {
        "name": "alibi_error_slope_count",
        "description": "alibi_slopes with 3 slopes for 2 heads: refused, naming alibi_slopes",
        "spec": {"Q": [[1, 0]], "K": [[0, 1]], "V": [[1, 1]], "n_head": 2, "alibi": True,
                 "alibi_slopes": [0.5, 0.25, 0.125]},
        "expect": {"ok": False, "field": "alibi_slopes"},
    },
    {
        "name": "alibi_error_slopes_without_alibi",
        "description": "alibi_slopes while alibi is off: refused, naming alibi_slopes",
        "spec": {"Q": [[1, 0]], "K": [[0, 1]], "V": [[1]], "alibi_slopes": [0.5]},
        "expect": {"ok": False, "field": "alibi_slopes"},
    },
    # ---- grouped-query and multi-query attention
    {
        "name": "gqa_4q_2kv_x_mode",
        "description": "grouped-query: n_head 4, n_kv_head 2 (heads 0,1 read kv 0; 2,3 read kv 1), "
                       "head_dim 2, d_v 3; W_k 4x4, W_v 4x6, W_o 12x4, causal, base 1, biases; "
                       "default_rng(75..)",
        "spec": {"x": rnd(75, 4, 4), "W_q": rnd(76, 4, 8), "W_k": rnd(77, 4, 4), "W_v": rnd(78, 4, 6),
                 "b_q": rnd(79, 1, 8)[0], "b_k": rnd(80, 1, 4)[0], "b_v": rnd(81, 1, 6)[0],
                 "W_o": rnd(82, 12, 4), "n_head": 4, "n_kv_head": 2, "causal": True, "base": 1},
    },
    {
        "name": "mqa_3q_1kv_qkv_rope_alibi",
        "description": "multi-query: n_head 3, n_kv_head 1 (K 4x2, V 4x2 shared by all heads), with "
                       "RoPE halves and ALiBi; Q K V given, base 1, causal; default_rng(83..)",
        "spec": {"Q": rnd(83, 3, 6), "K": rnd(84, 4, 2), "V": rnd(85, 4, 2), "n_head": 3,
                 "n_kv_head": 1, "causal": True, "base": 1, "rope": "halves", "alibi": True},
    },
    {
        "name": "gqa_error_not_dividing",
        "description": "n_kv_head 3 does not divide n_head 4: refused, naming n_kv_head",
        "spec": {"Q": [[1, 0, 0, 1]], "K": [[0, 1, 1]], "V": [[1, 1, 1]], "n_head": 4, "n_kv_head": 3},
        "expect": {"ok": False, "field": "n_kv_head"},
    },
    {
        "name": "gqa_error_k_width",
        "description": "n_head 4, n_kv_head 2, head_dim 1 but K has 4 columns (full MHA width): "
                       "refused, naming K",
        "spec": {"Q": [[1, 0, 0, 1]], "K": [[0, 1, 1, 0]], "V": [[1, 1]], "n_head": 4, "n_kv_head": 2},
        "expect": {"ok": False, "field": "K"},
    },
    # ---- sliding window and attention sinks
    {
        "name": "window3_kv_cache",
        "description": "sliding window 3, causal strict, x mode, T_total 6 with base 2: the query at "
                       "position p sees keys p-2..p; default_rng(86..)",
        "spec": {"x": rnd(86, 6, 4), "W_q": rnd(87, 4, 4), "W_k": rnd(88, 4, 4), "W_v": rnd(89, 4, 4),
                 "n_head": 2, "causal": True, "base": 2, "window": 3},
    },
    {
        "name": "window2_sinks1_gqa_rope",
        "description": "window 2 with 1 sink (key 0 always visible), n_head 2 with n_kv_head 1, "
                       "RoPE interleaved, Q K V given, T 6; default_rng(90..)",
        "spec": {"Q": rnd(90, 6, 4), "K": rnd(91, 6, 2), "V": rnd(92, 6, 2), "n_head": 2,
                 "n_kv_head": 1, "causal": True, "window": 2, "sinks": 1, "rope": "interleaved"},
    },
    {
        "name": "window1_inclusive_empty_rows",
        "description": "window 1 with the inclusive mask: a query would see keys p..p-1, nothing; "
                       "with 2 sinks rows 1.. see keys 0..1 only, row 0 stays empty; ALiBi on",
        "spec": {"Q": rnd(93, 4, 2), "K": rnd(94, 4, 2), "V": rnd(95, 4, 2), "causal": True,
                 "mask": "inclusive", "window": 1, "sinks": 2, "alibi": True},
    },
    # ---- FlashAttention's tiles
    {
        "name": "flash_16_tokens_causal",
        "description": "FlashAttention, 16 tokens in tiles of 4x4, n_head 2, causal, x mode with W_o: "
                       "tiles above the diagonal skipped, and a new maximum rescaling the partial "
                       "sums (alpha < 1); default_rng(120..), x spread 2",
        "spec": {"x": rnd(120, 16, 4, -2, 2), "W_q": rnd(121, 4, 4), "W_k": rnd(122, 4, 4),
                 "W_v": rnd(123, 4, 4), "W_o": rnd(124, 4, 3), "n_head": 2, "causal": True,
                 "flash_block_q": 4, "flash_block_k": 4},
    },
    {
        "name": "flash_uneven_window_alibi_mqa_rope",
        "description": "FlashAttention in 2x3 tiles (the last ones narrower) with a window of 3, "
                       "1 sink, ALiBi, multi-query (n_kv_head 1) and RoPE halves, T 5 after base 2; "
                       "default_rng(125..)",
        "spec": {"Q": rnd(125, 5, 4, -2, 2), "K": rnd(126, 7, 2, -2, 2), "V": rnd(127, 7, 3),
                 "n_head": 2, "n_kv_head": 1, "causal": True, "base": 2, "window": 3, "sinks": 1,
                 "alibi": True, "rope": "halves", "flash_block_q": 2, "flash_block_k": 3},
    },
    {
        "name": "flash_inclusive_empty_row",
        "description": "FlashAttention in 3x2 tiles with the inclusive mask at base 0: row 0 sees no "
                       "key, so its m stays -inf, l 0, L -inf and its context 0; default_rng(128..)",
        "spec": {"Q": rnd(128, 5, 2, -3, 3), "K": rnd(129, 5, 2, -3, 3), "V": rnd(130, 5, 2),
                 "causal": True, "mask": "inclusive", "flash_block_q": 3, "flash_block_k": 2},
    },
    {
        "name": "flash_error_one_block_size",
        "description": "flash_block_q without flash_block_k: refused, naming flash_block_k",
        "spec": {"Q": [[1, 0]], "K": [[0, 1]], "V": [[1]], "flash_block_q": 2},
        "expect": {"ok": False, "field": "flash_block_k"},
    },
    {
        "name": "flash_error_naive_softmax",
        "description": "FlashAttention with the naive softmax: refused (the online softmax is the "
                       "stable one), naming flash_block_q",
        "spec": {"Q": [[1, 0]], "K": [[0, 1]], "V": [[1]], "softmax": "naive", "flash_block_q": 1,
                 "flash_block_k": 1},
        "expect": {"ok": False, "field": "flash_block_q"},
    },
    # ---- multi-head latent attention (DeepSeek-V2)
    {
        "name": "mla_latent_rope_halves",
        "description": "MLA: latent d_c 3 from d_model 4, n_head 2 with d_nope 2 and a decoupled "
                       "RoPE part d_rope 2 (halves), causal, base 1, W_o; the absorbed form agrees",
        "spec": {"x": X4, "W_q": WQ4, "W_dkv": [[0.5, 0.5, 0], [0, 1, 0.25], [-0.5, 0, 1], [0, 0, -0.25]],
                 "W_uk": [[1, 0, 0.5, 0], [0, 1, 0, -0.5], [0.5, 0, 1, 0]],
                 "W_uv": [[1, 2, 0, -1], [0, 1, 1, 0], [-1, 0, 0.5, 1]],
                 "W_kr": [[0.3, -0.2], [0.1, 0.4], [-0.5, 0.2], [0.6, 0.1]],
                 "W_qr": [[0.2, 0.1, -0.3, 0.5], [0.4, -0.6, 0.2, 0.1], [0.1, 0.3, 0.5, -0.2],
                          [-0.4, 0.2, 0.1, 0.3]],
                 "W_o": WQ4, "n_head": 2, "causal": True, "base": 1, "rope": "halves"},
    },
    {
        "name": "mla_rank2_interleaved_window_alibi",
        "description": "MLA with a rank-2 latent (d_c 2 < d_model 6), n_head 4, d_nope 2, d_rope 2 "
                       "interleaved, d_v 3, window 4, ALiBi, T_total 6; default_rng(140..)",
        "spec": {"x": rnd(140, 6, 6), "W_q": rnd(141, 6, 8), "W_dkv": rnd(142, 6, 2),
                 "W_uk": rnd(143, 2, 8, -2, 2), "W_uv": rnd(144, 2, 12), "W_kr": rnd(145, 6, 2),
                 "W_qr": rnd(146, 6, 8), "n_head": 4, "causal": True, "window": 4, "alibi": True,
                 "rope": "interleaved"},
    },
    {
        "name": "mla_no_rope_flash",
        "description": "MLA without the rotary part (scores from the latent alone), no mask, in "
                       "FlashAttention tiles of 2x2, with W_o and b_o; default_rng(147..)",
        "spec": {"x": rnd(147, 5, 4), "W_q": rnd(148, 4, 4), "W_dkv": rnd(149, 4, 3),
                 "W_uk": rnd(150, 3, 4), "W_uv": rnd(151, 3, 4), "W_o": rnd(152, 4, 2),
                 "b_o": rnd(153, 1, 2)[0], "n_head": 2, "flash_block_q": 2, "flash_block_k": 2},
    },
    {
        "name": "mla_error_rope_without_kr",
        "description": "MLA with rope but no W_kr, W_qr: refused, naming rope (rotating the keys "
                       "made from the latent would break the absorbed form)",
        "spec": {"x": I2, "W_q": I2, "W_dkv": I2, "W_uk": I2, "W_uv": I2, "rope": "halves"},
        "expect": {"ok": False, "field": "rope"},
    },
    {
        "name": "mla_error_w_k_with_latent",
        "description": "W_k given with W_dkv: refused, naming W_k",
        "spec": {"x": I2, "W_q": I2, "W_k": I2, "W_dkv": I2, "W_uk": I2, "W_uv": I2},
        "expect": {"ok": False, "field": "W_k"},
    },
    {
        "name": "mla_error_w_uk_rows",
        "description": "W_uk with 3 rows for a latent of 2 (d_c): refused, naming W_uk",
        "spec": {"x": I2, "W_q": I2, "W_dkv": I2, "W_uk": [[1, 0], [0, 1], [1, 1]], "W_uv": I2},
        "expect": {"ok": False, "field": "W_uk"},
    },
    {
        "name": "window_error_not_causal",
        "description": "window without causal: refused, naming window",
        "spec": {"Q": [[1, 0]], "K": [[0, 1]], "V": [[1]], "window": 2},
        "expect": {"ok": False, "field": "window"},
    },
    {
        "name": "window_error_sinks_without_window",
        "description": "sinks without window: refused, naming sinks",
        "spec": {"Q": [[1, 0]], "K": [[0, 1]], "V": [[1]], "causal": True, "sinks": 1},
        "expect": {"ok": False, "field": "sinks"},
    },
]


# ----------------------------------------------------------------------------------------------
# Output: stable, lists of scalars on one line, non-finite numbers as strings.

def num(v):
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    r = float("%.10g" % v)
    if r == 0:
        return 0
    if r == int(r) and abs(r) < 1e15:
        return int(r)
    return r


def plain(obj):
    if isinstance(obj, np.ndarray):
        return plain(obj.tolist())
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, bool) or isinstance(obj, str) or obj is None:
        return obj
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    return num(obj)


def dump(obj, indent=0):
    pad = "  " * indent
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [pad + "  " + json.dumps(k) + ": " + dump(v, indent + 1) for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list):
        if all(not isinstance(v, (list, dict)) for v in obj):
            return "[" + ", ".join(json.dumps(v) for v in obj) + "]"
        if all(isinstance(v, dict) and all(not isinstance(w, (list, dict)) for w in v.values())
               for v in obj):  # e.g. empty_rows: one small object per line
            return "[" + ", ".join(json.dumps(v, separators=(", ", ": ")) for v in obj) + "]"
        items = [pad + "  " + dump(v, indent + 1) for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(obj)


def main():
    cases = []
    for c in CASES:
        cases.append({"name": c["name"], "description": c["description"], "spec": c["spec"],
                      "expect": c.get("expect") or attention(c["spec"]), "tolerance": c.get("tolerance", 1e-5)})
    doc = plain({
        "about": "Golden attention traces from tests/golden/make_golden.py (float64 numpy, "
                 "independent of the C++ core); compare |a-b| <= tolerance*(1+|b|).",
        "cases": cases,
    })
    text = dump(doc) + "\n"
    json.loads(text)  # must be valid JSON
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention_cases.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote %s: %d cases" % (path, len(cases)))


if __name__ == "__main__":
    main()
