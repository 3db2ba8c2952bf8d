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
# OpenBLAS picks its kernel from the CPU model; on a CPU model it does not
# know (a virtual machine's "Intel(R) Xeon(R) Processor") it falls back to
# a generic SSE3 kernel, which makes the baseline ~5x slow. With AVX-512 on
# the CPU, name the AVX-512 kernel unless the caller chose one.
if [[ -z "${OPENBLAS_CORETYPE:-}" ]] && grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
  export OPENBLAS_CORETYPE=SkylakeX
fi
echo "# $(date -u +%F) $(nproc) cores, $(uname -m); BUILD=$BUILD; OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-}"
"$BUILD/bench/compute_bench"
