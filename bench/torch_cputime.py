#!/usr/bin/python3
"""torch_cputime.py — runs the peers' torch_bench.py unchanged, but with time.perf_counter replaced
by time.process_time (this process's CPU time), as bench/run_peers.sh's CPU_TIME=1 sitting does for
ours (AP_BENCH_CPU_TIME=1): on a shared, overloaded machine, time spent waiting for a core is not
counted. One thread (torch.set_num_threads(1), OPENBLAS_NUM_THREADS=1), so CPU time is work time.
Usage: /usr/bin/python3 bench/torch_cputime.py PATH/torch_bench.py [torch_bench arguments…]"""
import runpy
import sys
import time

time.perf_counter = time.process_time
script = sys.argv[1]
sys.argv = [script] + sys.argv[2:]
runpy.run_path(script, run_name="__main__")
