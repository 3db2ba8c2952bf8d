#!/usr/bin/env bash
# run_pct.sh — how often a schedule exposes each pitfall's bug WITHOUT the
# race checker (so a bug shows only when the schedule makes the answer wrong
# or the run deadlock), uniform random schedules against PCT:
#   uniform  --schedule-seed s, s = 1..N (one worker, the next rank drawn
#            uniformly at every park or preemption: the schedules before PCT)
#   PCT      --pct-seed s --explore-depth D --pct-steps K, s = 1..N (one
#            worker, priorities, D - 1 change points over K steps, ranks
#            switched after every visible op)
#   explore  what `--explore N --explore-depth D` reports: the first failing
#            schedule (0 = its calibration schedule, PCT seed 0 at depth 1)
# Per method: the first failing seed and how many of the N seeds fail ("-":
# none). Deterministic failures (compile and run errors) fail every seed.
# Table in docs/race-checker.md.
#
#   bash bench/run_pct.sh          (N = 200, D = 3, K = 100, P = 4; builds build/release)
#   N=100 P=3 D=2 bash bench/run_pct.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N="${N:-200}"
D="${D:-3}"
K="${K:-100}"
P="${P:-4}"
bash scripts/build.sh release >/dev/null
ids=$(seq -s, 0 $((P - 1)))
count() {  # count <binary> <uniform|pct>: "first/failures"
  local first="-" fails=0 s
  for ((s = 1; s <= N; ++s)); do
    local args=(--schedule-seed "$s")
    [[ $2 == pct ]] && args=(--pct-seed "$s" --explore-depth "$D" --pct-steps "$K")
    if ! "$1" -d "$ids" "${args[@]}" >/dev/null 2>&1; then
      fails=$((fails + 1))
      [[ $first == - ]] && first=$s
    fi
  done
  echo "$first/$fails"
}
explore() {  # explore <binary>: the first failing schedule --explore reports, or -
  local err
  if err=$("$1" -d "$ids" --explore "$N" --explore-depth "$D" 2>&1 >/dev/null); then
    echo "-"
  elif [[ $err =~ schedule\ ([0-9]+)\ of ]]; then
    echo "${BASH_REMATCH[1]}"
  else
    echo "0"
  fi
}
echo "schedules exposing each pitfall without --check-races: P = $P, seeds 1..$N;"
echo "PCT depth $D over $K steps; 'first/failing': first failing seed / failing seeds"
printf '%-32s %14s %14s %8s\n' pitfall uniform PCT explore
for bin in build/release/pitfalls/pitfall_*; do
  printf '%-32s %14s %14s %8s\n' "$(basename "$bin" | sed 's/^pitfall_//')" \
    "$(count "$bin" uniform)" "$(count "$bin" pct)" "$(explore "$bin")"
done
