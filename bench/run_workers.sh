#!/usr/bin/env bash
# run_workers.sh — two workers against one, per ladder step and kernel
# (docs/performance.md, "Workers"): each example runs in its default mode
# at each P with --workers 1 and --workers 2, REPS times each (the median
# wall time of the whole process, compile included);
# the table gives both medians and the speedup t1 / t2 (below 1.0: two
# workers are slower than one).
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
echo "two workers against one: median wall s of $REPS whole runs (default mode), speedup t1 / t2"
printf '%-24s %6s %10s %10s %8s\n' example P "1 worker" "2 workers" speedup
median() {  # REPS runs of "$@"; prints the median wall seconds
  for _ in $(seq "$REPS"); do
    local start end
    start="$(date +%s%N)"
    "$@" >"$work/out" 2>&1 || {
      echo "failed: $*" >&2
      tail -3 "$work/out" >&2
      return 1
    }
    end="$(date +%s%N)"
    echo "$(((end - start) / 1000))"  # microseconds
  done | sort -g | awk '{a[NR] = $1} END {printf "%.4f\n", a[int((NR + 1) / 2)] / 1e6}'
}
for step in $STEPS; do
  bin="$(example_binary "$step")"
  [[ -x "$bin" ]] || continue
  ps="$PS"
  case "$step" in 09 | 10 | k1) ps="4 8 24 120" ;; esac
  for p in $ps; do
    t1="$(median "$bin" -d "0-$((p - 1))" --workers 1)"
    t2="$(median "$bin" -d "0-$((p - 1))" --workers 2)"
    awk -v n="$(basename "$bin")" -v p="$p" -v a="$t1" -v b="$t2" \
      'BEGIN {printf "%-24s %6d %10.4f %10.4f %8.2f\n", n, p, a, b, (b > 0 ? a / b : 0)}'
  done
done
