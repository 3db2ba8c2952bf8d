#!/usr/bin/env bash
# run_pct.sh — schedules until the first failure, PCT against uniform random
# schedules, on the pitfall programs WITHOUT the race checker (so a bug shows
# only when the schedule makes the answer wrong or the run deadlock):
#   uniform  --schedule-seed s for s = 1, 2, ... (one worker, the next rank
#            drawn uniformly at every park or preemption, as before PCT)
#   PCT      --explore N --explore-depth D (a calibration schedule, then
#            seeds 1..N; the first failing seed is read from its message)
# "-" means no failure within N schedules. Table in docs/race-checker.md.
#
#   bash bench/run_pct.sh          (N = 1000, D = 3, P = 4; builds build/release)
#   N=200 P=3 D=2 bash bench/run_pct.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N="${N:-1000}"
D="${D:-3}"
P="${P:-4}"
bash scripts/build.sh release >/dev/null
ids=$(seq -s, 0 $((P - 1)))
first_uniform() {  # first_uniform <binary>: the first failing --schedule-seed, or -
  for ((s = 1; s <= N; ++s)); do
    if ! "$1" -d "$ids" --schedule-seed "$s" >/dev/null 2>&1; then
      echo "$s"
      return
    fi
  done
  echo "-"
}
first_pct() {  # first_pct <binary>: the first failing PCT seed (0: calibration), or -
  local err
  if err=$("$1" -d "$ids" --explore "$N" --explore-depth "$D" 2>&1 >/dev/null); then
    echo "-"
  elif [[ $err =~ schedule\ ([0-9]+)\ of ]]; then
    echo "${BASH_REMATCH[1]}"
  elif [[ $err == *"calibration schedule"* ]]; then
    echo "0"
  else
    echo "?"
  fi
}
echo "schedules until the first failure (without --check-races), P = $P, up to $N schedules;"
echo "PCT depth $D; '-': none failed; 0: the PCT calibration schedule already failed"
printf '%-34s %10s %8s\n' pitfall uniform PCT
for bin in build/release/pitfalls/pitfall_*; do
  printf '%-34s %10s %8s\n' "$(basename "$bin" | sed 's/^pitfall_//')" "$(first_uniform "$bin")" \
    "$(first_pct "$bin")"
done
