#!/usr/bin/env bash
# scripts/build.sh — configures and builds anyp with CMake + Ninja.
#
#   bash scripts/build.sh [release|asan|tsan]     (default: release)
#
#   release  build/release  RelWithDebInfo
#   asan     build/asan     RelWithDebInfo, -DANYP_SANITIZE=address,undefined (-O1 -g1)
#   tsan     build/tsan     RelWithDebInfo, -DANYP_SANITIZE=thread (-O1 -g1)
#
# Parallelism is $JOBS (default 2). Idempotent: re-running reconfigures in
# place and rebuilds only what changed. Extra arguments after the config are
# passed to the CMake configure step (e.g. -DANYP_BUILD_BENCH=ON). $TARGETS,
# if set, names the targets to build (default: all).
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
TARGET_ARGS=()
for target in ${TARGETS:-}; do TARGET_ARGS+=(--target "$target"); done
cmake --build "$BUILD_DIR" -j "$JOBS" "${TARGET_ARGS[@]}"
