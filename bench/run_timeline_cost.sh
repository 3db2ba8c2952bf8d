#!/usr/bin/env bash
# run_timeline_cost.sh — what modeled time costs on top of a run, per ladder
# step and kernel (docs/performance.md, "Modeled time"): each example runs at
# one P in its default mode plain, with --cost and with --timeline, each
# under /usr/bin/time; the table gives wall time and peak RSS of the three
# and the ratios against the plain run measured in the same invocation.
#
#   bash bench/run_timeline_cost.sh                 (P = 1024)
#   P=4096 STEPS="04 07" bash bench/run_timeline_cost.sh
#   BUILD=/tmp/other/build/release bash bench/run_timeline_cost.sh   (another build, no rebuild)
# Steps 09, 10 and k1 need P dividing 120: they run at 120.
set -euo pipefail
cd "$(dirname "$0")/.."
P="${P:-1024}"
source bench/ladder_examples.sh
echo "modeled time on top of a run: wall s and peak RSS MiB (default mode), ratios to the plain run"
printf '%-24s %6s %8s %8s %8s %8s %8s %8s %7s %7s %7s %7s\n' example P "plain s" "cost s" \
  "tl s" "plain M" "cost M" "tl M" "cost×t" "tl×t" "cost×M" "tl×M"
measure() {  # prints "seconds KiB" of one run
  /usr/bin/time -f "%e %M" -o "$work/t" "$@" >"$work/out" 2>&1 || {
    echo "failed: $*" >&2
    tail -3 "$work/out" >&2
    return 1
  }
  cat "$work/t"
}
for step in $STEPS; do
  bin="$(example_binary "$step")"
  [[ -x "$bin" ]] || continue
  p="$P"
  case "$step" in 09 | 10 | k1) p=120 ;; esac
  [[ "$step" == 01 || "$step" == 02 ]] && [[ $p -gt 1024 ]] && p=1024
  read -r ts ms < <(measure "$bin" -d "0-$((p - 1))")
  read -r tc mc < <(measure "$bin" -d "0-$((p - 1))" --cost)
  read -r tt mt < <(measure "$bin" -d "0-$((p - 1))" --timeline)
  /usr/bin/python3 - "$(basename "$bin")" "$p" "$ts" "$tc" "$tt" "$ms" "$mc" "$mt" <<'PY'
import sys
name, p = sys.argv[1], sys.argv[2]
ts, tc, tt = (max(float(x), 0.01) for x in sys.argv[3:6])
ms, mc, mt = (float(x) / 1024 for x in sys.argv[6:9])
print(f"{name:<24} {p:>6} {ts:8.2f} {tc:8.2f} {tt:8.2f} {ms:8.0f} {mc:8.0f} {mt:8.0f} "
      f"{tc / ts:7.1f} {tt / ts:7.1f} {mc / ms:7.1f} {mt / ms:7.1f}")
PY
done
