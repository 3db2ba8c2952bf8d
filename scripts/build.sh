#!/usr/bin/env bash
# scripts/build.sh — configures and builds anyp with CMake + Ninja.
#
#   bash scripts/build.sh [release|asan|tsan]     (default: release)
#
#   release  build/release  RelWithDebInfo
#   asan     build/asan     RelWithDebInfo, -DANYP_SANITIZE=address,undefined
#   tsan     build/tsan     RelWithDebInfo, -DANYP_SANITIZE=thread
#
# Parallelism is $JOBS (default 2). Idempotent: re-running reconfigures in
# place and rebuilds only what changed. Extra arguments after the config are
# passed to the CMake configure step (e.g. -DANYP_BUILD_BENCH=ON).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CONFIG="${1:-release}"
shift || true
JOBS="${JOBS:-2}"

case "$CONFIG" in
  release) SANITIZE="" ;;
  asan) SANITIZE="address,undefined" ;;
  tsan) SANITIZE="thread" ;;
  *)
    echo "usage: $0 [release|asan|tsan] [extra cmake args...]" >&2
    exit 2
    ;;
esac

BUILD_DIR="$ROOT/build/$CONFIG"

cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DANYP_SANITIZE=$SANITIZE" \
  "$@"
cmake --build "$BUILD_DIR" -j "$JOBS"
