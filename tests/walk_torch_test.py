#!/usr/bin/env python3
"""walk_torch_test.py — ctest `walk_torch`: every step of the block walk against PyTorch.

    walk_torch_test.py GPT WORKDIR

The page's "whole block, step by step" shows the core's trace of one position (`gpt api`'s
block_trace, core/model/block_trace.h). This test checks each step of that trace against PyTorch's own
intermediate values for the same prompt, taken with forward hooks on scripts/gpt_torch.py's
nanoGPT model (the modules' inputs and outputs: ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
mlp.c_proj, each block, ln_f, lm_head) and, for what no module returns, with torch's own ops on
those values (a LayerNorm's mean, biased variance, rstd and x̂; a head's q·k, scores, softmax
weights and context, with the model's mask and softmax):
  - a model trained here by `gpt train` (exact GELU, biases, strict mask, stable softmax);
  - one trained with the inclusive mask (whose first row sees nothing) and the naive softmax;
  - a GPT-2-layout model: the first one's file rewritten with GPT-2's tanh GELU (gelu_new), no
    biases (nanoGPT's bias=False: its bias tensors dropped) and ε = 1e-6 — what the page opens.
For each, at the first, a middle and the last position, every vector must agree within TOL
(both sides compute in float32, summing in different orders: ~1e-6 here; a wrong step, layer,
position, transposition or activation differs by ~1e-2 or more). It also checks that the test can
fail: the trace of one position against PyTorch's next position must differ by far more than TOL.
The last step's sampled token, for greedy and for seeded draws with temperature, top-k and top-p,
must be the first token `gpt sample` generates with the same prompt and options, and its reshaped
probabilities PyTorch's softmax(z / T) over the kept tokens, renormalised.
The variants' walk (gpt.h: RoPE, ALiBi, grouped-query heads, RMSNorm, SwiGLU, a window with its
sinks, no positions; the Llama family's head_size, qk_norm, qkv_bias and untied lm_head) is checked the same way against tests/torch_models.py's variant_forward, our own
PyTorch model of them (its intermediate values): RoPE's angles and the turned q and k, ALiBi's
bias, which key/value head each query head reads, the window's hidden keys (weight 0), RMSNorm's
mean square and rstd, SwiGLU's gate, up and silu(gate), the q/k norm's inputs and each head's rstd.
Exits 77 (skipped) where PyTorch is not installed.
"""
import json
import math
import os
import struct
import sys

from torch_models import GRAMMAR, SUMS_INCLUSIVE_NAIVE, alibi_slopes, require_torch, run, train_small, variant_forward

require_torch("walk_torch")
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import gpt_torch  # noqa: E402  (scripts/gpt_torch.py: the PyTorch model and the file reader)

TOL = 1e-4


def walk(gpt, ckpt, prompt, position, sample=None):
    """The core's trace of one position, through `gpt api` as a user calls it."""
    spec = {"prompt": prompt, "position": position, "show": 5}
    if sample is not None:
        spec["sample"] = sample
    calls = [{"call": "load", "path": ckpt}, {"call": "block_trace", "spec": spec}]
    lines = run([gpt, "api"], "\n".join(json.dumps(c, ensure_ascii=False) for c in calls) + "\n", echo=False).splitlines()
    answer = json.loads(lines[-1])
    if not answer.get("ok"):
        sys.exit(f"block_trace failed: {answer}")
    return answer


def torch_steps(model, cfg, ids):
    """PyTorch's intermediate values for the prompt: {name: (T, width) tensor}, from hooks and ops."""
    got = {}

    def keep(name, what):
        def hook(mod, inp, out):
            got[name] = (inp[0] if what == "in" else out)[0].detach().clone()
        return hook

    hooks = []
    for l, b in enumerate(model.transformer.h):
        hooks.append(b.register_forward_hook(keep(f"{l}.block_in", "in")))
        hooks.append(b.register_forward_hook(keep(f"{l}.block_out", "out")))
        hooks.append(b.ln_1.register_forward_hook(keep(f"{l}.ln_1", "out")))
        hooks.append(b.attn.c_attn.register_forward_hook(keep(f"{l}.qkv", "out")))
        hooks.append(b.attn.c_proj.register_forward_hook(keep(f"{l}.atty", "in")))
        hooks.append(b.attn.c_proj.register_forward_hook(keep(f"{l}.attn_proj", "out")))
        hooks.append(b.ln_2.register_forward_hook(keep(f"{l}.ln_2_in", "in")))
        hooks.append(b.ln_2.register_forward_hook(keep(f"{l}.ln_2", "out")))
        hooks.append(b.mlp.c_fc.register_forward_hook(keep(f"{l}.fc", "out")))
        hooks.append(b.mlp.c_proj.register_forward_hook(keep(f"{l}.act", "in")))
        hooks.append(b.mlp.c_proj.register_forward_hook(keep(f"{l}.mlp_proj", "out")))
    hooks.append(model.transformer.ln_f.register_forward_hook(keep("ln_f_in", "in")))
    hooks.append(model.transformer.ln_f.register_forward_hook(keep("ln_f", "out")))
    hooks.append(model.lm_head.register_forward_hook(keep("logits", "out")))
    with torch.no_grad():
        model(torch.tensor([ids]))
    for h in hooks:
        h.remove()
    T = len(ids)
    with torch.no_grad():
        got["encoded"] = model.transformer.wte.weight[ids] + model.transformer.wpe.weight[:T]
        got["wte"] = model.transformer.wte.weight[ids]
        got["wpe"] = model.transformer.wpe.weight[:T]
    return got


def ln_stats(x, eps):
    mean = x.mean(dim=-1)
    var = ((x - mean[:, None]) ** 2).mean(dim=-1)
    rstd = 1.0 / torch.sqrt(var + eps)
    return mean, var, rstd, (x - mean[:, None]) * rstd[:, None]


def head_rows(qkv, cfg, p):
    """Position p's per-head dots, scores, weights and context, from c_attn's output, as the model attends."""
    C, NH = cfg["n_embd"], cfg["n_head"]
    hs = C // NH
    q, k, v = qkv[:, :C], qkv[:, C:2 * C], qkv[:, 2 * C:]
    n = p if cfg["mask"] == "inclusive" else p + 1  # the visible keys 0 … n − 1
    heads = []
    for h in range(NH):
        sl = slice(h * hs, (h + 1) * hs)
        dots = k[:n, sl] @ q[p, sl]
        scores = dots * (1.0 / math.sqrt(hs))
        if n == 0:
            w = scores
        elif cfg["softmax"] == "stable":
            w = torch.softmax(scores, dim=0)
        else:
            e = torch.exp(scores)
            w = e / e.sum()
        ctx = w @ v[:n, sl] if n else torch.zeros(hs)
        heads.append({"dots": dots, "scores": scores, "weights": w, "context": ctx})
    return heads


class Checker:
    def __init__(self, name):
        self.name, self.worst, self.count, self.largest = name, 0.0, 0, 0.0

    def same(self, what, ours, theirs):
        a = torch.tensor(ours, dtype=torch.float64).reshape(-1)
        b = theirs.detach().double().reshape(-1)
        if a.shape != b.shape:
            sys.exit(f"{self.name}: {what}: {tuple(a.shape)} numbers, PyTorch has {tuple(b.shape)}")
        if a.numel() == 0:
            return
        d = (a - b).abs().max().item()
        self.worst = max(self.worst, d)
        self.largest = max(self.largest, b.abs().max().item())
        self.count += a.numel()
        if not d <= TOL:
            sys.exit(f"{self.name}: {what}: max |project − PyTorch| = {d:.3g} > {TOL:g}")

    def layernorm(self, what, ours, x, module, out, eps):
        mean, var, rstd, xhat = ln_stats(x[None, :], eps)
        self.same(f"{what}.mean", [ours["mean"]], mean)
        self.same(f"{what}.var", [ours["var"]], var)
        self.same(f"{what}.rstd", [ours["rstd"]], rstd)
        self.same(f"{what}.xhat", ours["xhat"], xhat)
        self.same(f"{what}.out", ours["out"], out)
        self.same(f"{what}.gamma", ours["gamma"], module.weight)
        if module.bias is None:
            if ours["beta"] is not None:
                sys.exit(f"{self.name}: {what}.beta is {ours['beta'][:3]}… but the model has no biases")
        else:
            self.same(f"{what}.beta", ours["beta"], module.bias)


def check_position(name, gpt, ckpt, model, cfg, vocab, prompt, p):
    ids = gpt_torch.encode(prompt, vocab, cfg["block_size"])
    tr = walk(gpt, ckpt, prompt, p)
    got = torch_steps(model, cfg, ids)
    eps = cfg.get("ln_eps", 1e-5)
    c = Checker(f"{name}, position {p}")
    if tr["position"] != p or tr["token"] != ids[p] or tr["activation"] != cfg.get("activation", "gelu"):
        sys.exit(f"{c.name}: position {tr['position']}, token {tr['token']}, activation {tr['activation']}")
    c.same("wte", tr["wte"], got["wte"][p])
    c.same("wpe", tr["wpe"], got["wpe"][p])
    c.same("encoded", tr["encoded"], got["encoded"][p])
    for l, (L, b) in enumerate(zip(tr["layers"], model.transformer.h)):
        w = f"layer {l}"
        c.layernorm(f"{w} ln_1", L["ln_1"], got[f"{l}.block_in"][p], b.ln_1, got[f"{l}.ln_1"][p], eps)
        C = cfg["n_embd"]
        qkv = got[f"{l}.qkv"]
        c.same(f"{w} q", L["q"], qkv[p, :C])
        c.same(f"{w} k", L["k"], qkv[p, C:2 * C])
        c.same(f"{w} v", L["v"], qkv[p, 2 * C:])
        n = tr["visible"]
        if "keys" in L:
            c.same(f"{w} keys", L["keys"], qkv[:n, C:2 * C])
            c.same(f"{w} values", L["values"], qkv[:n, 2 * C:])
        for h, (H, ref) in enumerate(zip(L["heads"], head_rows(qkv, cfg, p))):
            for key in ("dots", "scores", "weights", "context"):
                c.same(f"{w} head {h} {key}", H[key], ref[key])
        c.same(f"{w} atty", L["atty"], got[f"{l}.atty"][p])
        c.same(f"{w} attn_proj", L["attn_proj"], got[f"{l}.attn_proj"][p])
        c.same(f"{w} residual2", L["residual2"], got[f"{l}.ln_2_in"][p])
        c.layernorm(f"{w} ln_2", L["ln_2"], got[f"{l}.ln_2_in"][p], b.ln_2, got[f"{l}.ln_2"][p], eps)
        c.same(f"{w} fc", L["fc"], got[f"{l}.fc"][p])
        c.same(f"{w} act", L["act"], got[f"{l}.act"][p])
        c.same(f"{w} mlp_proj", L["mlp_proj"], got[f"{l}.mlp_proj"][p])
        c.same(f"{w} residual3", L["residual3"], got[f"{l}.block_out"][p])
        for key, lin in (("c_attn_b", b.attn.c_attn), ("attn_c_proj_b", b.attn.c_proj), ("c_fc_b", b.mlp.c_fc),
                         ("mlp_c_proj_b", b.mlp.c_proj)):
            if lin.bias is None:
                if L[key] is not None:
                    sys.exit(f"{c.name}: {w} {key} is not null but the model has no biases")
            else:
                c.same(f"{w} {key}", L[key], lin.bias)
    c.layernorm("ln_f", tr["ln_f"], got["ln_f_in"][p], model.transformer.ln_f, got["ln_f"][p], eps)
    logits = got["logits"][p]
    probs = torch.softmax(logits.double(), dim=0)
    top = torch.topk(logits, len(tr["top"]))
    if [e["id"] for e in tr["top"]] != top.indices.tolist():
        sys.exit(f"{c.name}: the most likely tokens {[e['id'] for e in tr['top']]} vs PyTorch's {top.indices.tolist()}")
    c.same("top logits", [e["logit"] for e in tr["top"]], top.values)
    c.same("top probabilities", [e["p"] for e in tr["top"]], probs[top.indices])
    print(f"ok: {c.name}: {c.count} numbers, max |project − PyTorch| = {c.worst:.3g} (largest |value| {c.largest:.3g})")
    if c.largest < 1.0:
        sys.exit(f"{c.name}: the values are tiny: the check proves little")
    return tr, got


VARIANTS = [
    ("llama (rope, rmsnorm, swiglu, 2 kv heads, no bias)",
     ["--pos", "rope", "--norm", "rmsnorm", "--mlp", "swiglu", "--n-kv-head", "2", "--bias", "false"]),
    ("rope interleaved partial, multi-query, window 4 with 2 sinks",
     ["--pos", "rope", "--rope", "interleaved", "--rope-dims", "4", "--n-kv-head", "1", "--window", "4", "--sink", "2"]),
    ("alibi, window 3 with a sink, inclusive mask", ["--pos", "alibi", "--window", "3", "--sink", "1", "--mask", "inclusive"]),
    ("no positions", ["--pos", "none"]),
    # the Llama family's options: Qwen3 (heads of 12 in n_embd 32, q/k norm, untied lm_head), Qwen2
    ("qwen3: heads of 12, q/k norm, untied lm_head, rope, rmsnorm, swiglu, 2 kv heads",
     ["--pos", "rope", "--norm", "rmsnorm", "--mlp", "swiglu", "--n-kv-head", "2", "--bias", "false",
      "--head-size", "12", "--qk-norm", "true", "--tie-embeddings", "false"]),
    ("qwen2: q/k/v biases alone, rope, rmsnorm, swiglu, heads of 4",
     ["--pos", "rope", "--norm", "rmsnorm", "--mlp", "swiglu", "--bias", "false", "--qkv-bias", "true",
      "--head-size", "4"]),
]


def check_variant_position(name, gpt, ckpt, cfg, params, vocab, prompt, p):
    """Position p's walk of a variant model against variant_forward's intermediate values."""
    ids = gpt_torch.encode(prompt, vocab, cfg["block_size"])
    tr = walk(gpt, ckpt, prompt, p)
    got = {}
    with torch.no_grad():
        logits = variant_forward(cfg, params, ids, steps=got)
    c = Checker(f"{name}, position {p}")
    C, NH = cfg["n_embd"], cfg["n_head"]
    hs, NKV = cfg.get("head_size", 0) or C // NH, cfg.get("n_kv_head", 0) or NH
    eps = cfg.get("ln_eps", 1e-5)
    rms = cfg.get("norm") == "rmsnorm"
    if (tr["wpe"] is None) != (cfg.get("pos", "learned") != "learned") or tr["n_kv_head"] != NKV:
        sys.exit(f"{c.name}: wpe {tr['wpe'] is None}, n_kv_head {tr['n_kv_head']}")
    c.same("encoded", tr["encoded"], got["encoded"][p])
    if cfg.get("pos") == "rope":
        c.same("rope cos", tr["rope_cos"], got["rope_angles"][p].cos())
        c.same("rope sin", tr["rope_sin"], got["rope_angles"][p].sin())
    n = tr["visible"]
    window, sink = cfg.get("window", 0), cfg.get("sink", 0)
    seen = [1 if not window or j > p - window or j < sink else 0 for j in range(n)]
    if tr["seen"] != seen:
        sys.exit(f"{c.name}: the keys seen {tr['seen']}, the window and sinks say {seen}")

    def norm_check(what, ours, x, out):
        if rms:
            ms = (x.double() ** 2).mean()
            c.same(f"{what}.var (mean square)", [ours["var"]], ms)
            c.same(f"{what}.rstd", [ours["rstd"]], 1.0 / torch.sqrt(ms + eps))
            c.same(f"{what}.xhat", ours["xhat"], x.double() / torch.sqrt(ms + eps))
        c.same(f"{what}.out", ours["out"], out)

    for l, L in enumerate(tr["layers"]):
        w = f"layer {l}"
        x_in = got["encoded"][p] if l == 0 else got[f"{l - 1}.residual3"][p]
        norm_check(f"{w} ln_1", L["ln_1"], x_in, got[f"{l}.ln_1"][p])
        if cfg.get("qk_norm"):
            c.same(f"{w} q before its norm", L["q_lin"], got[f"{l}.q_lin"][p])
            c.same(f"{w} k before its norm", L["k_lin"], got[f"{l}.k_lin"][p])
            c.same(f"{w} q heads' rstd", L["q_rstd"], got[f"{l}.q_rstd"][p])
            c.same(f"{w} k heads' rstd", L["k_rstd"], got[f"{l}.k_rstd"][p])
            c.same(f"{w} q_norm weight", L["q_norm_w"], params[f"transformer.h.{l}.attn.q_norm.weight"])
        elif "q_lin" in L:
            sys.exit(f"{c.name}: {w} has a q/k norm step without qk_norm")
        if cfg.get("pos") == "rope":
            c.same(f"{w} q before RoPE", L["q_raw"], got[f"{l}.q_raw"][p])
            c.same(f"{w} k before RoPE", L["k_raw"], got[f"{l}.k_raw"][p])
        c.same(f"{w} q", L["q"], got[f"{l}.q"][p])
        c.same(f"{w} k", L["k"], got[f"{l}.k"][p])
        c.same(f"{w} v", L["v"], got[f"{l}.v"][p])
        if "keys" in L:
            c.same(f"{w} keys", L["keys"], got[f"{l}.k"][:n])
            c.same(f"{w} values", L["values"], got[f"{l}.v"][:n])
        for h, H in enumerate(L["heads"]):
            kv = h // (NH // NKV)
            if H["kv_head"] != kv:
                sys.exit(f"{c.name}: {w} head {h} reads key/value head {H['kv_head']}, not {kv}")
            k = got[f"{l}.k"][:n, kv * hs:(kv + 1) * hs]
            dots = k @ got[f"{l}.q"][p, h * hs:(h + 1) * hs]
            c.same(f"{w} head {h} dots", H["dots"], dots)
            if cfg.get("pos") == "alibi":
                m = alibi_slopes(NH)[h]
                c.same(f"{w} head {h} slope", [H["slope"]], torch.tensor(m))
                c.same(f"{w} head {h} bias", H["bias"], torch.tensor([-m * (p - j) for j in range(n)]))
            shown = [j for j in range(n) if seen[j]]
            ref_scores = dots / math.sqrt(hs) + (torch.tensor(H["bias"]) if "bias" in H else 0)
            c.same(f"{w} head {h} scores (seen)", [H["scores"][j] for j in shown], ref_scores[shown])
            c.same(f"{w} head {h} weights", H["weights"], got[f"{l}.att"][h, p, :n])
            c.same(f"{w} head {h} context", H["context"], got[f"{l}.y"][p, h * hs:(h + 1) * hs])
        c.same(f"{w} atty", L["atty"], got[f"{l}.y"][p])
        c.same(f"{w} attn_proj", L["attn_proj"], got[f"{l}.attn_proj"][p])
        c.same(f"{w} residual2", L["residual2"], got[f"{l}.residual2"][p])
        norm_check(f"{w} ln_2", L["ln_2"], got[f"{l}.residual2"][p], got[f"{l}.ln_2"][p])
        c.same(f"{w} fc", L["fc"], got[f"{l}.fc"][p])
        if cfg.get("mlp") == "swiglu":
            c.same(f"{w} silu(gate)", L["silu"], got[f"{l}.silu"][p])
        c.same(f"{w} act", L["act"], got[f"{l}.act"][p])
        c.same(f"{w} mlp_proj", L["mlp_proj"], got[f"{l}.mlp_proj"][p])
        c.same(f"{w} residual3", L["residual3"], got[f"{l}.residual3"][p])
    norm_check("ln_f", tr["ln_f"], got[f"{cfg['n_layer'] - 1}.residual3"][p], got["ln_f"][p])
    top = torch.topk(logits[p], len(tr["top"]))
    c.same("top logits", [e["logit"] for e in tr["top"]], top.values)
    print(f"ok: {c.name}: {c.count} numbers, max |project − PyTorch| = {c.worst:.3g} (largest |value| {c.largest:.3g})")
    if c.largest < 1.0:
        sys.exit(f"{c.name}: the values are tiny: the check proves little")
    return tr, got


def check_variants(gpt, work):
    for k, (name, flags) in enumerate(VARIANTS):
        ckpt = train_small(gpt, os.path.join(work, f"walk_variant_{k}.safetensors"), GRAMMAR[0] + flags, steps=40)
        meta, tensors = gpt_torch.read_checkpoint(ckpt)
        cfg = json.loads(meta["config"])
        untied = cfg.get("tie_embeddings", True) is False  # lm_head.weight of its own, else wte's copy
        params = {key: t for key, t in tensors.items()
                  if not key.startswith("optimizer.") and (untied or key != "lm_head.weight")}
        prompt = GRAMMAR[1]
        T = len(prompt)
        for p in (0, T // 2, T - 1):
            tr, got = check_variant_position(name, gpt, ckpt, cfg, params, json.loads(meta["vocab"]), prompt, p)
        d = (torch.tensor(tr["layers"][-1]["residual3"]) - got[f"{cfg['n_layer'] - 1}.residual3"][T - 2]).abs().max().item()
        if not d > 100 * TOL:
            sys.exit(f"{name}: another position's values differ by only {d:.3g}: the check cannot tell positions apart")


SAMPLINGS = [{"greedy": True}, {"temperature": 1.0, "seed": 1}, {"temperature": 1.3, "top_p": 0.8, "seed": 5},
             {"temperature": 0.8, "top_k": 3, "seed": 2}, {"temperature": 2.0, "top_k": 6, "top_p": 0.9, "seed": 11}]


def check_sample(name, gpt, ckpt, model, cfg, vocab, prompt):
    """The walk's sampled token is `gpt sample`'s first, and its reshaped probabilities PyTorch's."""
    ids = gpt_torch.encode(prompt, vocab, cfg["block_size"])
    with torch.no_grad():
        logits = model(torch.tensor([ids]))[0, -1].double()
    c = Checker(f"{name}, the sampled token")
    for o in SAMPLINGS:
        tr = walk(gpt, ckpt, prompt, len(ids) - 1, o)["sample"]
        args = [gpt, "sample", ckpt, "-p", prompt, "-n", "1", "--json"]
        if o.get("greedy"):
            args.append("--greedy")
        else:
            args += ["-t", str(o["temperature"]), "-k", str(o.get("top_k", 0)), "--top-p", str(o.get("top_p", 1.0)),
                     "--seed", str(o["seed"])]
        cli = json.loads(run(args, echo=False))["new_text"]
        if tr["draw"]["text"] != cli:
            sys.exit(f"{c.name}: {o}: the walk drew {tr['draw']['text']!r}, `gpt sample` starts with {cli!r}")
        if o.get("greedy"):
            if tr["draw"]["token"] != int(torch.argmax(logits)):
                sys.exit(f"{c.name}: greedy took {tr['draw']['token']}, PyTorch's argmax is {int(torch.argmax(logits))}")
            continue
        # p′: softmax(z / T) over the kept tokens (the `kept` most likely), renormalised
        probs = torch.softmax(logits / o["temperature"], dim=0)
        kept = torch.topk(logits, tr["kept"]).indices
        ref = probs[kept] / probs[kept].sum()
        shown = [e for e in tr["top"] if e["kept"]]
        c.same(f"{o} p′", [e["p"] for e in shown], ref[:len(shown)])
        c.same(f"{o} p before top-k and top-p", [e["p_full"] for e in tr["top"]], probs[[e["id"] for e in tr["top"]]])
        print(f"ok: {c.name}: {o}: {cli!r} (u = {tr['draw']['u']:.4f} in [{tr['draw']['cum_from']:.4f}, "
              f"{tr['draw']['cum_to']:.4f}), {tr['kept']} kept)")


def write_gpt2_layout(src, dst):
    """The trained file with GPT-2's gelu_new, no biases and ε 1e-6 (its bias tensors dropped)."""
    meta, tensors = gpt_torch.read_checkpoint(src)
    cfg = json.loads(meta["config"])
    cfg.update({"activation": "gelu_new", "bias": False, "ln_eps": 1e-6})
    keep = {k: v for k, v in tensors.items() if not k.endswith(".bias")}  # AdamW's moments kept: `gpt api` loads it
    header, body, off = {}, bytearray(), 0
    for k, v in keep.items():
        b = v.contiguous().numpy().astype("<f4").tobytes()
        header[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [off, off + len(b)]}
        body += b
        off += len(b)
    header["__metadata__"] = {**meta, "config": json.dumps(cfg)}
    h = json.dumps(header).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + bytes(body))


def main():
    gpt, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(1)
    trained = train_small(gpt, os.path.join(work, "walk_grammar.safetensors"), GRAMMAR, steps=80)
    inclusive = train_small(gpt, os.path.join(work, "walk_sums.safetensors"), SUMS_INCLUSIVE_NAIVE, steps=80)
    gpt2 = os.path.join(work, "walk_gpt2_layout.safetensors")
    write_gpt2_layout(trained, gpt2)
    cases = [("trained (gelu, biases)", trained, GRAMMAR[1]),
             ("inclusive mask, naive softmax", inclusive, SUMS_INCLUSIVE_NAIVE[1]),
             ("GPT-2 layout (gelu_new, no biases)", gpt2, GRAMMAR[1])]
    for name, ckpt, prompt in cases:
        model, cfg, vocab = gpt_torch.load(ckpt)
        T = len(prompt)
        for p in (0, T // 2, T - 1):
            tr, got = check_position(name, gpt, ckpt, model, cfg, vocab, prompt, p)
        check_sample(name, gpt, ckpt, model, cfg, vocab, prompt)
        # the check can fail: the last position's trace is far from the one before it in PyTorch
        d = (torch.tensor(tr["layers"][-1]["residual3"]) - got[f"{cfg['n_layer'] - 1}.block_out"][T - 2]).abs().max().item()
        if not d > 100 * TOL:
            sys.exit(f"{name}: another position's values differ by only {d:.3g}: the check cannot tell positions apart")
    check_variants(gpt, work)
    print("ok: every step of the walk agrees with PyTorch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
