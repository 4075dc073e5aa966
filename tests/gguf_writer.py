"""gguf_writer.py — GGUF files of our own for the tests (struct + NumPy; no llama.cpp code), written
from the format's definition (ggml's docs/gguf.md, ggml-common.h's blocks), with quantizers and
float64 dequantizers of F16, BF16, Q8_0, Q4_0, Q4_K and Q6_K written here from that definition,
independently of src/core/kernels/quant*.

  write_gguf(metadata, tensors, …) -> bytes   metadata: [(key, type, value)], arrays as
                                               (ARRAY, (elem_type, [values])); tensors: Tensor(…)
  quantize(kind, x) -> bytes; dequantize(kind, raw, n) -> float64 values
  gguf_name(hf) -> str                         llama.cpp's name of a transformers tensor
  llama_meta(arch, name, cfg, extra) -> [...]  a Llama-family file's metadata from a transformers config
  bytes_to_unicode() -> {byte: char}           GPT-2's byte-level alphabet (the "gpt2" tokenizer's tokens)
  sample_files(out_dir) -> {name: path}        the files tests/gguf_test.py and
                                               tests/gguf_reference_test.mjs read
Run as a script: python3 gguf_writer.py OUT_DIR writes sample_files and prints their paths as JSON.
Limits: little-endian only; what a test needs, not a general GGUF library.
"""
import json
import os
import struct
import sys
from dataclasses import dataclass, field

import numpy as np

# value types (gguf.h's enum gguf_type)
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
SCALAR_FMT = {U8: '<B', I8: '<b', U16: '<H', I16: '<h', U32: '<I', I32: '<i', F32: '<f', BOOL: '<?',
              U64: '<Q', I64: '<q', F64: '<d'}
# ggml types: number, values per block, bytes per block
GGML = {'F32': (0, 1, 4), 'F16': (1, 1, 2), 'Q4_0': (2, 32, 18), 'Q8_0': (8, 32, 34), 'Q4_K': (12, 256, 144),
        'Q5_K': (13, 256, 176), 'Q6_K': (14, 256, 210), 'I8': (24, 1, 1), 'BF16': (30, 1, 2)}


def gguf_string(s):
    b = s.encode('utf-8') if isinstance(s, str) else bytes(s)
    return struct.pack('<Q', len(b)) + b


def encode_value(t, v):
    if t == STRING:
        return gguf_string(v)
    if t == ARRAY:
        elem, items = v
        out = struct.pack('<IQ', elem, len(items))
        return out + b''.join(encode_value(elem, i) for i in items)
    return struct.pack(SCALAR_FMT[t], v)


@dataclass
class Tensor:
    name: str
    kind: str            # a key of GGML
    dims: list           # ne[0] first
    data: bytes
    offset: int = None   # None: laid out in order, aligned
    type_id: int = None  # None: GGML[kind][0]; set to plant an unknown type


def write_gguf(metadata, tensors, version=3, alignment=32, magic=b'GGUF', counts=None):
    out = bytearray(magic + struct.pack('<I', version))
    n_t, n_kv = counts if counts else (len(tensors), len(metadata))
    out += struct.pack('<QQ', n_t, n_kv)
    for key, t, v in metadata:
        out += gguf_string(key) + struct.pack('<I', t) + encode_value(t, v)
    offsets, at = [], 0
    for t in tensors:
        off = at if t.offset is None else t.offset
        offsets.append(off)
        at = -(-(at + len(t.data)) // alignment) * alignment
    for t, off in zip(tensors, offsets):
        type_id = GGML[t.kind][0] if t.type_id is None else t.type_id
        out += gguf_string(t.name) + struct.pack('<I', len(t.dims)) + struct.pack(f'<{len(t.dims)}Q', *t.dims)
        out += struct.pack('<IQ', type_id, off)
    out += b'\0' * (-len(out) % alignment)
    data = bytearray()
    for t, off in zip(tensors, offsets):
        if t.offset is None:
            data += b'\0' * (off - len(data)) + t.data
    data += b'\0' * (-len(data) % alignment)
    return bytes(out + data)


# ---------------------------------------------------------------- halves

def f16_bits(x):
    return np.asarray(x, dtype=np.float32).astype(np.float16).view(np.uint16)  # round to nearest even


def f16_value(bits):
    return np.asarray(bits, dtype=np.uint16).view(np.float16).astype(np.float64)


def bf16_bits(x):
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (np.asarray(bits, dtype=np.uint32) << 16).astype(np.uint32).view(np.float32).astype(np.float64)


# ---------------------------------------------------------------- quantizers (from the definition)

def q8_0(x):
    out = bytearray()
    for b in np.asarray(x, np.float32).reshape(-1, 32):
        d = np.float32(np.abs(b).max()) / np.float32(127)
        inv = np.float32(1) / d if d else np.float32(0)
        q = np.round(b * inv).astype(np.int8)  # ties away from zero and to even differ only on exact halves
        out += f16_bits(d).tobytes() + q.tobytes()
    return bytes(out)


def q4_0(x):
    out = bytearray()
    for b in np.asarray(x, np.float32).reshape(-1, 32):
        m = b[np.argmax(np.abs(b))]
        d = np.float32(m) / np.float32(-8)
        inv = np.float32(1) / d if d else np.float32(0)
        q = np.minimum(15, (b * inv + np.float32(8.5)).astype(np.int8)).astype(np.uint8)
        out += f16_bits(d).tobytes() + (q[:16] | (q[16:] << 4)).astype(np.uint8).tobytes()
    return bytes(out)


def pack_scales_k4(sc, m):
    """8 six-bit scales and mins into Q4_K's 12 bytes."""
    s = np.zeros(12, np.uint8)
    for i in range(4):
        s[i] = (sc[i] & 63) | ((sc[i + 4] >> 4) << 6)
        s[i + 4] = (m[i] & 63) | ((m[i + 4] >> 4) << 6)
        s[i + 8] = (sc[i + 4] & 15) | ((m[i + 4] & 15) << 4)
    return s


def q4_K(x):
    out = bytearray()
    for blk in np.asarray(x, np.float64).reshape(-1, 256):
        subs = blk.reshape(8, 32)
        lo = np.minimum(0, subs.min(axis=1))
        scale = (subs.max(axis=1) - lo) / 15
        d, dmin = scale.max() / 63, (-lo).max() / 63
        d16, dm16 = f16_bits(d), f16_bits(dmin)
        dv, dmv = f16_value(d16), f16_value(dm16)
        sc = np.clip(np.round(scale / dv), 0, 63).astype(np.int64) if dv else np.zeros(8, np.int64)
        m = np.clip(np.round(-lo / dmv), 0, 63).astype(np.int64) if dmv else np.zeros(8, np.int64)
        q = np.zeros((8, 32), np.int64)
        for s in range(8):
            if sc[s]:
                q[s] = np.clip(np.round((subs[s] + dmv * m[s]) / (dv * sc[s])), 0, 15)
        qs = np.zeros(128, np.uint8)
        for c in range(4):
            qs[32 * c:32 * c + 32] = q[2 * c] | (q[2 * c + 1] << 4)
        out += d16.tobytes() + dm16.tobytes() + pack_scales_k4(sc, m).tobytes() + qs.tobytes()
    return bytes(out)


def q6_K(x):
    out = bytearray()
    for blk in np.asarray(x, np.float64).reshape(-1, 256):
        subs = blk.reshape(16, 16)
        scale = np.abs(subs).max(axis=1) / 31
        d16 = f16_bits(scale.max() / 127)
        dv = f16_value(d16)
        sc = np.clip(np.round(scale / dv), -128, 127).astype(np.int64) if dv else np.zeros(16, np.int64)
        q = np.zeros(256, np.int64)
        for s in range(16):
            if sc[s]:
                q[16 * s:16 * s + 16] = np.clip(np.round(subs[s] / (dv * sc[s])), -32, 31)
        q += 32
        ql, qh = np.zeros(128, np.uint8), np.zeros(64, np.uint8)
        for h in range(2):
            for l in range(32):
                q1, q2, q3, q4 = (q[128 * h + l + 32 * k] for k in range(4))
                ql[64 * h + l] = (q1 & 15) | ((q3 & 15) << 4)
                ql[64 * h + l + 32] = (q2 & 15) | ((q4 & 15) << 4)
                qh[32 * h + l] = (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6)
        out += ql.tobytes() + qh.tobytes() + sc.astype(np.int8).tobytes() + d16.tobytes()
    return bytes(out)


def quantize(kind, x):
    x = np.asarray(x, np.float32).ravel()
    if kind == 'F32':
        return x.tobytes()
    if kind == 'F16':
        return f16_bits(x).tobytes()
    if kind == 'BF16':
        return bf16_bits(x).tobytes()
    return {'Q8_0': q8_0, 'Q4_0': q4_0, 'Q4_K': q4_K, 'Q6_K': q6_K}[kind](x)


# ---------------------------------------------------------------- dequantizers, float64

def dequantize(kind, raw, n):
    b = np.frombuffer(raw, np.uint8)
    if kind == 'F32':
        return np.frombuffer(raw, np.float32, n).astype(np.float64)
    if kind == 'F16':
        return f16_value(np.frombuffer(raw, np.uint16, n))
    if kind == 'BF16':
        return bf16_value(np.frombuffer(raw, np.uint16, n))
    y = np.zeros(n)
    if kind == 'Q8_0':
        for i in range(n // 32):
            blk = b[34 * i:34 * i + 34]
            y[32 * i:32 * i + 32] = f16_value(blk[:2].view(np.uint16))[0] * blk[2:].view(np.int8)
    elif kind == 'Q4_0':
        for i in range(n // 32):
            blk = b[18 * i:18 * i + 18]
            d = f16_value(blk[:2].view(np.uint16))[0]
            qs = blk[2:].astype(np.int64)
            y[32 * i:32 * i + 16] = d * ((qs & 15) - 8)
            y[32 * i + 16:32 * i + 32] = d * ((qs >> 4) - 8)
    elif kind == 'Q4_K':
        for i in range(n // 256):
            blk = b[144 * i:144 * i + 144]
            d, dmin = f16_value(blk[:4].view(np.uint16))
            s, qs = blk[4:16].astype(np.int64), blk[16:].astype(np.int64)
            for j in range(8):  # sub-block j: its scale and min (6 bits each)
                if j < 4:
                    sc, m = s[j] & 63, s[j + 4] & 63
                else:
                    sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4)
                    m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4)
                nib = qs[32 * (j // 2):32 * (j // 2) + 32]
                q = (nib & 15) if j % 2 == 0 else (nib >> 4)
                y[256 * i + 32 * j:256 * i + 32 * j + 32] = d * sc * q - dmin * m
    elif kind == 'Q6_K':
        for i in range(n // 256):
            blk = b[210 * i:210 * i + 210]
            ql, qh = blk[:128].astype(np.int64), blk[128:192].astype(np.int64)
            sc = blk[192:208].view(np.int8).astype(np.int64)
            d = f16_value(blk[208:210].view(np.uint16))[0]
            for v in range(256):
                h, r = divmod(v, 128)
                quarter, l = divmod(r, 32)
                low = (ql[64 * h + l + 32 * (quarter % 2)] >> (4 * (quarter // 2))) & 15
                high = (qh[32 * h + l] >> (2 * quarter)) & 3
                y[256 * i + v] = d * sc[v // 16] * ((low | (high << 4)) - 32)
    else:
        raise ValueError(kind)
    return y


def random_k_blocks(kind, n_blocks, rng):
    """Blocks of random bits (every quant and scale pattern), with moderate super-block scales."""
    size = GGML[kind][2]
    raw = bytearray(rng.integers(0, 256, n_blocks * size, dtype=np.uint8).tobytes())
    for i in range(n_blocks):
        d = f16_bits(0.01 * (1 + abs(rng.standard_normal()))).tobytes()
        if kind == 'Q4_K':
            raw[size * i:size * i + 4] = d + f16_bits(0.02 * abs(rng.standard_normal())).tobytes()
        else:
            raw[size * i + size - 2:size * i + size] = d
    return bytes(raw)


# llama.cpp's names (llama-arch.cpp's LLM_TENSOR_NAMES for llama, qwen2, qwen3)
GGUF_LAYER = {"input_layernorm.weight": "attn_norm.weight", "self_attn.q_proj.weight": "attn_q.weight",
              "self_attn.q_proj.bias": "attn_q.bias", "self_attn.k_proj.weight": "attn_k.weight",
              "self_attn.k_proj.bias": "attn_k.bias", "self_attn.v_proj.weight": "attn_v.weight",
              "self_attn.v_proj.bias": "attn_v.bias", "self_attn.o_proj.weight": "attn_output.weight",
              "self_attn.o_proj.bias": "attn_output.bias", "self_attn.q_norm.weight": "attn_q_norm.weight",
              "self_attn.k_norm.weight": "attn_k_norm.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
              "mlp.gate_proj.weight": "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight",
              "mlp.down_proj.weight": "ffn_down.weight"}
GGUF_TOP = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
            "lm_head.weight": "output.weight"}


def bytes_to_unicode():
    """GPT-2's byte → printable character table (byte-level BPE's alphabet)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def gguf_name(hf):
    """llama.cpp's name of the transformers tensor hf (model.layers.N.… → blk.N.…)."""
    if hf in GGUF_TOP:
        return GGUF_TOP[hf]
    parts = hf.split(".")
    return f"blk.{parts[2]}." + GGUF_LAYER[".".join(parts[3:])]


def llama_meta(arch, name, cfg, extra=()):
    """The metadata llama.cpp's converter writes for a Llama-family model (arch "llama", "qwen2", …)
    of transformers config cfg: general.*, then the hyperparameters under arch, then `extra`
    (entries: a tokenizer, key lengths …), then the BOS and EOS ids; in that order (the files' bytes)."""
    a = arch + "."
    return [("general.architecture", STRING, arch), ("general.name", STRING, name),
            (a + "context_length", U32, cfg["max_position_embeddings"]),
            (a + "embedding_length", U32, cfg["hidden_size"]), (a + "block_count", U32, cfg["num_hidden_layers"]),
            (a + "feed_forward_length", U32, cfg["intermediate_size"]),
            (a + "attention.head_count", U32, cfg["num_attention_heads"]),
            (a + "attention.head_count_kv", U32, cfg["num_key_value_heads"]),
            (a + "rope.freq_base", F32, cfg["rope_theta"]),
            (a + "attention.layer_norm_rms_epsilon", F32, cfg["rms_norm_eps"]),
            *extra,
            ("tokenizer.ggml.bos_token_id", U32, cfg["bos_token_id"]),
            ("tokenizer.ggml.eos_token_id", U32, cfg["eos_token_id"])]


# ---------------------------------------------------------------- the sample files

RUN_KINDS = ['F32', 'F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_K', 'Q6_K']


def every_type_metadata(arch='llama'):
    return [
        ('general.architecture', STRING, arch),
        ('general.name', STRING, 'tiny test ' + arch),
        ('test.u8', U8, 200), ('test.i8', I8, -100), ('test.u16', U16, 60000), ('test.i16', I16, -30000),
        ('test.u32', U32, 4000000000), ('test.i32', I32, -2000000000), ('test.f32', F32, 0.1),
        ('test.bool', BOOL, True), ('test.string', STRING, 'héllo, 世界 "q"'),
        ('test.u64', U64, 2 ** 53), ('test.i64', I64, -(2 ** 40)), ('test.f64', F64, 1e-300),
        ('test.array_u8', ARRAY, (U8, [1, 2, 255])), ('test.array_i16', ARRAY, (I16, [-1, 7])),
        ('test.array_f64', ARRAY, (F64, [0.5, -2.25])), ('test.array_bool', ARRAY, (BOOL, [True, False])),
        ('test.array_empty', ARRAY, (U32, [])),
        ('test.array_nested', ARRAY, (ARRAY, [(STRING, ['a', 'bc']), (STRING, []), (STRING, ['日本'])])),
        (f'{arch}.context_length', U32, 128), (f'{arch}.embedding_length', U32, 64),
        (f'{arch}.block_count', U32, 2), (f'{arch}.feed_forward_length', U32, 160),
        (f'{arch}.attention.head_count', U32, 4), (f'{arch}.attention.head_count_kv', U32, 2),
        (f'{arch}.rope.freq_base', F32, 500000.0), (f'{arch}.attention.layer_norm_rms_epsilon', F32, 1e-5),
        (f'{arch}.rope.dimension_count', U32, 16), (f'{arch}.attention.sliding_window', U32, 32),
        ('tokenizer.ggml.model', STRING, 'gpt2'), ('tokenizer.ggml.pre', STRING, 'smollm'),
        ('tokenizer.ggml.tokens', ARRAY, (STRING, ['<s>', '</s>', 'a', 'b', 'ab', 'Ġthe'])),
        ('tokenizer.ggml.token_type', ARRAY, (I32, [3, 3, 1, 1, 1, 1])),
        ('tokenizer.ggml.scores', ARRAY, (F32, [0.0, 0.0, -1.0, -2.0, -3.0, -4.5])),
        ('tokenizer.ggml.merges', ARRAY, (STRING, ['a b'])),
        ('tokenizer.ggml.bos_token_id', U32, 0), ('tokenizer.ggml.eos_token_id', U32, 1),
        ('tokenizer.ggml.add_bos_token', BOOL, False),
    ]


def every_type_tensors(rng):
    tensors = []
    for kind in RUN_KINDS:
        k = 512 if kind in ('Q4_K', 'Q6_K') else 96
        x = rng.standard_normal((5, k)).astype(np.float32)
        tensors.append(Tensor(f'w.{kind.lower()}', kind, [k, 5], quantize(kind, x)))
    tensors.append(Tensor('w.q4_k_bits', 'Q4_K', [256, 3], random_k_blocks('Q4_K', 3, rng)))
    tensors.append(Tensor('w.q6_k_bits', 'Q6_K', [512, 2], random_k_blocks('Q6_K', 4, rng)))
    tensors.append(Tensor('v.f32', 'F32', [7], rng.standard_normal(7).astype(np.float32).tobytes()))
    tensors.append(Tensor('w.q5_k', 'Q5_K', [256, 2], rng.integers(0, 256, 352, dtype=np.uint8).tobytes()))
    tensors.append(Tensor('w.i8', 'I8', [3, 2, 2, 2], bytes(range(24))))
    return tensors


def sample_files(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(2026)
    files = {
        'every_type': write_gguf(every_type_metadata('llama'), every_type_tensors(rng)),
        'qwen2_v2': write_gguf(every_type_metadata('qwen2'), every_type_tensors(rng)[:3], version=2),
        'aligned64': write_gguf(every_type_metadata('qwen3') + [('general.alignment', U32, 64)],
                                every_type_tensors(rng)[2:6], alignment=64),
        'no_tensors': write_gguf([('general.architecture', STRING, 'gemma2')], []),
    }
    paths = {}
    for name, data in files.items():
        paths[name] = os.path.join(out_dir, name + '.gguf')
        with open(paths[name], 'wb') as f:
            f.write(data)
    return paths


if __name__ == '__main__':
    print(json.dumps(sample_files(sys.argv[1])))
