#!/usr/bin/env bash
# bench/run_peers.sh — one sitting: ours and the peers on the workloads W1–W4, W6–W8 (bench/README.md),
# one thread each, interleaved for several rounds, then a table of medians and ratios (ours ÷
# peer, as speeds) with GFLOP/s as a % of the machine's measured peak (bench/peers_table.py).
#   ours:  native (build/ap_bench, the fast tier on the CPU's best ISA), wasm SIMD128 in Node
#          (build-wasm/ap_bench.cjs, node --no-liftoff) and in Debian's Chromium
#          (bench/chromium_bench.mjs, warmed up)
#   peers: bench/peers/: PyTorch CPU (torch_peer.py, and smollm.py for W8: Debian's python3-torch,
#          OpenBLAS extracted beside it, 1 thread), onnxruntime-web (ort_peer.mjs, on the graphs export_onnx.py
#          writes) and TensorFlow.js's wasm backend (tfjs_peer.mjs), in Node, SIMD, 1 thread
#   peak:  bench/peak.cpp natively and in wasm
# Nothing on the machine changes: the npm peers go into bench/peers/node_modules (their own lock),
# the ONNX graphs and Debian's OpenBLAS (apt-get download, dpkg -x) go under bench/out.
# A benchmark: it prints numbers and never fails on them.
# CPU_TIME=1: the same sitting timed in CPU time instead of wall time, into bench/out-cpu, for a
# shared, overloaded machine where waiting for a core would otherwise be counted: every runner
# reads AP_BENCH_CPU_TIME=1 (ours natively and in Node, the peers). Chromium has no CPU clock:
# skipped.
#   bench/run_peers.sh [ROUNDS]        (default 3; ONLY=w1,w2,w3,w4,w6,w7 the workloads (w8 and w8q
#                                       too when named: W8 exports a 660 MB graph), NO_CHROMIUM=1
#                                       to skip the browser, TFJS_ONLY=w1,w2,w4 tfjs's: its W3
#                                       takes minutes; QUICK=1: every runner with few trials and
#                                       steps, to prove that they all work — it measures nothing)
# Needs: scripts/setup (compilers, Emscripten, Chromium, node_modules) and python3-torch.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
only=${ONLY:-w1,w2,w3,w4,w6,w7}
tfjs_only=${TFJS_ONLY:-$(echo "$only" | tr "," "\n" | { grep -v -e w3 -e w6 -e w7 -e w8 || true; } | paste -sd, -)}
core=0; gpt=0
[[ $only == *w1* || $only == *w2* ]] && core=1
[[ $only == *w3* || $only == *w4* || $only == *w6* || $only == *w7* || $only == *w8* ]] && gpt=1
cpu_time=${CPU_TIME:-0}
quick=(); peak_trials=3
[[ -n ${QUICK:-} ]] && { quick=(--quick); peak_trials=1; }
out=bench/out
((cpu_time)) && out=bench/out-cpu
mkdir -p "$out"
export NODE_PATH=/usr/share/nodejs  # Debian's em++ finds its JS dependencies there
log() { printf '[run_peers] %s\n' "$*" >&2; }

/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "run_peers: needs Debian's python3-torch (apt-get install python3-torch)"; exit 1; }
# the npm peers have their own package.json and lock in bench/peers/ (about 450 MB installed, so
# the project's set-up does not fetch them): installed there the first time, or when the lock changes
if [[ ! -d bench/peers/node_modules || bench/peers/package-lock.json -nt bench/peers/node_modules/.package-lock.json ]]; then
  log "installing the npm peers in bench/peers/node_modules (npm ci)"
  (cd bench/peers && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

log "building ours (native Release, wasm Release)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target ap_bench ap_bench_gpt >/dev/null
emcmake cmake -S . -B build-wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-wasm -j2 --target ap_bench ap_bench_web ap_bench_gpt ap_bench_gpt_web >/dev/null

log "peers: the ONNX graphs in $out/onnx, Debian's OpenBLAS in $out/openblas"
export ONNX_DIR=$out/onnx
w6=(); [[ $only == *w6* ]] && w6=(--w6)  # W6's graph: 500 MB, a minute to export
[[ $only == *w8* ]] && w6+=(--w8)  # W8's: 660 MB, minutes
stale() { [[ ! -e $1 || bench/peers/export_onnx.py -nt $1 || bench/peers/torch_peer.py -nt $1 || bench/peers/gpt2s.py -nt $1 || bench/peers/smollm.py -nt $1 ]]; }
if stale "$ONNX_DIR/gpt_tiny.onnx" || { [[ $only == *w6* ]] && stale "$ONNX_DIR/gpt2s.onnx"; } || { [[ $only == *w8* ]] && stale "$ONNX_DIR/smollm.onnx"; }; then
  /usr/bin/python3 bench/peers/export_onnx.py "$ONNX_DIR" "${w6[@]}" >/dev/null 2>&1
fi
ob=$PWD/$out/openblas/usr/lib/x86_64-linux-gnu/openblas-pthread
if [[ ! -e $ob/libblas.so.3 ]]; then
  deb=$(ls /var/cache/apt/archives/libopenblas0-pthread_*.deb 2>/dev/null | head -1)  # apt's cache, if it has it
  if [[ -n $deb ]]; then dpkg -x "$deb" "$out/openblas"
  else (cd "$out" && apt-get download libopenblas0-pthread >/dev/null 2>&1 && dpkg -x libopenblas0-pthread_*.deb openblas); fi
fi

log "peak: bench/peak.cpp natively and in wasm"
g++ -O2 bench/peak.cpp -o "$out/peak"
em++ -O3 -msimd128 bench/peak.cpp -sENVIRONMENT=node -sSINGLE_FILE=1 -sALLOW_MEMORY_GROWTH=1 -o "$out/peak_wasm.cjs" 2>/dev/null

rm -rf "$out"/round*
chromium=1
if ((cpu_time)); then
  chromium=0
  export AP_BENCH_CPU_TIME=1
fi
[[ -n ${NO_CHROMIUM:-} || ! -x ${CHROMIUM_PATH:-/usr/bin/chromium} || ! -d node_modules/@playwright/test ]] && chromium=0
for ((r = 1; r <= rounds; r++)); do
  d=$out/round$r
  mkdir -p "$d"
  log "round $r/$rounds: peak"
  { "$out/peak" $peak_trials; node --no-liftoff "$out/peak_wasm.cjs" $peak_trials; } > "$d/peak.txt" 2>&1 || true
  log "round $r/$rounds: ours native"
  { ((core)) && build/ap_bench "${quick[@]}"; ((gpt)) && build/ap_bench_gpt "${quick[@]}" --only "$only" --reference; } > "$d/ours_native.txt" 2>&1 || true
  log "round $r/$rounds: PyTorch CPU"
  LD_LIBRARY_PATH=$ob OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 bench/peers/torch_peer.py \
    --threads 1 --only "$only" "${quick[@]}" 2>&1 | grep -vi warn > "$d/torch.txt" || true
  if [[ $only == *w8* ]]; then
    for dt in bf16 f32; do
      LD_LIBRARY_PATH=$ob OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 bench/peers/smollm.py \
        --threads 1 --dtype $dt "${quick[@]}" 2>&1 | grep -vi warn >> "$d/torch.txt" || true
    done
  fi
  log "round $r/$rounds: ours wasm (Node)"
  { ((core)) && node --no-liftoff build-wasm/ap_bench.cjs "${quick[@]}"
    ((gpt)) && node --no-liftoff build-wasm/ap_bench_gpt.cjs "${quick[@]}" --only "$only"; } > "$d/ours_node.txt" 2>&1 || true
  log "round $r/$rounds: onnxruntime-web"
  node bench/peers/ort_peer.mjs 9 "$only" "${quick[@]}" > "$d/ort.txt" 2>&1 || true
  log "round $r/$rounds: tfjs-wasm"
  [[ -z $tfjs_only ]] || node bench/peers/tfjs_peer.mjs 9 "$tfjs_only" "${quick[@]}" > "$d/tfjs.txt" 2>&1 || true
  if ((chromium)); then
    log "round $r/$rounds: ours wasm (Chromium)"
    { ((core)) && node bench/chromium_bench.mjs "${quick[@]}"
      ((gpt)) && node bench/chromium_bench.mjs --gpt "${quick[@]}" --only "$only"; } > "$d/ours_chromium.txt" 2>&1 || true
  fi
done
((chromium || cpu_time)) || log "Chromium skipped (NO_CHROMIUM, no /usr/bin/chromium, or no node_modules: run scripts/setup)"
/usr/bin/python3 bench/peers_table.py "$out" $( ((cpu_time)) && echo --cpu-time) | tee "$out/table.txt"
