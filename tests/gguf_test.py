"""gguf_test.py — the GGUF reader and the quantized products against an independent implementation.

Files written by tests/gguf_writer.py (our own writer and quantizers, from the format's definition)
are read by the core (tests/gguf_probe.cpp, `gpt inspect`), and:
  - every tensor's dequantization (quant::dequantize_row, and the fast tier's on every instruction
    set the probe runs) equals, bit for bit, the float32 rounding
    of gguf_writer's float64 dequantization (each value is one exact product, or one rounding of an
    exact expression, in both: Q8_0 and Q4_0 q·d and F16/BF16 are exact; Q4_K's d·sc·q − dmin·m
    and Q6_K's d·sc·q round once);
  - y = x·Wᵀ by the reference product (matmul_ref) is within (K + 2)·u·Σ|x·w| of float64 NumPy's,
    and by the fast tier, on every instruction set, within (3K + 16)·u·Σ|x·w| (u = 2⁻²⁴);
  - `gpt inspect --json` gives back every metadata value and the tensor table as written;
  - damaged files are refused (exit 1) with a message naming the byte, key or tensor at fault.
Usage: gguf_test.py GPT GGUF_PROBE WORK_DIR
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_writer as gw  # noqa: E402

GPT, PROBE, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
U = 2.0 ** -24
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL:', what)


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


# ---------------------------------------------------------------- the numbers
paths = gw.sample_files(os.path.join(WORK, 'samples'))
rng = np.random.default_rng(7)
x = rng.standard_normal(3 * 1024).astype(np.float32)
x_path = os.path.join(WORK, 'x.f32')
x.tofile(x_path)


def tensors_of(name):
    """The tensors gguf_writer put in sample file `name`, rebuilt the same way (same seed)."""
    r = np.random.default_rng(2026)
    every = gw.every_type_tensors(r)
    if name == 'every_type':
        return every
    second = gw.every_type_tensors(r)
    if name == 'qwen2_v2':
        return second[:3]
    return gw.every_type_tensors(r)[2:6]


for name in ('every_type', 'qwen2_v2', 'aligned64'):
    out = os.path.join(WORK, 'probe_' + name)
    os.makedirs(out, exist_ok=True)
    p = run(PROBE, paths[name], x_path, out)
    check(p.returncode == 0, f'gguf_probe {name}: {p.stderr}')
    for t in tensors_of(name):
        if t.kind not in gw.RUN_KINDS:
            continue
        k, n = t.dims[0], int(np.prod(t.dims)) // t.dims[0]
        exact = gw.dequantize(t.kind, t.data, k * n).reshape(n, k)
        isas = sorted(f[len(t.name) + 6:] for f in os.listdir(out) if f.startswith(t.name + '.fast.'))
        check(len(isas) >= 1, f'{name}/{t.name}: no fast products written')
        for deq in ['deq'] + ['deq.' + i for i in isas]:
            ours = np.fromfile(os.path.join(out, f'{t.name}.{deq}'), np.float32).reshape(n, k)
            same = np.array_equal(ours.view(np.uint32), exact.astype(np.float32).view(np.uint32))
            check(same, f'{name}/{t.name} ({t.kind}) {deq}: dequantization differs from float64 NumPy at '
                        f'{np.argwhere(ours != exact.astype(np.float32))[:3].tolist()}')
        xm = x[:3 * k].reshape(3, k).astype(np.float64)
        y = xm @ exact.T
        mag = np.abs(xm) @ np.abs(exact).T
        for tier, bound in [('ref', (k + 2) * U)] + [('fast.' + i, (3 * k + 16) * U) for i in isas]:
            got = np.fromfile(os.path.join(out, f'{t.name}.{tier}'), np.float32).reshape(3, n).astype(np.float64)
            err = np.abs(got - y) - bound * mag
            check((err <= 0).all(), f'{name}/{t.name} ({t.kind}) {tier}: off by {np.abs(got - y).max():.3g}, '
                                    f'bound {bound * mag.max():.3g}')

# ---------------------------------------------------------------- the header, through `gpt inspect --json`
p = run(GPT, 'inspect', '--json', paths['every_type'])
check(p.returncode == 0, f'gpt inspect --json: {p.stderr}')
ans = json.loads(p.stdout) if p.returncode == 0 else {'metadata': [], 'tensors': []}
meta = {m['key']: m for m in ans['metadata']}
names = {v: k for k, v in vars(gw).items() if k in ('U8', 'I8', 'U16', 'I16', 'U32', 'I32', 'F32', 'BOOL',
                                                    'STRING', 'ARRAY', 'U64', 'I64', 'F64')}
gguf_names = {'U8': 'UINT8', 'I8': 'INT8', 'U16': 'UINT16', 'I16': 'INT16', 'U32': 'UINT32', 'I32': 'INT32',
              'F32': 'FLOAT32', 'BOOL': 'BOOL', 'STRING': 'STRING', 'ARRAY': 'ARRAY', 'U64': 'UINT64',
              'I64': 'INT64', 'F64': 'FLOAT64'}


def expect(t, v):
    if t == gw.ARRAY:
        elem, items = v
        return [expect(elem, i) for i in items]
    if t == gw.F32:
        return float(np.float32(v))
    return v


check([m['key'] for m in ans['metadata']] == [k for k, _, _ in gw.every_type_metadata()], 'metadata keys in order')
for key, t, v in gw.every_type_metadata():
    m = meta.get(key, {})
    check(m.get('type') == gguf_names[names[t]], f'{key}: type {m.get("type")}')
    got = m.get('value')
    want = expect(t, v)
    if t == gw.F32:
        check(got is not None and np.float32(got) == np.float32(want), f'{key}: {got} != {want}')
    else:
        check(got == want, f'{key}: {got!r} != {want!r}')
written = gw.every_type_tensors(np.random.default_rng(2026))
check([t['name'] for t in ans['tensors']] == [t.name for t in written], 'tensor names in order')
at = 0
for got, t in zip(ans['tensors'], written):
    check(got['type'] == t.kind and got['type_id'] == gw.GGML[t.kind][0], f'{t.name}: type {got["type"]}')
    check(got['shape'] == t.dims, f'{t.name}: shape {got["shape"]}')
    check(got['offset'] == at and got['bytes'] == len(t.data), f'{t.name}: offset {got["offset"]}, bytes {got["bytes"]}')
    check(got['runs'] == (t.kind in gw.RUN_KINDS), f'{t.name}: runs {got["runs"]}')
    at = -(-(at + len(t.data)) // 32) * 32
check(ans.get('model', '').startswith('llama (tiny test llama): 2 layers, width 64, 4 heads of 16 (2 key/value heads)')
      and 'RoPE base 500000 over 16 dimensions (adjacent pairs), sliding window 32' in ans.get('model', ''),
      f'model: {ans.get("model")}')
check('tokenizer_error' not in ans, f'tokenizer: {ans.get("tokenizer_error")}')
p = run(GPT, 'inspect', paths['every_type'])
check(p.returncode == 0 and 'w.q5_k  Q5_K  [256, 2]' in p.stdout and 'a type we do not run' in p.stdout
      and 'tokenizer: gpt2 (pre-tokenizer smollm), 6 tokens, 1 merges; bos 0, eos 1' in p.stdout,
      f'gpt inspect text: {p.stdout[-800:]} {p.stderr}')
for name, arch in (('qwen2_v2', 'qwen2'), ('aligned64', 'qwen3')):
    p = run(GPT, 'inspect', '--json', paths[name])
    a = json.loads(p.stdout) if p.returncode == 0 else {}
    check(p.returncode == 0 and a.get('model', '').startswith(arch + ' ') and '(pairs half a head apart)' in a['model'],
          f'{name}: {p.stderr} {a.get("model")}')
# a GGUF file under another name is known by its magic; a FIFO is refused by name, never opened to wait
renamed = os.path.join(WORK, 'renamed.bin')
with open(paths['qwen2_v2'], 'rb') as src, open(renamed, 'wb') as dst:
    dst.write(src.read())
p = run(GPT, 'inspect', '--json', renamed)
check(p.returncode == 0 and json.loads(p.stdout).get('version') == 2, f'a GGUF named .bin: {p.stderr}')
fifo = os.path.join(WORK, 'fifo')
if os.path.exists(fifo):
    os.remove(fifo)
os.mkfifo(fifo)
p = subprocess.run([GPT, 'inspect', fifo], capture_output=True, text=True, timeout=60)
check(p.returncode == 1 and f'cannot read {fifo}: not a regular file' in p.stderr, f'a FIFO: {p.returncode} {p.stderr}')
check(json.loads(run(GPT, 'inspect', '--json', paths['qwen2_v2']).stdout)['version'] == 2, 'version 2 read')
check(json.loads(run(GPT, 'inspect', '--json', paths['aligned64']).stdout)['alignment'] == 64, 'alignment 64')
a = json.loads(run(GPT, 'inspect', '--json', paths['no_tensors']).stdout)
check("architecture 'gemma2' is not one we run (llama, qwen2, qwen3)" in a.get('model_error', ''),
      f'gemma2 refused by name: {a}')

# ---------------------------------------------------------------- damaged files
MD = [('general.architecture', gw.STRING, 'llama'), ('tokenizer.ggml.tokens', gw.ARRAY, (gw.STRING, ['a', 'b']))]
T = lambda **kw: gw.Tensor(**{'name': 'blk.0.w', 'kind': 'Q8_0', 'dims': [32, 2], 'data': bytes(68), **kw})
good = gw.write_gguf(MD, [T()])
string_at = good.index(b'tokenizer.ggml.tokens')
damaged = {
    'bad magic': (b'GGUG' + good[4:], ['not a GGUF file']),
    'version 1': (good[:4] + struct.pack('<I', 1) + good[8:], ['byte 4', 'GGUF version 1 is not one we read']),
    'big-endian': (good[:4] + struct.pack('>I', 3) + good[8:], ['big-endian']),
    'misaligned tensor offset': (gw.write_gguf(MD, [T(offset=7)]), ["tensor 'blk.0.w' at offset 7", 'not aligned to 32']),
    'offset past the end': (gw.write_gguf(MD, [T(offset=1 << 40)]), ["tensor 'blk.0.w'", 'past the end of the file']),
    'data cut short': (good[:len(good) - 96 + 60], ["tensor 'blk.0.w'", 'needs 68 bytes, past the end']),
    'unknown ggml type': (gw.write_gguf(MD, [T(type_id=99)]), ["tensor 'blk.0.w' has ggml type 99", 'byte ']),
    'truncated string': (good[:string_at + 10], ['the key of metadata pair 1', 'claims 21 bytes']),
    'huge array count': (gw.write_gguf([('general.architecture', gw.STRING, 'llama'),
                                         ('tokenizer.ggml.tokens', gw.ARRAY, (gw.STRING, ['a']))], [])
                         .replace(struct.pack('<IQ', gw.STRING, 1), struct.pack('<IQ', gw.STRING, 1 << 60)),
                         ["array 'tokenizer.ggml.tokens' claims 1152921504606846976 elements"]),
    'huge tensor count': (gw.write_gguf(MD, [T()], counts=(1 << 40, 2)), ['claims 1099511627776 tensors']),
    'huge metadata count': (gw.write_gguf(MD, [T()], counts=(1, 1 << 50)), ['metadata pairs', 'byte 16']),
    'duplicate key': (gw.write_gguf(MD + MD[:1], []), ["key 'general.architecture' is given twice"]),
    'duplicate tensor': (gw.write_gguf(MD, [T(), T()]), ["tensor 'blk.0.w' is given twice"]),
    'overlapping tensors': (gw.write_gguf(MD, [T(), T(name='blk.1.w', offset=0)]), ["tensor 'blk.1.w' at offset 0 overlaps tensor 'blk.0.w'"]),
    'row not a multiple of the block': (gw.write_gguf(MD, [T(dims=[31, 2])]), ["tensor 'blk.0.w' of type Q8_0 has rows of 31 values"]),
    'five dimensions': (gw.write_gguf(MD, [T(dims=[32, 1, 1, 1, 2])]), ["tensor 'blk.0.w' has 5 dimensions"]),
    'empty tensor name': (gw.write_gguf(MD, [T(name='')]), ['tensor 0 has an empty name']),
    'zero dimension': (gw.write_gguf(MD, [T(dims=[32, 0])]), ["tensor 'blk.0.w': dimension 1 is 0"]),
    'alignment not a power of two': (gw.write_gguf(MD + [('general.alignment', gw.U32, 24)], []), ['general.alignment is 24, not a power of two']),
    'unknown value type': (good.replace(struct.pack('<I', gw.STRING) + struct.pack('<Q', 5) + b'llama',
                                        struct.pack('<I', 13) + struct.pack('<Q', 5) + b'llama'),
                           ["the value type of key 'general.architecture' is 13"]),
    'boolean of 2': (gw.write_gguf(MD + [('x.flag', gw.BOOL, True)], []).replace(b'x.flag\x07\x00\x00\x00\x01', b'x.flag\x07\x00\x00\x00\x02'),
                     ["key 'x.flag' is 2, not a boolean"]),
}
for what, (data, fragments) in damaged.items():
    path = os.path.join(WORK, 'damaged_' + what.replace(' ', '_') + '.gguf')
    with open(path, 'wb') as f:
        f.write(data)
    p = run(GPT, 'inspect', path)
    ok = p.returncode == 1 and all(fr in p.stderr for fr in fragments) and path in p.stderr
    check(ok, f'damaged file ({what}): exit {p.returncode}, stderr {p.stderr.strip()!r}, expected {fragments}')

print(f'gguf_test: {len(failures)} failure(s)')
sys.exit(1 if failures else 0)
