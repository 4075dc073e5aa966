#!/usr/bin/python3
"""smollm.py — W8's PyTorch peer (bench/README.md): SmolLM2-135M's shape (Llama: 30 layers, hidden
576, 9 heads of 64, 3 key/value heads, vocabulary 49,152, SwiGLU of 1,536, RMSNorm ε 1e-5, RoPE
θ 100,000, embeddings tied) with the weights bench/smollm.h makes for ours: element i of the tensor
`name` (transformers' name) is gpt2s.py's r for that name, RMSNorm weights 1 + 0.1·r, every other
tensor (0.02·√3)·r, in float32, then rounded to bfloat16. A benchmark: it prints, never fails.

  --dtype bf16 (default): the model in bfloat16 as transformers runs it with torch_dtype=bfloat16 —
      weights and hidden states bf16, every Linear a bf16 matmul (PyTorch 1.13 on the CPU: oneDNN's
      bf16 kernels, emulated in float32 on CPUs without AVX512_BF16, so slow there but correct),
      RMSNorm and softmax in float32. Its logits differ from ours (float32 activations on the same
      bf16 weights) by bf16's rounding of the activations (~1e-2).
  --dtype f32: the same bf16-rounded weights held as float32 (4 bytes a weight), float32 throughout:
      the peer to quote where bf16 matmuls are unusable; its logits agree with ours to ~1e-4.
Workloads, one process, `--threads` threads (1 in every sitting quoted; 2 against our 2):
  W8_smollm_<dtype>_check      the 128-token prompt's last logits at every 4,096th id from 17, their
                               argmax and 8 greedy tokens (compare with ap_bench_gpt --only w8)
  W8_smollm_<dtype>_prefill128 the prompt's forward (all 128 positions' logits)
  W8_smollm_<dtype>_gen64      64 greedy tokens through the KV cache after the prompt (the cache
                               refilled with the prompt before each trial, untimed)
Lines as torch_peer.py's W6 (time_w6). Q8_0 has no PyTorch peer: ours in Q8_0 is compared with ours
in BF16.

  /usr/bin/python3 bench/peers/smollm.py [--threads 1] [--dtype bf16|f32] [--quick]
"""
import argparse
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2s  # noqa: E402  (the weights' hash and splitmix)
from torch_peer import time_w6  # noqa: E402

L, C, NH, KV, V, H = 30, 576, 9, 3, 49152, 1536
HD = C // NH
THETA, EPS = 100000.0, 1e-5
PROMPT_LEN, GEN_TOKENS, CHECK_TOKENS = 128, 64, 8
CHECK_IDS = list(range(17, V, 4096))


def prompt():
    return [(i * 3083 + 11) % V for i in range(PROMPT_LEN)]


def values(name, shape):
    """The float32 array of transformers' tensor `name` (see the top of this file)."""
    n = int(np.prod(shape))
    norm = "norm.weight" in name
    scale = np.float32(0.1 if norm else 0.02 * 3 ** 0.5)
    seed = np.uint64(gpt2s.fnv1a64(name))
    i = np.arange(1, n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = seed + i * gpt2s._GOLDEN
        z = (z ^ (z >> np.uint64(30))) * gpt2s._M1
        z = (z ^ (z >> np.uint64(27))) * gpt2s._M2
        z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(40)).astype(np.float32) * np.float32(2.0 ** -24)
    v = (u * np.float32(2.0) - np.float32(1.0)) * scale
    return (np.float32(1.0) + v if norm else v).reshape(shape)


def rms_norm(x, w):
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
    return w * xf.to(x.dtype)


def rotate_half(x):
    return torch.cat((-x[..., HD // 2:], x[..., :HD // 2]), dim=-1)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = nn.Parameter(torch.ones(C))
        self.post_attention_layernorm = nn.Parameter(torch.ones(C))
        self.q_proj, self.k_proj = nn.Linear(C, C, bias=False), nn.Linear(C, KV * HD, bias=False)
        self.v_proj, self.o_proj = nn.Linear(C, KV * HD, bias=False), nn.Linear(C, C, bias=False)
        self.gate_proj, self.up_proj = nn.Linear(C, H, bias=False), nn.Linear(C, H, bias=False)
        self.down_proj = nn.Linear(H, C, bias=False)

    def forward(self, x, cos, sin, cache):
        B, T, _ = x.shape
        h = rms_norm(x, self.input_layernorm)
        q = self.q_proj(h).view(B, T, NH, HD).transpose(1, 2)
        k = self.k_proj(h).view(B, T, KV, HD).transpose(1, 2)
        v = self.v_proj(h).view(B, T, KV, HD).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        if "k" in cache:
            k, v = torch.cat([cache["k"], k], dim=2), torch.cat([cache["v"], v], dim=2)
        cache["k"], cache["v"] = k, v
        # repeat_interleave(NH // KV, dim=1), written so that torch.onnx.export keeps S dynamic
        k = k[:, :, None].expand(B, KV, NH // KV, k.shape[2], HD).reshape(B, NH, -1, HD)
        v = v[:, :, None].expand(B, KV, NH // KV, v.shape[2], HD).reshape(B, NH, -1, HD)
        s = q @ k.transpose(-1, -2) / math.sqrt(HD)
        if T > 1:
            S = k.shape[2]
            s = s + torch.full((T, S), float("-inf"), dtype=s.dtype).triu(S - T + 1)
        a = torch.softmax(s.float(), dim=-1).to(q.dtype) @ v
        x = x + self.o_proj(a.transpose(1, 2).reshape(B, T, C))
        h = rms_norm(x, self.post_attention_layernorm)
        return x + self.down_proj(nn.functional.silu(self.gate_proj(h)) * self.up_proj(h))


class Llama(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(V, C)
        self.layers = nn.ModuleList(Block() for _ in range(L))
        self.norm = nn.Parameter(torch.ones(C))
        inv = 1.0 / (THETA ** (torch.arange(0, HD, 2, dtype=torch.float32) / HD))
        f = torch.outer(torch.arange(8192, dtype=torch.float32), inv)
        self.register_buffer("cos", torch.cat([f, f], -1).cos(), persistent=False)
        self.register_buffer("sin", torch.cat([f, f], -1).sin(), persistent=False)

    def forward(self, idx, caches, pos0=0):
        x = self.embed_tokens(idx)
        T = idx.shape[1]
        cos, sin = self.cos[pos0:pos0 + T].to(x.dtype), self.sin[pos0:pos0 + T].to(x.dtype)
        for b, c in zip(self.layers, caches):
            x = b(x, cos, sin, c)
        return (rms_norm(x, self.norm) @ self.embed_tokens.weight.t()).float()  # tied lm_head


def hf_name(name):
    """transformers' name of this module's parameter `name`."""
    n = "model." + (name if name.endswith(".weight") else name + ".weight")
    for a in ("q_proj", "k_proj", "v_proj", "o_proj"):
        n = n.replace("." + a + ".", ".self_attn." + a + ".")
    for a in ("gate_proj", "up_proj", "down_proj"):
        n = n.replace("." + a + ".", ".mlp." + a + ".")
    return n


def model(dtype):
    m = Llama().eval()
    with torch.no_grad():
        for name, p in m.named_parameters():
            p.copy_(torch.from_numpy(values(hf_name(name), tuple(p.shape))).to(torch.bfloat16).float())
    return m.to(dtype)


@torch.inference_mode()
def w8(tag, dtype_name, quick):
    dtype = torch.bfloat16 if dtype_name == "bf16" else torch.float32
    m = model(dtype)
    name = f"W8_smollm_{dtype_name}"
    idx = torch.tensor([prompt()])
    caches = [dict() for _ in range(L)]
    last = m(idx, caches)[0, -1]
    cur, greedy = last.argmax().view(1, 1), []
    for t in range(CHECK_TOKENS):
        greedy.append(int(cur))
        cur = m(cur, caches, PROMPT_LEN + t)[:, -1].argmax(-1, keepdim=True)
    params = sum(p.numel() for p in m.parameters())
    print(f"{tag} {name}_check params={params} argmax={int(last.argmax())} logits="
          + ",".join(f"{float(last[j]):.6f}" for j in CHECK_IDS) + " greedy=" + ",".join(map(str, greedy)), flush=True)
    time_w6(tag, f"{name}_prefill128", PROMPT_LEN, 1 if quick else 5, 0 if quick else 1, lambda: None,
            lambda: m(idx, [dict() for _ in range(L)]))
    first = torch.tensor([[int(last.argmax())]])
    state = {}

    def fill():
        state["caches"] = [dict() for _ in range(L)]
        m(idx, state["caches"])

    def gen():
        cur = first
        for t in range(GEN_TOKENS):
            cur = m(cur, state["caches"], PROMPT_LEN + t)[:, -1].argmax(-1, keepdim=True)

    time_w6(tag, f"{name}_gen64", GEN_TOKENS, 1 if quick else 3, 0 if quick else 1, fill, gen)


def main():
    ap = argparse.ArgumentParser(description="W8 in PyTorch on the CPU (bench/README.md).")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--dtype", choices=["bf16", "f32"], default="bf16")
    ap.add_argument("--quick", action="store_true", help="one trial each: proves it runs, measures nothing")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    w8(f"torch{torch.__version__}-t{args.threads}", args.dtype, args.quick)


if __name__ == "__main__":
    main()
