#!/usr/bin/env bash
# run_compile_scaling.sh — compile time and memory against P, for ladder
# step 07 (docs/performance.md, "Footprint per rank"): at each P the
# example runs three ways under /usr/bin/time: refused before its run
# (--memory-limit 1: inputs made, traced, compiled for P, footprint
# planned, nothing run), and run whole in both modes. The compile's share
# is the first; the run's, the difference.
#
#   bash bench/run_compile_scaling.sh                  (P = 1 Ki ... 4 Mi; 16 GiB free)
#   PS="1024 65536" bash bench/run_compile_scaling.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PS="${PS:-1024 16384 262144 1048576 4194304}"
STEPS=07
source bench/ladder_examples.sh
bin="$(example_binary 07)"
echo "step 07 at each P: wall s and peak RSS MiB (and bytes per rank) of the compile alone and of whole runs"
printf '%9s %22s %22s %22s\n' P "compile (refused run)" "run, put mode" "run, get mode"
measure() {  # prints "wall s, RSS MiB (B/rank)"
  local P="$1"
  shift
  { /usr/bin/time -f "TIME %e %M" "$bin" -d "0-$((P - 1))" "$@"; } >"$work/out" 2>&1 || true
  /usr/bin/python3 - "$P" "$work/out" <<'PY'
import re, sys
P = int(sys.argv[1])
t = re.findall(r"^TIME ([0-9.]+) (\d+)$", open(sys.argv[2]).read(), re.M)
if not t:
    print("failed")
else:
    wall, kb = float(t[-1][0]), int(t[-1][1])
    print(f"{wall:6.2f} s {kb / 1024:8.1f} MiB ({kb * 1024 / P:5.0f})")
PY
}
# The get mode parks every rank at once (every VM alive: about 4.3 KiB a
# rank), so it runs only up to GET_MAX (default 1 Mi) on a 24 GiB machine.
GET_MAX="${GET_MAX:-1048576}"
for P in $PS; do
  get="not run (P > GET_MAX)"
  ((P <= GET_MAX)) && get="$(measure "$P" --mode get)"
  printf '%9s %22s %22s %22s\n' "$P" "$(measure "$P" --memory-limit 1)" "$(measure "$P" --mode put)" \
    "$get"
done
