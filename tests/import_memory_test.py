#!/usr/bin/env python3
"""import_memory_test.py — the peak memory of `gpt inspect` and `gpt import` on a Llama-family model
(ctest `import_memory`), measured from the kernel's own count of each run's resident pages
(os.wait4's ru_maxrss), never from a clock.

    /usr/bin/python3 tests/import_memory_test.py GPT OUT_DIR [--smollm]

Writes, with random weights (NumPy only), a Llama-shaped model (tied embeddings, no biases; by
default 4 layers, hidden 512, 8 heads, 2 key/value heads, SwiGLU of 1,536, vocabulary 16,384:
about 36 MB in BF16; --smollm: SmolLM2-135M's shape, about 270 MB) as
  - OUT_DIR/bf16/: a Hugging Face folder (config.json, model.safetensors in BF16, a byte-level
    tokenizer.json),
  - OUT_DIR/bf16.gguf and OUT_DIR/q8_0.gguf: the same as llama.cpp's GGUF (matrices BF16 or Q8_0,
    norms F32, a gpt2 tokenizer in the metadata),
then runs `gpt inspect` on each and `gpt import` on the folder, and checks the peaks: each at most
1.5× the model file (+ 24 MiB for the process itself; import writes its float32 output as it makes
it, a few MiB at a time). Before, both held the file and a float32 copy, and import the output's
bytes besides: 5× this BF16 file. Prints every peak as × the file.
Limits: Linux (ru_maxrss in KiB). The values are not checked here (llama_torch, gguf_weights do).
"""
import json
import os
import struct
import subprocess
import sys


def peak_of(cmd):
    """The command's peak resident memory in bytes, from wait4; exits 1 with its stderr if it fails.
    Run by a fresh interpreter without NumPy (peak below): a forked child's peak counts the pages it
    shared with its parent before exec, so the parent must be small."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {os.waitstatus_to_exitcode(status)}: {err.decode(errors='replace')}")
    return usage.ru_maxrss * 1024


if __name__ == "__main__" and sys.argv[1:2] == ["--peak"]:
    print(peak_of(sys.argv[2:]))
    sys.exit(0)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_writer as gw  # noqa: E402

MIB = 1 << 20
SLACK = 24 * MIB


def config(smollm):
    c = dict(model_type="llama", architectures=["LlamaForCausalLM"], hidden_size=512, intermediate_size=1536,
             num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=2, vocab_size=16384,
             max_position_embeddings=2048, rms_norm_eps=1e-5, rope_theta=100000.0, tie_word_embeddings=True,
             hidden_act="silu", bos_token_id=256, eos_token_id=257, torch_dtype="bfloat16")
    if smollm:
        c.update(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                 num_key_value_heads=3, vocab_size=49152, max_position_embeddings=8192)
    return c


def names(c):
    H, I, V = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    hd = H // c["num_attention_heads"]
    out = [("model.embed_tokens.weight", (V, H))]
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        out += [(p + "input_layernorm.weight", (H,)),
                (p + "self_attn.q_proj.weight", (c["num_attention_heads"] * hd, H)),
                (p + "self_attn.k_proj.weight", (c["num_key_value_heads"] * hd, H)),
                (p + "self_attn.v_proj.weight", (c["num_key_value_heads"] * hd, H)),
                (p + "self_attn.o_proj.weight", (H, H)), (p + "post_attention_layernorm.weight", (H,)),
                (p + "mlp.gate_proj.weight", (I, H)), (p + "mlp.up_proj.weight", (I, H)),
                (p + "mlp.down_proj.weight", (H, I))]
    return out + [("model.norm.weight", (H,))]


def weights(c, seed=7):
    rng = np.random.default_rng(seed)
    for name, shape in names(c):
        if len(shape) == 1:
            yield name, (1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        else:
            yield name, (0.02 * rng.standard_normal(shape, dtype=np.float32))


def tokenizer_json():
    b2u = gw.bytes_to_unicode()
    vocab = {b2u[b]: b for b in range(256)}
    level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    special = lambda i, t: {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,  # noqa: E731
                            "normalized": False, "special": True}
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [special(256, "<s>"), special(257, "</s>")], "normalizer": None,
            "pre_tokenizer": level, "post_processor": None, "decoder": level,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                      "ignore_merges": False, "vocab": vocab, "merges": []}}


def write_folder(path, c):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(c, f)
    with open(os.path.join(path, "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(), f)
    header, at = {}, 0
    for name, shape in names(c):
        n = int(np.prod(shape)) * 2
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [at, at + n]}
        at += n
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(path, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _, w in weights(c):
            f.write(gw.bf16_bits(w).astype("<u2").tobytes())


def q8_0(x):  # ggml's Q8_0 (the same rule as gguf_writer.q8_0), vectorized for a large model
    b = np.asarray(x, np.float32).reshape(-1, 32)
    d = (np.abs(b).max(axis=1) / np.float32(127)).astype(np.float32)
    inv = np.where(d > 0, np.float32(1) / np.where(d > 0, d, 1), 0).astype(np.float32)
    q = np.round(b * inv[:, None]).astype(np.int8)
    out = np.empty((b.shape[0], 34), np.uint8)
    out[:, :2] = gw.f16_bits(d).astype("<u2").view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    return out.tobytes()


def write_gguf(path, c, kind):
    b2u = gw.bytes_to_unicode()
    tokens = [b2u[b] for b in range(256)] + ["<s>", "</s>"]
    meta = gw.llama_meta("llama", "memory test", c, [  # BOS and EOS: c's 256 and 257
        ("tokenizer.ggml.model", gw.STRING, "gpt2"), ("tokenizer.ggml.pre", gw.STRING, "gpt-2"),
        ("tokenizer.ggml.tokens", gw.ARRAY, (gw.STRING, tokens)),
        ("tokenizer.ggml.token_type", gw.ARRAY, (gw.I32, [1] * 256 + [3, 3])),
        ("tokenizer.ggml.merges", gw.ARRAY, (gw.STRING, []))])
    tensors = []
    for name, w in weights(c):  # the rows of Q and K as llama.cpp's converter permutes them: not needed
        k = kind if w.ndim == 2 else "F32"  # for memory; the reader puts them back all the same
        raw = q8_0(w) if k == "Q8_0" else gw.bf16_bits(w).astype("<u2").tobytes() if k == "BF16" else w.tobytes()
        tensors.append(gw.Tensor(gw.gguf_name(name), k, list(reversed(w.shape)), raw))
    with open(path, "wb") as f:
        f.write(gw.write_gguf(meta, tensors))


def peak(cmd):
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--peak"] + cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(p.stdout + p.stderr)
    return int(p.stdout)


def main():
    gpt, out = sys.argv[1], sys.argv[2]
    smollm = "--smollm" in sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    c = config(smollm)
    models = {"bf16 folder": os.path.join(out, "bf16"), "bf16 gguf": os.path.join(out, "bf16.gguf"),
              "q8_0 gguf": os.path.join(out, "q8_0.gguf")}
    if not os.path.exists(os.path.join(models["bf16 folder"], "model.safetensors")):
        write_folder(models["bf16 folder"], c)
    for kind, key in (("BF16", "bf16 gguf"), ("Q8_0", "q8_0 gguf")):
        if not os.path.exists(models[key]):
            write_gguf(models[key], c, kind)
    failures = []
    for label, path in models.items():
        size = os.path.getsize(os.path.join(path, "model.safetensors") if os.path.isdir(path) else path)
        inspect = peak([gpt, "inspect", path])
        print(f"{label}: file {size:,} bytes; inspect {inspect / size:.2f}×", end="")
        if inspect > 1.5 * size + SLACK:
            failures.append(f"{label}: inspect peaked at {inspect:,} bytes, more than 1.5 × the file's {size:,} + 24 MiB")
        if not os.path.isdir(path):  # gpt import takes a folder (a GGUF's tokenizer is not kept in a checkpoint)
            print()
            continue
        target = os.path.join(out, label.replace(" ", "_") + ".safetensors")
        imported = peak([gpt, "import", path, "-o", target, "-q"])
        written = os.path.getsize(target)
        os.remove(target)
        print(f", import {imported / size:.2f}× (output {written:,} bytes, {written / size:.2f}×)")
        if imported > 1.5 * size + SLACK:
            failures.append(f"{label}: import peaked at {imported:,} bytes, more than 1.5 × the file's {size:,} + 24 MiB "
                            f"(the output, {written:,} bytes, goes to the file as it is made)")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
