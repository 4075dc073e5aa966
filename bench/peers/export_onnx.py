#!/usr/bin/python3
"""export_onnx.py — the ONNX graphs onnxruntime-web runs in bench/peers/ort_peer.mjs, exported from
PyTorch (Debian's python3-torch; the `onnx` Python package is not needed):
  attn_T{64,256,1024}.onnx  W1: out = softmax(QKᵀ/√64 + causal mask)·V, inputs q, k, v (T, 64)
  mm_n{64,256,512}.onnx     W2: c = a·b, inputs a, b (n, n)
  gpt_tiny.onnx             W4: the tiny GPT of torch_peer.py (seed 0), input idx (1, T) int64
                            with T dynamic (1 … 64), output the last position's logits (1, 65)
  gpt2s.onnx                W6: GPT-2 small's shape with gpt2s.py's weights (the PyTorch peer's
                            and ours), one step through the KV cache: inputs idx (1, T) int64 and
                            past_key_i, past_value_i (1, 12, T_past, 64) for each layer i (T_past
                            may be 0: the prompt), outputs logits (1, T, 50257) and present_key_i,
                            present_value_i (1, 12, T_past + T, 64); position ids from T_past.
                            Only with --w6 or "w6" in ONLY (a 500 MB file, a minute to export);
                            beside it gpt2s_check.json: PyTorch's logits and greedy tokens there
                            (gpt2s.py's check), which ort_peer.mjs compares its own to before timing.
  smollm.onnx               W8: SmolLM2-135M's shape with smollm.py's weights (bf16-rounded, held
                            as float32: onnxruntime-web's wasm provider has no bf16 matmul), the
                            same step: past_key_i, past_value_i (1, 3, T_past, 64), logits
                            (1, T, 49152). Only with --w8 or "w8" in ONLY (540 MB); beside it
                            smollm_check.json (PyTorch's float32 check values).
Opset 17, static shapes but the GPT's T (and W6's T_past). The weights are random: only the time matters.
Limits: the graph is whatever torch.onnx.export traces from the PyTorch code (the mask a constant,
the softmax one node); onnxruntime fuses what it recognises at graphOptimizationLevel 'all'.

  /usr/bin/python3 bench/peers/export_onnx.py [DIR] [--w6] [--w8]     (default bench/out/onnx)
"""
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2s  # noqa: E402  (beside this file)
from torch_peer import GPT, VOCAB, gpt2s_check, gpt2s_model  # noqa: E402
import smollm  # noqa: E402  (W8's PyTorch model, beside this file)


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


class GPT2sStep(torch.nn.Module):
    """idx (1, T) and each layer's past key and value (1, H, T_past, hs) → logits (1, T, V) and
    each layer's present key and value (1, H, T_past + T, hs): torch_peer.py's cached forward."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, idx, *past):
        caches = [{"k": past[2 * i], "v": past[2 * i + 1]} for i in range(len(self.m.h))]
        logits, _ = self.m(idx, caches=caches, pos0=past[0].size(2))
        return (logits,) + tuple(t for c in caches for t in (c["k"], c["v"]))


def export_cached(step, layers, kv_heads, head_dim, path):
    """One step through the KV cache (step: idx and the past → logits and the presents) as ONNX, T
    and the cache's length dynamic."""
    kv = [f"{kind}_{i}" for i in range(layers) for kind in ("key", "value")]
    past = tuple(torch.zeros(1, kv_heads, 3, head_dim) for _ in kv)
    dyn = {"idx": {1: "T"}, "logits": {1: "T"}}
    dyn.update({f"past_{n}": {2: "T_past"} for n in kv})
    dyn.update({f"present_{n}": {2: "T_total"} for n in kv})
    with torch.no_grad():
        torch.onnx.export(step, (torch.zeros(1, 2, dtype=torch.long),) + past, path,
                          input_names=["idx"] + [f"past_{n}" for n in kv],
                          output_names=["logits"] + [f"present_{n}" for n in kv], dynamic_axes=dyn, opset_version=17)


def write_json(path, value):
    with open(path, "w", encoding="utf8") as f:
        json.dump(value, f)


def export_gpt2s(out):
    """gpt2s.onnx and gpt2s_check.json (PyTorch's check values, gpt2s.py)."""
    m = gpt2s_model()
    L, H, C = gpt2s.CONFIG["n_layer"], gpt2s.CONFIG["n_head"], gpt2s.CONFIG["n_embd"]
    export_cached(GPT2sStep(m), L, H, C // H, os.path.join(out, "gpt2s.onnx"))
    write_json(os.path.join(out, "gpt2s_check.json"), gpt2s_check(m))


class SmolStep(torch.nn.Module):
    """W8 (smollm.py): idx (1, T) and each layer's past key and value (1, KV, T_past, HD) → logits
    (1, T, V) and each layer's present key and value (1, KV, T_past + T, HD)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, idx, *past):
        caches = [{"k": past[2 * i], "v": past[2 * i + 1]} for i in range(smollm.L)]
        logits = self.m(idx, caches, pos0=past[0].size(2))
        return (logits,) + tuple(t for c in caches for t in (c["k"], c["v"]))


def export_smollm(out):
    """smollm.onnx (float32: the bf16-rounded weights held as float32, as smollm.py --dtype f32
    runs; onnxruntime-web's wasm provider has no bf16 matmul) and smollm_check.json (PyTorch's
    check values in float32, what ort_peer.mjs compares its own with)."""
    m = smollm.model(torch.float32)
    export_cached(SmolStep(m), smollm.L, smollm.KV, smollm.HD, os.path.join(out, "smollm.onnx"))
    with torch.no_grad():
        idx = torch.tensor([smollm.prompt()])
        caches = [dict() for _ in range(smollm.L)]
        last = m(idx, caches)[0, -1]
        cur, greedy = last.argmax().view(1, 1), []
        for t in range(smollm.CHECK_TOKENS):
            greedy.append(int(cur))
            cur = m(cur, caches, smollm.PROMPT_LEN + t)[:, -1].argmax(-1, keepdim=True)
    write_json(os.path.join(out, "smollm_check.json"),
               {"argmax": int(last.argmax()), "logits": [float(last[j]) for j in smollm.CHECK_IDS],
                "check_ids": smollm.CHECK_IDS, "greedy": greedy, "prompt": smollm.prompt(), "tolerance": 1e-3})


def main():
    w6 = "--w6" in sys.argv or "w6" in os.environ.get("ONLY", "").split(",")
    w8 = "--w8" in sys.argv or "w8" in os.environ.get("ONLY", "").split(",")
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = args[0] if args else "bench/out/onnx"
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
    if w6:
        export_gpt2s(out)
    if w8:
        export_smollm(out)
    print("exported", ", ".join(sorted(f for f in os.listdir(out) if f.endswith(".onnx"))), "to", out)


if __name__ == "__main__":
    main()
