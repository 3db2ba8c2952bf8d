#!/usr/bin/env bash
# run_hot_path.sh — the hot-path cost of the working tree against a baseline
# revision, measured in one run: builds bench/hot_path_bench.cpp (public API
# only) against both trees (Release), then
#   1. instructions per run (valgrind --tool=callgrind, one worker: the
#      difference between 1 and 1 + K runs, divided by K) — repeatable;
#   2. wall time: the two binaries alternately, ROUNDS times, median per
#      benchmark (noisy on a shared 2-core machine; shown for reference).
# Ratios are working tree / baseline.
#
#   bash bench/run_hot_path.sh [BASELINE_REV]   (default: be5f860, before the door)
#   ROUNDS=7 bash bench/run_hot_path.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
BASE_REV="${1:-be5f860}"
ROUNDS="${ROUNDS:-5}"
JOBS="${JOBS:-2}"
bash scripts/setup.sh >/dev/null
BASE_SRC="$ROOT/build/hot-path/baseline-src"
if [[ ! -d "$BASE_SRC" ]] || [[ "$(git -C "$BASE_SRC" rev-parse HEAD)" != "$(git rev-parse "$BASE_REV")" ]]; then
  rm -rf "$BASE_SRC"
  git worktree prune
  git worktree add --detach "$BASE_SRC" "$BASE_REV" >/dev/null
fi
build() {  # build <name> <source tree>; the log is printed only on failure
  local log="build/hot-path/$1.log"
  mkdir -p build/hot-path
  if ! { cmake -S bench/compare -B "build/hot-path/$1" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DANYP_SOURCE_DIR=$2" &&
    cmake --build "build/hot-path/$1" -j "$JOBS" --target hot_path_bench; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "run_hot_path.sh: building $1 failed" >&2
    exit 1
  fi
}
build baseline "$BASE_SRC"
build current "$ROOT"
OUT="$ROOT/build/hot-path/results"
K="${K:-4}"
instructions() {  # instructions <binary> <step> <P> <runs>
  local file="$OUT/callgrind.$RANDOM"
  valgrind --tool=callgrind --callgrind-out-file="$file" "$1" --runs "$2" "$3" "$4" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
  rm -f "$file"
}
mkdir -p "$OUT"
echo "instructions per run (callgrind, one worker; (runs(1+$K) - runs(1)) / $K)"
printf '%-18s%16s%16s%8s\n' benchmark baseline current ratio
for case in "7 4" "7 1024" "11 4" "11 64"; do
  set -- $case
  line=()
  for which in baseline current; do
    bin="build/hot-path/$which/hot_path_bench"
    one=$(instructions "$bin" "$1" "$2" 1)
    more=$(instructions "$bin" "$1" "$2" $((1 + K)))
    line+=($(((more - one) / K)))
  done
  printf '%-18s%16s%16s%8s\n' "step $1 P=$2" "${line[0]}" "${line[1]}" \
    "$(/usr/bin/python3 -c "print(f'{${line[1]} / ${line[0]}:.3f}')")"
done
echo
rm -f "$OUT"/*.csv
for ((i = 0; i < ROUNDS; ++i)); do
  for which in baseline current; do
    "build/hot-path/$which/hot_path_bench" --benchmark_min_time=0.3 --benchmark_format=csv \
      2>/dev/null | grep '^"BM_' >>"$OUT/$which.csv"
  done
done
echo "hot path: median real time per run over $ROUNDS alternating rounds (us)"
echo "baseline = $BASE_REV, current = working tree; $(nproc) cores"
/usr/bin/python3 - "$OUT" <<'PY'
import csv, statistics, sys, os
out = sys.argv[1]
def load(name):
    rows = {}
    for row in csv.reader(open(os.path.join(out, name + ".csv"))):
        rows.setdefault(row[0], []).append(float(row[3]))
    return {k: statistics.median(v) for k, v in rows.items()}
base, cur = load("baseline"), load("current")
print(f"{'benchmark':<26}{'baseline':>12}{'current':>12}{'ratio':>8}")
for name in base:
    print(f"{name:<26}{base[name]:>12.1f}{cur[name]:>12.1f}{cur[name] / base[name]:>8.3f}")
PY
