#!/usr/bin/env python3
"""gguf_weights_test.py — ctest `gguf_weights`: GGUF files of the Llama family read as LlamaWeights.

    gguf_weights_test.py GGUF_WEIGHTS_DUMP WORKDIR [GPT]

Random Llama-, Qwen2- and Qwen3-shaped models (2 layers, hidden 256, 4 heads, 2 key/value heads) are
built in PyTorch under transformers' names and written as GGUF the way llama.cpp's converter does
(convert_hf_to_gguf.py): llama.cpp's tensor names (this file's own table), ggml's dims (the reverse of
PyTorch's shape), llama's q/k rows permuted for adjacent-pair RoPE, 1-D tensors in F32 and the 2-D
ones in F32, F16, BF16, Q8_0, Q4_0, Q4_K or Q6_K (tests/gguf_writer.py's writer and quantizers, from
the format's definition). tests/gguf_weights_dump.cpp reads each back through read_gguf_weights and
dequantizes every tensor (quant.h); checked:
  - the config: every field against the Hugging Face config the model was built from (Llama 3's
    rope_scaling recovered from rope_freqs.weight: the inverse frequencies against θ_i / factor_i of
    the file, within 1e-6; tied embeddings; qwen2's biases; qwen3's q/k norms; a sliding window);
  - every tensor: its name, shape and type, and its values exactly (bit for bit) the float32 of this
    file's float64 dequantization, put back in Hugging Face's order by the inverse of the converter's
    permutation (computed here from the permutation itself);
  - damaged files refused (exit 1) naming the fault: a bad tensor offset, an unknown type, a missing
    tensor, a wrong shape, an extra tensor, a type we do not run, a partial set of biases, another
    RoPE scaling type, frequency factors that are not Llama 3's rule, a row that is not whole blocks;
  - with GPT: `gpt inspect --json` names each tensor's transformers name (this file's table) and the
    config it implies, and the text form says both; `gpt logits` on a file cut short names the tensor
    and the byte past its end.
Exit 77 (skipped) without torch.
"""
import json
import math
import os
import re
import subprocess
import sys

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    print(f"gguf_weights: skipped: {e}")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_writer as gw  # noqa: E402

# The CLI with float32 activations in every product, as the PyTorch model here: a prompt's BF16
# product on AVX512_BF16 (src/core/kernels/bf16_gemm.h: activations rounded to bf16) is off, it is
# tests/test_bf16_gemm.cpp's.
os.environ["AP_BF16_GEMM"] = "0"
TOOL, WORK = sys.argv[1], sys.argv[2]
GPT = sys.argv[3] if len(sys.argv) > 3 else None
os.makedirs(WORK, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL", what)


def permute(w, n_head, n_head_kv):
    """llama.cpp's convert_hf_to_gguf.py LlamaModel.permute: HF's rotate-half rows → adjacent pairs."""
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def build_model(cfg, seed):
    """An HF state dict (float32) of the config, in transformers' order and names."""
    g = torch.Generator().manual_seed(seed)
    H, I, V, L = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"], cfg["num_hidden_layers"]
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim", H // nh)
    mt = cfg["model_type"]
    qkv_bias = mt == "qwen2" or cfg.get("attention_bias", False)
    o_bias = mt != "qwen2" and cfg.get("attention_bias", False)
    r = lambda *s: torch.randn(*s, generator=g) * 0.5  # noqa: E731
    sd = [("model.embed_tokens.weight", r(V, H))]
    for i in range(L):
        p = f"model.layers.{i}."
        sd.append((p + "input_layernorm.weight", 1 + 0.1 * r(H)))
        for n, rows in (("q", nh * hd), ("k", nkv * hd), ("v", nkv * hd)):
            sd.append((p + f"self_attn.{n}_proj.weight", r(rows, H)))
            if qkv_bias:
                sd.append((p + f"self_attn.{n}_proj.bias", r(rows)))
        sd.append((p + "self_attn.o_proj.weight", r(H, nh * hd)))
        if o_bias:
            sd.append((p + "self_attn.o_proj.bias", r(H)))
        if mt == "qwen3":
            sd.append((p + "self_attn.q_norm.weight", 1 + 0.1 * r(hd)))
            sd.append((p + "self_attn.k_norm.weight", 1 + 0.1 * r(hd)))
        sd.append((p + "post_attention_layernorm.weight", 1 + 0.1 * r(H)))
        sd.append((p + "mlp.gate_proj.weight", r(I, H)))
        sd.append((p + "mlp.up_proj.weight", r(I, H)))
        sd.append((p + "mlp.down_proj.weight", r(H, I)))
    sd.append(("model.norm.weight", 1 + 0.1 * r(H)))
    if not cfg.get("tie_word_embeddings", False):
        sd.append(("lm_head.weight", r(V, H)))
    return sd


def llama3_factors(cfg):
    """convert_hf_to_gguf.py's rope_freqs for rope_scaling llama3 (float32 freqs, Python floats)."""
    s = cfg["rope_scaling"]
    base, dim = cfg["rope_theta"], cfg.get("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"])
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    factor, lo, hi, old = s["factor"], s["low_freq_factor"], s["high_freq_factor"], s["original_max_position_embeddings"]
    out = []
    for f in freqs.tolist():
        wavelen = 2 * math.pi / f
        if wavelen < old / hi:
            out.append(1)
        elif wavelen > old / lo:
            out.append(factor)
        else:
            smooth = (old / wavelen - lo) / (hi - lo)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, np.float32)


def convert(cfg, sd, kind):
    """(metadata, tensors, expected): the GGUF llama.cpp's converter writes, and each HF tensor's
    values as this file dequantizes them, in HF order (float32)."""
    arch, a = cfg["model_type"], cfg["model_type"] + "."
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim", cfg["hidden_size"] // nh)
    extra = []
    if "head_dim" in cfg:
        extra += [(a + "attention.key_length", gw.U32, hd), (a + "attention.value_length", gw.U32, hd)]
    if cfg.get("sliding_window"):
        extra.append((a + "attention.sliding_window", gw.U32, cfg["sliding_window"]))
    meta = gw.llama_meta(arch, "test " + arch, cfg, extra)
    tensors, expected = [], {}
    if cfg.get("rope_scaling"):
        tensors.append(gw.Tensor("rope_freqs.weight", "F32", [hd // 2], llama3_factors(cfg).tobytes()))
    for name, t in sd:
        rows_perm = None
        if arch == "llama" and (".q_proj." in name or ".k_proj." in name):
            n_kv = nh if ".q_proj." in name else nkv
            t = permute(t, nh, n_kv)
            rows_perm = permute(torch.arange(t.shape[0]), nh, n_kv)  # GGUF row g holds HF row rows_perm[g]
        k = kind if t.dim() == 2 else "F32"
        raw = gw.quantize(k, t.numpy())
        tensors.append(gw.Tensor(gw.gguf_name(name), k, list(reversed(t.shape)), raw))
        deq = gw.dequantize(k, raw, t.numel()).astype(np.float32).reshape(t.shape)
        if rows_perm is not None:
            hf = np.empty_like(deq)
            hf[rows_perm.numpy()] = deq
            deq = hf
        expected[name] = (k, list(t.shape), deq)
    return meta, tensors, expected


def dump(path):
    out = subprocess.run([TOOL, path, path + ".bin"], capture_output=True, text=True)
    if out.returncode != 0:
        return out.returncode, out.stderr, None
    return 0, json.loads(out.stdout), np.fromfile(path + ".bin", dtype="<f4")


BASE = {"vocab_size": 96, "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 256,
        "rope_theta": 500000.0, "rms_norm_eps": 1e-5, "bos_token_id": 1, "eos_token_id": 2}
MODELS = {
    "llama3": dict(BASE, model_type="llama", rope_scaling={"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                                                           "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
                   rope_theta=10000.0),
    "llama_tied_bias": dict(BASE, model_type="llama", tie_word_embeddings=True, attention_bias=True, sliding_window=64),
    "qwen2": dict(BASE, model_type="qwen2", rope_theta=1000000.0, rms_norm_eps=1e-6),
    "qwen3": dict(BASE, model_type="qwen3", head_dim=128, tie_word_embeddings=True),
}
KINDS = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K", "Q6_K"]
RUN_KINDS = ["F32", "Q8_0", "Q4_K", "Q6_K"]  # also run through `gpt logits` against the PyTorch model
EXPECTED = {}


def check_config(label, cfg, got):
    hd = cfg.get("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"])
    want = {"model_type": cfg["model_type"], "hidden_act": "silu", "vocab_size": cfg["vocab_size"],
            "hidden_size": cfg["hidden_size"], "intermediate_size": cfg["intermediate_size"],
            "num_hidden_layers": cfg["num_hidden_layers"], "num_attention_heads": cfg["num_attention_heads"],
            "num_key_value_heads": cfg["num_key_value_heads"], "head_dim": hd,
            "max_position_embeddings": cfg["max_position_embeddings"], "sliding_window": cfg.get("sliding_window", 0),
            "tie_word_embeddings": cfg.get("tie_word_embeddings", False),
            "attention_bias": cfg["model_type"] == "qwen2" or cfg.get("attention_bias", False),
            "attention_out_bias": cfg["model_type"] != "qwen2" and cfg.get("attention_bias", False),
            "qk_norm": cfg["model_type"] == "qwen3", "rope_scaling": "llama3" if cfg.get("rope_scaling") else "",
            "bos_token_ids": [cfg["bos_token_id"]], "eos_token_ids": [cfg["eos_token_id"]]}
    for k, v in want.items():
        check(got[k] == v, f"{label}: config {k} {got[k]!r}, want {v!r}")
    check(got["rope_theta"] == float(np.float32(cfg["rope_theta"])), f"{label}: rope_theta {got['rope_theta']}")
    check(got["rms_norm_eps"] == float(np.float32(cfg["rms_norm_eps"])), f"{label}: rms_norm_eps {got['rms_norm_eps']}")
    # the rotation's frequencies: llama.cpp's θ_i / factor_i (the file's factors) against the config's
    theta = cfg["rope_theta"] ** (-np.arange(0, hd, 2, dtype=np.float64) / hd)
    if cfg.get("rope_scaling"):
        theta = theta / llama3_factors(cfg).astype(np.float64)
        check(got["rope_factor"] == cfg["rope_scaling"]["factor"], f"{label}: rope factor {got['rope_factor']}")
    inv = np.array(got["inv_freq"])
    check(inv.shape == theta.shape and np.allclose(inv, theta, rtol=1e-6, atol=0),
          f"{label}: inv_freq off by {np.max(np.abs(inv / theta - 1)) if inv.shape == theta.shape else inv.shape}")


def check_tensors(label, got, values, expected):
    names = [t["name"] for t in got["tensors"]]
    check(names == list(expected), f"{label}: tensors {names[:4]}…, want {list(expected)[:4]}…")
    bad = 0
    for t in got["tensors"]:
        if t["name"] not in expected:
            continue
        kind, shape, deq = expected[t["name"]]
        if t["shape"] != shape or t["type"] != kind:
            check(False, f"{label}: {t['name']} {t['type']} {t['shape']}, want {kind} {shape}")
            continue
        v = values[t["at"]:t["at"] + deq.size].reshape(deq.shape)
        if not np.array_equal(v.view(np.uint32), deq.view(np.uint32)):
            bad += 1
            where = np.argwhere(v != deq)
            check(False, f"{label}: {t['name']} differs at {where[:3].tolist()} ({len(where)} values)")
    return bad


for mname, cfg in MODELS.items():
    sd = build_model(cfg, sum(map(ord, mname)))
    for kind in KINDS:
        label = f"{mname} {kind}"
        meta, tensors, expected = convert(cfg, sd, kind)
        path = os.path.join(WORK, f"{mname}_{kind}.gguf")
        with open(path, "wb") as f:
            f.write(gw.write_gguf(meta, tensors))
        rc, got, values = dump(path)
        if rc != 0:
            check(False, f"{label}: refused ({rc}): {got}")
            continue
        check_config(label, cfg, got["config"])
        check_tensors(label, got, values, expected)
        if kind in RUN_KINDS:
            EXPECTED[(mname, kind)] = expected
        permuted = 2 * cfg["num_hidden_layers"] * (2 if cfg.get("attention_bias") else 1) if cfg["model_type"] == "llama" else 0
        check(got["owned"] == permuted, f"{label}: {got['owned']} tensors made in HF order, want {permuted}")
    print(f"gguf_weights {mname}: {len(KINDS)} types read")

# ---------------------------------------------------------------- the model a GGUF opens
# `gpt logits FILE.gguf` against llama_torch_test.py's own PyTorch model of transformers' classes,
# run on the same dequantized weights in Hugging Face's order: names, the rows put back, the types.
if GPT:
    import llama_torch_test as lt  # noqa: E402
    # 10 tokens: a prompt's products (typed_matmul.h: the rows dequantized a chunk at a time); 5: the
    # products of fewer rows, which read the blocks in place (quant.h's matmul)
    for ids in ([5, 17, 42, 9, 7, 60, 3, 11, 1, 95], [5, 17, 42, 9, 7]):
        for (mname, kind), expected in EXPECTED.items():
            cfg = dict({"tie_word_embeddings": False}, **MODELS[mname])
            w = {name: torch.from_numpy(deq) for name, (_, _, deq) in expected.items()}
            want = lt.hf_forward(cfg, w, ids)
            path = os.path.join(WORK, f"{mname}_{kind}.gguf")
            p = subprocess.run([GPT, "logits", path, "--ids", ",".join(map(str, ids))], capture_output=True, text=True)
            if p.returncode != 0:
                check(False, f"gpt logits {mname} {kind}: exit {p.returncode}: {p.stderr[:300]}")
                continue
            got = torch.tensor(json.loads(p.stdout)["logits"], dtype=torch.float64)
            err = float((got - want).abs().max()) if got.shape == want.shape else float("inf")
            bound = 1e-4 * max(1.0, float(want.abs().max()))
            check(err <= bound, f"gpt logits {mname} {kind} ({len(ids)} tokens): off by {err:.3g} (bound {bound:.3g}), "
                                f"shape {tuple(got.shape)}")
    print(f"gguf_weights logits: {len(EXPECTED)} files against PyTorch, 10 and 5 tokens")
    # the same file cut short, opened for inference (the file's bytes kept as the model's weights):
    # refused, naming a tensor and its byte past the end
    whole = open(path, "rb").read()
    cut = os.path.join(WORK, "truncated.gguf")
    with open(cut, "wb") as f:
        f.write(whole[: len(whole) * 3 // 4])
    p = subprocess.run([GPT, "logits", cut, "--ids", "1,2"], capture_output=True, text=True)
    check(p.returncode == 1 and re.search(r"truncated\.gguf: .*tensor '[^']+' at offset \d+ .*\(byte \d+\) needs \d+ bytes, "
                                          r"past the end of the file", p.stderr) is not None,
          f"gpt logits on a truncated GGUF: exit {p.returncode}, {p.stderr[:300]!r}")
    print("gguf_weights: a truncated GGUF refused by gpt logits, naming the tensor and its byte")

# ---------------------------------------------------------------- damaged files, refused by name
cfg = MODELS["llama3"]
sd = build_model(cfg, 5)
meta, tensors, _ = convert(cfg, sd, "Q8_0")


def variant(change_meta=None, change_tensors=None):
    m, t = list(meta), [gw.Tensor(x.name, x.kind, list(x.dims), x.data, x.offset, x.type_id) for x in tensors]
    if change_meta:
        m = change_meta(m)
    if change_tensors:
        t = change_tensors(t)
    return m, t


def named(t, name):
    return next(x for x in t if x.name == name)


def drop(t, name):
    return [x for x in t if x.name != name]


def set_attr(obj, **kw):
    for k, v in kw.items():
        setattr(obj, k, v)
    return obj


def past_end(t):
    set_attr(named(t, "blk.1.ffn_down.weight"), offset=1 << 30)
    return t


def wrong_rows(t):
    x = named(t, "blk.0.attn_k.weight")
    x.dims = [256, 64]
    x.data = x.data[:len(x.data) // 2]
    return t


damaged = {
    "bad offset": (variant(change_tensors=past_end), "blk.1.ffn_down.weight"),
    "unknown type": (variant(change_tensors=lambda t: [set_attr(x, type_id=99) if x.name == "blk.0.ffn_up.weight" else x
                                                          for x in t]), "99"),
    "missing tensor": (variant(change_tensors=lambda t: drop(t, "blk.1.ffn_gate.weight")), "blk.1.ffn_gate.weight"),
    "wrong shape": (variant(change_tensors=wrong_rows), "blk.0.attn_k.weight"),
    "extra tensor": (variant(change_tensors=lambda t: t + [gw.Tensor("blk.0.attn_rot_embd", "F32", [4], bytes(16))]),
                     "blk.0.attn_rot_embd"),
    "type not run": (variant(change_tensors=lambda t: [gw.Tensor(x.name, "Q5_K", x.dims, bytes(176 * x.dims[1] * x.dims[0] // 256))
                                                         if x.name == "blk.0.ffn_up.weight" else x for x in t]), "Q5_K"),
    "partial biases": (variant(change_tensors=lambda t: t + [gw.Tensor("blk.0.attn_q.bias", "F32", [256], bytes(1024))]),
                       "blk.0.attn_k.bias"),
    "rope scaling type": (variant(change_meta=lambda m: m + [("llama.rope.scaling.type", gw.STRING, "yarn")]), "yarn"),
    "other freq factors": (variant(change_tensors=lambda t: [gw.Tensor(x.name, "F32", x.dims, (np.frombuffer(x.data, np.float32) * 1.5).astype(np.float32).tobytes())
                                                               if x.name == "rope_freqs.weight" else x for x in t]),
                           "rope_freqs.weight"),
    "partial rotation": (variant(change_meta=lambda m: m + [("llama.rope.dimension_count", gw.U32, 32)]),
                         "llama.rope.dimension_count"),
    "row not whole blocks": (variant(change_tensors=lambda t: [gw.Tensor(x.name, "Q8_0", [240, 512], bytes(34 * 512 * 240 // 32))
                                                                 if x.name == "blk.0.ffn_up.weight" else x for x in t]),
                             "blk.0.ffn_up.weight"),
    "vocab size": (variant(change_meta=lambda m: m + [("llama.vocab_size", gw.U32, 95)]), "llama.vocab_size"),
}
for what, ((m, t), words) in damaged.items():
    path = os.path.join(WORK, "bad_" + what.replace(" ", "_") + ".gguf")
    with open(path, "wb") as f:
        f.write(gw.write_gguf(m, t))
    rc, err, _ = dump(path)
    check(rc == 1 and words in err, f"damaged ({what}): want exit 1 naming {words!r}, got {rc}: {str(err)[:300]}")
print(f"gguf_weights damaged: {len(damaged)} files")

# ---------------------------------------------------------------- gpt inspect
if GPT:
    for mname in ("llama3", "qwen2"):
        path = os.path.join(WORK, f"{mname}_Q8_0.gguf")
        p = subprocess.run([GPT, "inspect", "--json", path], capture_output=True, text=True)
        a = json.loads(p.stdout) if p.returncode == 0 else {}
        for t in a.get("tensors", []):
            want = "rope_scaling (Llama 3's frequency factors)" if t["name"] == "rope_freqs.weight" else None
            if want is None:
                want = next(h for h, _ in build_model(MODELS[mname], 0) if gw.gguf_name(h) == t["name"])
                if mname == "llama3" and (".q_proj." in want or ".k_proj." in want):
                    want += " (rows put back in Hugging Face's order)"
            check(t.get("hf_name") == want, f"inspect {mname}: {t['name']} → {t.get('hf_name')!r}, want {want!r}")
        hf = a.get("hf_config", "")
        check(hf.startswith(f"model_type {MODELS[mname]['model_type']}, hidden_size 256, intermediate_size 512, "
                            "num_hidden_layers 2, num_attention_heads 4, num_key_value_heads 2, head_dim 64, vocab_size 96"),
              f"inspect {mname}: hf_config {hf!r}")
        check(("rope_scaling llama3 (factor 32," in hf) == (mname == "llama3") and ("q/k/v biases" in hf) == (mname == "qwen2"),
              f"inspect {mname}: hf_config {hf!r}")
        text = subprocess.run([GPT, "inspect", path], capture_output=True, text=True).stdout
        check("config.json it implies: model_type " in text and "→ model.layers.1.mlp.down_proj.weight" in text,
              f"inspect {mname} text: {text[:400]!r}")
    print("gguf_weights inspect: 2 files")

if failures:
    print(f"gguf_weights: {len(failures)} failures")
    sys.exit(1)
print("gguf_weights: ok")
