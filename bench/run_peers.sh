#!/usr/bin/env bash
# bench/run_peers.sh — one sitting: ours and the peers on the shared workloads
# (../shared/bench/README.md), one thread each, interleaved for several rounds, then a table of
# medians and ratios (ours ÷ peer, as speeds) with GFLOP/s as a % of the machine's measured peak.
#   ours:  native (build/ap_bench, the fast tier on the CPU's best ISA), wasm SIMD128 in Node
#          (build-wasm/ap_bench.cjs, node --no-liftoff) and in Debian's Chromium
#          (bench/chromium_bench.mjs, warmed up)
#   peers: PyTorch CPU (Debian's python3-torch, OpenBLAS extracted beside it, 1 thread),
#          onnxruntime-web and TensorFlow.js's wasm backend (Node, SIMD, 1 thread)
#   peak:  peers/cpp/peak.cpp natively and in wasm, bench/peak_avx512.cpp
# Nothing on the machine changes: the peers' folder is copied to bench/out/peers and its npm
# packages installed there; OpenBLAS is extracted under bench/out (apt-get download, dpkg -x).
# A benchmark: it prints numbers and never fails on them.
# CPU_TIME=1: the same sitting timed in CPU time instead of wall time, into bench/out-cpu, for a
# shared, overloaded machine where waiting for a core would otherwise be counted: ours with
# AP_BENCH_CPU_TIME=1 (natively and in Node), PyTorch through bench/torch_cputime.py, the npm peers
# with bench/cputime_preload.cjs (their scripts unchanged). Chromium has no CPU clock: skipped.
#   bench/run_peers.sh [ROUNDS]        (default 3; PEERS=path of the peers' folder,
#                                       ONLY=w1,w2,w3,w4 the workloads, NO_CHROMIUM=1 to skip the
#                                       browser, TFJS_ONLY=w1,w2,w4 tfjs's: its W3 takes minutes)
# Needs: scripts/setup (compilers, Emscripten, Chromium, node_modules) and python3-torch.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
peers_src=${PEERS:-../shared/bench/peers}
only=${ONLY:-w1,w2,w3,w4}
tfjs_only=${TFJS_ONLY:-$(echo "$only" | tr ',' '\n' | grep -v w3 | paste -sd, -)}
core=0; gpt=0
[[ $only == *w1* || $only == *w2* ]] && core=1
[[ $only == *w3* || $only == *w4* ]] && gpt=1
cpu_time=${CPU_TIME:-0}
out=bench/out
((cpu_time)) && out=bench/out-cpu
mkdir -p "$out"
export NODE_PATH=/usr/share/nodejs  # Debian's em++ finds its JS dependencies there
log() { printf '[run_peers] %s\n' "$*" >&2; }

/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "run_peers: needs Debian's python3-torch (apt-get install python3-torch)"; exit 1; }
[[ -d $peers_src ]] || { echo "run_peers: no peers folder at $peers_src (set PEERS=…)"; exit 1; }

log "building ours (native Release, wasm Release)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target ap_bench ap_bench_gpt >/dev/null
emcmake cmake -S . -B build-wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-wasm -j2 --target ap_bench ap_bench_web ap_bench_gpt ap_bench_gpt_web >/dev/null

log "peers: a writable copy in $out/peers, its npm packages there"
peers=$out/peers
if [[ ! -e $peers/package.json ]] || ! cmp -s "$peers_src/package-lock.json" "$peers/package-lock.json"; then
  rm -rf "$peers" && cp -r "$peers_src" "$peers" && chmod -R u+w "$peers"
fi
if [[ ! -d $peers/node_modules/onnxruntime-web ]]; then
  (cd "$peers" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
if [[ ! -e $peers/build/onnx/mm_n256.onnx ]]; then
  (cd "$peers" && /usr/bin/python3 make_onnx.py >/dev/null 2>&1)
fi
ob=$PWD/$out/openblas/usr/lib/x86_64-linux-gnu/openblas-pthread
if [[ ! -e $ob/libblas.so.3 ]]; then
  (cd "$out" && apt-get download libopenblas0-pthread >/dev/null 2>&1 && dpkg -x libopenblas0-pthread_*.deb openblas)
fi

log "peak: the peers' peak.cpp (native and wasm) and bench/peak_avx512.cpp"
g++ -O2 -mavx2 -mfma "$peers/cpp/peak.cpp" -o "$out/peak"
g++ -O2 -mavx512f -mfma bench/peak_avx512.cpp -o "$out/peak_avx512"
em++ -O3 -msimd128 "$peers/cpp/peak.cpp" -sENVIRONMENT=node -sSINGLE_FILE=1 -o "$out/peak_wasm.cjs" 2>/dev/null

rm -rf "$out"/round*
chromium=1
torch_wrap=""; node_pre=""
if ((cpu_time)); then
  chromium=0
  export AP_BENCH_CPU_TIME=1
  torch_wrap=bench/torch_cputime.py
  node_pre="-r $PWD/bench/cputime_preload.cjs"
fi
[[ -n ${NO_CHROMIUM:-} || ! -x ${CHROMIUM_PATH:-/usr/bin/chromium} || ! -d node_modules/@playwright/test ]] && chromium=0
for ((r = 1; r <= rounds; r++)); do
  d=$out/round$r
  mkdir -p "$d"
  log "round $r/$rounds: peak"
  { "$out/peak" 3; "$out/peak_avx512" 3; node --no-liftoff "$out/peak_wasm.cjs" 3; } > "$d/peak.txt" 2>&1 || true
  log "round $r/$rounds: ours native"
  { ((core)) && build/ap_bench; ((gpt)) && build/ap_bench_gpt --only "$only" --reference; } > "$d/ours_native.txt" 2>&1 || true
  log "round $r/$rounds: PyTorch CPU"
  LD_LIBRARY_PATH=$ob OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 $torch_wrap \
    "$peers/torch_bench.py" --threads 1 --only "$only" 2>&1 | grep -vi warn > "$d/torch.txt" || true
  log "round $r/$rounds: ours wasm (Node)"
  { ((core)) && node --no-liftoff build-wasm/ap_bench.cjs
    ((gpt)) && node --no-liftoff build-wasm/ap_bench_gpt.cjs --only "$only"; } > "$d/ours_node.txt" 2>&1 || true
  log "round $r/$rounds: onnxruntime-web"
  (cd "$peers" && node $node_pre ort_bench.js 9) > "$d/ort.txt" 2>&1 || true
  log "round $r/$rounds: tfjs-wasm"
  (cd "$peers" && node $node_pre tfjs_bench.js 9 "$tfjs_only") > "$d/tfjs.txt" 2>&1 || true
  if ((chromium)); then
    log "round $r/$rounds: ours wasm (Chromium)"
    { ((core)) && node bench/chromium_bench.mjs
      ((gpt)) && node bench/chromium_bench.mjs --gpt --only "$only"; } > "$d/ours_chromium.txt" 2>&1 || true
  fi
done
((chromium || cpu_time)) || log "Chromium skipped (NO_CHROMIUM, no /usr/bin/chromium, or no node_modules: run scripts/setup)"
/usr/bin/python3 bench/peers_table.py "$out" $( ((cpu_time)) && echo --cpu-time) | tee "$out/table.txt"
