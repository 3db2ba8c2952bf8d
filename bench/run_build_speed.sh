#!/usr/bin/env bash
# bench/run_build_speed.sh — what the build loop's pieces save, each against
# its baseline measured in the same run (docs/development.md):
#
#   1. the precompiled header of the gtest executables: anyp_unit_tests and
#      anyp_runtime_tests built with ANYP_TEST_PCH=ON and OFF (the library
#      from the cache, the test files compiled: CCACHE_RECACHE=1), wall time
#      and compile-seconds summed from .ninja_log;
#   2. the linker: anyp_runtime_tests linked with mold, gold and GNU ld
#      (its link command with -fuse-ld= changed), best of three;
#   3. one library file changed (src/compiler/layout_windows.cpp), then the
#      release tree rebuilt and every executable relinked: a touch (ccache
#      serves the object) and a real edit (a line of code added, then taken
#      back).
#
#   bash bench/run_build_speed.sh          (release tree: build/release; scratch: build/bench-*)
#
# Run it on a quiet machine: it builds, and two builds at once on two cores
# measure each other.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JOBS="${JOBS:-2}"

seconds() {  # seconds <command...>: wall seconds of the command, to 0.01
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }'
}

echo "== 1. precompiled header of the gtest executables"
for pch in ON OFF; do
  dir="build/bench-pch-$pch"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DANYP_TEST_PCH="$pch" \
    -DANYP_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$dir" -j "$JOBS" --target anyp anyp_cli anyp_test_paths >/dev/null
  rm -f "$dir/.ninja_log"
  wall=$(seconds env CCACHE_RECACHE=1 cmake --build "$dir" -j "$JOBS" \
    --target anyp_unit_tests anyp_runtime_tests)
  summed=$(awk 'NR > 1 && $4 ~ /\.(o|gch)$/ { s += ($2 - $1) / 1000 } END { printf "%.1f", s }' \
    "$dir/.ninja_log")
  printf '  ANYP_TEST_PCH=%-3s  wall %7.2f s   compile-seconds %7.1f\n' "$pch" "$wall" "$summed"
done

echo "== 2. one link of anyp_runtime_tests"
cmake --build build/release -j "$JOBS" --target anyp_runtime_tests >/dev/null
link="$(cd build/release && ninja -t commands tests/anyp_runtime_tests | tail -n 1)"
for ld in mold gold bfd; do
  best=""
  for _ in 1 2 3; do
    t=$(seconds bash -c "cd build/release && ${link//-fuse-ld=mold/-fuse-ld=$ld}")
    best=$(awk -v a="${best:-$t}" -v b="$t" 'BEGIN { print (b < a ? b : a) }')
  done
  printf '  %-5s %6.2f s\n' "$ld" "$best"
done

echo "== 3. one library file changed, release tree rebuilt and relinked"
file=src/compiler/layout_windows.cpp
cmake --build build/release -j "$JOBS" >/dev/null
touch "$file"
printf '  touch           %6.2f s\n' "$(seconds cmake --build build/release -j "$JOBS")"
cp "$file" "$file.bench-backup"
trap 'mv -f "$ROOT/$file.bench-backup" "$ROOT/$file"' EXIT
echo "namespace { [[maybe_unused]] constexpr int kBenchEdit$RANDOM = 1; }" >>"$file"
printf '  a real edit     %6.2f s\n' "$(seconds cmake --build build/release -j "$JOBS")"
mv -f "$file.bench-backup" "$file"
trap - EXIT
cmake --build build/release -j "$JOBS" >/dev/null
