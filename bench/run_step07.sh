#!/usr/bin/env bash
# run_step07.sh — builds the benchmarks and prints step 07's compile time, run
# time, CPU vs wall time and peak memory at P = 2 ... 4096, one process per P
# (so peak_rss_MB is that P's own figure). Usage: bash bench/run_step07.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DANYP_BUILD_BENCH=ON \
  -DANYP_BUILD_TESTS=OFF -DANYP_BUILD_EXAMPLES=ON >/dev/null
cmake --build build/bench -j "${JOBS:-2}" --target step07_bench 07_dynamic_rank_count >/dev/null
echo "== Google Benchmark, one process per P (Time = wall, CPU = process CPU over all workers)"
for P in 2 4 16 64 256 1024 4096; do
  build/bench/bench/step07_bench --benchmark_filter="/P:${P}/" --benchmark_min_time=0.2 \
    2>/dev/null | grep -E '^BM_'
done
echo "== whole example process (07_dynamic_rank_count --mode get), /usr/bin/time"
for P in 2 4 16 64 256 1024 4096; do
  ids=$(seq -s, 0 $((P - 1)))
  /usr/bin/time -f "P=${P}: %e s wall, %U s user, %S s sys, %M KB peak" \
    build/bench/examples/07_dynamic_rank_count --mode get -d "$ids" >/dev/null
done
