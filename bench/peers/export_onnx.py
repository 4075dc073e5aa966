#!/usr/bin/python3
"""export_onnx.py — the ONNX graphs onnxruntime-web runs in bench/peers/ort_peer.mjs, exported from
PyTorch (Debian's python3-torch; the `onnx` Python package is not needed):
  attn_T{64,256,1024}.onnx  W1: out = softmax(QKᵀ/√64 + causal mask)·V, inputs q, k, v (T, 64)
  mm_n{64,256,512}.onnx     W2: c = a·b, inputs a, b (n, n)
  gpt_tiny.onnx             W4: the tiny GPT of torch_peer.py (seed 0), input idx (1, T) int64
                            with T dynamic (1 … 64), output the last position's logits (1, 65)
Opset 17, static shapes but the GPT's T. The weights are random: only the time matters.
Limits: the graph is whatever torch.onnx.export traces from the PyTorch code (the mask a constant,
the softmax one node); onnxruntime fuses what it recognises at graphOptimizationLevel 'all'.

  /usr/bin/python3 bench/peers/export_onnx.py [DIR]     (default bench/out/onnx)
"""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_peer import GPT, VOCAB  # noqa: E402  (beside this file)


class Attention(torch.nn.Module):
    def __init__(self, T):
        super().__init__()
        self.register_buffer("mask", torch.triu(torch.ones(T, T, dtype=torch.bool), 1))

    def forward(self, q, k, v):
        att = (q @ k.t()) * (1.0 / math.sqrt(q.size(-1)))
        att = att.masked_fill(self.mask, float("-inf"))
        return torch.softmax(att, dim=-1) @ v


class Matmul(torch.nn.Module):
    def forward(self, a, b):
        return a @ b


class LastLogits(torch.nn.Module):
    """The GPT's logits at the last position only: what greedy generation reads."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, idx):
        return self.m(idx)[0][:, -1, :]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "bench/out/onnx"
    os.makedirs(out, exist_ok=True)
    for T in (64, 256, 1024):
        x = torch.randn(T, 64)
        torch.onnx.export(Attention(T), (x, x, x), os.path.join(out, f"attn_T{T}.onnx"),
                          input_names=["q", "k", "v"], output_names=["o"], opset_version=17)
    for n in (64, 256, 512):
        x = torch.randn(n, n)
        torch.onnx.export(Matmul(), (x, x), os.path.join(out, f"mm_n{n}.onnx"),
                          input_names=["a", "b"], output_names=["c"], opset_version=17)
    torch.manual_seed(0)
    gpt = GPT(VOCAB, 64, 2, 64, 4).eval()
    torch.onnx.export(LastLogits(gpt), (torch.zeros(1, 64, dtype=torch.long),), os.path.join(out, "gpt_tiny.onnx"),
                      input_names=["idx"], output_names=["logits"], dynamic_axes={"idx": {1: "T"}}, opset_version=17)
    print("exported", ", ".join(sorted(f for f in os.listdir(out) if f.endswith(".onnx"))), "to", out)


if __name__ == "__main__":
    main()
