#!/usr/bin/env bash
# run_race_checker.sh — the race checker's overhead table (docs/performance.md):
# steps 07, 08, 11 (mesh), 11r (ring) and 16 (shared) at P = 4, 16, 64, 256, each run
# without and with --check-races in its own process: median run time (RUNS
# runs after a warm-up) and peak RSS (/usr/bin/time %M), and their ratios.
#
#   bash bench/run_race_checker.sh            (RUNS=5 by default)
#   PS="4 16" STEPS="7 16" bash bench/run_race_checker.sh
#   PS="512 1024 2048" STEPS="8 11 11r 16" RUNS=0 bash bench/run_race_checker.sh
#                                             (large P: one run each, no warm-up)
#   CSV=docs/img/race_checker_scale.csv ...  also appends each row to CSV
#                                             (bench/plot_race_checker.sh draws it)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-5}"
PS="${PS:-4 16 64 256}"
STEPS="${STEPS:-7 8 11 11r 16}"
bash scripts/setup.sh >/dev/null
cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DANYP_BUILD_BENCH=ON \
  -DANYP_BUILD_TESTS=OFF -DANYP_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build/bench -j "${JOBS:-2}" --target race_checker_bench >/dev/null
BIN=build/bench/bench/race_checker_bench
measure() {  # measure STEP P CHECK -> "median_us peak_kib"
  local out
  out=$( { /usr/bin/time -f "%M" "$BIN" "$1" "$2" "$3" "$RUNS"; } 2>&1)
  echo "$out" | tr '\n' ' '
}
echo "race checker overhead: median run time over $RUNS runs; peak RSS of the process"
echo "$(nproc) cores; workers: off = min(P, cores), on = 1 (the default under --check-races)"
printf '%-5s %5s %12s %12s %7s %11s %11s %10s\n' step P "off us" "on us" ratio "off MiB" "on MiB" "extra MiB"
for step in $STEPS; do
  for P in $PS; do
    read -r t0 m0 <<<"$(measure "$step" "$P" 0)"
    read -r t1 m1 <<<"$(measure "$step" "$P" 1)"
    /usr/bin/python3 - "$step" "$P" "$t0" "$m0" "$t1" "$m1" <<'PY'
import sys
step, P, t0, m0, t1, m1 = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
print(f"{step:<5} {P:>5} {t0:>12.1f} {t1:>12.1f} {t1 / t0:>7.2f} {m0 / 1024:>11.1f} {m1 / 1024:>11.1f} {(m1 - m0) / 1024:>10.1f}")
PY
    if [[ -n "${CSV:-}" ]]; then
      [[ -s "$CSV" ]] || echo "step,P,off_us,on_us,off_kib,on_kib" >"$CSV"
      echo "$step,$P,$t0,$t1,$m0,$m1" >>"$CSV"
    fi
  done
done
