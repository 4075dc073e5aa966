"""gpt2s.py — W6's model (bench/README.md): GPT-2 small's shape with seeded random weights, made
the same way here (numpy, for the PyTorch peer and the ONNX exporter) and in bench/gpt2s.h (C++,
for ours natively and in wasm), so that every runner times the SAME weights without a 500 MB file.

The config is GPT-2's: 12 layers, 12 heads, n_embd 768, vocabulary 50,257, block_size 1,024,
gelu_new (the tanh approximation), biases, LayerNorm ε 1e-5, lm_head tied to wte: 124,439,808
parameters. Element i of the tensor called `name` (nanoGPT's state-dict name, e.g.
"transformer.h.0.attn.c_attn.weight", PyTorch's Linear layout out × in) is
    z  = splitmix64(fnv1a64(name) + (i + 1) · 0x9E3779B97F4A7C15)          (mod 2⁶⁴)
    r  = 2 · ((z >> 40) · 2⁻²⁴) − 1                                         (float32, exact, in [−1, 1))
    LayerNorm weights 1 + 0.1·r, biases 0.02·r, every other tensor (0.02·√3)·r (std 0.02),
in float32. The biases and LayerNorm weights are not GPT-2's 0 and 1, so that a layout mistake in
any of them shows in the logits. Limits: random weights (only the time matters); the logits of
two runners agree to float32 rounding, not bit for bit (summation orders differ).
"""
import numpy as np

CONFIG = dict(n_layer=12, n_head=12, n_embd=768, vocab_size=50257, block_size=1024)
PROMPT_LEN = 64
GEN_TOKENS = 100
CHECK_TOKENS = 16  # greedy tokens compared between the runners
# the last prompt position's logits compared between the runners: every 4,096th from 17
CHECK_IDS = list(range(17, CONFIG["vocab_size"], 4096))
TOLERANCE = 1e-3  # largest |Δ| accepted between two runners' compared logits (they are O(1))

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def prompt():
    """The 64 prompt tokens: (i·3083 + 11) mod V."""
    return [(i * 3083 + 11) % CONFIG["vocab_size"] for i in range(PROMPT_LEN)]


def fnv1a64(s):
    h = 0xCBF29CE484222325
    for b in s.encode("utf8"):
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def tensor(name, shape):
    """The float32 array of `name` with `shape` (see the top of this file)."""
    n = int(np.prod(shape))
    out = np.empty(n, dtype=np.float32)
    seed = np.uint64(fnv1a64(name))
    if name.endswith(".bias"):
        scale, offset = np.float32(0.02), None
    elif ".ln_" in name:
        scale, offset = np.float32(0.1), np.float32(1.0)
    else:
        scale, offset = np.float32(0.02 * 3 ** 0.5), None
    chunk = 1 << 22
    with np.errstate(over="ignore"):
        for s in range(0, n, chunk):
            i = np.arange(s + 1, min(n, s + chunk) + 1, dtype=np.uint64)
            z = seed + i * _GOLDEN
            z = (z ^ (z >> np.uint64(30))) * _M1
            z = (z ^ (z >> np.uint64(27))) * _M2
            z = z ^ (z >> np.uint64(31))
            u = (z >> np.uint64(40)).astype(np.float32) * np.float32(2.0 ** -24)
            r = u * np.float32(2.0) - np.float32(1.0)
            v = r * scale
            out[s:s + len(i)] = v if offset is None else offset + v
    return out.reshape(shape)


def state_dict(names_shapes):
    """{name: float32 array} for [(nanoGPT name, shape)]."""
    return {name: tensor(name, shape) for name, shape in names_shapes}
