#!/usr/bin/env python3
"""gpt_variants_torch_test.py — ctest `gpt_variants_torch`: the GPT's variants (gpt.h: RoPE in both
pairings and partial, ALiBi, no positions, grouped-query and multi-query, RMSNorm, SwiGLU, no bias,
a sliding window with and without attention sinks, the Llama block, and the Llama family's head_size,
untied lm_head, qkv_bias, qk_norm and Llama 3's rope_scaling) against our own PyTorch model
(torch_models.variant_forward).

    gpt_variants_torch_test.py GPT WORKDIR

For each case it trains a small model with `gpt train` and the case's flags (40 steps: logits away
from uniform), then runs `gpt logits FILE --prompt P --grads` and compares, with PyTorch's model of
the same config and the checkpoint's weights: every logit (|ours − PyTorch| ≤ 1e-4), the loss
(≤ 1e-5), and every parameter's gradient (|ours − PyTorch| ≤ 1e-6 + 1e-4·max|g| per tensor: float32
sums in other orders, through two layers and the backward). For the Llama block, ALiBi with a
window and the window with sinks it also opens each head in the stepper (`gpt attention --head` | `attention trace`): the same
weights, bit for bit. Exits 77 where PyTorch is missing.
"""
import json
import os
import sys

from torch_models import require_torch, run, train_small, variant_forward

require_torch("gpt_variants_torch")
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
from gpt_torch import encode, read_checkpoint  # noqa: E402  (the file reader only)

DATA = ["--task", "grammar", "--n-chars", "20000"]
PROMPT = "the cat sees a dog"[:16]
CASES = [
    ("rope_halves", ["--pos", "rope"]),
    ("rope_interleaved_partial", ["--pos", "rope", "--rope", "interleaved", "--rope-dims", "4", "--rope-base", "500"]),
    ("alibi", ["--pos", "alibi"]),
    ("no_positions", ["--pos", "none"]),
    ("gqa_2", ["--n-kv-head", "2"]),
    ("mqa", ["--n-kv-head", "1"]),
    ("rmsnorm", ["--norm", "rmsnorm"]),
    ("swiglu", ["--mlp", "swiglu", "--n-inner", "40"]),
    ("no_bias_swiglu", ["--mlp", "swiglu", "--bias", "false"]),
    ("window", ["--window", "5"]),
    ("alibi_window", ["--pos", "alibi", "--window", "4"]),
    ("window_sink", ["--window", "4", "--sink", "2"]),
    ("rope_gqa_window_sink", ["--pos", "rope", "--n-kv-head", "2", "--window", "3", "--sink", "1"]),
    ("alibi_window_sink_inclusive", ["--pos", "alibi", "--window", "5", "--sink", "3", "--mask", "inclusive"]),
    ("llama", ["--pos", "rope", "--norm", "rmsnorm", "--mlp", "swiglu", "--n-kv-head", "2", "--bias", "false"]),
    ("window_inclusive_rope_mqa", ["--window", "6", "--mask", "inclusive", "--pos", "rope", "--n-kv-head", "1"]),
    # the Llama family's options (gpt.h): heads wider than n_embd/n_head, an untied output layer,
    # Qwen2's q/k/v biases alone, Qwen3's q/k norms, Llama 3's scaled RoPE (its blend region: the
    # original length 16 makes every wavelength of head_size 12 fall in one of the three parts)
    ("head_size", ["--pos", "rope", "--head-size", "12", "--n-kv-head", "2"]),
    ("untied", ["--tie-embeddings", "false", "--norm", "rmsnorm"]),
    ("qkv_bias", ["--bias", "false", "--qkv-bias", "true", "--pos", "rope"]),
    ("qk_norm", ["--pos", "rope", "--qk-norm", "true", "--norm", "rmsnorm", "--head-size", "10", "--bias", "false"]),
    ("llama3_rope", ["--pos", "rope", "--rope-scaling", "4,1,4,16", "--rope-base", "500"]),
    ("qwen3", ["--pos", "rope", "--norm", "rmsnorm", "--mlp", "swiglu", "--n-kv-head", "2", "--bias", "false",
               "--head-size", "16", "--qk-norm", "true", "--tie-embeddings", "false"]),
]


def check(name, ckpt, gpt):
    meta, tensors = read_checkpoint(ckpt)
    cfg = json.loads(meta["config"])
    ids = encode(PROMPT, json.loads(meta["vocab"]), cfg["block_size"])
    ours = json.loads(run([gpt, "logits", ckpt, "--prompt", PROMPT, "--grads"], echo=False))
    tied = cfg.get("tie_embeddings", True)
    params = {k: v.clone().requires_grad_(True) for k, v in tensors.items()
              if not k.startswith("optimizer.") and (k != "lm_head.weight" or not tied)}
    logits = variant_forward(cfg, params, ids)
    d_logits = (torch.tensor(ours["logits"]) - logits.detach()).abs().max().item()
    if d_logits > 1e-4:
        sys.exit(f"{name}: FAILED: the logits differ by {d_logits:.3g} > 1e-4")
    loss = torch.nn.functional.cross_entropy(variant_forward(cfg, params, ids[:-1]), torch.tensor(ids[1:]))
    loss.backward()
    d_loss = abs(ours["loss"] - loss.item())
    worst = ("", 0.0, 0.0)
    for k, p in params.items():
        g = p.grad if p.grad is not None else torch.zeros_like(p)
        mine = torch.tensor(ours["grads"][k]).reshape(g.shape)
        diff = (mine - g).abs().max().item()
        bound = 1e-6 + 1e-4 * g.abs().max().item()
        if diff / bound > worst[1] / max(worst[2], 1e-30) or not worst[0]:
            worst = (k, diff, bound)
        if diff > bound:
            sys.exit(f"{name}: FAILED: ∂loss/∂{k} differs by {diff:.3g} (bound {bound:.3g})")
    largest = logits.abs().max().item()
    print(f"{name}: max |logit diff| {d_logits:.2e} (largest |logit| {largest:.2f}), |loss diff| {d_loss:.1e}, "
          f"worst gradient {worst[0]} {worst[1]:.1e} of {worst[2]:.1e}")
    if d_loss > 1e-5:
        sys.exit(f"{name}: FAILED: the loss differs by {d_loss:.3g}")
    if largest < 1.0:
        sys.exit(f"{name}: the logits are tiny ({largest}): the model did not train, so the check proves little")


def check_heads(name, ckpt, gpt):
    """Each head of the last layer as a stepper spec (`gpt attention --head`, with its variant's
    window and ALiBi slope; RoPE's q and k already turned), traced by the `attention` CLI: the
    stepper's weights equal the model's, bit for bit (both are the reference arithmetic)."""
    attention = os.path.join(os.path.dirname(gpt), "attention")
    maps = json.loads(run([gpt, "attention", ckpt, "--prompt", PROMPT], echo=False))["maps"]
    for h in range(len(maps[-1])):
        spec = run([gpt, "attention", ckpt, "--prompt", PROMPT, "--head", f"{len(maps)}.{h + 1}"], echo=False)
        trace = json.loads(run([attention, "trace"], stdin=spec, echo=False))["trace"]
        if trace["heads"][0]["weights"] != maps[-1][h]:
            sys.exit(f"{name}: FAILED: head {h + 1} traced by the stepper differs from the model's weights")
    print(f"{name}: every head of the last layer opens in the stepper with the same weights")


def main():
    gpt, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    only = sys.argv[3:]  # case names, to run a few
    for name, flags in CASES:
        if only and name not in only:
            continue
        ckpt = os.path.join(work, f"variants_{name}.safetensors")
        train_small(gpt, ckpt, DATA + flags + ["--threads", "1"], steps=40)
        check(name, ckpt, gpt)
        if name in ("llama", "alibi_window", "qwen3", "window_sink", "rope_gqa_window_sink"):
            check_heads(name, ckpt, gpt)
    print("gpt_variants_torch: ok")


if __name__ == "__main__":
    main()
