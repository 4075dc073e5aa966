#!/usr/bin/env python3
"""llama_torch_test.py — ctest `llama_torch`: Llama-family models opened from Hugging Face folders
(formats/llama_load.h) give the logits and greedy tokens of our own PyTorch model.

    llama_torch_test.py GPT WORKDIR

For Llama- (Llama 3's rope_scaling, tied embeddings), Qwen2- (q/k/v biases), Qwen3- (q/k norms,
head_dim ≠ hidden/heads) and Mistral-shaped (a sliding window of 5) models with random weights
(2 layers, hidden 64, 4 heads, 2 key/value heads, vocabulary 300), written here in the Hugging Face
layout with our own safetensors writer — one model.safetensors, and three shards with
model.safetensors.index.json — in F32 and BF16:
  - `gpt logits FOLDER --ids …` against hf_forward below, |ours − PyTorch| ≤ 1e-4 (BF16: PyTorch on
    the same BF16-rounded weights, in float32);
  - `gpt sample FOLDER --ids … --greedy -n 20 --json` (our KV cache; Mistral's window smaller than
    the sequence, so generation goes past it) equals PyTorch's greedy tokens, each a full forward;
  - `gpt import FOLDER -o x.safetensors` then `gpt logits x.safetensors`: the same logits;
  - damaged folders refused by the CLI naming the fault: a truncated shard, an index naming a
    missing shard.
hf_forward is written from transformers' modeling_llama / qwen2 / qwen3 / mistral (rotate_half RoPE,
repeat_kv, RMSNorm in float32, SiLU gate, q/k norm before the rotation, the window's mask), in
float64, not from the project's kernels. Exit 77 (skipped) without torch.
"""
import json
import math
import os
import shutil
import subprocess
import sys

import gguf_writer as gw
from safetensors_writer import write_safetensors

try:
    import torch
except ImportError:
    print("llama_torch: skipped: PyTorch is not installed for " + sys.executable)
    sys.exit(77)

# The CLI with float32 activations in every product, as the PyTorch model here: a prompt's BF16
# product on AVX512_BF16 (src/core/kernels/bf16_gemm.h: activations rounded to bf16) is off, it is
# tests/test_bf16_gemm.cpp's.
os.environ["AP_BF16_GEMM"] = "0"
# The command line's; None when another test imports this file for hf_forward.
GPT, WORK = (sys.argv[1], sys.argv[2]) if __name__ == "__main__" else (None, None)
if WORK:
    os.makedirs(WORK, exist_ok=True)

BASE = {"vocab_size": 300, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64,
        "rms_norm_eps": 1e-6, "hidden_act": "silu", "bos_token_id": 1, "eos_token_id": 2}
MODELS = {
    "llama": dict(BASE, model_type="llama", rope_theta=500000.0, tie_word_embeddings=True,
                  rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                "high_freq_factor": 4.0, "original_max_position_embeddings": 16}),
    "qwen2": dict(BASE, model_type="qwen2", rope_theta=1000000.0, tie_word_embeddings=False),
    "qwen3": dict(BASE, model_type="qwen3", head_dim=24, rope_theta=1000000.0, tie_word_embeddings=True),
    "mistral": dict(BASE, model_type="mistral", rope_theta=10000.0, sliding_window=5, tie_word_embeddings=False),
}
PROMPT = [5, 17, 42, 99, 7, 250, 3, 11]
NEW = 20


def names(cfg):
    mt, H, V, I = cfg["model_type"], cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim", H // nh)
    out = [("model.embed_tokens.weight", (V, H))]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        out.append((p + "input_layernorm.weight", (H,)))
        for n, rows in (("q", nh * hd), ("k", nkv * hd), ("v", nkv * hd)):
            out.append((p + f"self_attn.{n}_proj.weight", (rows, H)))
            if mt == "qwen2":
                out.append((p + f"self_attn.{n}_proj.bias", (rows,)))
        out.append((p + "self_attn.o_proj.weight", (H, nh * hd)))
        if mt == "qwen3":
            out += [(p + "self_attn.q_norm.weight", (hd,)), (p + "self_attn.k_norm.weight", (hd,))]
        out.append((p + "post_attention_layernorm.weight", (H,)))
        out += [(p + "mlp.gate_proj.weight", (I, H)), (p + "mlp.up_proj.weight", (I, H)),
                (p + "mlp.down_proj.weight", (H, I))]
    out.append(("model.norm.weight", (H,)))
    if not cfg["tie_word_embeddings"]:
        out.append(("lm_head.weight", (V, H)))
    return out


def random_weights(cfg, seed):
    g = torch.Generator().manual_seed(seed)
    w = {}
    for n, shape in names(cfg):
        if n.endswith("norm.weight") or "layernorm" in n:
            w[n] = 1.0 + 0.2 * torch.randn(*shape, generator=g)
        elif n.endswith(".bias"):
            w[n] = 0.1 * torch.randn(*shape, generator=g)
        else:
            w[n] = torch.randn(*shape, generator=g) / math.sqrt(shape[-1]) * (2.0 if "embed" in n else 1.0)
    return w


def tokenizer_json():
    """A byte-level BPE tokenizer.json: byte b is id b, one merge "h i" → id 258, <s> and </s>."""
    b2u = gw.bytes_to_unicode()
    vocab = {b2u[b]: b for b in range(256)}
    vocab["hi"] = 258
    special = lambda i, c: {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,  # noqa: E731
                            "normalized": False, "special": True}
    level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [special(256, "<s>"), special(257, "</s>")], "normalizer": None,
            "pre_tokenizer": level, "post_processor": None, "decoder": level,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                      "ignore_merges": False, "vocab": vocab, "merges": ["h i"]}}


def write_folder(path, cfg, weights, dtype, shards):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(cfg, f)
    with open(os.path.join(path, "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(), f)
    items = list(weights.items())
    if shards == 1:
        write_safetensors(os.path.join(path, "model.safetensors"), [(n, t, dtype) for n, t in items])
        return
    files = [(f"model-{k + 1:05d}-of-{shards:05d}.safetensors", items[k::shards]) for k in range(shards)]
    for fname, ts in files:
        write_safetensors(os.path.join(path, fname), [(n, t, dtype) for n, t in ts])
    index = {"metadata": {"total_size": 0}, "weight_map": {n: fn for fn, ts in files for n, _ in ts}}
    with open(os.path.join(path, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f)


# ---------------------------------------------------------------- the reference, after transformers

def inv_freq(cfg, hd):
    """transformers' rope init: default, or _compute_llama3_parameters."""
    base = cfg["rope_theta"]
    inv = 1.0 / (base ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    rs = cfg.get("rope_scaling")
    if not rs:
        return inv
    factor, lo, hi, old = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"], rs["original_max_position_embeddings"]
    wavelen = 2 * math.pi / inv
    inv_l = torch.where(wavelen > old / lo, inv / factor, inv)
    smooth = (old / wavelen - lo) / (hi - lo)
    smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
    medium = ~(wavelen < old / hi) & ~(wavelen > old / lo)
    return torch.where(medium, smoothed, inv_l)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rms(x, w, eps):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def hf_forward(cfg, w, ids, probs=None, bf16_inputs=False):
    """Logits (T, V) in float64 of transformers' *ForCausalLM on one sequence; each layer's attention
    weights (n_head, T, T) appended to `probs` when it is a list. bf16_inputs: every product's input
    rounded to bfloat16 first (round to nearest even), as PyTorch's bf16 Linear and our BF16 prompt
    product on AVX512_BF16 (src/core/kernels/bf16_gemm.h) do."""
    w = {k: v.double() for k, v in w.items()}
    H, nh, nkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd, eps, T = cfg.get("head_dim", H // nh), cfg["rms_norm_eps"], len(ids)
    x = w["model.embed_tokens.weight"][torch.tensor(ids)]
    freqs = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq(cfg, hd)[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    visible = j <= i
    if cfg.get("sliding_window"):
        visible = visible & (i - j < cfg["sliding_window"])
    rnd = (lambda h: h.to(torch.bfloat16).double()) if bf16_inputs else (lambda h: h)  # noqa: E731
    lin = lambda h, n: torch.nn.functional.linear(rnd(h), w[n + ".weight"], w.get(n + ".bias"))  # noqa: E731
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        h = rms(x, w[p + "input_layernorm.weight"], eps)
        q = lin(h, p + "self_attn.q_proj").view(T, nh, hd).transpose(0, 1)
        k = lin(h, p + "self_attn.k_proj").view(T, nkv, hd).transpose(0, 1)
        v = lin(h, p + "self_attn.v_proj").view(T, nkv, hd).transpose(0, 1)
        if cfg["model_type"] == "qwen3":
            q = rms(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms(k, w[p + "self_attn.k_norm.weight"], eps)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = k.repeat_interleave(nh // nkv, dim=0), v.repeat_interleave(nh // nkv, dim=0)  # repeat_kv
        s = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        s = s.masked_fill(~visible, float("-inf"))
        a = torch.softmax(s, dim=-1)
        if probs is not None:
            probs.append(a)
        y = (a @ v).transpose(0, 1).reshape(T, nh * hd)
        x = x + lin(y, p + "self_attn.o_proj")
        h = rms(x, w[p + "post_attention_layernorm.weight"], eps)
        x = x + lin(torch.nn.functional.silu(lin(h, p + "mlp.gate_proj")) * lin(h, p + "mlp.up_proj"), p + "mlp.down_proj")
    x = rms(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    return rnd(x) @ head.T


def greedy(cfg, w, ids, n):
    ids = list(ids)
    for _ in range(n):
        ids.append(int(hf_forward(cfg, w, ids)[-1].argmax()))
    return ids


# ---------------------------------------------------------------- checks

def run(args, expect=0, env=None):
    out = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, **env) if env else None)
    if out.returncode != expect:
        sys.exit(f"$ {' '.join(args)}\n{out.stdout}{out.stderr}\nexit status {out.returncode}, expected {expect}")
    return out.stdout + (out.stderr if expect else "")


def ours_logits(model, env=None):
    ids = ",".join(map(str, PROMPT))
    return torch.tensor(json.loads(run([GPT, "logits", model, "--ids", ids], env=env))["logits"], dtype=torch.float64)


def main():
    for k, (name, cfg) in enumerate(MODELS.items()):
        w = random_weights(cfg, 100 + k)
        for dtype in ("F32", "BF16"):
            ref_w = {n: t.to(torch.bfloat16).float() for n, t in w.items()} if dtype == "BF16" else w
            want = hf_forward(cfg, ref_w, PROMPT)
            want_greedy = greedy(cfg, ref_w, PROMPT, NEW)
            for shards in (1, 3):
                folder = os.path.join(WORK, f"{name}_{dtype}_{shards}")
                write_folder(folder, cfg, w, dtype, shards)
                d = (ours_logits(folder) - want).abs().max().item()
                if d > 1e-4:
                    sys.exit(f"{name} {dtype} {shards} file(s): FAILED: the logits differ by {d:.3g} > 1e-4")
                got = json.loads(run([GPT, "sample", folder, "--ids", ",".join(map(str, PROMPT)), "--greedy",
                                      "-n", str(NEW), "--json"]))["ids"]
                if got != want_greedy:
                    sys.exit(f"{name} {dtype} {shards} file(s): FAILED: greedy tokens {got} != PyTorch's {want_greedy}")
                print(f"{name} {dtype} {shards} file(s): max |logit diff| {d:.2e} "
                      f"(largest {want.abs().max().item():.2f}); {NEW} greedy tokens equal")
            if dtype == "BF16":  # the CLI as it runs by default: the prompt's BF16 product where the CPU has it
                got = ours_logits(folder, {"AP_BF16_GEMM": "1"})
                d32 = (got - want).abs().max().item()
                d16 = (got - hf_forward(cfg, ref_w, PROMPT, bf16_inputs=True)).abs().max().item()
                if min(d32, d16) > 1e-4:
                    sys.exit(f"{name} BF16 by default: FAILED: the logits differ from PyTorch's with float32 inputs by "
                             f"{d32:.3g} and with bf16-rounded inputs by {d16:.3g} (> 1e-4 both)")
                print(f"{name} BF16 by default: max |logit diff| {d32:.2e} against float32 inputs, {d16:.2e} against "
                      "bf16-rounded inputs (the CPU's product: the smaller)")
        folder = os.path.join(WORK, f"{name}_F32_1")
        # the folder's tokenizer.json encodes the prompt: "hi!" is [258, 33]
        got = json.loads(run([GPT, "sample", folder, "-p", "hi!", "--greedy", "-n", "5", "--json"]))
        if got["ids"] != greedy(cfg, w, [258, 33], 5) or not got["text"].startswith("hi!"):
            sys.exit(f"{name}: FAILED: the prompt through tokenizer.json: {got}")
        print(f"{name}: the prompt \"hi!\" encodes through tokenizer.json to [258, 33]; greedy tokens equal")
        out = os.path.join(WORK, f"{name}.safetensors")
        run([GPT, "import", folder, "-o", out])
        d = (ours_logits(out) - ours_logits(folder)).abs().max().item()
        if d != 0:
            sys.exit(f"{name}: FAILED: the imported checkpoint's logits differ from the folder's by {d}")
        again = json.loads(run([GPT, "sample", out, "-p", "hi!", "--greedy", "-n", "5", "--json"]))
        if again["ids"] != got["ids"]:
            sys.exit(f"{name}: FAILED: the imported checkpoint's tokenizer or generation differs: {again}")
        print(f"{name}: gpt import's checkpoint gives the same logits, and keeps the tokenizer")
    # damaged folders, refused through the CLI by name
    folder = os.path.join(WORK, "qwen2_F32_3")
    shard = os.path.join(folder, "model-00002-of-00003.safetensors")
    with open(shard, "rb") as f:
        data = f.read()
    with open(shard, "wb") as f:
        f.write(data[:-7])
    target = os.path.join(WORK, "damaged.safetensors")
    for damage in ("a truncated shard", "an index naming a missing shard"):
        for cmd in (["logits", folder, "--ids", "1,2"], ["inspect", folder], ["import", folder, "-o", target]):
            msg = run([GPT] + cmd, expect=1)
            if "model-00002-of-00003.safetensors" not in msg:
                sys.exit(f"{damage}: FAILED: gpt {cmd[0]}'s message does not name it: " + msg)
            if os.path.exists(target):
                sys.exit(f"{damage}: FAILED: gpt import wrote {target}")
        if damage == "a truncated shard":
            os.remove(shard)
    os.remove(os.path.join(WORK, "llama_F32_1", "tokenizer.json"))
    msg = run([GPT, "import", os.path.join(WORK, "llama_F32_1"), "-o", os.path.join(WORK, "x.safetensors")], expect=1)
    if "tokenizer.json" not in msg:
        sys.exit("a folder without its tokenizer: FAILED: gpt import does not say so: " + msg)
    print("damaged folders refused by name (logits, inspect, import): a truncated shard, an index naming a missing shard; "
          "gpt import without tokenizer.json")
    print("llama_torch: ok")


if __name__ == "__main__":
    main()
