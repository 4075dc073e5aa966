#!/usr/bin/env python3
"""interp_torch_test.py — ctest `interp_torch`: the interpretability calls against PyTorch.

    interp_torch_test.py GPT WORKDIR

`gpt api`'s lens, attribute, ablate, patch, attribution_patch and head_scores (core/interp/interp.h)
are checked against this file's own implementation of each tool, written with forward hooks on
scripts/gpt_torch.py's nanoGPT model (block inputs for the residual stream, ln_2's input for the
stream after attention, attn.c_proj's input for the heads' contexts z, mlp's output; a hook that
returns a value replaces the activation, as TransformerLens' hooks do), on models with random
weights (matrices N(0, 0.2²), LayerNorm γ = 1 + N(0, 0.1²), biases N(0, 0.1²)):
  - nanoGPT's shape: exact GELU, biases, ε 1e-5, the strict mask;
  - nanoGPT's bias=False, the inclusive mask (whose first row sees nothing) and the naive softmax;
  - GPT-2's layout: gelu_new (tanh), biases, ε 1e-6;
and gpt.h's variants, on tests/torch_models.py's own model of them through its hook points (RMSNorm's
scale frozen in the attribution as LayerNorm's is, with nothing subtracted): the Llama block (RoPE
halves, RMSNorm, SwiGLU, grouped-query, no bias); RoPE interleaved on part of each head with
multi-query attention and SwiGLU with biases; ALiBi with a sliding window; no positions, no biases;
and the Llama family's options: an untied lm_head (Llama), q/k/v biases alone with heads narrower
than n_embd/n_head (Qwen2), heads wider than n_embd/n_head with the q/k norm (Qwen3) — z is then
n_head·head_size wide and the unembedding is lm_head's.
For each, within TOL (both sides in float32, summing in other orders; a wrong layer, head, position
or sign differs by 1e-2 or more):
  - the lens: each reported top token's probability is PyTorch's for that token, the top-k values
    are PyTorch's k largest, and p(target) and the targets (the model's own predictions) agree;
  - the attribution: every part (embeddings, heads, MLPs, biases) with ln_f's scale frozen, and the
    parts summing to the logit difference, in both implementations;
  - ablation (zero and mean over reference texts): each head's and MLP's change in loss and metric;
  - activation patching: every cell's fraction recovered; and exactly, bit for bit: the residual
    entering ln_f patched at the last position recovers 1 and at any other position 0, and the
    embeddings patched where the prompts differ recover 1 (the patched run is the clean run), and
    the residual at any layer patched before that position recovers 0 (the runs agree there);
  - attribution patching against its definition, Σ ∂m/∂act · (clean − corrupted) / (m_clean − m_corrupt)
    with PyTorch's autograd on the corrupted run;
  - the induction and previous-token scores from PyTorch's attention weights on the same sequences.
It also checks that it can fail: the attribution of the other head of the same layer, and the
patching map of another layer, must differ by far more than TOL.
Exits 77 (skipped) where PyTorch is not installed.
"""
import json
import os
import struct
import sys

from torch_models import require_torch, run, variant_forward

require_torch("interp_torch")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import gpt_torch  # noqa: E402

TOL = 1e-4
CLEAN, CORRUPT = "12+34=46\n7+5=", "12+34=46\n7+6="   # the sums task's alphabet; same length
REFERENCE = ["90+1=91\n8+8=16", "3+44=47\n51+2=5", "66+7=73\n1+1=2"]


def write_random(src, dst, seed, **cfg_changes):
    """src's config (with cfg_changes) and vocabulary, its tensors replaced by random ones, into dst."""
    meta, tensors = gpt_torch.read_checkpoint(src)
    cfg = json.loads(meta["config"])
    cfg.update(cfg_changes)
    g = torch.Generator().manual_seed(seed)
    header, body, off, drawn = {}, bytearray(), 0, {}
    for k, v in tensors.items():
        if not cfg.get("bias", True) and k.endswith(".bias") and not (cfg.get("qkv_bias") and k.endswith("c_attn.bias")):
            continue
        if k == "lm_head.weight" and cfg.get("tie_embeddings", True):  # tied to wte: written after it, the same values
            x = drawn["transformer.wte.weight"]
        elif k.startswith("optimizer."):  # AdamW's moments kept as they are: `gpt api` loads a training file
            x = v
        elif k.endswith(".bias"):
            x = 0.1 * torch.randn(v.shape, generator=g)
        elif ".ln_" in k or k.startswith("transformer.ln_f") or k.endswith("_norm.weight"):
            x = 1 + 0.1 * torch.randn(v.shape, generator=g)
        else:
            x = 0.2 * torch.randn(v.shape, generator=g)
        drawn[k] = x
        b = x.contiguous().numpy().astype("<f4").tobytes()
        header[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [off, off + len(b)]}
        body += b
        off += len(b)
    header["__metadata__"] = {k: v for k, v in meta.items()}
    header["__metadata__"]["config"] = json.dumps(cfg)
    h = json.dumps(header).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + bytes(body))
    return dst


class Fail:
    def __init__(self, name):
        self.name = name
        self.worst, self.where = 0.0, ""

    def close(self, what, ours, theirs, tol=TOL):
        ours = torch.tensor(ours, dtype=torch.float64)
        theirs = torch.as_tensor(theirs, dtype=torch.float64).reshape(ours.shape)
        d = (ours - theirs).abs().max().item()
        if d > self.worst:
            self.worst, self.where = d, what
        if not d <= tol:
            sys.exit(f"{self.name}: {what} differs by {d:.3g} (tolerance {tol}):\n ours   {ours}\n torch  {theirs}")

    def exact(self, what, ours, theirs):
        if ours != theirs:
            sys.exit(f"{self.name}: {what} is {ours}, expected exactly {theirs}")


# ---------------------------------------------------------------- the hooked model

class Hooked:
    """scripts/gpt_torch.py's model with TransformerLens-style hook points (names as `gpt api`'s)."""

    def __init__(self, model, cfg):
        self.m, self.cfg = model, cfg
        self.L, self.NH, self.C = cfg["n_layer"], cfg["n_head"], cfg["n_embd"]
        self.hs = self.C // self.NH
        self.A = self.C

    def unembed(self):
        return self.m.transformer.wte.weight

    def run(self, ids, patch=None, keep_grad=False):
        """logits (T, V) and the cache {resid: [L+1] (T, C), mid, z, mlp: [L]}; patch(site, l, x) → x or None."""
        cache = {"resid": [None] * (self.L + 1), "mid": [None] * self.L, "z": [None] * self.L, "mlp": [None] * self.L}
        hooks = []

        def at(site, l, x):
            if patch is not None:
                y = patch(site, l, x)
                if y is not None:
                    x = y
            if keep_grad:
                x.retain_grad()
            cache[site][l] = x
            return x

        for l, b in enumerate(self.m.transformer.h):
            hooks.append(b.register_forward_pre_hook(lambda mod, inp, l=l: (at("resid", l, inp[0]),)))
            hooks.append(b.ln_2.register_forward_pre_hook(lambda mod, inp, l=l: (at("mid", l, inp[0]),)))
            hooks.append(b.attn.c_proj.register_forward_pre_hook(lambda mod, inp, l=l: (at("z", l, inp[0]),)))
            hooks.append(b.mlp.register_forward_hook(lambda mod, inp, out, l=l: at("mlp", l, out)))
        hooks.append(self.m.transformer.ln_f.register_forward_pre_hook(lambda mod, inp: (at("resid", self.L, inp[0]),)))
        try:
            logits = self.m(torch.tensor([ids]))[0]
        finally:
            for h in hooks:
                h.remove()
        if keep_grad:  # the hooked tensors themselves (1, T, C), whose .grad a backward fills
            return logits, cache
        return logits, {k: [x[0] if x is not None else None for x in v] for k, v in cache.items()}

    def lnf_logits(self, x):
        return self.m.transformer.ln_f(x) @ self.m.transformer.wte.weight.T

    def param(self, name):
        """A parameter by its state-dict name, or None (a bias of bias=False)."""
        return dict(self.m.named_parameters()).get(name)

    def attention_weights(self, ids):
        """Each layer's softmax weights (NH, T, T), recomputed from c_attn's output with the model's mask and softmax."""
        qkv = []
        hooks = [b.attn.c_attn.register_forward_hook(lambda mod, i, o: qkv.append(o[0])) for b in self.m.transformer.h]
        with torch.no_grad():
            self.m(torch.tensor([ids]))
        for h in hooks:
            h.remove()
        T, out = len(ids), []
        inclusive = self.cfg["mask"] == "inclusive"
        for x in qkv:
            q = x[:, :self.C].view(T, self.NH, self.hs).transpose(0, 1)
            k = x[:, self.C:2 * self.C].view(T, self.NH, self.hs).transpose(0, 1)
            s = (q @ k.transpose(1, 2)) / (self.hs ** 0.5)
            i, j = torch.arange(T).view(T, 1), torch.arange(T).view(1, T)
            s = s.masked_fill(j >= i if inclusive else j > i, float("-inf"))
            w = torch.softmax(s, dim=-1)
            out.append(torch.nan_to_num(w, nan=0.0))  # the inclusive mask's first row sees nothing: 0
        return out


class HookedVariant:
    """tests/torch_models.py's model of gpt.h's variants (RoPE, ALiBi, no positions, grouped-query,
    RMSNorm, SwiGLU, windows) through its hook points; the same interface as Hooked."""

    def __init__(self, cfg, params):
        self.cfg, self.p = cfg, {k: v.clone().requires_grad_(True) for k, v in params.items()}
        self.L, self.NH, self.C = cfg["n_layer"], cfg["n_head"], cfg["n_embd"]
        self.hs = cfg.get("head_size", 0) or self.C // self.NH
        self.A = self.NH * self.hs  # z's width

    def run(self, ids, patch=None, keep_grad=False):
        cache = {"resid": [None] * (self.L + 1), "mid": [None] * self.L, "z": [None] * self.L,
                 "mlp": [None] * self.L, "att": [None] * self.L}

        def at(site, l, x):
            if site == "att":
                cache[site][l] = x
                return None
            x = x.unsqueeze(0)  # (1, T, C), as Hooked's
            if patch is not None:
                y = patch(site, l, x)
                if y is not None:
                    x = y
            if keep_grad:
                x.retain_grad()
            cache[site][l] = x if keep_grad else x[0]
            return x[0]

        return variant_forward(self.cfg, self.p, ids, at), cache

    def lnf_logits(self, x):
        eps, w = self.cfg.get("ln_eps", 1e-5), self.p["transformer.ln_f.weight"]
        if self.cfg.get("norm", "layernorm") == "rmsnorm":
            y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w
        else:
            y = F.layer_norm(x, (self.C,), w, self.p.get("transformer.ln_f.bias"), eps)
        return y @ self.unembed().T

    def unembed(self):
        return self.p["lm_head.weight"] if self.cfg.get("tie_embeddings", True) is False else self.p["transformer.wte.weight"]

    def param(self, name):
        return self.p.get(name)

    def attention_weights(self, ids):
        with torch.no_grad():
            return self.run(ids)[1]["att"]


def metric(logits, a, b, pos=-1):
    return logits[pos, a] - (logits[pos, b] if b is not None else 0)


def loss(logits, ids):
    return F.cross_entropy(logits[:-1].double(), torch.tensor(ids[1:])).item()


def replace(site, layer, value, cols=None, row=None):
    """A patch hook writing value (T, C) into site's columns cols (slice) at row (None: all rows)."""
    def f(s, l, x):
        if s != site or l != layer:
            return None
        x = x.clone()
        r = slice(None) if row is None else slice(row, row + 1)
        c = slice(None) if cols is None else cols
        x[0, r, c] = value[r, c]
        return x
    return f


# ---------------------------------------------------------------- the checks

def api(gpt, ckpt, calls):
    lines = [{"call": "load", "path": ckpt}] + calls
    out = run([gpt, "api"], "\n".join(json.dumps(c) for c in lines) + "\n", echo=False).splitlines()
    answers = [json.loads(x) for x in out]
    for c, a in zip(lines, answers):
        if not a.get("ok"):
            sys.exit(f"{c['call']} failed: {a}")
    return answers[1:]


def check_lens(f, H, ids, ans):
    logits, cache = H.run(ids)
    points = [cache["resid"][0]]
    for l in range(H.L):
        points += [cache["mid"][l], cache["resid"][l + 1]]
    f.exact("the points", ans["points"], ["embed"] + [f"{l}.{s}" for l in range(H.L) for s in ("attn", "mlp")])
    targets = logits.argmax(dim=-1).tolist()
    f.exact("the targets", ans["targets"], targets)
    for p, x in enumerate(points):
        probs = torch.softmax(H.lnf_logits(x).double(), dim=-1)
        for t in range(len(ids)):
            top = ans["top"][p][t]
            f.close(f"lens {ans['points'][p]} position {t}: p of the reported tokens", [e["p"] for e in top],
                    [probs[t, e["id"]].item() for e in top])
            f.close(f"lens {ans['points'][p]} position {t}: the top-k values", [e["p"] for e in top],
                    probs[t].topk(len(top)).values)
            f.close(f"lens {ans['points'][p]} position {t}: p(target)", ans["target_p"][p][t], probs[t, targets[t]].item())


def torch_attribution(H, ids, a, b, pos):
    """Every part's contribution to logit[a] − logit[b] at pos, ln_f's scale frozen, and the logit."""
    logits, cache = H.run(ids)
    x_final = cache["resid"][H.L][pos].double()
    eps = H.cfg.get("ln_eps", 1e-5)
    rms = H.cfg.get("norm", "layernorm") == "rmsnorm"  # RMSNorm: x / √(mean(x²) + ε), nothing subtracted
    scale = torch.sqrt((x_final.pow(2).mean() if rms else x_final.var(unbiased=False)) + eps)
    W = H.param("transformer.wte.weight").double()
    U = H.unembed().double()  # the unembedding: wte, or an untied lm_head
    u = U[a] - (U[b] if b is not None else 0)
    gamma = H.param("transformer.ln_f.weight").double()

    def through(part):
        return (((part if rms else part - part.mean()) / scale) * gamma * u).sum().item()

    wpe = H.param("transformer.wpe.weight")  # learned positions only
    parts = {"wte": through(W[ids[pos]]), "wpe": through(wpe[pos].double()) if wpe is not None else 0.0}
    heads = []
    down = "mlp.down_proj" if H.cfg.get("mlp", "gelu") == "swiglu" else "mlp.c_proj"
    for l in range(H.L):
        WO = H.param(f"transformer.h.{l}.attn.c_proj.weight").double()
        z = cache["z"][l][pos].double()
        heads.append([through(WO[:, h * H.hs:(h + 1) * H.hs] @ z[h * H.hs:(h + 1) * H.hs]) for h in range(H.NH)])
        mb = H.param(f"transformer.h.{l}.{down}.bias")
        parts.setdefault("mlps", []).append(through(cache["mlp"][l][pos].double() - (mb.double() if mb is not None else 0)))
        ab = H.param(f"transformer.h.{l}.attn.c_proj.bias")
        parts.setdefault("attn_bias", []).append(through(ab.double()) if ab is not None else 0.0)
        parts.setdefault("mlp_bias", []).append(through(mb.double()) if mb is not None else 0.0)
    parts["heads"] = heads
    ln_f_b = H.param("transformer.ln_f.bias")
    parts["ln_f_bias"] = (ln_f_b.double() * u).sum().item() if ln_f_b is not None else 0.0
    total = parts["wte"] + parts["wpe"] + parts["ln_f_bias"] + sum(map(sum, heads)) + sum(parts["mlps"]) + \
        sum(parts["attn_bias"]) + sum(parts["mlp_bias"])
    return parts, total, metric(logits, a, b, pos).item()


def check_attribution(f, H, ids, a, b, ans):
    parts, total, logit = torch_attribution(H, ids, a, b, len(ids) - 1)
    for k in ("wte", "wpe", "ln_f_bias", "heads", "mlps", "attn_bias", "mlp_bias"):
        f.close(f"attribution {k}", ans[k], parts[k])
    f.close("PyTorch's parts summing to its logit difference", total, logit)
    f.close("our parts summing to our logit difference", ans["sum"], ans["logit"])
    f.close("the logit difference", ans["logit"], logit)
    # the check can fail: the next head's contribution in its place differs
    shifted = [row[1:] + row[:1] for row in parts["heads"]]
    d = (torch.tensor(ans["heads"]) - torch.tensor(shifted)).abs().max().item()
    if not d > 100 * TOL:
        sys.exit(f"{f.name}: another head's attribution differs by only {d:.3g}: the check cannot tell heads apart")


def check_ablation(f, H, ids, a, b, ans, mode, vocab):
    logits, clean = H.run(ids)
    T = len(ids)
    if mode == "mean":
        runs = [H.run(gpt_torch.encode(r, vocab, 99)[:T])[1] for r in REFERENCE]
        z_mean = [torch.stack([c["z"][l] for c in runs]).mean(0) for l in range(H.L)]
        mlp_mean = [torch.stack([c["mlp"][l] for c in runs]).mean(0) for l in range(H.L)]
    else:
        z_mean, mlp_mean = [torch.zeros(T, H.A)] * H.L, [torch.zeros(T, H.C)] * H.L
    l0, m0 = loss(logits, ids), metric(logits, a, b).item()
    f.close("the clean loss", ans["loss"], l0)
    hl, hm = [], []
    for l in range(H.L):
        hl.append([])
        hm.append([])
        for h in range(H.NH):
            lg, _ = H.run(ids, replace("z", l, z_mean[l], slice(h * H.hs, (h + 1) * H.hs)))
            hl[-1].append(loss(lg, ids) - l0)
            hm[-1].append(metric(lg, a, b).item() - m0)
    ml, mm = [], []
    for l in range(H.L):
        lg, _ = H.run(ids, replace("mlp", l, mlp_mean[l]))
        ml.append(loss(lg, ids) - l0)
        mm.append(metric(lg, a, b).item() - m0)
    f.close(f"{mode} ablation: head_loss", ans["head_loss"], hl)
    f.close(f"{mode} ablation: head_metric", ans["head_metric"], hm)
    f.close(f"{mode} ablation: mlp_loss", ans["mlp_loss"], ml)
    f.close(f"{mode} ablation: mlp_metric", ans["mlp_metric"], mm)


def torch_patching(H, clean_ids, bad_ids, a, b):
    lc, cc = H.run(clean_ids)
    lr, _ = H.run(bad_ids)
    mc, mr = metric(lc, a, b).item(), metric(lr, a, b).item()
    T = len(clean_ids)

    def frac(p):
        lg, _ = H.run(bad_ids, p)
        return (metric(lg, a, b).item() - mr) / (mc - mr)

    resid = [[frac(replace("resid", l, cc["resid"][l], row=t)) for t in range(T)] for l in range(H.L + 1)]
    heads = [[frac(replace("z", l, cc["z"][l], slice(h * H.hs, (h + 1) * H.hs))) for h in range(H.NH)]
             for l in range(H.L)]
    mlps = [frac(replace("mlp", l, cc["mlp"][l])) for l in range(H.L)]
    return mc, mr, resid, heads, mlps


def check_patching(f, H, clean_ids, bad_ids, a, b, ans):
    mc, mr, resid, heads, mlps = torch_patching(H, clean_ids, bad_ids, a, b)
    scale = 1.0 / abs(mc - mr)  # a fraction's rounding is the metric's over the difference
    f.close("the clean metric", ans["clean_metric"], mc)
    f.close("the corrupted metric", ans["corrupted_metric"], mr)
    f.close("patching the residual stream", ans["resid"], resid, TOL * max(1.0, scale))
    f.close("patching each head", ans["heads"], heads, TOL * max(1.0, scale))
    f.close("patching each MLP", ans["mlps"], mlps, TOL * max(1.0, scale))
    T = len(clean_ids)
    # exactly: the stream entering ln_f at the last position is the clean run's whole prediction
    f.exact("the residual entering ln_f, patched at each position", ans["resid"][H.L], [0.0] * (T - 1) + [1.0])
    diff = [t for t in range(T) if clean_ids[t] != bad_ids[t]]
    if len(diff) == 1:
        f.exact("the embeddings patched where the prompts differ", ans["resid"][0][diff[0]], 1.0)
    # before the first difference the two runs are one (causal): patching there changes nothing
    for l in range(H.L + 1):
        f.exact(f"the residual entering layer {l} patched before position {diff[0]}", ans["resid"][l][:diff[0]],
                [0.0] * diff[0])
    d = (torch.tensor(ans["resid"][1]) - torch.tensor(resid[2])).abs().max().item()
    if not d > 100 * TOL:
        sys.exit(f"{f.name}: another layer's patching differs by only {d:.3g}: the check cannot tell layers apart")


def check_attribution_patching(f, H, clean_ids, bad_ids, a, b, ans):
    with torch.no_grad():
        lc, cc = H.run(clean_ids)
    lr, cr = H.run(bad_ids, keep_grad=True)
    m = metric(lr, a, b)
    m.backward()
    denom = (metric(lc, a, b) - m).item()
    T = len(clean_ids)

    def dot(site, l, x_clean, x_bad, cols=slice(None), row=None):
        grad = cr[site][l].grad[0].double()
        r = slice(None) if row is None else slice(row, row + 1)
        return (grad[r, cols] * (x_clean[r, cols].double() - x_bad[0, r, cols].detach().double())).sum().item() / denom

    resid = [[dot("resid", l, cc["resid"][l], cr["resid"][l], row=t) for t in range(T)] for l in range(H.L + 1)]
    heads = [[dot("z", l, cc["z"][l], cr["z"][l], slice(h * H.hs, (h + 1) * H.hs)) for h in range(H.NH)]
             for l in range(H.L)]
    # an MLP's output adds into the stream entering the next layer (or ln_f): that stream's gradient
    mlps = [dot("resid", l + 1, cc["mlp"][l], cr["mlp"][l]) for l in range(H.L)]
    scale = max(1.0, 1.0 / abs(denom))
    f.close("attribution patching: the residual stream", ans["resid"], resid, TOL * scale)
    f.close("attribution patching: each head", ans["heads"], heads, TOL * scale)
    f.close("attribution patching: each MLP", ans["mlps"], mlps, TOL * scale)


def check_head_scores(f, H, ans):
    n = ans["length"]
    ind = torch.zeros(H.L, H.NH, dtype=torch.float64)
    prev = torch.zeros(H.L, H.NH, dtype=torch.float64)
    for ids in ans["sequences"]:
        f.exact("a sequence repeated", ids[:n], ids[n:])
        weights = H.attention_weights(ids)  # [L] (NH, T, T)
        for l in range(H.L):
            w = weights[l].double()
            ind[l] += torch.stack([w[:, t, t - n + 1] for t in range(n, 2 * n)]).mean(0)
            prev[l] += torch.stack([w[:, t, t - 1] for t in range(1, 2 * n)]).mean(0)
    B = len(ans["sequences"])
    f.close("induction scores", ans["induction"], ind / B)
    f.close("previous-token scores", ans["previous"], prev / B)


def case(gpt, name, ckpt, variant=False):
    f = Fail(name)
    model, cfg, vocab = gpt_torch.load(ckpt) if not variant else (None, None, None)
    torch.set_grad_enabled(True)
    if variant:  # gpt.h's variants: torch_models' model with hook points
        meta, tensors = gpt_torch.read_checkpoint(ckpt)
        cfg, vocab = json.loads(meta["config"]), json.loads(meta["vocab"])
        untied = cfg.get("tie_embeddings", True) is False  # lm_head.weight of its own, else wte's copy
        H = HookedVariant(cfg, {k: v for k, v in tensors.items()
                                if not k.startswith("optimizer.") and (untied or k != "lm_head.weight")})
    else:
        H = Hooked(model, cfg)
    ids = gpt_torch.encode(CLEAN, vocab, cfg["block_size"])
    bad = gpt_torch.encode(CORRUPT, vocab, cfg["block_size"])
    # the metric: the clean run's prediction against the corrupted run's (or its runner-up)
    with torch.no_grad():
        lc, lr = H.run(ids)[0], H.run(bad)[0]
    a = lc[-1].argmax().item()
    b = lr[-1].argmax().item()
    if b == a:
        b = lr[-1].topk(2).indices[1].item()
    ta, tb = vocab[a], vocab[b]
    spec = {"token": ta, "other": tb}
    answers = api(gpt, ckpt, [
        {"call": "lens", "spec": {"prompt": CLEAN, "top_k": 3}},
        {"call": "attribute", "spec": {"prompt": CLEAN, **spec}},
        {"call": "ablate", "spec": {"prompt": CLEAN, "mode": "zero", **spec}},
        {"call": "ablate", "spec": {"prompt": CLEAN, "mode": "mean", "reference": REFERENCE, **spec}},
        {"call": "patch", "spec": {"clean": CLEAN, "corrupted": CORRUPT, **spec}},
        {"call": "attribution_patch", "spec": {"clean": CLEAN, "corrupted": CORRUPT, **spec}},
        {"call": "head_scores", "spec": {"length": 6, "batch": 3, "seed": 7}},
    ])
    with torch.no_grad():
        check_lens(f, H, ids, answers[0])
        check_attribution(f, H, ids, a, b, answers[1])
        check_ablation(f, H, ids, a, b, answers[2], "zero", vocab)
        check_ablation(f, H, ids, a, b, answers[3], "mean", vocab)
        check_patching(f, H, ids, bad, a, b, answers[4])
        check_head_scores(f, H, answers[6])
    check_attribution_patching(f, H, ids, bad, a, b, answers[5])
    print(f"ok: {name}: every tool agrees with PyTorch (largest difference {f.worst:.2g}, in {f.where}); metric "
          f"logit({ta!r}) − logit({tb!r})")


def main():
    gpt, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(1)
    template = os.path.join(work, "template.safetensors")
    run([gpt, "train", "-o", template, "--task", "sums", "--n-chars", "2000", "--n-layer", "3", "--n-embd", "32",
         "--n-head", "4", "--block-size", "16", "--batch-size", "2", "--steps", "1", "--quiet"], echo=False)
    cases = [
        ("nanoGPT (gelu, biases)", write_random(template, os.path.join(work, "nanogpt.safetensors"), 1)),
        ("nanoGPT bias=False, inclusive mask, naive softmax",
         write_random(template, os.path.join(work, "nobias.safetensors"), 2, bias=False, mask="inclusive",
                      softmax="naive")),
        ("GPT-2 layout (gelu_new, ε 1e-6)",
         write_random(template, os.path.join(work, "gpt2.safetensors"), 3, activation="gelu_new", ln_eps=1e-6)),
    ]
    for name, ckpt in cases:
        case(gpt, name, ckpt)
    # gpt.h's variants, each from a template trained with its flags (its tensors' names and shapes)
    variants = [
        ("Llama block: RoPE halves, RMSNorm, SwiGLU, grouped-query 4/2, no bias",
         ["--pos", "rope", "--norm", "rmsnorm", "--mlp", "swiglu", "--n-kv-head", "2", "--bias", "false"]),
        ("RoPE interleaved on 4 of 8 dimensions, multi-query, SwiGLU of 40, biases",
         ["--pos", "rope", "--rope", "interleaved", "--rope-dims", "4", "--n-kv-head", "1", "--mlp", "swiglu",
          "--n-inner", "40"]),
        ("ALiBi with a sliding window of 4", ["--pos", "alibi", "--window", "4"]),
        ("no positions, no biases", ["--pos", "none", "--bias", "false"]),
        # the Llama family's options (core/interp/hooked_run.h): Llama's untied lm_head; Qwen2's q/k/v
        # biases alone with heads narrower than n_embd/n_head; Qwen3's wider heads and q/k norm
        ("Llama: untied lm_head, RoPE, RMSNorm, SwiGLU, grouped-query 4/2",
         ["--pos", "rope", "--norm", "rmsnorm", "--mlp", "swiglu", "--n-kv-head", "2", "--bias", "false",
          "--tie-embeddings", "false"]),
        ("Qwen2: q/k/v biases alone, heads of 4 in n_embd 32, untied",
         ["--pos", "rope", "--norm", "rmsnorm", "--mlp", "swiglu", "--n-kv-head", "2", "--bias", "false",
          "--qkv-bias", "true", "--head-size", "4", "--tie-embeddings", "false"]),
        ("Qwen3: heads of 12 in n_embd 32, q/k norm, grouped-query 4/2",
         ["--pos", "rope", "--norm", "rmsnorm", "--mlp", "swiglu", "--n-kv-head", "2", "--bias", "false",
          "--head-size", "12", "--qk-norm", "true"]),
    ]
    for i, (name, flags) in enumerate(variants):
        t = os.path.join(work, f"variant{i}_template.safetensors")
        run([gpt, "train", "-o", t, "--task", "sums", "--n-chars", "2000", "--n-layer", "3", "--n-embd", "32",
             "--n-head", "4", "--block-size", "16", "--batch-size", "2", "--steps", "1", "--quiet"] + flags, echo=False)
        case(gpt, name, write_random(t, os.path.join(work, f"variant{i}.safetensors"), 10 + i), variant=True)
    print("ok: the interpretability tools agree with PyTorch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
