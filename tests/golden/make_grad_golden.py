#!/usr/bin/env python3
"""make_grad_golden.py — independent reference for the BACKWARD pass of attention.

Writes tests/golden/attention_grad_cases.json: attention specs (the forward spec of
ap::trace_json, see src/api/api.h, plus the upstream gradient) with the expected gradient of every
step, computed here in float64 numpy from the forward semantics in src/core/attention/attention.h. It does
not read or share code with the C++ core. It reuses the forward reference and the output helpers
of make_golden.py (same directory), and most forward specs of attention_cases.json by name.

The upstream gradient (spec keys; give at most one of "d_out" and "loss"):
    "d_out": matrix (T x d_out)         L = sum_ij d_out_ij * out_ij
    "loss": "sum"                       L = sum(out), d_out = ones          (the default)
    "loss": "mse", "target": (T x d_out) L = mean((out - target)^2), d_out = 2 (out - target) / numel

Backward (names are "d_" + the forward name):
    d_W_o = concat^T d_out,  d_b_o = colsum(d_out),  d_concat = d_out W_o^T  (or d_out, no W_o)
    per head h:  d_context = columns of d_concat for h
                 d_weights = d_context v^T,     d_v = weights^T d_context
                 d_scaled_ij = A_ij (G_ij - sum_k G_ik A_ik),  G = d_weights, A = weights
                     (mask is a constant add: d_masked = d_scaled; masked entries and empty rows
                     have A = 0, so they get exactly 0)
                 d_scores = d_scaled * scale_factor
                 d_q = d_scores k,               d_k = d_scores^T q
    d_Q, d_K, d_V = the heads side by side
    x mode: d_W_q = x[base:]^T d_Q, d_W_k = x^T d_K, d_W_v = x^T d_V, d_b_* = colsum (if present),
            d_x = d_K W_k^T + d_V W_v^T, plus d_Q W_q^T added into rows base..T_total-1.

Every gradient (leaves and every intermediate) is checked inside this script against central
finite differences in float64 (eps 1e-6) of a staged forward pass; the script fails if any
|analytic - fd| / max(1, |analytic|, |fd|) reaches 1e-6. It also runs the same backward in
float32 to measure the error a float32 implementation makes against this reference.

Run (needs numpy; /usr/bin/python3 has it):
    python3 tests/golden/make_grad_golden.py     # from anywhere; rewrites the JSON
Output is deterministic: same script, same file, byte for byte.
"""

import copy
import json
import math
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in tests/golden
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_golden as mg  # noqa: E402  (forward reference, f32, rnd, plain, dump)
import ref_flash_mla as ref  # noqa: E402  (FlashAttention-2's backward)

FD_EPS = 1e-6
FD_LIMIT = 1e-6
SNAP = 1e-13  # |v| below this is float64 noise around an exact 0 and is written as 0


# ----------------------------------------------------------------------------------------------
# A staged forward pass. Any intermediate can be overridden (to take finite differences with
# respect to it); with no overrides it is the forward of make_golden.attention (checked below).

def softmax_rows(m, dtype):
    w = np.zeros_like(m)
    for i in range(m.shape[0]):
        row = m[i]
        if np.all(np.isneginf(row)):
            continue  # empty row: weights 0
        e = np.exp(row - row.max())
        w[i] = e / e.sum(dtype=dtype)
    return w


def setup(spec, dtype=np.float64):
    """Inputs (float32-rounded, then cast to dtype) and the options of a spec."""
    def inp(name):
        return mg.f32(spec[name]).astype(dtype)
    s = {"dtype": dtype, "n_head": spec.get("n_head", 1), "base": spec.get("base", 0),
         "causal": spec.get("causal", False), "variant": spec.get("mask", "strict"),
         "scale": spec.get("scale", True), "x_mode": "x" in spec}
    assert spec.get("softmax", "stable") == "stable", "backward cases use the stable softmax"
    assert not ("b_o" in spec and "W_o" not in spec), "b_o without W_o is not stated"
    assert not ("d_out" in spec and "loss" in spec), "give d_out or loss, not both"
    P = {}
    names = ["x", "W_q", "W_k", "W_v", "b_q", "b_k", "b_v"] if s["x_mode"] else ["Q", "K", "V"]
    for name in names + ["W_o", "b_o"]:
        if name in spec:
            P[name] = inp(name)
    if s["x_mode"]:
        s["T_total"] = P["x"].shape[0]
        s["T"] = s["T_total"] - s["base"]
        hd_cols, dv_cols = P["W_q"].shape[1], P["W_v"].shape[1]
    else:
        s["T"], s["T_total"] = P["Q"].shape[0], P["K"].shape[0]
        assert s["T_total"] == s["T"] + s["base"]
        hd_cols, dv_cols = P["Q"].shape[1], P["V"].shape[1]
    s["n_kv"] = spec.get("n_kv_head", s["n_head"])
    s["group"] = s["n_head"] // s["n_kv"]
    s["head_dim"] = hd_cols // s["n_head"]
    s["d_v"] = dv_cols // s["n_kv"]
    s["scale_factor"] = (1.0 / math.sqrt(s["head_dim"])) if s["scale"] else 1.0
    s["mask"] = (mg.causal_mask(s["T"], s["T_total"], s["base"], s["causal"], s["variant"]) +
                 mg.window_mask(spec, s["T"], s["T_total"], s["base"])).astype(dtype)
    s["rope"] = mg.rope_setup(spec, s["head_dim"], s["T"], s["T_total"], s["base"])
    s["alibi"] = mg.alibi_setup(spec, s["n_head"], s["T"], s["T_total"], s["base"])
    s["loss"] = "d_out" if "d_out" in spec else spec.get("loss", "sum")
    assert s["loss"] in ("d_out", "sum", "mse")
    if s["loss"] == "d_out":
        s["D"] = inp("d_out")
    if s["loss"] == "mse":
        s["target"] = inp("target")
    return s, P


def forward(s, P, ov=None):
    """Loss and every intermediate. ov: {name or (head, name): array} replaces that stage."""
    ov = ov or {}
    dt = s["dtype"]
    sf = dt(s["scale_factor"])

    def stage(key, compute):
        return ov[key] if key in ov else compute()

    if s["x_mode"]:
        x, b = P["x"], s["base"]
        def bias(n, w):
            return P[n] if n in P else np.zeros(w, dtype=dt)
        Q = stage("Q", lambda: x[b:] @ P["W_q"] + bias("b_q", P["W_q"].shape[1]))
        K = stage("K", lambda: x @ P["W_k"] + bias("b_k", P["W_k"].shape[1]))
        V = stage("V", lambda: x @ P["W_v"] + bias("b_v", P["W_v"].shape[1]))
    else:
        Q, K, V = stage("Q", lambda: P["Q"]), stage("K", lambda: P["K"]), stage("V", lambda: P["V"])
    hd, dv = s["head_dim"], s["d_v"]
    heads = []
    for h in range(s["n_head"]):
        q = stage((h, "q"), lambda: Q[:, h * hd:(h + 1) * hd])
        kv = h // s["group"]  # the key/value head query head h reads
        k = stage((h, "k"), lambda: K[:, kv * hd:(kv + 1) * hd])
        v = stage((h, "v"), lambda: V[:, kv * dv:(kv + 1) * dv])
        rope, extra = s["rope"], {}
        qs, ks = q, k  # what the scores are taken from
        if rope:
            qs = extra["q_rot"] = stage((h, "q_rot"), lambda: mg.rope_turn(
                q, rope["q_angles"], rope["pairing"], rope["dims"]).astype(dt))
            ks = extra["k_rot"] = stage((h, "k_rot"), lambda: mg.rope_turn(
                k, rope["k_angles"], rope["pairing"], rope["dims"]).astype(dt))
        scores = stage((h, "scores"), lambda: qs @ ks.T)
        scaled = stage((h, "scaled"), lambda: scores * sf)
        masked = scaled + (s["alibi"]["bias"][h] if s["alibi"] else 0) + s["mask"]
        weights = stage((h, "weights"), lambda: softmax_rows(masked, dt))
        context = stage((h, "context"), lambda: weights @ v)
        heads.append({"q": q, "k": k, "v": v, **extra, "scores": scores, "scaled": scaled,
                      "masked": masked, "weights": weights, "context": context})
    concat = stage("concat", lambda: np.concatenate([hh["context"] for hh in heads], axis=1))
    if "W_o" in P:
        out = stage("out", lambda: concat @ P["W_o"] + (P["b_o"] if "b_o" in P else 0))
    else:
        out = stage("out", lambda: concat)
    if s["loss"] == "sum":
        L = out.sum()
    elif s["loss"] == "d_out":
        L = (s["D"] * out).sum()
    else:
        L = ((out - s["target"]) ** 2).mean()
    return L, {"Q": Q, "K": K, "V": V, "heads": heads, "concat": concat, "out": out}


# ----------------------------------------------------------------------------------------------
# The analytic backward.

def backward(s, P, F):
    dt = s["dtype"]
    out = F["out"]
    if s["loss"] == "sum":
        d_out = np.ones_like(out)
    elif s["loss"] == "d_out":
        d_out = s["D"].copy()
    else:
        d_out = dt(2) * (out - s["target"]) / dt(out.size)
    g = {"d_out": d_out}
    if "W_o" in P:
        g["d_W_o"] = F["concat"].T @ d_out
        if "b_o" in P:
            g["d_b_o"] = d_out.sum(axis=0)
        d_concat = d_out @ P["W_o"].T
    else:
        d_concat = d_out
    g["d_concat"] = d_concat
    hd, dv, sf = s["head_dim"], s["d_v"], dt(s["scale_factor"])
    g["heads"] = []
    for h, H in enumerate(F["heads"]):
        A = H["weights"]
        d_context = d_concat[:, h * dv:(h + 1) * dv]
        d_weights = d_context @ H["v"].T
        d_v = A.T @ d_context
        d_scaled = A * (d_weights - (d_weights * A).sum(axis=1, keepdims=True))
        d_scores = d_scaled * sf
        d_q = d_scores @ H.get("k_rot", H["k"])  # the rotated k and q with RoPE
        d_k = d_scores.T @ H.get("q_rot", H["q"])
        extra = {}
        rope = s["rope"]
        if rope:  # q_rot = R q, R a rotation: d_q = R^T d_q_rot, the turn by the opposite angle
            extra = {"d_q_rot": d_q, "d_k_rot": d_k}
            d_q = mg.rope_turn(d_q, -rope["q_angles"], rope["pairing"], rope["dims"]).astype(dt)
            d_k = mg.rope_turn(d_k, -rope["k_angles"], rope["pairing"], rope["dims"]).astype(dt)
        g["heads"].append({"d_context": d_context, "d_weights": d_weights, "d_scaled": d_scaled,
                           "d_scores": d_scores, **extra, "d_q": d_q, "d_k": d_k, "d_v": d_v})
    g["d_Q"] = np.concatenate([hh["d_q"] for hh in g["heads"]], axis=1)
    for big, small in (("d_K", "d_k"), ("d_V", "d_v")):  # a kv head's gradient: its group's sum
        g[big] = np.concatenate([sum(g["heads"][h][small] for h in range(s["n_head"])
                                     if h // s["group"] == kv) for kv in range(s["n_kv"])], axis=1)
    if s["x_mode"]:
        x, b = P["x"], s["base"]
        g["d_W_q"] = x[b:].T @ g["d_Q"]
        g["d_W_k"] = x.T @ g["d_K"]
        g["d_W_v"] = x.T @ g["d_V"]
        for n, src in (("b_q", "d_Q"), ("b_k", "d_K"), ("b_v", "d_V")):
            if n in P:
                g["d_" + n] = g[src].sum(axis=0)
        d_x = g["d_K"] @ P["W_k"].T + g["d_V"] @ P["W_v"].T
        d_x[b:] += g["d_Q"] @ P["W_q"].T
        g["d_x"] = d_x
    return g


# ----------------------------------------------------------------------------------------------
# Finite-difference check of every gradient (float64, central, eps 1e-6).

def fd_grad(s, P, where, base_value):
    """dL/d(where) by central differences. where: ("P", name) or ("ov", key)."""
    grad = np.zeros_like(base_value)
    for idx in np.ndindex(base_value.shape):
        vals = []
        for sign in (+1, -1):
            t = base_value.copy()
            t[idx] += sign * FD_EPS
            if where[0] == "P":
                P2 = dict(P)
                P2[where[1]] = t
                vals.append(forward(s, P2)[0])
            else:
                vals.append(forward(s, P, {where[1]: t})[0])
        grad[idx] = (vals[0] - vals[1]) / (2 * FD_EPS)
    return grad


def fd_check(s, P, F, g):
    """Max |a - fd| / max(1, |a|, |fd|) over every gradient; also returns per-key maxima."""
    checks = []
    for name in P:
        checks.append(("d_" + name, ("P", name), P[name], g["d_" + name]))
    for big in ("Q", "K", "V"):
        if s["x_mode"]:  # in qkv mode these are leaves, already covered above
            checks.append(("d_" + big, ("ov", big), F[big], g["d_" + big]))
    checks.append(("d_concat", ("ov", "concat"), F["concat"], g["d_concat"]))
    checks.append(("d_out", ("ov", "out"), F["out"], g["d_out"]))
    for h, H in enumerate(F["heads"]):
        for n in ("q", "k", "v", "q_rot", "k_rot", "scores", "scaled", "weights", "context"):
            if n not in H:
                continue
            checks.append(("heads[%d].d_%s" % (h, n), ("ov", (h, n)), H[n], g["heads"][h]["d_" + n]))
    worst, per = 0.0, {}
    for label, where, value, analytic in checks:
        fd = fd_grad(s, P, where, value)
        err = np.abs(analytic - fd) / np.maximum(1.0, np.maximum(np.abs(analytic), np.abs(fd)))
        e = float(err.max()) if err.size else 0.0
        per[label] = e
        worst = max(worst, e)
        assert e < FD_LIMIT, "%s: analytic vs finite differences %.3g" % (label, e)
    return worst, per


# ----------------------------------------------------------------------------------------------
# The cases: forward specs of attention_cases.json (by name) plus the upstream gradient.

FWD = {c["name"]: c["spec"] for c in mg.CASES}


def fwd(name, **extra):
    spec = copy.deepcopy(FWD[name])
    spec.update(extra)
    return spec


# identity_2x2, by hand. x = W_q = W_k = W_v = W_o = I, so Q = K = V = I, scores = I,
# scaled = I/√2 and A = weights = out = [[a, b], [b, a]] with
#     a = e^(1/√2) / (e^(1/√2) + 1) = 0.6697615493,  b = 1 - a = 0.3302384507,
#     ab = a(1 - a) = 0.2211810164 (the softmax derivative of a two-entry row).
#
# (1) loss "sum": d_out = ones; d_W_o = concatᵀ·ones = column sums of A = all ones (a + b = 1);
#     d_concat = ones·W_oᵀ = ones = d_context; d_weights = d_context·vᵀ = ones;
#     d_v = Aᵀ·ones = ones; d_scaled_ij = A_ij (1 - Σ_k A_ik) = 0, so d_scores = d_q = d_k = 0 —
#     the sum of the outputs is Σ rows of A·(V W_o) = Σ rows of A = T = 2 whatever the scores are,
#     since V·W_o = I has equal row sums. L = 2; d_Q = d_K = d_W_q = d_W_k = 0;
#     d_V = d_W_v = d_x = ones.
# (2) d_out = [[1, 0], [0, 0]], i.e. L = out_00 = a:
#     d_concat = d_context = d_weights = [[1, 0], [0, 0]]   (W_o = I, v = I)
#     d_W_o = Aᵀ·d_out = [[a, 0], [b, 0]],  d_v = Aᵀ·d_context = [[a, 0], [b, 0]]
#     d_scaled row 0 = [a(1 - a), b(0 - a)] = [ab, -ab]; row 1 = 0 (its G is 0)
#     d_scores = d_scaled/√2 = [[c, -c], [0, 0]] with c = ab/√2 = 0.1563985965
#     d_q = d_scores·k = [[c, -c], [0, 0]];  d_k = d_scoresᵀ·q = [[c, 0], [-c, 0]]
#     d_W_q = d_Q = d_q, d_W_k = d_K = d_k, d_W_v = d_V = d_v (x = I)
#     d_x = d_Q + d_K + d_V (all W = I) = [[a + 2c, -c], [b - c, 0]].
IDENTITY_A = math.exp(1 / math.sqrt(2)) / (math.exp(1 / math.sqrt(2)) + 1)


def check_identity(name, g, L):
    a = IDENTITY_A
    b = 1 - a
    c = a * b / math.sqrt(2)
    one, zero = np.ones((2, 2)), np.zeros((2, 2))
    if name == "identity_2x2_sum":
        want = {"d_out": one, "d_W_o": one, "d_concat": one, "d_Q": zero, "d_K": zero,
                "d_V": one, "d_W_q": zero, "d_W_k": zero, "d_W_v": one, "d_x": one}
        head = {"d_context": one, "d_weights": one, "d_v": one, "d_scaled": zero,
                "d_scores": zero, "d_q": zero, "d_k": zero}
        want_L = 2.0
    else:
        e00 = np.array([[1.0, 0], [0, 0]])
        dv = np.array([[a, 0], [b, 0]])
        dq = np.array([[c, -c], [0, 0]])
        dk = np.array([[c, 0], [-c, 0]])
        want = {"d_out": e00, "d_W_o": dv, "d_concat": e00, "d_Q": dq, "d_K": dk, "d_V": dv,
                "d_W_q": dq, "d_W_k": dk, "d_W_v": dv,
                "d_x": np.array([[a + 2 * c, -c], [b - c, 0]])}
        head = {"d_context": e00, "d_weights": e00, "d_v": dv,
                "d_scaled": np.array([[a * b, -a * b], [0, 0]]), "d_scores": dq, "d_q": dq,
                "d_k": dk}
        want_L = a
    assert abs(L - want_L) < 1e-14
    for k, v in want.items():
        assert np.allclose(g[k], v, rtol=0, atol=1e-14), (name, k)
    for k, v in head.items():
        assert np.allclose(g["heads"][0][k], v, rtol=0, atol=1e-14), (name, k)


def target_near_out(name, seed):
    """An mse target within ±1 of the forward output (rounded to 2 decimals), so that d_out stays
    of order 0.1 and a float32 implementation keeps a wide margin below the tolerance."""
    out = mg.attention(FWD[name])["out"]
    noise = np.array(mg.rnd(seed, *out.shape, decimals=2))
    return [[round(float(v), 2) for v in row] for row in out + noise]


CASES = [
    {
        "name": "identity_2x2_sum",
        "description": "tutorial worked example (x = all W = I, 2x2) with loss sum: L = 2 for any "
                       "scores, so d_scaled = d_scores = d_Q = d_K = 0 and d_V = d_x = ones "
                       "(derivation in make_grad_golden.py)",
        "spec": fwd("identity_2x2", loss="sum"),
    },
    {
        "name": "identity_2x2_dout",
        "description": "tutorial example with d_out = [[1,0],[0,0]] (L = out_00 = a = 0.669762): "
                       "d_scaled = [[ab,-ab],[0,0]], ab = 0.221181; d_x = [[a+2c,-c],[b-c,0]], "
                       "c = ab/sqrt(2)",
        "spec": fwd("identity_2x2", d_out=[[1, 0], [0, 0]]),
    },
    {
        "name": "two_token_dk2",
        "description": "classic two-token example, Q K V given; no d_out or loss key, so the "
                       "default loss sum applies (d_out = ones)",
        "spec": fwd("two_token_dk2"),
    },
    {
        "name": "causal_4x4",
        "description": "4 tokens, d_model 4, causal strict, x mode; d_out from default_rng(101) "
                       "rounded to 2 decimals; masked entries (above the diagonal) of d_scaled "
                       "are exactly 0",
        "spec": fwd("causal_4x4", d_out=mg.rnd(101, 4, 4, decimals=2)),
    },
    {
        "name": "inclusive_mask_first_row_empty",
        "description": "causal inclusive, base 0: row 0 sees no key (weights 0), so row 0 of "
                       "d_scaled, d_scores and d_Q is exactly 0 and d_v gets nothing from it; "
                       "d_out from default_rng(102)",
        "spec": fwd("inclusive_mask_first_row_empty", d_out=mg.rnd(102, 3, 4, decimals=2)),
    },
    {
        "name": "multi_head_2_mse",
        "description": "multi_head_2 (n_head 2, biases b_q b_k b_v b_o, W_o) with loss mse: "
                       "L = mean((out - target)^2), d_out = 2 (out - target) / 12; target from "
                       "default_rng(103)",
        "spec": fwd("multi_head_2", loss="mse", target=mg.rnd(103, 3, 4, decimals=2)),
    },
    {
        "name": "multi_head_4_causal",
        "description": "n_head 4, head_dim 2, T 5, causal strict, W_o (no biases); d_out from "
                       "default_rng(104)",
        "spec": fwd("multi_head_4_causal", d_out=mg.rnd(104, 5, 8, decimals=2)),
    },
    {
        "name": "kv_cache_base2",
        "description": "x mode, T_total 5, base 2, causal strict; d_out (3x3) from "
                       "default_rng(105). Rows 0..1 of d_x get only key/value contributions "
                       "(d_K W_k^T + d_V W_v^T); d_W_q uses x[2:] only",
        "spec": fwd("kv_cache_base2", d_out=mg.rnd(105, 3, 3, decimals=2)),
    },
    {
        "name": "no_scale",
        "description": "scale false: d_scores = d_scaled (scale_factor 1); head_dim 4; d_out "
                       "from default_rng(106)",
        "spec": fwd("no_scale", d_out=mg.rnd(106, 3, 2, decimals=2)),
    },
    {
        "name": "rectangular",
        "description": "x mode, head_dim 2, d_v 4, W_o 4x5 with b_o (d_out width 5); d_out from "
                       "default_rng(107)",
        "spec": fwd("rectangular", d_out=mg.rnd(107, 4, 5, decimals=2)),
    },
    {
        "name": "random_qkv_2head_base3",
        "description": "Q K V given, n_head 2, head_dim 3, d_v 2, T 2 after base 3 cached keys, "
                       "causal strict; d_out from default_rng(108); d_K, d_V have T_total = 5 rows",
        "spec": fwd("random_qkv_2head_base3", d_out=mg.rnd(108, 2, 4, decimals=2)),
    },
    {
        "name": "random_x_3head_causal_mse",
        "description": "n_head 3, d_model 6, head_dim 2, d_v 3, all biases, W_o 9x5, causal; loss mse "
                       "with target = out + default_rng(109) noise in ±1, rounded to 2 decimals; "
                       "d_b_k is 0 (a key bias shifts each score row by a constant)",
        "spec": fwd("random_x_3head_causal", loss="mse",
                    target=target_near_out("random_x_3head_causal", 109)),
    },
    {
        "name": "rope_interleaved_kv_cache",
        "description": "RoPE interleaved, n_head 2, base 2, causal, W_o; d_out from default_rng(110); "
                       "d_q = R^T d_q_rot (the turn back by each query's angles)",
        "spec": fwd("rope_interleaved_kv_cache", d_out=mg.rnd(110, 3, 3, decimals=2)),
    },
    {
        "name": "rope_halves_partial",
        "description": "RoPE halves, rope_dims 4 of head_dim 6, rope_base 100, Q K V given, base 1; "
                       "d_out from default_rng(111); dims 4, 5 of d_q equal those of d_q_rot",
        "spec": fwd("rope_halves_partial", d_out=mg.rnd(111, 3, 2, decimals=2)),
    },
    {
        "name": "rope_halves_two_heads_full",
        "description": "RoPE halves, n_head 2, biases b_q b_k, loss sum",
        "spec": fwd("rope_halves_two_heads_full", loss="sum"),
    },
    {
        "name": "alibi_geometric_4head_causal",
        "description": "ALiBi, geometric slopes, n_head 4, base 1, causal, W_o; d_out from "
                       "default_rng(112); the bias is a constant add, so d_scaled is also d_masked",
        "spec": fwd("alibi_geometric_4head_causal", d_out=mg.rnd(112, 4, 4, decimals=2)),
    },
    {
        "name": "alibi_with_rope_inclusive",
        "description": "ALiBi and RoPE interleaved, inclusive mask (row 0 empty: 0 gradients); "
                       "d_out from default_rng(113)",
        "spec": fwd("alibi_with_rope_inclusive", d_out=mg.rnd(113, 3, 2, decimals=2)),
    },
    {
        "name": "gqa_4q_2kv_x_mode",
        "description": "grouped-query, n_head 4, n_kv_head 2, biases, W_o, base 1; d_out from "
                       "default_rng(114); d_K and d_V sum the gradients of each group's two heads",
        "spec": fwd("gqa_4q_2kv_x_mode", d_out=mg.rnd(114, 3, 4, decimals=2)),
    },
    {
        "name": "mqa_3q_1kv_qkv_rope_alibi",
        "description": "multi-query (1 kv head for 3 query heads) with RoPE and ALiBi; loss sum",
        "spec": fwd("mqa_3q_1kv_qkv_rope_alibi", loss="sum"),
    },
    {
        "name": "window2_sinks1_gqa_rope",
        "description": "window 2, 1 sink, MQA, RoPE; d_out from default_rng(115); keys outside the "
                       "window get exactly 0 in d_scaled",
        "spec": fwd("window2_sinks1_gqa_rope", d_out=mg.rnd(115, 6, 4, decimals=2)),
    },
    {
        "name": "window3_kv_cache",
        "description": "window 3, base 2, x mode; loss sum",
        "spec": fwd("window3_kv_cache", loss="sum"),
    },
    {
        "name": "flash_16_tokens_causal",
        "description": "FlashAttention-2's backward over 4x4 tiles (D, P recomputed from L); the "
                       "gradients are the plain ones; d_out from default_rng(131)",
        "spec": fwd("flash_16_tokens_causal", d_out=mg.rnd(131, 16, 3, decimals=2)),
    },
    {
        "name": "flash_uneven_window_alibi_mqa_rope",
        "description": "FlashAttention-2's backward in 2x3 tiles with window, sink, ALiBi, MQA and "
                       "RoPE; loss sum",
        "spec": fwd("flash_uneven_window_alibi_mqa_rope", loss="sum"),
    },
]


# Multi-head latent attention: gradients of L = Σ d_out ⊙ out with respect to every weight, by
# central differences of ref_flash_mla.mla in float64 (the definition itself, no analytic backward).
MLA_CASES = [
    {
        "name": "mla_latent_rope_halves",
        "description": "MLA with the decoupled RoPE part: the gradients of x, W_q, W_dkv, W_uk, W_uv, "
                       "W_kr, W_qr and W_o; d_out from default_rng(160)",
        "spec": fwd("mla_latent_rope_halves", d_out=mg.rnd(160, 3, 4, decimals=2)),
    },
    {
        "name": "mla_rank2_interleaved_window_alibi",
        "description": "MLA, rank-2 latent, 4 heads, window and ALiBi; d_out from default_rng(161)",
        "spec": fwd("mla_rank2_interleaved_window_alibi", d_out=mg.rnd(161, 6, 12, decimals=2)),
    },
    {
        "name": "mla_no_rope_flash",
        "description": "MLA without the rotary part, in FlashAttention tiles (the backward's "
                       "recomputation); d_out from default_rng(162)",
        "spec": fwd("mla_no_rope_flash", d_out=mg.rnd(162, 5, 2, decimals=2)),
    },
]


def run_mla_case(c):
    spec = c["spec"]
    W, mask, alibi_bias = mg.mla_setup(spec)
    L, grads = ref.mla_loss_grads(spec, W, mask, alibi_bias, mg.f32(spec["d_out"]))
    return {"loss": L, "grads": {name: snap(g) for name, g in grads.items()}}


# ----------------------------------------------------------------------------------------------

KEY_ORDER = ["loss", "d_out", "d_W_o", "d_b_o", "d_concat", "heads", "d_Q", "d_K", "d_V", "d_x",
             "d_W_q", "d_W_k", "d_W_v", "d_b_q", "d_b_k", "d_b_v"]
HEAD_ORDER = ["d_context", "d_weights", "d_scaled", "d_scores", "d_q_rot", "d_k_rot", "d_q", "d_k",
              "d_v"]


def snap(a):
    a = np.asarray(a, dtype=np.float64)
    return np.where(np.abs(a) < SNAP, 0.0, a)


def f32_error(spec, g64, L64):
    """Worst |a - b| / (1 + |b|) of the same backward run in float32 against the float64 one."""
    s, P = setup(spec, np.float32)
    L, F = forward(s, P)
    g = backward(s, P, F)
    worst = abs(float(L) - L64) / (1 + abs(L64))
    for k in g:
        if k == "heads":
            for h, hh in enumerate(g["heads"]):
                for n in hh:
                    b = g64["heads"][h][n]
                    worst = max(worst, float((np.abs(hh[n] - b) / (1 + np.abs(b))).max()))
        else:
            worst = max(worst, float((np.abs(g[k] - g64[k]) / (1 + np.abs(g64[k]))).max()))
    return worst


def run_case(c):
    spec = c["spec"]
    s, P = setup(spec)
    L, F = forward(s, P)
    # The staged forward is the forward of make_golden.py (up to the last bits: scores·(1/√d)
    # here, scores/√d there).
    ref = mg.attention({k: v for k, v in spec.items() if k not in ("d_out", "loss", "target")})
    assert np.allclose(ref["out"], F["out"], rtol=0, atol=1e-14)
    for h in range(s["n_head"]):
        assert np.allclose(ref["heads"][h]["weights"], F["heads"][h]["weights"], rtol=0, atol=1e-14)
        assert np.array_equal(ref["heads"][h]["weights"] == 0, F["heads"][h]["weights"] == 0)
    g = backward(s, P, F)
    worst, per = fd_check(s, P, F, g)

    # Masked entries and empty rows get exactly 0.
    for h, hh in enumerate(g["heads"]):
        A = F["heads"][h]["weights"]
        assert np.all(hh["d_scaled"][np.isneginf(s["mask"])] == 0)
        for i in range(s["T"]):
            if np.all(np.isneginf(s["mask"][i])):
                assert np.all(A[i] == 0)
                assert np.all(hh["d_scaled"][i] == 0) and np.all(hh["d_scores"][i] == 0)
                assert np.all(hh["d_q"][i] == 0)
    if s["x_mode"]:
        b = s["base"]
        kv = g["d_K"] @ P["W_k"].T + g["d_V"] @ P["W_v"].T
        assert np.allclose(g["d_x"][:b], kv[:b], rtol=0, atol=1e-15)
    if c["name"].startswith("identity_2x2"):
        check_identity(c["name"], g, L)
    flash = flash_grads(spec, s, F, g) if "flash_block_q" in spec else None

    g["loss"] = L
    # The file mirrors backward_json's answer: {"loss", "grads": {forward name: gradient}}, i.e.
    # the "d_" prefix used here is dropped ("d_W_q" -> grads.W_q, "d_out" -> grads.out).
    expect = {}
    for k in KEY_ORDER:
        if k == "heads":
            expect["heads"] = [{n[2:]: snap(hh[n]) for n in HEAD_ORDER if n in hh} for hh in g["heads"]]
        elif k in g:
            expect[k if k == "loss" else k[2:]] = snap(g[k]) if k != "loss" else float(L)
    assert len(g) == len(expect)
    expect = {"loss": expect.pop("loss"), "grads": expect}
    if flash:  # FlashAttention-2's D and recomputed P, beside the gradients (equal to the plain ones)
        expect["grads"]["flash"] = flash
    return expect, worst, per, f32_error(spec, g, L), s, g


def flash_grads(spec, s, F, g):
    """FlashAttention-2's backward (ref_flash_mla.flash_backward) per head must give the plain
    backward's d_weights (dP), d_scaled (dS), d_v and d_q, d_k (before RoPE's turn back); returns
    the file's "flash" object: per head D and the recomputed P, and every tile's dV, dK, dQ so far."""
    heads, steps = [], []
    for h, hh in enumerate(F["heads"]):
        gh = g["heads"][h]
        _, _, _, lse, O = ref.flash_forward(hh["masked"], hh["v"], spec["flash_block_q"], spec["flash_block_k"])
        b = ref.flash_backward(hh["masked"], hh["v"], hh.get("q_rot", hh["q"]), hh.get("k_rot", hh["k"]), O, lse,
                               gh["d_context"], spec["flash_block_q"], spec["flash_block_k"], s["scale_factor"])
        pairs = [("P", hh["weights"]), ("dP", gh["d_weights"]), ("dS", gh["d_scaled"]), ("dv", gh["d_v"]),
                 ("dq", gh.get("d_q_rot", gh["d_q"])), ("dk", gh.get("d_k_rot", gh["d_k"]))]
        for name, plain in pairs:
            assert np.allclose(b[name], plain, rtol=0, atol=1e-12), "flash backward %s differs" % name
        heads.append({"D": snap(b["D"]), "P": snap(b["P"])})
        steps += [{"head": h, **{k: snap(v) if isinstance(v, np.ndarray) else v for k, v in st.items()}}
                  for st in b["steps"]]
    return {"heads": heads, "steps": steps}


def check_kv_cache_against_full():
    """kv_cache_base2's loss is kv_cache_full's with d_out rows 0..1 set to 0 (rows 2..4 of the
    full forward equal the cached one), so every leaf gradient must agree."""
    cached = next(c for c in CASES if c["name"] == "kv_cache_base2")["spec"]
    full = fwd("kv_cache_full", d_out=[[0, 0, 0], [0, 0, 0]] + cached["d_out"])
    s1, P1 = setup(cached)
    g1 = backward(s1, P1, forward(s1, P1)[1])
    s2, P2 = setup(full)
    g2 = backward(s2, P2, forward(s2, P2)[1])
    for k in ("d_x", "d_W_q", "d_W_k", "d_W_v", "d_K", "d_V"):
        assert np.allclose(g1[k], g2[k], rtol=0, atol=1e-14), k
    assert np.allclose(g1["d_Q"], g2["d_Q"][2:], rtol=0, atol=1e-14)
    assert np.all(g2["d_Q"][:2] == 0)


def main():
    cases, worst_fd, worst_f32 = [], 0.0, 0.0
    for c in CASES:
        expect, fd, per, e32, s, g = run_case(c)
        worst_fd, worst_f32 = max(worst_fd, fd), max(worst_f32, e32)
        print("%-34s L=%-12.6g fd %.2e  float32 %.2e  (worst fd: %s)"
              % (c["name"], expect["loss"], fd, e32, max(per, key=per.get)))
        cases.append({"name": c["name"], "description": c["description"], "spec": c["spec"],
                      "expect": expect, "tolerance": c.get("tolerance", 1e-5)})
    for c in MLA_CASES:
        expect = run_mla_case(c)
        print("%-34s L=%-12.6g (central differences of the definition)" % (c["name"], expect["loss"]))
        cases.append({"name": c["name"], "description": c["description"], "spec": c["spec"],
                      "expect": expect, "tolerance": c.get("tolerance", 1e-5)})
    check_kv_cache_against_full()
    doc = mg.plain({
        "about": "Golden attention gradients from tests/golden/make_grad_golden.py (float64 numpy, "
                 "independent of the C++ core, checked by central finite differences); compare "
                 "|a-b| <= tolerance*(1+|b|).",
        "cases": cases,
    })
    text = mg.dump(doc) + "\n"
    json.loads(text)  # must be valid JSON
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention_grad_cases.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote %s: %d cases; max finite-difference error %.2e (limit %.0e); "
          "max float32 error %.2e" % (path, len(cases), worst_fd, FD_LIMIT, worst_f32))


if __name__ == "__main__":
    main()
