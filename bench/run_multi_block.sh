#!/usr/bin/env bash
# run_multi_block.sh — launches over several blocks (pl::blocks) against one
# block (docs/performance.md, "Multi-block launches"): tile math split over
# the blocks, and the cost of a launch, each against a baseline measured in
# the same run (bench/multi_block_bench.cpp).
#
#   BUILD=build/release bash bench/run_multi_block.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_build.sh
ninja -C "$BUILD" multi_block_bench >/dev/null
echo "# $(date -u +%F) $(nproc) cores, $(uname -m); BUILD=$BUILD"
"$BUILD/bench/multi_block_bench"
