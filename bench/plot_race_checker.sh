#!/usr/bin/env bash
# plot_race_checker.sh — the race checker's curves against P (docs/performance.md):
# the checked run's extra peak memory and its time over the unchecked run's,
# per step, from the CSV that bench/run_race_checker.sh writes (CSV=...).
#
#   bash bench/plot_race_checker.sh docs/img/race_checker_scale.csv
#     writes docs/img/race_checker_scale_memory.{png,svg} and _time.{png,svg}
set -euo pipefail
cd "$(dirname "$0")/.."
CSV="${1:?usage: plot_race_checker.sh CSV}"
OUT="$(dirname "$CSV")"
base="$(basename "$CSV" .csv)"
data="$(mktemp -d)"
trap 'rm -rf "$data"' EXIT
steps="$(tail -n +2 "$CSV" | cut -d, -f1 | sort -u)"
for step in $steps; do  # P, extra MiB, on / off
  awk -F, -v s="$step" '$1 == s { print $2, ($6 - $5) / 1024, $4 / $3 }' "$CSV" | sort -n >"$data/$step.dat"
done
plot_lines() {  # plot_lines COLUMN
  local sep=""
  for step in $steps; do
    printf '%s"%s/%s.dat" using 1:%s with linespoints pt 7 title "step %s"' "$sep" "$data" "$step" "$1" "$step"
    sep=", "
  done
}
for term in png svg; do
  setterm="set terminal svg size 960,540 noenhanced dynamic"
  [[ $term == png ]] && setterm="set terminal pngcairo size 960,540 noenhanced font ',11'"
  gnuplot <<GP
$setterm
set logscale x 2
set grid
set key left top
set xlabel "P (ranks)"
set output "$OUT/${base}_memory.$term"
set title "Race checker: extra peak memory of a checked run (MiB)"
set logscale y
plot $(plot_lines 2)
set output "$OUT/${base}_time.$term"
set title "Race checker: checked run time / unchecked run time"
unset logscale y
set yrange [0:*]
plot $(plot_lines 3), 10 with lines dt 2 lc rgb "gray" title "10x target"
GP
done
echo "wrote $OUT/${base}_memory.png, ${base}_time.png and .svg"
