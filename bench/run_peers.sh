#!/usr/bin/env bash
# bench/run_peers.sh — the core's kernels (build/ap_bench) beside PyTorch CPU on the shared
# workloads W1 (attention forward, one head, d 64, causal) and W2 (matmul), one thread, runs
# interleaved in one sitting, then a table of medians and ratios (ours ÷ PyTorch time: < 1 is
# faster). PyTorch is Debian's python3-torch with OpenBLAS extracted (not installed) beside it, as
# ../shared/bench/peers/run_torch.sh does. A benchmark: it prints numbers, it never fails on them.
#   bench/run_peers.sh [ROUNDS]        (default 2; needs: apt-get install python3-torch)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
peers=${PEERS:-../shared/bench/peers}
out=bench/out
mkdir -p "$out"
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "run_peers: needs Debian's python3-torch (apt-get install python3-torch)"; exit 1; }
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target ap_bench >/dev/null
ob=$PWD/$out/openblas/usr/lib/x86_64-linux-gnu/openblas-pthread
if [[ ! -e $ob/libblas.so.3 ]]; then
  (cd "$out" && apt-get download libopenblas0-pthread >/dev/null && dpkg -x libopenblas0-pthread_*.deb openblas)
fi
: > "$out/ours.txt"; : > "$out/torch.txt"
for ((r = 1; r <= rounds; r++)); do
  build/ap_bench >> "$out/ours.txt"
  LD_LIBRARY_PATH=$ob OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
    /usr/bin/python3 "$peers/torch_bench.py" --threads 1 --only w1,w2 2>/dev/null | grep -v -i warn >> "$out/torch.txt"
done
/usr/bin/python3 - "$out/ours.txt" "$out/torch.txt" <<'PY'
import re, statistics, sys
def medians(path):
    runs = {}
    for line in open(path):
        name, med = re.search(r'(W\d_\S+)', line), re.search(r'med_us=\s*([\d.]+)', line)
        if name and med:
            runs.setdefault(name.group(1), []).append(float(med.group(1)))
    return {k: statistics.median(v) for k, v in runs.items()}
ours, torch = medians(sys.argv[1]), medians(sys.argv[2])
rows = [(f'W1 attention T={T}', f'W1_attn_kernels_T{T}', f'W1_attn_manual_T{T}', 4 * T * T * 64) for T in (64, 256, 1024)]
rows += [(f'W1 attention T={T} (traced)', f'W1_attn_traced_T{T}', f'W1_attn_manual_T{T}', 4 * T * T * 64) for T in (64, 256)]
rows += [(f'W2 matmul n={n}', f'W2_matmul_n{n}', f'W2_mm_n{n}', 2 * n ** 3) for n in (64, 256, 512)]
print(f"{'workload':30s} {'ours µs':>10s} {'GFLOP/s':>8s} {'torch µs':>10s} {'GFLOP/s':>8s} {'ours/torch':>10s}")
for label, a, b, flops in rows:
    if a in ours and b in torch:
        print(f"{label:30s} {ours[a]:10.1f} {flops / ours[a] * 1e-3:8.2f} {torch[b]:10.1f} {flops / torch[b] * 1e-3:8.2f} {ours[a] / torch[b]:10.2f}")
PY
