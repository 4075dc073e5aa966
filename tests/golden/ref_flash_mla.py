"""ref_flash_mla.py — float64 NumPy references for FlashAttention's tiles and multi-head latent
attention, imported by make_golden.py (forward) and make_grad_golden.py (backward).

Written from the papers, not from the C++ core: FlashAttention-2 (Dao 2023), Algorithm 1 (forward,
online softmax per query block over key blocks) and Algorithm 2 (backward, P recomputed from the
logsumexp L); DeepSeek-V2 (2024), section 2.1.2-2.1.3 (low-rank key-value compression, decoupled
RoPE) and the absorbed form (W_UK folded into the query). Limits: a reference, slow and plain.
"""

import math

import numpy as np


# ----------------------------------------------------------------------------------------------
# FlashAttention-2, forward (Algorithm 1) and backward (Algorithm 2).

def flash_forward(S, v, block_q, block_k):
    """S: one head's masked scores (T, T_total), −inf where masked; v: (T_total, d_v).
    Returns the steps (state after each (query block, key block) tile) and the final m, l, L, O.
    A tile whose every entry is −inf is skipped (marked), changing nothing."""
    T, Tt = S.shape
    steps = []
    m_all, l_all, lse, O = np.full(T, -np.inf), np.zeros(T), np.full(T, -np.inf), np.zeros((T, v.shape[1]))
    for qb, r0 in enumerate(range(0, T, block_q)):
        rows = min(block_q, T - r0)
        m, l, o = np.full(rows, -np.inf), np.zeros(rows), np.zeros((rows, v.shape[1]))
        for kb, c0 in enumerate(range(0, Tt, block_k)):
            cols = min(block_k, Tt - c0)
            tile = S[r0:r0 + rows, c0:c0 + cols]
            skipped = bool(np.all(np.isneginf(tile)))
            alpha, p = np.ones(rows), np.zeros((rows, cols))
            if not skipped:
                m_new = np.maximum(m, tile.max(axis=1))
                seen = np.isfinite(m_new)  # rows that have met a visible key by now
                alpha[seen] = np.exp(m[seen] - m_new[seen])  # e^(−inf) = 0 before the first key
                p[seen] = np.exp(tile[seen] - m_new[seen, None])
                l = alpha * l + p.sum(axis=1)
                o = alpha[:, None] * o + p @ v[c0:c0 + cols]
                m = np.where(seen, m_new, m)
            steps.append({"q_block": qb, "k_block": kb, "r0": r0, "rows": rows, "c0": c0, "cols": cols,
                          "skipped": skipped, "m": m.copy(), "alpha": alpha, "l": l.copy(), "p": p,
                          "o": o.copy()})
        m_all[r0:r0 + rows], l_all[r0:r0 + rows] = m, l
        seen = l > 0
        lse[r0:r0 + rows][seen] = m[seen] + np.log(l[seen])
        O[r0:r0 + rows][seen] = o[seen] / l[seen, None]
    return steps, m_all, l_all, lse, O


def flash_result(spec, heads, W_o, b_o):
    """The trace's "flash" object for the per-head masked scores and v of the plain reference."""
    bq, bk = spec["flash_block_q"], spec["flash_block_k"]
    T, Tt = heads[0]["masked"].shape
    steps, per_head, contexts = [], [], []
    for h, hh in enumerate(heads):
        st, m, l, lse, O = flash_forward(hh["masked"], hh["v"], bq, bk)
        steps += [{"head": h, **s} for s in st]
        per_head.append({"m": m, "l": l, "lse": lse, "context": O})
        contexts.append(O)
        assert np.allclose(O, hh["context"], rtol=0, atol=1e-12), "tiles must give the plain context"
    concat = np.concatenate(contexts, axis=1)
    out = concat @ W_o + (b_o if b_o is not None else 0) if W_o is not None else concat
    return {"block_q": bq, "block_k": bk, "n_q_blocks": -(-T // bq), "n_k_blocks": -(-Tt // bk),
            "steps": steps, "heads": per_head, "concat": concat, "out": out, "within_bound": True}


def flash_backward(S, v, q, k, O, lse, dO, block_q, block_k, scale_factor):
    """Algorithm 2 for one head: D = rowsum(dO ∘ O); outer loop over key blocks, inner over query
    blocks: P = e^(S − L), dV += Pᵀ dO, dP = dO vᵀ, dS = P ∘ (dP − D), dQ += dS k·scale,
    dK += dSᵀ q·scale. q, k are what the scores are taken from (rotated with RoPE)."""
    T, Tt = S.shape
    D = (dO * O).sum(axis=1)
    P, dP, dS = np.zeros((T, Tt)), np.zeros((T, Tt)), np.zeros((T, Tt))
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    steps = []  # after each tile: the key block's dV, dK and the query block's dQ so far
    for kb, c0 in enumerate(range(0, Tt, block_k)):
        cs = slice(c0, min(c0 + block_k, Tt))
        for qb, r0 in enumerate(range(0, T, block_q)):
            rs = slice(r0, min(r0 + block_q, T))
            with np.errstate(invalid="ignore"):
                Pt = np.exp(S[rs, cs] - lse[rs, None])
            Pt[~np.isfinite(S[rs, cs]) | ~np.isfinite(lse[rs, None])] = 0.0  # masked, empty rows
            dPt = dO[rs] @ v[cs].T
            dSt = Pt * (dPt - D[rs, None])
            P[rs, cs], dP[rs, cs], dS[rs, cs] = Pt, dPt, dSt
            dv[cs] += Pt.T @ dO[rs]
            dq[rs] += dSt @ k[cs] * scale_factor
            dk[cs] += dSt.T @ q[rs] * scale_factor
            steps.append({"k_block": kb, "q_block": qb, "r0": r0, "rows": rs.stop - r0, "c0": c0,
                          "cols": cs.stop - c0, "dv": dv[cs].copy(), "dk": dk[cs].copy(), "dq": dq[rs].copy()})
    return {"D": D, "P": P, "dP": dP, "dS": dS, "dq": dq, "dk": dk, "dv": dv, "steps": steps}


# ----------------------------------------------------------------------------------------------
# Multi-head latent attention (DeepSeek-V2, eqs. 9-19 without the query's own compression),
# row-vector convention: c = x W_dkv, k_C = c W_uk, v = c W_uv, k_R = RoPE(x W_kr),
# q_C = x[base:] W_q, q_R = RoPE(x[base:] W_qr) per head; score = q_C,h·k_C,h + q_R,h·k_R over
# √(d_nope + d_rope); then the softmax over the masked scores, weights·v, and W_o.

def rope_rows(m, positions, pairing, rope_base):
    """Each row of m (n, d) turned pair by pair: pair i, read as a + ib, times e^(i·pos·θ_i),
    θ_i = rope_base^(−2i/d); pairs (2i, 2i+1) interleaved or (i, i + d/2) halves."""
    d = m.shape[1]
    theta = np.array([rope_base ** (-2.0 * i / d) for i in range(d // 2)])
    a, b = (np.arange(0, d, 2), np.arange(1, d, 2)) if pairing == "interleaved" else (np.arange(d // 2),
                                                                                     np.arange(d // 2, d))
    z = (m[:, a] + 1j * m[:, b]) * np.exp(1j * np.outer(positions, theta))
    out = m.copy()
    out[:, a], out[:, b] = z.real, z.imag
    return out


def mla(spec, W, mask, alibi_bias):
    """W: the float32-rounded inputs by name (x, W_q, W_dkv, W_uk, W_uv, optional W_kr, W_qr, W_o,
    b_o). mask: (T, T_total) 0 / −inf; alibi_bias: per head (T, T_total) or None.
    Returns (out, the trace fields the golden file states)."""
    H, base = spec.get("n_head", 1), spec.get("base", 0)
    x = W["x"]
    Tt = x.shape[0]
    T = Tt - base
    c = x @ W["W_dkv"]
    k_C, v_all, q_C = c @ W["W_uk"], c @ W["W_uv"], x[base:] @ W["W_q"]
    d_c, d_nope, d_v = c.shape[1], W["W_uk"].shape[1] // H, W["W_uv"].shape[1] // H
    d_rope = W["W_kr"].shape[1] if "W_kr" in W else 0
    rope_base = float(np.float32(spec.get("rope_base", 10000)))
    if d_rope:
        k_R, q_R = x @ W["W_kr"], x[base:] @ W["W_qr"]
        k_R_rot = rope_rows(k_R, np.arange(Tt), spec["rope"], rope_base)
    scale = 1.0 / math.sqrt(d_nope + d_rope) if spec.get("scale", True) else 1.0
    heads, mla_heads, contexts = [], [], []
    for h in range(H):
        qc, kc = q_C[:, h * d_nope:(h + 1) * d_nope], k_C[:, h * d_nope:(h + 1) * d_nope]
        v = v_all[:, h * d_v:(h + 1) * d_v]
        scores = qc @ kc.T
        hh, mh = {"q": qc, "k": kc}, {}
        if d_rope:
            qr = q_R[:, h * d_rope:(h + 1) * d_rope]
            qr_rot = rope_rows(qr, base + np.arange(T), spec["rope"], rope_base)
            scores_rope = qr_rot @ k_R_rot.T
            scores = scores + scores_rope
            hh = {"q": np.concatenate([qr, qc], axis=1), "k": np.concatenate([k_R, kc], axis=1)}
            mh["scores_rope"] = scores_rope
        masked = scores * scale + (alibi_bias[h] if alibi_bias is not None else 0) + mask
        weights = np.zeros_like(masked)
        for i in range(T):
            if not np.all(np.isneginf(masked[i])):
                e = np.exp(masked[i] - masked[i].max())
                weights[i] = e / e.sum()
        context = weights @ v
        # The absorbed form: W_uk folded into the query, W_uv applied after the weights meet c.
        W_uk_h, W_uv_h = W["W_uk"][:, h * d_nope:(h + 1) * d_nope], W["W_uv"][:, h * d_v:(h + 1) * d_v]
        q_latent = qc @ W_uk_h.T
        scores_latent = q_latent @ c.T
        scores_absorbed = scores_latent + mh.get("scores_rope", 0)
        context_latent = weights @ c
        context_absorbed = context_latent @ W_uv_h
        assert np.allclose(scores_absorbed, scores, rtol=0, atol=1e-12), "absorbed scores differ"
        assert np.allclose(context_absorbed, context, rtol=0, atol=1e-12), "absorbed context differs"
        heads.append({**hh, "v": v, "scores": scores, "masked": masked, "weights": weights, "context": context})
        mla_heads.append({"q_latent": q_latent, "scores_latent": scores_latent, **mh,
                          "scores_absorbed": scores_absorbed, "context_latent": context_latent,
                          "context_absorbed": context_absorbed})
        contexts.append(context)
    concat = np.concatenate(contexts, axis=1)
    out = concat @ W["W_o"] + W.get("b_o", 0) if "W_o" in W else concat
    m = {"d_c": d_c, "d_nope": d_nope, "d_rope": d_rope, "d_v": d_v, "c": c, "k_C": k_C, "q_C": q_C}
    if d_rope:
        m.update({"k_R": k_R, "q_R": q_R})
    m.update({"heads": mla_heads, "cache_floats": Tt * (d_c + d_rope),
              "cache_floats_mha": Tt * H * (d_nope + d_rope + d_v)})
    trace = {"mode": "mla", "T": T, "T_total": Tt, "n_head": H, "head_dim": d_nope + d_rope, "d_v": d_v,
             "d_out": out.shape[1], "mask": mask, "heads": heads, "concat": concat, "out": out, "mla": m}
    return out, trace


MLA_WEIGHTS = ["x", "W_q", "W_dkv", "W_uk", "W_uv", "W_kr", "W_qr", "W_o", "b_o"]


def mla_loss_grads(spec, W, mask, alibi_bias, d_out, eps=1e-6):
    """L = Σ d_out ⊙ out and dL/dW for every given weight by central differences in float64
    (no analytic backward here: the golden gradients are the definition's)."""
    L = float((d_out * mla(spec, W, mask, alibi_bias)[0]).sum())
    grads = {}
    for name in MLA_WEIGHTS:
        if name not in W:
            continue
        g = np.zeros_like(W[name])
        for idx in np.ndindex(W[name].shape):
            vals = []
            for sign in (1, -1):
                W2 = dict(W)
                W2[name] = W[name].copy()
                W2[name][idx] += sign * eps
                vals.append(float((d_out * mla(spec, W2, mask, alibi_bias)[0]).sum()))
            g[idx] = (vals[0] - vals[1]) / (2 * eps)
        grads[name] = g
    return L, grads
