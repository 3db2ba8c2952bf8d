#!/usr/bin/env bash
# run_verify.sh — `--verify` on every ladder step and kernel, in every mode
# (read from its --help), at P = 2 and 3: the traces it covered, the
# schedules it ran, the choices it pruned, the wall time and the schedules
# per second; ">N" traces and "budget" when the budget of B schedules ran out
# first. Table in docs/race-checker.md §7.
#
#   bash bench/run_verify.sh            (B = 1000; builds build/release)
#   B=200 P="2" bash bench/run_verify.sh
set -euo pipefail
cd "$(dirname "$0")/.."
B="${B:-1000}"
P="${P:-2 3}"
bash scripts/build.sh release >/dev/null
printf '%-24s %-9s %2s %7s %9s %8s %9s %8s\n' program mode P traces schedules pruned seconds sched/s
for bin in build/release/examples/[0-9k]*; do
  modes=$("$bin" --help | sed -n 's/^ *--mode TEXT=[a-z0-9_]* *One of: //p' | tr -d ',')
  for mode in ${modes:--}; do
    mode_args=()
    [[ $mode != - ]] && mode_args=(--mode "$mode")
    for p in $P; do
      start=$(date +%s%N)
      line=$("$bin" -d "0-$((p - 1))" "${mode_args[@]}" --verify --verify-budget "$B" 2>&1 |
        tail -1 || true)
      ms=$((($(date +%s%N) - start) / 1000000))
      t="failed" s="-" k="-"
      if [[ $line =~ ^verified:\ ([0-9]+)\ traces?\ \(([0-9]+)\ schedules?\ run,\ ([0-9]+)\ pruned ]]; then
        t=${BASH_REMATCH[1]} s=${BASH_REMATCH[2]} k=${BASH_REMATCH[3]}
      elif [[ $line =~ ^not\ verified:\ budget\ of\ ([0-9]+)\ schedules?\ reached\ after\ covering\ ([0-9]+)\ traces?\ \(([0-9]+)\ pruned ]]; then
        t=">${BASH_REMATCH[2]}" s="budget" k=${BASH_REMATCH[3]}
      fi
      runs=${s/budget/$B}
      rate="-"
      [[ $runs =~ ^[0-9]+$ ]] && rate=$((runs * 1000 / (ms > 0 ? ms : 1)))
      printf '%-24s %-9s %2s %7s %9s %8s %5d.%03d %8s\n' "$(basename "$bin")" "$mode" "$p" "$t" \
        "$s" "$k" $((ms / 1000)) $((ms % 1000)) "$rate"
    done
  done
done
