#!/usr/bin/python3
"""peers_table.py — the table bench/run_peers.sh prints: medians over the rounds of one sitting,
ours beside each peer, ratios as speeds (ours ÷ peer: > 1 means we are faster), GFLOP/s also as a
percentage of the machine's measured peak (native: the best of AVX2 and AVX-512 FMA; wasm: SIMD128
mul + add in Node).

Usage: bench/peers_table.py OUT_DIR   (reads OUT_DIR/round*/{ours_native,torch,ours_node,
ours_chromium,ort,tfjs,peak*}.txt, as run_peers.sh writes them; standard library only)"""
import glob
import os
import re
import statistics
import sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
out = args[0] if args else "bench/out"
cpu_time = "--cpu-time" in sys.argv
rounds = sorted(glob.glob(os.path.join(out, "round*")))


def collect(fname):
    """{name: [median µs per round]} from every round's file; also step/tok figures."""
    runs = {}
    for r in rounds:
        path = os.path.join(r, fname)
        if not os.path.exists(path):
            continue
        for line in open(path, encoding="utf8", errors="replace"):
            m = re.search(r"\b(W\d_\S+)", line)
            if not m:
                continue
            name = m.group(1)
            med = re.search(r"med_us=\s*([\d.]+)", line)
            for key, rx in ((":ms", r"\bms_med=\s*([\d.]+)"), (":cpu_ms", r"cpu_ms_med=\s*([\d.]+)")):  # W6
                w6 = re.search(rx, line)
                if w6:
                    runs.setdefault(name + key, []).append(float(w6.group(1)))
            step = re.search(r"step_ms_med=\s*([\d.]+)", line)
            tok = re.search(r"tok/s_med=\s*([\d.]+)", line)
            if med:
                runs.setdefault(name, []).append(float(med.group(1)))
            elif step:
                runs.setdefault(name, []).append(float(step.group(1)) * 1e3)
            if tok:
                runs.setdefault(name + ":tok/s", []).append(float(tok.group(1)))
    return {k: statistics.median(v) for k, v in runs.items()}, {k: len(v) for k, v in runs.items()}


def peak(name):
    """The best GFLOPs_max over the rounds (a loaded machine only lowers a ceiling)."""
    vals = []
    for r in rounds:
        for f in glob.glob(os.path.join(r, "peak*.txt")):
            for line in open(f, encoding="utf8", errors="replace"):
                if line.startswith(name):
                    m = re.search(r"GFLOPs_max=\s*([\d.]+)", line)
                    if m:
                        vals.append(float(m.group(1)))
    return max(vals) if vals else None


runners = {k: collect(f) for k, f in [("native", "ours_native.txt"), ("torch", "torch.txt"), ("node", "ours_node.txt"),
                                      ("chromium", "ours_chromium.txt"), ("ort", "ort.txt"), ("tfjs", "tfjs.txt")]}
med = {k: v[0] for k, v in runners.items()}
count = {k: v[1] for k, v in runners.items()}
p_native = max([p for p in (peak("avx2_fma256"), peak("avx512_fma512")) if p] or [0]) or None
p_wasm = peak("wasm_simd128_mul+add")
# The peak programs time in wall time; on a loaded machine (or for a CPU-time sitting) give the
# peaks measured when the machine was quiet: PEAK_NATIVE=… PEAK_WASM=… (GFLOP/s).
p_native = float(os.environ.get("PEAK_NATIVE", 0)) or p_native
p_wasm = float(os.environ.get("PEAK_WASM", 0)) or p_wasm

isa = "?"
for r in rounds:
    path = os.path.join(r, "ours_native.txt")
    if os.path.exists(path):
        m = re.search(r"fast tier: (\w+)", open(path).read())
        if m:
            isa = m.group(1)

print(f"\nOne sitting, {len(rounds)} rounds interleaved, {'CPU time' if cpu_time else 'wall time'}; medians of each round's median. "
      f"Ratios are speeds, ours ÷ peer (> 1: we are faster).")
print("W1 counts 4·T²·d flops (the whole square); a causal kernel that skips the masked half does about half of\n"
      "that, so W1's GFLOP/s can pass the machine's peak.")
print(f"Peaks (measured): native {p_native or float('nan'):.1f} GFLOP/s (best of AVX2/AVX-512 FMA, "
      f"one core), wasm SIMD128 {p_wasm or float('nan'):.1f} GFLOP/s (mul+add, Node). Our native fast tier: {isa}.")


def gf(flops, us, pk):
    if us is None:
        return "—"
    g = flops / us * 1e-3
    return f"{g:7.1f} ({100 * g / pk:3.0f}%)" if pk else f"{g:7.1f}"


def us(x):
    return "—" if x is None else f"{x:10.1f}"


def ratio(a, b):
    return "—" if a is None or b is None else f"{b / a:6.2f}×"


W1 = [(T, 4 * T * T * 64) for T in (64, 256, 1024)]
W2 = [(n, 2 * n ** 3) for n in (64, 256, 512)]

print("\n== native: ours (C++, fast tier) vs PyTorch CPU (OpenBLAS, 1 thread) — GFLOP/s (% of peak)")
print(f"{'workload':44s} {'ours µs':>10s} {'ours GFLOP/s':>14s} {'torch µs':>10s} {'torch GFLOP/s':>14s} {'ours÷torch':>10s}")
rows = []
for T, fl in W1:
    tm = med["torch"].get(f"W1_attn_manual_T{T}")
    rows.append((f"W1 attention T={T} causal, fused (infer)", med["native"].get(f"W1_attn_fastinfer_T{T}"), tm, fl))
    rows.append((f"W1 attention T={T}, weights kept (training)", med["native"].get(f"W1_attn_fast_T{T}"), tm, fl))
    rows.append((f"W1 attention T={T}, reference tier", med["native"].get(f"W1_attn_ref_T{T}"), tm, fl))
for n, fl in W2:
    tm = med["torch"].get(f"W2_mm_n{n}")
    rows.append((f"W2 matmul n={n}", med["native"].get(f"W2_matmul_fast_n{n}"), tm, fl))
    rows.append((f"W2 matmul n={n}, reference tier", med["native"].get(f"W2_matmul_ref_n{n}"), tm, fl))
for label, o, t, fl in rows:
    if o is None and t is None:
        continue
    print(f"{label:44s} {us(o)} {gf(fl, o, p_native):>14s} {us(t)} {gf(fl, t, p_native):>14s} {ratio(o, t):>10s}")

print("\n== wasm: ours (SIMD128) in Node and in Chromium vs onnxruntime-web and tfjs-wasm (Node, 1 thread)")
print(f"{'workload':28s} {'Node µs':>10s} {'Node GFLOP/s':>14s} {'Chromium µs':>11s} {'ort µs':>10s} {'ort GFLOP/s':>14s} "
      f"{'tfjs µs':>10s} {'Node÷ort':>9s} {'Chrom÷ort':>9s} {'Node÷tfjs':>9s}")
for label, key, ok, tk, fl in (
        [(f"W1 attention T={T} (fused)", f"W1_attn_fastinfer_T{T}", f"W1_attn_T{T}", f"W1_attn_T{T}_explicitT", fl)
         for T, fl in W1] +
        [(f"W1 attention T={T} (kept)", f"W1_attn_fast_T{T}", f"W1_attn_T{T}", f"W1_attn_T{T}_explicitT", fl)
         for T, fl in W1] +
        [(f"W2 matmul n={n}", f"W2_matmul_fast_n{n}", f"W2_mm_n{n}", f"W2_mm_n{n}", fl) for n, fl in W2]):
    o, c, r, t = med["node"].get(key), med["chromium"].get(key), med["ort"].get(ok), med["tfjs"].get(tk)
    if o is None and r is None:
        continue
    print(f"{label:28s} {us(o)} {gf(fl, o, p_wasm):>14s} {us(c):>11s} {us(r)} {gf(fl, r, p_wasm):>14s} {us(t)} "
          f"{ratio(o, r):>9s} {ratio(c, r):>9s} {ratio(o, t):>9s}")

# W3 / W7 / W4 (when the model's runners print them): tokens/s, ours ÷ PyTorch
w34 = [("W3 training tiny", "W3_train_tiny"), ("W3 training small", "W3_train_small"),
       ("W7 training tiny, RoPE+RMSNorm+SwiGLU+2 kv", "W7_train_tiny_llama"),
       ("W7 training small, RoPE+RMSNorm+SwiGLU+2 kv", "W7_train_small_llama"),
       ("W7 training tiny, ALiBi", "W7_train_tiny_alibi"), ("W7 training tiny, window 16", "W7_train_tiny_window"),
       ("W4 generation, no cache (blk 64)", "W4_gen256_nocache_blk64"),
       ("W4 generation, KV cache (blk 257)", "W4_gen256_kvcache_blk257")]


def tokps(runner, key):
    """tokens/s: printed on the line (W3, ours), else 256 tokens over the median µs (W4 peers)."""
    m = med[runner]
    if key + ":tok/s" in m:
        return m[key + ":tok/s"]
    if key.startswith("W4") and key in m:
        return 256e6 / m[key]
    return None


have = [w for w in w34 if any(tokps(k, w[1]) for k in med)]
if have:
    print("\n== W3 / W7 / W4: tokens/s (medians; ratios ours ÷ PyTorch CPU). W3, W7: 16·block tokens per training step;"
          "\n   W4: 256 generated tokens. ort and tfjs run in Node (wasm); tfjs W3 only with TFJS_ONLY=…,w3")
    print(f"{'workload':52s} {'native':>9s} {'Node':>9s} {'Chromium':>9s} {'torch':>9s} {'ort':>9s} {'tfjs':>9s} "
          f"{'nat÷torch':>9s} {'Node÷torch':>10s} {'Chr÷torch':>9s}")
    for label, key in have + [(l + " (reference tier)", k + "_ref") for l, k in have
                              if any(tokps(r, k + "_ref") for r in med)]:
        v = {k: tokps(k, key) for k in med}
        f = lambda x: f"{'—':>9s}" if x is None else f"{x:9.0f}"
        rt = lambda a: "—" if a is None or not v["torch"] else f"{a / v['torch']:.2f}×"
        print(f"{label:52s} {f(v['native'])} {f(v['node'])} {f(v['chromium'])} {f(v['torch'])} {f(v['ort'])} "
              f"{f(v['tfjs'])} {rt(v['native']):>9s} {rt(v['node']):>10s} {rt(v['chromium']):>9s}")


def w6_checks(fname):
    """The W6 check lines of a runner's files: [(logits list, greedy list)]."""
    out = []
    for r in rounds:
        path = os.path.join(r, fname)
        if os.path.exists(path):
            for line in open(path, encoding="utf8", errors="replace"):
                m = re.search(r"W6_gpt2s_check\S* .*logits=(\S+) greedy=(\S+)", line)
                if m:
                    out.append(([float(x) for x in m.group(1).split(",")], m.group(2).split(",")))
    return out


w6 = [("W6 prefill, 64-token prompt", "W6_gpt2s_prefill64", 64), ("W6 generation, 100 tokens (KV cache)", "W6_gpt2s_gen100", 100)]
if any(med[k].get(key + ":ms") for k in med for _, key, _ in w6):
    print("\n== W6: GPT-2 small's shape (124M parameters, random weights), 1 thread: ms per call on the sitting's clock"
          "\n   (CPU ms in brackets; Chromium has none), ratios ours ÷ peer as speeds (on CPU time in brackets)")
    print(f"{'workload':38s} {'native':>16s} {'torch':>16s} {'nat÷torch':>15s} {'Node':>16s} {'Chromium':>9s} {'ort':>16s} "
          f"{'Node÷ort':>15s} {'Chr÷ort':>8s}")
    for label, key, _ in w6:
        g = lambda r, k=key: med[r].get(k + ":ms")
        c = lambda r, k=key: med[r].get(k + ":cpu_ms")
        both = lambda r: "—" if g(r) is None else f"{g(r):7.0f} ({c(r):6.0f})" if c(r) else f"{g(r):7.0f}"
        rr = lambda a, b: "—" if a is None or b is None else f"{b / a:.2f}×"
        rc = lambda a, b: f"{rr(g(a), g(b))} ({rr(c(a), c(b))})"
        print(f"{label:38s} {both('native'):>16s} {both('torch'):>16s} {rc('native', 'torch'):>15s} {both('node'):>16s} "
              f"{both('chromium'):>9s} {both('ort'):>16s} {rc('node', 'ort'):>15s} {rr(g('chromium'), g('ort')):>8s}")
    ref = w6_checks("torch.txt")
    if ref:
        for k, f in [("native", "ours_native.txt"), ("node", "ours_node.txt"), ("chromium", "ours_chromium.txt"), ("ort", "ort.txt")]:
            got = w6_checks(f)
            if got:
                d = max(abs(a - b) for lg, _ in got for a, b in zip(lg, ref[0][0]))
                same = all(gr == ref[0][1] for _, gr in got)
                print(f"   check {k:9s} vs PyTorch: max |Δ| of the compared logits {d:.1e} (tolerance 1e-3: "
                      f"{'ok' if d <= 1e-3 else 'DIFFERENT'}), greedy tokens {'the same' if same else 'DIFFERENT'}")

# W8 (SmolLM2-135M's shape): ours with BF16 weights kept (and Q8_0 natively) beside PyTorch in
# bf16 and in float32 (smollm.py) and onnxruntime-web on the float32 export (smollm.onnx).
w8 = [("W8 prefill, 128-token prompt", "prefill128"), ("W8 generation, 64 tokens (KV cache)", "gen64")]
if any(med[k].get(f"W8_smollm_{d}_{w}:ms") for k in med for d in ("bf16", "f32") for _, w in w8):
    print("\n== W8: SmolLM2-135M's shape (random weights), 1 thread: ms per call on the sitting's clock; ours BF16 (Q8_0 natively),"
          "\n   PyTorch bf16 and float32, onnxruntime-web float32; ratios ours ÷ peer as speeds")
    print(f"{'workload':38s} {'native':>8s} {'nat Q8_0':>8s} {'torch bf16':>10s} {'torch f32':>9s} {'nat÷bf16':>8s} "
          f"{'Node':>8s} {'Chromium':>8s} {'ort':>8s} {'Node÷ort':>8s} {'Chr÷ort':>8s}")
    for label, w in w8:
        g = lambda r, d="bf16": med[r].get(f"W8_smollm_{d}_{w}:ms")
        f = lambda x: f"{'—':>8s}" if x is None else f"{x:8.0f}"
        rr = lambda a, b: "—" if a is None or b is None else f"{b / a:.2f}×"
        print(f"{label:38s} {f(g('native'))} {f(g('native', 'q8_0'))} {f(g('torch')):>10s} {f(g('torch', 'f32')):>9s} "
              f"{rr(g('native'), g('torch')):>8s} {f(g('node'))} {f(g('chromium'))} {f(g('ort', 'f32'))} "
              f"{rr(g('node'), g('ort', 'f32')):>8s} {rr(g('chromium'), g('ort', 'f32')):>8s}")

missing = [k for k in runners if not med[k]]
if missing:
    print(f"\n(no figures from: {', '.join(missing)})")
