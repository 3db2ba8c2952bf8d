#!/usr/bin/env bash
# run_workers.sh — two workers against one, per ladder step and kernel
# (docs/performance.md, "Workers"): each example runs in its default mode
# at each P with --workers 1 and --workers 2, REPS times each. Two figures
# per count: the median wall time of the whole process (compile, inputs,
# host reference included) and the median of the run itself (the engine's
# wall time, from --verbose's "the run: X ms"); speedup = t1 / t2 of each
# (below 1.0: two workers are slower than one).
#
#   bash bench/run_workers.sh                         (P = 4 16 64 256)
#   PS="4 8" STEPS="08 11" REPS=5 bash bench/run_workers.sh
#   BUILD=/tmp/other/build/release bash bench/run_workers.sh   (another build, no rebuild)
# Steps 09, 10 and k1 need P dividing 120: they run at 4, 8, 24 and 120.
set -euo pipefail
cd "$(dirname "$0")/.."
PS="${PS:-4 16 64 256}"
REPS="${REPS:-3}"
source bench/ladder_examples.sh
echo "two workers against one: medians of $REPS runs (default mode), seconds; speedup t1 / t2"
printf '%-24s %6s %9s %9s %7s %9s %9s %7s\n' example P "proc 1w" "proc 2w" speedup \
  "run 1w" "run 2w" speedup
median_of() {  # column $1 of "$work/times": the median
  sort -g -k"$1" "$work/times" | awk -v c="$1" '{a[NR] = $c} END {printf "%.5f", a[int((NR + 1) / 2)]}'
}
measure() {  # REPS runs of "$@"; prints "<process median> <run median>" in seconds
  : >"$work/times"
  for _ in $(seq "$REPS"); do
    local start end run_ms
    start="$(date +%s%N)"
    "$@" --verbose >"$work/out" 2>&1 || {
      echo "failed: $*" >&2
      tail -3 "$work/out" >&2
      return 1
    }
    end="$(date +%s%N)"
    run_ms="$(sed -nE 's/^the run: ([0-9.]+) ms wall.*/\1/p' "$work/out")"
    [[ -n "$run_ms" ]] || {
      echo "no run time in the output of: $* --verbose" >&2
      return 1
    }
    awk -v p="$(((end - start) / 1000))" -v r="$run_ms" 'BEGIN {printf "%.6f %.6f\n", p / 1e6, r / 1e3}' >>"$work/times"
  done
  echo "$(median_of 1) $(median_of 2)"
}
for step in $STEPS; do
  bin="$(example_binary "$step")"
  [[ -x "$bin" ]] || continue
  ps="$PS"
  case "$step" in 09 | 10 | k1) ps="4 8 24 120" ;; esac
  for p in $ps; do
    read -r p1 r1 <<<"$(measure "$bin" -d "0-$((p - 1))" --workers 1)"
    read -r p2 r2 <<<"$(measure "$bin" -d "0-$((p - 1))" --workers 2)"
    awk -v n="$(basename "$bin")" -v p="$p" -v a="$p1" -v b="$p2" -v c="$r1" -v d="$r2" \
      'BEGIN {printf "%-24s %6d %9.4f %9.4f %7.2f %9.5f %9.5f %7.2f\n", n, p, a, b, (b > 0 ? a / b : 0), c, d, (d > 0 ? c / d : 0)}'
  done
done
