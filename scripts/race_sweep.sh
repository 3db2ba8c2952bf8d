#!/usr/bin/env bash
# scripts/race_sweep.sh — no false race reports: every ladder example (01-16)
# and every kernel of the second ladder (k1-k7), every mode and --op, at
# P = 2 .. 16 (steps 09/10 and k1: the P that divide 120),
# under --check-races --explore N (the calibration schedule plus N PCT
# schedules, depth 3), and every pitfall's --fixed mode the same way. Every
# run must print exactly OK. Prints one line per failure, then the totals
# and the time taken (the figures in docs/race-checker.md).
#
#   bash scripts/race_sweep.sh                 (N = 100, P = 2..16; builds build/release)
#   N=20 PS="2 3 4" bash scripts/race_sweep.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
N="${N:-100}"
PS="${PS:-2 3 4 5 6 7 8 9 10 11 12 13 14 15 16}"
bash scripts/build.sh release >/dev/null
EX=build/release/examples
PIT=build/release/pitfalls

declare -A MODES=(
  [04_barrier]="hand builtin" [05_remote_load_store]="load store" [06_put_get]="put get"
  [07_dynamic_rank_count]="put get" [11_allreduce_reveal]="mesh ring" [12_broadcast]="hand builtin"
  [13_allgather]="hand builtin" [14_reduce_scatter]="hand builtin" [15_all_to_all]="hand builtin"
  [16_putting_it_together]="shared separate" [k1_tp_mlp]="mesh ring"
  [k2_allgather_gemm]="overlap bulk" [k3_gemm_reduce_scatter]="overlap bulk"
  [k6_tp_dp_allreduce]="2d flat" [k7_multi_block]="blocks one")
declare -A OPS=([11_allreduce_reveal]="sum max min prod" [14_reduce_scatter]="sum max min prod")

runs=0
failures=0
start=$(date +%s)
check() {  # check <binary> <args...>
  local out
  runs=$((runs + 1))
  if ! out=$("$@" 2>&1) || [[ "$out" != "OK" ]]; then
    failures=$((failures + 1))
    echo "FAIL: $* -> $(echo "$out" | head -3 | tr '\n' ' ')"
  fi
}
for bin in "$EX"/[01][0-9]_* "$EX"/k[0-9]_*; do
  ex=$(basename "$bin")
  for P in $PS; do
    if [[ $ex == 09_* || $ex == 10_* || $ex == k1_* ]] && ((120 % P != 0)); then continue; fi
    ids=$(seq -s, 0 $((P - 1)))
    for mode in ${MODES[$ex]:--}; do
      margs=()
      [[ $mode != - ]] && margs=(--mode "$mode")
      for op in ${OPS[$ex]:--}; do
        oargs=()
        [[ $op != - ]] && oargs=(--op "$op")
        check "$bin" -d "$ids" "${margs[@]}" "${oargs[@]}" --check-races --explore "$N"
      done
    done
  done
done
for bin in "$PIT"/pitfall_*; do
  for P in $PS; do
    check "$bin" -d "$(seq -s, 0 $((P - 1)))" --fixed --check-races --explore "$N"
  done
done
echo "race sweep: $runs configurations x (1 + $N) schedules, $failures failures," \
  "$(($(date +%s) - start)) s"
((failures == 0))
