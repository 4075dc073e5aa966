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
    for c0 in range(0, Tt, block_k):
        cs = slice(c0, min(c0 + block_k, Tt))
        for r0 in range(0, T, block_q):
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
    return {"D": D, "P": P, "dP": dP, "dS": dS, "dq": dq, "dk": dk, "dv": dv}
