#!/usr/bin/env bash
# run_session.sh — sessions against plain runs (docs/performance.md,
# "Sessions"): per-run cost with one engine and persistent windows, and a
# run overlapped with host work by submit, each against a baseline measured
# in the same run (bench/session_bench.cpp).
#
#   BUILD=build/release bash bench/run_session.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_build.sh
ninja -C "$BUILD" session_bench >/dev/null
echo "# $(date -u +%F) $(nproc) cores, $(uname -m); BUILD=$BUILD"
"$BUILD/bench/session_bench"
