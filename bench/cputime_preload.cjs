// cputime_preload.cjs — `node -r bench/cputime_preload.cjs …`: makes the peers' timer (jsbench_util.js
// reads process.hrtime.bigint()) return this process's CPU time (process.cpuUsage().user) instead of
// wall time, for run_peers.sh's CPU_TIME=1 sitting on a shared, overloaded machine. The peers run one
// wasm thread; V8's background threads are idle in steady state. Their scripts are not changed.
'use strict';
process.hrtime.bigint = () => BigInt(process.cpuUsage().user) * 1000n;
