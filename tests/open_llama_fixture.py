#!/usr/bin/env python3
"""open_llama_fixture.py — the files tests/e2e/open-llama.spec.mjs opens in the training page, and the
numbers it expects, from our own PyTorch model (llama_torch_test.hf_forward, float64, written from
transformers), never from the project's core.

    /usr/bin/python3 tests/open_llama_fixture.py OUT_DIR   → prints OUT_DIR/expected.json's path

Writes, with random weights (llama_torch_test's shapes: 2 layers, hidden 64, 4 heads, 2 key/value
heads, vocabulary 300):
  - OUT_DIR/TinyLlama-test/: a Llama-shaped Hugging Face folder (Llama 3's rope_scaling, tied
    embeddings) in F32, as three shards with model.safetensors.index.json, config.json and a
    byte-level tokenizer.json (llama_torch_test.tokenizer_json: byte b is id b, no BOS);
  - OUT_DIR/tiny-qwen2.gguf: a Qwen2-shaped model (q/k/v biases, an untied lm_head) as a GGUF v3
    file in F32 (tests/gguf_writer.py), without a tokenizer (the page then takes token ids);
  - OUT_DIR/SmolBF16-test/: a larger Llama-shaped folder in BF16 (4 layers, hidden 512, 8 heads, 2
    key/value heads, vocabulary 8,192: about 26 MB in one model.safetensors), for the memory the
    page holds after opening it; PyTorch's numbers on the weights rounded to BF16 (as stored);
  - OUT_DIR/tiny-qwen2-q8_0.gguf: the Qwen2-shaped model's matrices in Q8_0 (norms and biases F32);
    PyTorch's numbers on those matrices dequantized (gguf_writer.dequantize, written from ggml's
    definition), in float64;
  - OUT_DIR/expected.json: for each, the prompt (text and ids) and PyTorch's logits of the next
    token after it, the 32 largest, largest first; and each model's files' bytes; for the first
    folder also every layer's attention weights on the prompt, [layer][head][query][key] (after
    RoPE, each key/value head shared).
Exit 77 without torch.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import torch  # noqa: F401
except ImportError:
    print("open_llama_fixture: skipped: PyTorch is not installed for " + sys.executable)
    sys.exit(77)

import gguf_writer as gw  # noqa: E402
from llama_torch_test import MODELS, hf_forward, random_weights, write_folder  # noqa: E402

TOP = 32


BF16_MODEL = {"vocab_size": 8192, "hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 4,
              "num_attention_heads": 8, "num_key_value_heads": 2}


def qwen2_gguf(path, cfg, weights, kind="F32"):
    meta = gw.llama_meta("qwen2", "tiny qwen2", cfg)
    tensors = [gw.Tensor(gw.gguf_name(n), kinds(kind, t), list(reversed(t.shape)), gw.quantize(kinds(kind, t), t.numpy()))
               for n, t in weights.items()]
    with open(path, "wb") as f:
        f.write(gw.write_gguf(meta, tensors))


def kinds(kind, t):
    """A tensor's type in a GGUF of `kind`: the matrices in it, the norms and biases F32."""
    return kind if t.dim() == 2 else "F32"


def as_stored(kind, w):
    """The weights as a GGUF of `kind` stores them, read back in float64."""
    return {n: torch.from_numpy(gw.dequantize(kinds(kind, t), gw.quantize(kinds(kind, t), t.numpy()), t.numel())).reshape(t.shape)
            for n, t in w.items()}


def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))


def top(cfg, w, ids):
    logits = hf_forward(cfg, w, ids)[-1]
    return [float(v) for v in torch.sort(logits, descending=True).values[:TOP]]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    llama = MODELS["llama"]
    w = random_weights(llama, 7)
    write_folder(os.path.join(out, "TinyLlama-test"), llama, w, "F32", 3)
    text = "abc de"  # byte-level: each byte its own id (no "h i" merge), no BOS
    probs = []
    hf_forward(llama, w, list(text.encode()), probs)
    folder = {"prompt": text, "ids": list(text.encode()), "top": top(llama, w, list(text.encode())),
              "attention": [a.tolist() for a in probs]}

    qwen2 = MODELS["qwen2"]
    wq = random_weights(qwen2, 11)
    qwen2_gguf(os.path.join(out, "tiny-qwen2.gguf"), qwen2, wq)
    ids = [5, 17, 42, 99, 7, 250, 3, 11]
    gguf = {"prompt": "".join(f"[{i}]" for i in ids), "ids": ids, "top": top(qwen2, wq, ids)}

    big = dict(llama, **BF16_MODEL)
    wb = {n: t.to(torch.bfloat16).to(torch.float32) for n, t in random_weights(big, 13).items()}  # as stored
    write_folder(os.path.join(out, "SmolBF16-test"), big, wb, "BF16", 1)
    st = os.path.getsize(os.path.join(out, "SmolBF16-test", "model.safetensors"))
    bf16 = {"prompt": text, "ids": list(text.encode()), "top": top(big, wb, list(text.encode())),
            "bytes": folder_bytes(os.path.join(out, "SmolBF16-test")), "weights_file": st}

    qgguf = os.path.join(out, "tiny-qwen2-q8_0.gguf")
    qwen2_gguf(qgguf, qwen2, wq, "Q8_0")
    q8 = {"prompt": gguf["prompt"], "ids": ids, "top": top(qwen2, as_stored("Q8_0", wq), ids),
          "bytes": os.path.getsize(qgguf)}

    path = os.path.join(out, "expected.json")
    with open(path, "w") as f:
        json.dump({"folder": folder, "gguf": gguf, "bf16": bf16, "q8_0": q8}, f)
    print(path)


if __name__ == "__main__":
    main()
