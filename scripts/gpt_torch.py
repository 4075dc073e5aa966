#!/usr/bin/env python3
"""gpt_torch.py — take an Attention Playground checkpoint to PyTorch.

Loads a checkpoint written by `gpt train` or `gpt import` (safetensors, nanoGPT's names;
docs/checkpoint.md; the config's optional activation, ln_eps and bias are honoured)
into the PyTorch GPT below — nanoGPT's model.py in a few dozen lines, with nanoGPT's module
names, so `load_state_dict(strict=True)` takes the file's tensors as they are — and runs a
prompt through it.

    python3 scripts/gpt_torch.py run.safetensors --prompt "abc="         # top predictions
    python3 scripts/gpt_torch.py run.safetensors --prompt "abc=" --json  # every logit, as JSON
    python3 scripts/gpt_torch.py run.safetensors --prompt "abc=" --check # compare with build/gpt

--check runs `build/gpt logits FILE --prompt TEXT` (or --gpt PATH) and compares its logits with
PyTorch's: it prints the largest absolute difference and fails above --tolerance (default 1e-4).
Both sides compute in float32 but sum in different orders (our kernels vs PyTorch's matmul and
LayerNorm), so they agree to rounding: about 1e-6 for logits of size ~1–10 on the tiny preset. A
wrong layout, a transposed weight or another mask would differ by ~0.1 or more; 1e-4 is far from
both. The float64 column runs the same model in double precision, as the exact answer both
approximate.

Needs PyTorch only (Debian: apt-get install python3-torch, which installs it for /usr/bin/python3).
The file is parsed with json + struct + torch.frombuffer (no safetensors package). The optimizer's
tensors (optimizer.*) are left out; the model is run in eval mode on one sequence of at most
block_size characters. Exit codes: 0 ok, 1 an error or a failed check, 77 PyTorch is not
installed (ctest counts that as skipped).
"""
import argparse
import json
import math
import os
import struct
import subprocess
import sys

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    print("gpt_torch.py: skipped: PyTorch is not installed for " + sys.executable +
          " (Debian: apt-get install python3-torch, then use /usr/bin/python3)", file=sys.stderr)
    sys.exit(77)

FORMAT = "attention-playground-gpt"


# ---------------------------------------------------------------- the model (nanoGPT's names)

class CausalSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_head, self.n_embd = cfg["n_head"], cfg["n_embd"]
        self.inclusive = cfg["mask"] == "inclusive"  # also hide the diagonal: j >= i is masked
        self.stable = cfg["softmax"] == "stable"     # subtract the row max before exp
        bias = cfg.get("bias", True)
        self.c_attn = nn.Linear(self.n_embd, 3 * self.n_embd, bias=bias)  # c_q, c_k, c_v stacked
        self.c_proj = nn.Linear(self.n_embd, self.n_embd, bias=bias)

    def forward(self, x):
        B, T, C = x.size()
        hs = C // self.n_head
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))  # (B, nh, T, T)
        i = torch.arange(T).view(T, 1)
        j = torch.arange(T).view(1, T)
        att = att.masked_fill(j >= i if self.inclusive else j > i, float("-inf"))
        if self.stable:
            m = att.amax(dim=-1, keepdim=True)
            att = att - torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # a row may see nothing
        e = torch.exp(att)  # masked: exp(-inf) = 0
        s = e.sum(dim=-1, keepdim=True)
        # The inclusive mask's first row sees no key: its weights are 0 (not 0/0 = NaN), so its
        # context is 0, as in the project's core.
        w = torch.where(s > 0, e / s, torch.zeros_like(e))
        y = (w @ v).transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        bias = cfg.get("bias", True)
        self.c_fc = nn.Linear(cfg["n_embd"], 4 * cfg["n_embd"], bias=bias)
        self.c_proj = nn.Linear(4 * cfg["n_embd"], cfg["n_embd"], bias=bias)
        # exact GELU (erf), nanoGPT's; or GPT-2's tanh approximation ("gelu_new")
        self.approximate = "tanh" if cfg.get("activation", "gelu") == "gelu_new" else "none"

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate=self.approximate))


def layer_norm(cfg):
    """nn.LayerNorm with the config's ε, and without its bias when the config has none (nanoGPT's bias=False)."""
    ln = nn.LayerNorm(cfg["n_embd"], eps=cfg.get("ln_eps", 1e-5))
    if not cfg.get("bias", True):
        ln.bias = None
    return ln


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = layer_norm(cfg)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = layer_norm(cfg)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C = cfg["n_embd"]
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(cfg["vocab_size"], C),
            wpe=nn.Embedding(cfg["block_size"], C),
            h=nn.ModuleList([Block(cfg) for _ in range(cfg["n_layer"])]),
            ln_f=layer_norm(cfg),
        ))
        self.lm_head = nn.Linear(C, cfg["vocab_size"], bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied, as in nanoGPT

    def forward(self, idx):  # idx (B, T) → logits (B, T, V)
        T = idx.size(1)
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(T))
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


# ---------------------------------------------------------------- the file

def read_checkpoint(path):
    """(metadata dict, {name: float32 tensor}) of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path} is {len(data)} bytes: too short for a safetensors file")
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        raise ValueError(f"{path}: the header length {n} runs past the end of the file ({len(data)} bytes)")
    header = json.loads(data[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {})
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path} is not an Attention Playground checkpoint (format {meta.get('format')!r})")
    body = memoryview(data)[8 + n:]
    tensors = {}
    for name, t in header.items():
        if t["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name} has dtype {t['dtype']}, not F32")
        begin, end = t["data_offsets"]
        x = torch.frombuffer(bytearray(body[begin:end]), dtype=torch.float32)
        if sys.byteorder != "little":  # the file is little-endian
            x = torch.frombuffer(bytearray(x.numpy().byteswap().tobytes()), dtype=torch.float32)
        tensors[name] = x.reshape(t["shape"])
    return meta, tensors


def load(path):
    """The model in eval mode, its config and its vocabulary (a list of characters)."""
    meta, tensors = read_checkpoint(path)
    cfg = json.loads(meta["config"])
    vocab = json.loads(meta["vocab"])
    model = GPT(cfg)
    model.load_state_dict({k: v for k, v in tensors.items() if not k.startswith("optimizer.")}, strict=True)
    return model.eval(), cfg, vocab


def encode(prompt, vocab, block_size):
    ids = {ch: i for i, ch in enumerate(vocab)}
    for n, ch in enumerate(prompt):
        if ch not in ids:
            raise ValueError(f"{ch!r} (U+{ord(ch):04X}) at character {n} of the prompt is not in the "
                             f"vocabulary of {len(vocab)} characters")
    if not prompt or len(prompt) > block_size:
        raise ValueError(f"the prompt has {len(prompt)} characters; this model takes 1 to {block_size}")
    return [ids[ch] for ch in prompt]


# ---------------------------------------------------------------- the command

def main():
    p = argparse.ArgumentParser(description="Run an Attention Playground checkpoint in PyTorch.")
    p.add_argument("checkpoint", help="a .safetensors file written by gpt train")
    p.add_argument("--prompt", required=True, help="the text to run (1 to block_size characters)")
    p.add_argument("--json", action="store_true", help="print every logit as JSON {tokens, logits}")
    p.add_argument("--check", action="store_true", help="compare with the project's `gpt logits`")
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--gpt", default=os.path.join(here, "..", "build", "gpt"), help="the gpt CLI (default build/gpt)")
    p.add_argument("--tolerance", type=float, default=1e-4, help="largest |difference| --check accepts (default 1e-4)")
    a = p.parse_args()
    try:
        model, cfg, vocab = load(a.checkpoint)
        ids = encode(a.prompt, vocab, cfg["block_size"])
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        print(f"gpt_torch.py: {e}", file=sys.stderr)
        return 1
    torch.set_num_threads(1)
    with torch.no_grad():
        logits = model(torch.tensor([ids]))[0]  # (T, V)
        logits64 = model.double()(torch.tensor([ids]))[0]  # the same in float64
    tokens = [vocab[i] for i in ids]

    if a.json:
        print(json.dumps({"tokens": tokens, "logits": logits.tolist()}, ensure_ascii=False))
    else:
        print(f"{a.checkpoint}: {cfg['n_layer']} layers, n_embd {cfg['n_embd']}, {cfg['n_head']} heads, "
              f"vocab {cfg['vocab_size']}, mask {cfg['mask']}, softmax {cfg['softmax']}")
        probs = torch.softmax(logits, dim=-1)
        for t, tok in enumerate(tokens):
            top = torch.topk(probs[t], min(5, len(vocab)))
            guesses = "  ".join(f"{vocab[i]!r} {p:.3f}" for p, i in zip(top.values.tolist(), top.indices.tolist()))
            print(f"  after {''.join(tokens[:t + 1])!r}: {guesses}")
    if not a.check:
        return 0

    try:
        out = subprocess.run([a.gpt, "logits", a.checkpoint, "--prompt", a.prompt],
                             capture_output=True, text=True, encoding="utf-8")
    except OSError as e:
        print(f"gpt_torch.py: cannot run {a.gpt}: {e} (build it: scripts/build native)", file=sys.stderr)
        return 1
    try:
        ours = json.loads(out.stdout)
    except json.JSONDecodeError:
        ours = {"ok": False, "error": (out.stdout + out.stderr).strip()}
    if out.returncode != 0 or not ours.get("ok"):
        print(f"gpt_torch.py: {a.gpt} logits failed: {ours.get('error', out.stderr.strip())}", file=sys.stderr)
        return 1
    if ours["tokens"] != tokens:
        print(f"gpt_torch.py: the tokens differ: {ours['tokens']} vs {tokens}", file=sys.stderr)
        return 1
    theirs = torch.tensor(ours["logits"], dtype=torch.float64)
    if tuple(theirs.shape) != tuple(logits.shape):
        print(f"gpt_torch.py: the logits are {tuple(theirs.shape)} but PyTorch's are {tuple(logits.shape)}",
              file=sys.stderr)
        return 1
    diff = (theirs - logits.double()).abs().max().item()
    ours64 = (theirs - logits64).abs().max().item()
    torch64 = (logits.double() - logits64).abs().max().item()
    scale = logits.abs().max().item()
    print(f"max |project − PyTorch| = {diff:.3g} over {theirs.numel()} logits (largest |logit| {scale:.3g}); "
          f"against float64: project {ours64:.3g}, PyTorch {torch64:.3g}; tolerance {a.tolerance:g}")
    if not diff <= a.tolerance:
        print("gpt_torch.py: FAILED: the project's logits and PyTorch's differ by more than the tolerance",
              file=sys.stderr)
        return 1
    print("ok: the project's logits and PyTorch's agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
