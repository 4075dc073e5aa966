#!/usr/bin/env python3
"""hf_folder_test.py — ctest `hf_folder`: Hugging Face model folders as the core reads them.

    hf_folder_test.py HF_FOLDER_DUMP WORKDIR

tests/hf_folder_dump.cpp prints what formats/hf_folder.h and hf_config.h make of a folder. This
script writes folders of small random models with its own safetensors writer (torch only for BF16
bits and the reference), and checks:
  - llama (Llama 3's rope_scaling, tied embeddings), mistral (sliding_window), qwen2 (q/k/v biases),
    qwen3 (q/k norms, head_dim ≠ hidden/heads), SmolLM2- and TinyLlama-shaped llama configs; in F32,
    F16 and BF16; single-file and sharded with model.safetensors.index.json: the config's fields, the
    RoPE inverse frequencies against a float64 NumPy transcription of transformers'
    _compute_llama3_parameters, and every tensor's name, shape, dtype, file, offset and values
    (exactly the float32 that torch's .float() gives);
  - damaged folders refused with a message naming the fault: a truncated shard, an index naming a
    missing shard, a tensor missing, duplicated across shards, in another shard than the index says,
    an extra tensor, a wrong shape, an integer dtype, unknown model_type / hidden_act / rope_scaling;
  - the 16-bit conversions (core/base/half_float.h): all 65,536 F16 and BF16 patterns to float32
    against NumPy and torch, and float32 to F16 / BF16 (round to nearest even; subnormals, ties,
    overflow to inf, NaN) against NumPy's astype(float16), Python's struct 'e' and torch's bfloat16.
Exit 77 (skipped) without torch.
"""
import json
import math
import os
import shutil
import struct
import subprocess
import sys

from safetensors_writer import tensor_bytes, write_safetensors

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    print(f"hf_folder: skipped: {e}")
    sys.exit(77)

TOOL, WORK = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL", what)


def expected_names(cfg):
    mt, H, V, I = cfg["model_type"], cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
    nh, nkv = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    hd = cfg.get("head_dim", H // nh)
    qkv_bias = mt == "qwen2" or (mt in ("llama", "qwen3") and cfg.get("attention_bias", False))
    o_bias = mt in ("llama", "qwen3") and cfg.get("attention_bias", False)
    out = [("model.embed_tokens.weight", (V, H))]
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        out.append((p + "input_layernorm.weight", (H,)))
        for n, rows in (("q", nh * hd), ("k", nkv * hd), ("v", nkv * hd)):
            out.append((p + f"self_attn.{n}_proj.weight", (rows, H)))
            if qkv_bias:
                out.append((p + f"self_attn.{n}_proj.bias", (rows,)))
        out.append((p + "self_attn.o_proj.weight", (H, nh * hd)))
        if o_bias:
            out.append((p + "self_attn.o_proj.bias", (H,)))
        if mt == "qwen3":
            out += [(p + "self_attn.q_norm.weight", (hd,)), (p + "self_attn.k_norm.weight", (hd,))]
        out.append((p + "post_attention_layernorm.weight", (H,)))
        out += [(p + "mlp.gate_proj.weight", (I, H)), (p + "mlp.up_proj.weight", (I, H)), (p + "mlp.down_proj.weight", (H, I))]
    out.append(("model.norm.weight", (H,)))
    if not cfg.get("tie_word_embeddings", False):
        out.append(("lm_head.weight", (V, H)))
    return out


def inv_freq_reference(cfg):
    """transformers' default and llama3 RoPE parameters, in float64."""
    hd = cfg.get("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"])
    base = cfg.get("rope_theta", 10000.0)
    inv = 1.0 / (base ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    rs = cfg.get("rope_scaling")
    if not rs or rs.get("rope_type", rs.get("type")) == "default":
        return inv
    factor, lo, hi, old = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"], rs["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / lo, old / hi
    wavelen = 2 * math.pi / inv
    inv_l = np.where(wavelen > low_wavelen, inv / factor, inv)
    smooth = (old / wavelen - lo) / (hi - lo)
    smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return np.where(medium, smoothed, inv_l)


def write_folder(path, cfg, dtype, shards, gen, extra=()):
    """Writes config.json and the weights; returns {name: (file, offset, float32 values)}."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(cfg, f)
    tensors = [(n, torch.randn(*s, generator=gen) * 0.5, dtype) for n, s in expected_names(cfg)] + list(extra)
    if dtype == "F16":  # a few values at the edges: subnormal, large, ±inf
        tensors[0][1].view(-1)[:4] = torch.tensor([3e-7, 60000.0, float("inf"), -float("inf")])
    files = [("model.safetensors", tensors)] if shards == 1 else [
        (f"model-{k + 1:05d}-of-{shards:05d}.safetensors", tensors[k::shards]) for k in range(shards)]
    where = {}
    for fname, ts in files:
        start = write_safetensors(os.path.join(path, fname), ts)
        off = start
        for n, t, dt in ts:
            ref = torch.from_numpy(np.frombuffer(tensor_bytes(t, dt), dtype={"F32": "<f4", "F16": "<f2", "BF16": "<i2"}[dt]).copy())
            vals = ref.view(torch.bfloat16).float() if dt == "BF16" else ref.float()
            where[n] = (fname, off, vals.reshape(-1).tolist(), dt, list(t.shape))
            off += len(tensor_bytes(t, dt))
    if shards > 1:
        index = {"metadata": {"total_size": 0}, "weight_map": {n: fn for fn, ts in files for n, _, _ in ts}}
        with open(os.path.join(path, "model.safetensors.index.json"), "w") as f:
            json.dump(index, f)
    return where


def run(path):
    r = subprocess.run([TOOL, path], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


BASE = dict(vocab_size=37, hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=64, rms_norm_eps=1e-5, hidden_act="silu")
CONFIGS = {
    # inv_freq 1, 0.19, 0.038, …: wavelengths 6.3 (kept), 32 (blended), 167 (slowed) around 16 and 64
    "llama3": dict(BASE, model_type="llama", num_key_value_heads=2, rope_theta=500000.0, tie_word_embeddings=True,
                   rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                     original_max_position_embeddings=64), head_dim=16, hidden_size=32),
    "smollm2": dict(BASE, model_type="llama", num_key_value_heads=1, rope_theta=100000.0, tie_word_embeddings=True),
    "tinyllama": dict(BASE, model_type="llama", num_key_value_heads=2, attention_bias=True),
    "mistral": dict(BASE, model_type="mistral", num_key_value_heads=2, sliding_window=8, rope_theta=1e6),
    "qwen2": dict(BASE, model_type="qwen2", num_key_value_heads=2, tie_word_embeddings=True, use_sliding_window=False,
                  sliding_window=32),
    "qwen3": dict(BASE, model_type="qwen3", num_key_value_heads=2, head_dim=8, rope_theta=1e6),
}


def test_good():
    gen = torch.Generator().manual_seed(34)
    for k, (name, cfg) in enumerate(CONFIGS.items()):
        for dtype, shards in (("F32", 1), ("F16", 3), ("BF16", 2), ("BF16", 1)):
            path = os.path.join(WORK, f"{name}-{dtype}-{shards}")
            extra = [("model.layers.0.self_attn.rotary_emb.inv_freq", torch.ones(4), "F32")] if k == 0 else []
            where = write_folder(path, cfg, dtype, shards, gen, extra)
            code, out, err = run(path)
            label = f"{name} {dtype} in {shards} file(s)"
            check(code == 0, f"{label}: refused: {err.strip()}")
            if code:
                continue
            got = json.loads(out)
            c = got["config"]
            check(c["model_type"] == cfg["model_type"], f"{label}: model_type")
            check(c["num_key_value_heads"] == cfg["num_key_value_heads"], f"{label}: num_key_value_heads")
            check(c["head_dim"] == cfg.get("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"]), f"{label}: head_dim")
            check(c["rope_theta"] == cfg.get("rope_theta", 10000.0), f"{label}: rope_theta")
            check(c["rms_norm_eps"] == cfg["rms_norm_eps"], f"{label}: rms_norm_eps")
            check(c["tie_word_embeddings"] == cfg.get("tie_word_embeddings", False), f"{label}: tie_word_embeddings")
            check(c["sliding_window"] == (cfg.get("sliding_window", 0) if cfg["model_type"] == "mistral" else 0),
                  f"{label}: sliding_window")
            check(c["qk_norm"] == (cfg["model_type"] == "qwen3"), f"{label}: qk_norm")
            ref = inv_freq_reference(cfg)
            check(len(c["inv_freq"]) == len(ref) and np.allclose(c["inv_freq"], ref, rtol=1e-12, atol=0),
                  f"{label}: inv_freq {c['inv_freq'][:4]} vs {ref[:4]}")
            names = [n for n, _ in expected_names(cfg)]
            check([t["name"] for t in got["tensors"]] == names, f"{label}: tensor names or order")
            for t in got["tensors"]:
                fname, off, vals, dt, shape = where[t["name"]]
                ok = t["file"] == fname and t["offset"] == off and t["dtype"] == dt and t["shape"] == shape
                check(ok, f"{label}: {t['name']} planned as {t['file']}@{t['offset']} {t['dtype']} {t['shape']}, "
                          f"written {fname}@{off} {dt} {shape}")
                # JSON has float32's shortest digits ("inf" as a string): equal as float32, bit for bit
                mine = np.array([float(x) for x in t["values"]], dtype=np.float32)
                want = np.array(vals, dtype=np.float32)
                check(mine.shape == want.shape and (mine.view(np.uint32) == want.view(np.uint32)).all(),
                      f"{label}: {t['name']} values differ")


def expect_refused(label, path, *words):
    code, _, err = run(path)
    check(code == 1 and all(w in err for w in words), f"{label}: want exit 1 naming {words}, got {code}: {err.strip()}")


def test_damaged():
    gen = torch.Generator().manual_seed(7)
    cfg = CONFIGS["qwen3"]
    p = os.path.join(WORK, "damaged")
    shard2 = "model-00002-of-00003.safetensors"
    write_folder(p, cfg, "BF16", 3, gen)
    with open(os.path.join(p, shard2), "r+b") as f:
        f.truncate(os.path.getsize(os.path.join(p, shard2)) - 3)
    expect_refused("truncated shard", p, shard2)
    write_folder(p, cfg, "BF16", 3, gen)
    os.remove(os.path.join(p, shard2))
    expect_refused("missing shard", p, shard2, "missing")
    # a tensor missing from the files and the index
    write_folder(p, cfg, "F32", 1, gen)
    names = expected_names(cfg)
    write_safetensors(os.path.join(p, "model.safetensors"),
                      [(n, torch.zeros(*s), "F32") for n, s in names if n != "model.layers.1.mlp.up_proj.weight"])
    expect_refused("missing tensor", p, "model.layers.1.mlp.up_proj.weight", "missing")
    # duplicated across shards
    write_folder(p, cfg, "F32", 2, gen)
    write_safetensors(os.path.join(p, "model-00002-of-00002.safetensors"),
                      [(n, torch.zeros(*s), "F32") for n, s in names[1::2]] + [(names[0][0], torch.zeros(*names[0][1]), "F32")])
    expect_refused("duplicated tensor", p, names[0][0], "duplicated")
    # the index puts a tensor in the wrong shard
    write_folder(p, cfg, "F32", 2, gen)
    ip = os.path.join(p, "model.safetensors.index.json")
    index = json.load(open(ip))
    index["weight_map"][names[0][0]] = "model-00002-of-00002.safetensors"
    json.dump(index, open(ip, "w"))
    expect_refused("wrong shard", p, names[0][0], "model-00002-of-00002.safetensors")
    index["weight_map"][names[0][0]] = "../model.safetensors"
    json.dump(index, open(ip, "w"))
    expect_refused("path in the index", p, "../model.safetensors", "plain name")
    # an extra tensor, a wrong shape, an integer dtype
    for label, tensors, words in (
        ("extra tensor", [(n, torch.zeros(*s), "F32") for n, s in names] + [("model.layers.5.mlp.up_proj.weight", torch.zeros(2), "F32")],
         ("model.layers.5.mlp.up_proj.weight", "not a tensor")),
        ("wrong shape", [(n, torch.zeros(*(s if n != "model.norm.weight" else (3,))), "F32") for n, s in names],
         ("model.norm.weight", "[3]", "[16]")),
    ):
        write_folder(p, cfg, "F32", 1, gen)
        write_safetensors(os.path.join(p, "model.safetensors"), tensors)
        expect_refused(label, p, *words)
    write_folder(p, cfg, "F32", 1, gen)
    with open(os.path.join(p, "model.safetensors"), "rb") as f:
        blob = f.read()
    blob = blob.replace(b'"model.norm.weight": {"dtype": "F32"', b'"model.norm.weight": {"dtype": "I32"')
    open(os.path.join(p, "model.safetensors"), "wb").write(blob)
    expect_refused("integer dtype", p, "model.norm.weight", "I32")
    # config.json refusals
    for label, change, words in (
        ("unknown model_type", dict(model_type="gemma2"), ("gemma2",)),
        ("activation", dict(hidden_act="gelu_pytorch_tanh"), ("gelu_pytorch_tanh",)),
        ("rope scaling", dict(rope_scaling=dict(rope_type="yarn", factor=4.0)), ("yarn",)),
        ("heads", dict(num_key_value_heads=3), ("num_key_value_heads",)),
    ):
        write_folder(p, dict(cfg, **change) if label != "heads" else cfg, "F32", 1, gen)
        if label == "heads":
            json.dump(dict(cfg, **change), open(os.path.join(p, "config.json"), "w"))
        expect_refused(label, p, *words)


def test_conversions():
    rng = np.random.default_rng(16)
    bits = np.concatenate([
        rng.integers(0, 2**32, 200000, dtype=np.uint64).astype(np.uint32),
        np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC12345], dtype=np.uint32),
        # float16 edges: max, the tie to inf, subnormal edges and ties
        np.array([65504.0, 65519.996, 65520.0, 65536.0, 6.1035156e-05, 6.0975552e-05, 5.9604645e-08, 2.9802322e-08,
                  2.9802326e-08, 8.940697e-08, 1.0004883, 1.0009766, -1.0014648], dtype=np.float32).view(np.uint32),
        # every float16 value and the midpoints between neighbours (ties)
        np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32),
        ((np.arange(0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64) +
          np.arange(1, 0x7C01, dtype=np.uint16).view(np.float16).astype(np.float64)) / 2).astype(np.float32).view(np.uint32),
        # bfloat16 ties: low 16 bits exactly 0x8000
        (rng.integers(0, 2**16, 5000, dtype=np.uint64).astype(np.uint32) << 16) | 0x8000,
    ])
    floats = bits.view(np.float32)
    inp = os.path.join(WORK, "conv_in.bin")
    outp = os.path.join(WORK, "conv_out.bin")
    floats.astype("<f4").tofile(inp)
    r = subprocess.run([TOOL, "--convert", inp, outp], capture_output=True)
    check(r.returncode == 0, f"--convert failed: {r.stderr}")
    raw = open(outp, "rb").read()
    table = np.frombuffer(raw[:65536 * 8], dtype="<u4").reshape(65536, 2)
    all16 = np.arange(65536, dtype=np.uint16)
    want_f16 = all16.view(np.float16).astype(np.float32)
    got_f16 = table[:, 0].view(np.float32)
    same = (got_f16.view(np.uint32) == want_f16.view(np.uint32)) | (np.isnan(got_f16) & np.isnan(want_f16))
    check(same.all(), f"F16→float32 differs from NumPy at {np.flatnonzero(~same)[:5]}")
    want_bf16 = torch.from_numpy(all16.view(np.int16).copy()).view(torch.bfloat16).float().numpy()
    got_bf16 = table[:, 1].view(np.float32)
    same = (got_bf16.view(np.uint32) == want_bf16.view(np.uint32)) | (np.isnan(got_bf16) & np.isnan(want_bf16))
    check(same.all(), f"BF16→float32 differs from torch at {np.flatnonzero(~same)[:5]}")
    back = np.frombuffer(raw[65536 * 8:], dtype="<u2").reshape(-1, 2)
    with np.errstate(over="ignore", invalid="ignore"):
        want = floats.astype(np.float16)
    got = back[:, 0].view(np.float16)
    nan = np.isnan(floats)
    ok = np.where(nan, np.isnan(got), got.view(np.uint16) == want.view(np.uint16))
    check(ok.all(), f"float32→F16 differs from NumPy for {floats[~ok][:5]}: got {got[~ok][:5]}, want {want[~ok][:5]}")
    # Python's struct 'e' (round half to even; it refuses what would overflow)
    for f, h in zip(floats[::37].tolist(), back[::37, 0].tolist()):
        if math.isnan(f) or math.isinf(f):
            continue
        try:
            s = struct.unpack("<H", struct.pack("<e", f))[0]
        except OverflowError:
            s = 0x7C00 if f > 0 else 0xFC00
        if s != h:
            check(False, f"float32→F16 of {f!r}: {h:#06x}, struct gives {s:#06x}")
            break
    want_b = torch.from_numpy(floats.copy()).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    got_b = back[:, 1]
    ok = np.where(nan, np.isnan((got_b.astype(np.uint32) << 16).view(np.float32)), got_b == want_b)
    check(ok.all(), f"float32→BF16 differs from torch for {floats[~ok][:5]}")


os.makedirs(WORK, exist_ok=True)
test_conversions()
test_good()
test_damaged()
print(f"hf_folder: {len(failures)} failures")
sys.exit(1 if failures else 0)
