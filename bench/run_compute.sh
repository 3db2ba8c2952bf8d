#!/usr/bin/env bash
# run_compute.sh — issue 11's compute figures (docs/performance.md, "Tile
# compute"), each against a baseline measured in the same run:
#   compute_bench: the FP32 matmul kernel against OpenBLAS cblas_sgemm on one
#   thread (64, 128, 256), and exp, rsqrt, row_sum against plain loops.
#
#   BUILD=build/release bash bench/run_compute.sh
# (BUILD defaults to build/bench, configured here with -DANYP_BUILD_BENCH=ON.)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_build.sh
ninja -C "$BUILD" compute_bench >/dev/null
echo "# $(date -u +%F) $(nproc) cores, $(uname -m); BUILD=$BUILD"
"$BUILD/bench/compute_bench"
