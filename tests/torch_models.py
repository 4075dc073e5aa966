"""torch_models.py — what the PyTorch ctests (gpt_torch_test.py, walk_torch_test.py) share: the
skip where PyTorch is missing, running a command, and the small models they train with the `gpt`
CLI and then load into scripts/gpt_torch.py's nanoGPT model.

    from torch_models import require_torch, run, train_small, GRAMMAR, SUMS_INCLUSIVE_NAIVE
    require_torch("walk_torch")                # exits 77 (skipped) without PyTorch
    ckpt = train_small(gpt, path, GRAMMAR, steps=80)

variant_forward(cfg, params, ids) is our own PyTorch model of the GPT's variants (gpt.h: pos rope |
alibi | none, n_kv_head, norm rmsnorm, mlp swiglu, window, sink, bias; and the Llama family's head_size,
tie_embeddings, qkv_bias, qk_norm, rope_scaling llama3), written from the papers (RoFormer,
ALiBi, GQA, RMSNorm, GLU Variants, Longformer/Mistral's window, StreamingLLM's attention sinks) and
from what Hugging Face's Llama and
GPT-NeoX do, not from the project's kernels: it is what tests/gpt_variants_torch_test.py checks the
project's logits and gradients against, and, through its hook points (TransformerLens' resid, z,
mid, mlp and the attention weights), what tests/interp_torch_test.py checks the interpretability
tools against on those variants.

A model is 2 layers, n_embd 32, 4 heads, block_size 16, batch 8, lr 1e-2 with 10 warm-up steps:
a few seconds of training, enough for logits well away from uniform. GRAMMAR (the strict mask,
the stable softmax) and SUMS_INCLUSIVE_NAIVE (the inclusive mask, whose first row sees nothing,
and the naive softmax) are (the training data's options, a prompt the model knows).
"""
import math
import subprocess
import sys

GRAMMAR = (["--task", "grammar", "--n-chars", "20000"], "the cat sees a ")
SUMS_INCLUSIVE_NAIVE = (["--task", "sums", "--n-chars", "20000", "--mask", "inclusive", "--softmax", "naive"],
                        "12+34=4")


def require_torch(test):
    """Exits 77 (ctest: skipped) with the reason where this interpreter cannot import torch."""
    try:
        import torch  # noqa: F401
    except ImportError:
        print(f"{test}: skipped: PyTorch is not installed for " + sys.executable +
              " (Debian: apt-get install python3-torch)")
        sys.exit(77)


def run(args, stdin=None, expect=0, echo=True):
    """Runs a command; its output (printed when echo) as text. Exits when its status is not `expect`."""
    out = subprocess.run(args, input=stdin, capture_output=True, text=True, encoding="utf-8")
    if echo:
        print("$ " + " ".join(args) + "\n" + out.stdout + out.stderr, end="")
    if out.returncode != expect:
        shown = "" if echo else f"$ {' '.join(args)}\n{out.stdout}{out.stderr}"
        sys.exit(f"{shown}exit status {out.returncode}, expected {expect}")
    return out.stdout + out.stderr if echo else out.stdout


def train_small(gpt, path, data, steps):
    """Trains a small model on `data` (GRAMMAR, SUMS_INCLUSIVE_NAIVE, or other data options) into path."""
    options = data[0] if isinstance(data, tuple) else data
    run([gpt, "train", "-o", path] + options +
        ["--n-layer", "2", "--n-embd", "32", "--n-head", "4", "--block-size", "16", "--batch-size", "8",
         "--steps", str(steps), "--lr", "1e-2", "--warmup-steps", "10", "--quiet"])
    return path


# ---------------------------------------------------------------- the variants, in PyTorch

def llama3_inverse_frequencies(base, d, scaling):
    """θ_i = base^(−2i/d), scaled by Llama 3's rule (Meta's reference code, apply_scaling): waves
    longer than original/low_freq_factor slowed by factor, shorter than original/high_freq_factor
    kept, a linear blend between. scaling: config.json's rope_scaling object, or None."""
    theta = [base ** (-(2.0 * i) / d) for i in range(d // 2)]
    if not scaling:
        return theta
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    old = scaling["original_max_position_embeddings"]
    out = []
    for f in theta:
        wavelen = 2 * math.pi / f
        if wavelen < old / high:
            out.append(f)
        elif wavelen > old / low:
            out.append(f / factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append((1 - smooth) * f / factor + smooth * f)
    return out


def rope_rotate(x, positions, base, d_rot, pairing, scaling=None):
    """RoFormer's rotary embedding of x (heads, T, hs) at the given positions: the first d_rot
    dimensions turn pair by pair, pair i by position·θ_i, θ_i = base^(−2i/d_rot); the rest pass.
    interleaved: pairs (2i, 2i+1) as complex numbers times e^(i·m·θ_i) (the paper's eq. 34);
    halves: GPT-NeoX's and Llama's x·cos + rotate_half(x)·sin over (i, i + d_rot/2)."""
    import torch
    theta = torch.tensor(llama3_inverse_frequencies(base, d_rot, scaling), dtype=torch.float64)  # (d_rot/2)
    ang = positions.to(torch.float64)[:, None] * theta[None, :]                      # (T, d_rot/2)
    rot, rest = x[..., :d_rot], x[..., d_rot:]
    if pairing == "interleaved":
        z = torch.view_as_complex(rot.reshape(*rot.shape[:-1], d_rot // 2, 2).contiguous())
        turned = torch.view_as_real(z * torch.polar(torch.ones_like(ang), ang).to(torch.complex64))
        rot = turned.reshape(rot.shape)
    else:
        cos = torch.cat([ang.cos(), ang.cos()], dim=-1).to(x.dtype)
        sin = torch.cat([ang.sin(), ang.sin()], dim=-1).to(x.dtype)
        half = d_rot // 2
        rotate_half = torch.cat([-rot[..., half:], rot[..., :half]], dim=-1)
        rot = rot * cos + rotate_half * sin
    return torch.cat([rot, rest], dim=-1)


def alibi_slopes(n_head):
    """ALiBi's slopes: the geometric sequence 2^(−8/n), 2^(−16/n), … (Press et al., for n a power of
    two; the same closed form for other n)."""
    return [2.0 ** (-8.0 * (h + 1) / n_head) for h in range(n_head)]


def variant_forward(cfg, p, ids, hook=None, steps=None):
    """Logits (T, V) of the GPT of config cfg (the checkpoint's JSON config) with parameters p
    ({name: tensor}, nanoGPT's and Llama's names as gpt.h lays them out) on one sequence ids.
    hook(site, layer, x) → a replacement or None, at TransformerLens' hook points: "resid" (T, C)
    entering each layer and, as layer n_layer, the final norm; "att" (NH, T, T) the attention
    weights (read only); "z" (T, C) the heads' contexts before attn.c_proj; "mid" (T, C) the stream
    after attention; "mlp" (T, C) the MLP's output.
    steps (a dict, optional) receives the intermediate values the block walk shows, per layer l as
    "l.name" (ln_1, q_lin, k_lin (c_attn's q and k), q_rstd, k_rstd (T, heads: qk_norm's 1/rms),
    q_raw, k_raw (before the rotation, after qk_norm), q, k, v (T, width), att (NH, T, T), y, attn_proj, residual2, ln_2,
    fc, silu, act, mlp_proj, residual3), and "encoded", "ln_f", "rope_angles" (T, d_rot/2)."""
    import torch
    import torch.nn.functional as F

    def at(site, layer, x):
        y = hook(site, layer, x) if hook is not None else None
        return x if y is None else y
    C, NH, T = cfg["n_embd"], cfg["n_head"], len(ids)
    hs = cfg.get("head_size", 0) or C // NH
    A = NH * hs  # q's width
    NKV = cfg.get("n_kv_head", 0) or NH
    pos = cfg.get("pos", "learned")
    eps = cfg.get("ln_eps", 1e-5)
    window = cfg.get("window", 0)
    inclusive = cfg.get("mask", "strict") == "inclusive"
    ids_t = torch.tensor(ids)

    def norm(x, prefix):
        w = p[prefix + ".weight"]
        if cfg.get("norm", "layernorm") == "rmsnorm":  # Zhang & Sennrich: x / RMS(x) · g
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w
        return F.layer_norm(x, (C,), w, p.get(prefix + ".bias"), eps)

    def linear(x, prefix):
        return F.linear(x, p[prefix + ".weight"], p.get(prefix + ".bias"))

    keep = (lambda name, t: steps.__setitem__(name, t.detach())) if steps is not None else (lambda name, t: None)
    x = p["transformer.wte.weight"][ids_t]
    if pos == "learned":
        x = x + p["transformer.wpe.weight"][:T]
    keep("encoded", x)
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    visible = (j < i) if inclusive else (j <= i)
    if window:  # StreamingLLM: the first `sink` keys stay visible beside the window
        visible = visible & ((j > i - window) | (j < cfg.get("sink", 0)))
    for layer in range(cfg["n_layer"]):
        h = f"transformer.h.{layer}."
        x = at("resid", layer, x)
        ln_1 = norm(x, h + "ln_1")
        keep(f"{layer}.ln_1", ln_1)
        qkv = linear(ln_1, h + "attn.c_attn")
        q = qkv[:, :A].reshape(T, NH, hs).transpose(0, 1)
        k = qkv[:, A:A + NKV * hs].reshape(T, NKV, hs).transpose(0, 1)
        v = qkv[:, A + NKV * hs:].reshape(T, NKV, hs).transpose(0, 1)
        keep(f"{layer}.q_lin", qkv[:, :A])
        keep(f"{layer}.k_lin", qkv[:, A:A + NKV * hs])
        keep(f"{layer}.v", qkv[:, A + NKV * hs:])
        if cfg.get("qk_norm"):  # Qwen3: RMSNorm over each head's hs dimensions, before the rotation
            def head_norm(z, w):
                keep(f"{layer}.{'q' if z is q else 'k'}_rstd", torch.rsqrt(z.pow(2).mean(-1) + eps).transpose(0, 1))
                return z * torch.rsqrt(z.pow(2).mean(-1, keepdim=True) + eps) * w
            q = head_norm(q, p[h + "attn.q_norm.weight"])
            k = head_norm(k, p[h + "attn.k_norm.weight"])
        keep(f"{layer}.q_raw", q.transpose(0, 1).reshape(T, A))  # before the rotation (after qk_norm)
        keep(f"{layer}.k_raw", k.transpose(0, 1).reshape(T, NKV * hs))
        if pos == "rope":
            d_rot = cfg.get("rope_dims", 0) or hs
            args = (cfg.get("rope_base", 10000.0), d_rot, cfg.get("rope", "halves"), cfg.get("rope_scaling"))
            q = rope_rotate(q, torch.arange(T), *args)
            k = rope_rotate(k, torch.arange(T), *args)
            theta = cfg.get("rope_base", 10000.0) ** (-torch.arange(0, d_rot, 2, dtype=torch.float64) / d_rot)
            keep("rope_angles", torch.arange(T, dtype=torch.float64)[:, None] * theta[None, :])
        keep(f"{layer}.q", q.transpose(0, 1).reshape(T, A))
        keep(f"{layer}.k", k.transpose(0, 1).reshape(T, NKV * hs))
        k = k.repeat_interleave(NH // NKV, dim=0)  # Llama's repeat_kv: query head h reads h // group
        v = v.repeat_interleave(NH // NKV, dim=0)
        att = q @ k.transpose(-1, -2) / math.sqrt(hs)
        if pos == "alibi":
            m = torch.tensor(alibi_slopes(NH))[:, None, None]
            att = att - m * (i - j).to(att.dtype)[None]
        att = att.masked_fill(~visible[None], float("-inf"))
        att = torch.nan_to_num(F.softmax(att, dim=-1), nan=0.0)  # a row that sees nothing: zeros
        at("att", layer, att)
        keep(f"{layer}.att", att)
        y = at("z", layer, (att @ v).transpose(0, 1).reshape(T, A))
        keep(f"{layer}.y", y)
        proj = linear(y, h + "attn.c_proj")
        keep(f"{layer}.attn_proj", proj)
        x = at("mid", layer, x + proj)
        keep(f"{layer}.residual2", x)
        hn = norm(x, h + "ln_2")
        keep(f"{layer}.ln_2", hn)
        if cfg.get("mlp", "gelu") == "swiglu":  # Shazeer: (silu(xW) ⊙ xV)W2
            gate, up = linear(hn, h + "mlp.gate_proj"), linear(hn, h + "mlp.up_proj")
            act = F.silu(gate) * up
            keep(f"{layer}.fc", torch.cat([gate, up], dim=-1))
            keep(f"{layer}.silu", F.silu(gate))
            mlp = linear(act, h + "mlp.down_proj")
        else:
            approx = "tanh" if cfg.get("activation") == "gelu_new" else "none"
            fc = linear(hn, h + "mlp.c_fc")
            act = F.gelu(fc, approximate=approx)
            keep(f"{layer}.fc", fc)
            mlp = linear(act, h + "mlp.c_proj")
        keep(f"{layer}.act", act)
        keep(f"{layer}.mlp_proj", mlp)
        x = x + at("mlp", layer, mlp)
        keep(f"{layer}.residual3", x)
    x = norm(at("resid", cfg["n_layer"], x), "transformer.ln_f")
    keep("ln_f", x)
    head = p["lm_head.weight"] if cfg.get("tie_embeddings", True) is False else p["transformer.wte.weight"]
    return x @ head.T
