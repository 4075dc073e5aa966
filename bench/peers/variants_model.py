"""variants_model.py — W7's PyTorch peer model (bench/README.md): nanoGPT's GPT with the modern
variants of our gpt.h, written the way a PyTorch user writes them (Llama's rotate_half RoPE on
cached cos/sin, repeat_interleave for grouped-query heads, an RMSNorm module, a SwiGLU MLP, ALiBi as
a cached additive bias, the window as part of the cached boolean mask). It is the peer of a
benchmark, so it is idiomatic, not a copy of our arithmetic; scripts/gpt_torch.py is the
independent model the tests check our numbers against.

The same parameters as ours for the same config (the benchmark prints both counts): biases in every
Linear and LayerNorm, RMSNorm a weight only, SwiGLU's c_fc (gate | up) of 2·4·n_embd rows, the head
tied to the token embedding, no position table with RoPE or ALiBi. RoPE pairs the halves of each
head (GPT-NeoX / Llama, our default), θ base 10000, every dimension turned; ALiBi's slopes are
2^(−8h/n_head), h from 1; the window w hides key j from query i when j ≤ i − w.
Limits: training only (no KV cache); float32 on the CPU.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, C, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(C))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self, C, H, KV, block, pos, window):
        super().__init__()
        self.H, self.KV, self.hs = H, KV, C // H
        self.c_attn = nn.Linear(C, C + 2 * KV * self.hs)
        self.c_proj = nn.Linear(C, C)
        ones = torch.ones(block, block, dtype=torch.bool)
        mask = torch.triu(ones, 1)
        if window:
            mask = mask | torch.tril(ones, -window)
        self.register_buffer("mask", mask)
        self.rope = pos == "rope"
        if self.rope:
            inv = 1.0 / (10000.0 ** (torch.arange(0, self.hs, 2).float() / self.hs))
            ang = torch.outer(torch.arange(block).float(), inv)
            ang = torch.cat((ang, ang), dim=-1)
            self.register_buffer("cos", ang.cos())
            self.register_buffer("sin", ang.sin())
        self.alibi = pos == "alibi"
        if self.alibi:
            slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / H) for h in range(H)])
            dist = torch.arange(block)[:, None] - torch.arange(block)[None, :]
            self.register_buffer("bias", -slopes[:, None, None] * dist)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split([C, self.KV * self.hs, self.KV * self.hs], dim=2)
        q = q.view(B, T, self.H, self.hs).transpose(1, 2)
        k = k.view(B, T, self.KV, self.hs).transpose(1, 2)
        v = v.view(B, T, self.KV, self.hs).transpose(1, 2)
        if self.rope:
            cos, sin = self.cos[:T], self.sin[:T]
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
        if self.KV != self.H:
            k = k.repeat_interleave(self.H // self.KV, dim=1)
            v = v.repeat_interleave(self.H // self.KV, dim=1)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.hs))
        if self.alibi:
            att = att + self.bias[:, :T, :T]
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class SwiGLU(nn.Module):
    def __init__(self, C):
        super().__init__()
        self.c_fc = nn.Linear(C, 2 * 4 * C)
        self.c_proj = nn.Linear(4 * C, C)

    def forward(self, x):
        gate, up = self.c_fc(x).chunk(2, dim=-1)
        return self.c_proj(F.silu(gate) * up)


class Block(nn.Module):
    def __init__(self, C, H, KV, block, pos, norm, mlp, window):
        super().__init__()
        Norm = RMSNorm if norm == "rmsnorm" else nn.LayerNorm
        self.ln_1, self.ln_2 = Norm(C), Norm(C)
        self.attn = Attention(C, H, KV, block, pos, window)
        self.mlp = SwiGLU(C) if mlp == "swiglu" else nn.Sequential(nn.Linear(C, 4 * C), nn.GELU(), nn.Linear(4 * C, C))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class VariantGPT(nn.Module):
    """block, L, C, H as W3's; n_kv_head 0 means H; pos 'learned' | 'rope' | 'alibi'; norm
    'layernorm' | 'rmsnorm'; mlp 'gelu' | 'swiglu'; window 0 means none."""

    def __init__(self, V, block, L, C, H, n_kv_head=0, pos="learned", norm="layernorm", mlp="gelu", window=0):
        super().__init__()
        self.wte = nn.Embedding(V, C)
        self.wpe = nn.Embedding(block, C) if pos == "learned" else None
        self.h = nn.ModuleList(Block(C, H, n_kv_head or H, block, pos, norm, mlp, window) for _ in range(L))
        self.ln_f = RMSNorm(C) if norm == "rmsnorm" else nn.LayerNorm(C)
        self.lm_head = nn.Linear(C, V, bias=False)
        self.lm_head.weight = self.wte.weight  # tied

    def forward(self, idx, targets=None):
        T = idx.size(1)
        x = self.wte(idx)
        if self.wpe is not None:
            x = x + self.wpe(torch.arange(T))
        for b in self.h:
            x = b(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None if targets is None else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss


# W7's configurations (bench_gpt.cpp's w7_configs): {name: (W3's dims, the variants)}.
LLAMA = dict(pos="rope", norm="rmsnorm", mlp="swiglu", n_kv_head=2)
W7 = {
    "W7_train_tiny_llama": (dict(L=2, C=64, H=4, block=64), LLAMA),
    "W7_train_small_llama": (dict(L=4, C=128, H=4, block=128), LLAMA),
    "W7_train_tiny_alibi": (dict(L=2, C=64, H=4, block=64), dict(pos="alibi")),
    "W7_train_tiny_window": (dict(L=2, C=64, H=4, block=64), dict(window=16)),
}
