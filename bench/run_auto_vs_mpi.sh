#!/usr/bin/env bash
# run_auto_vs_mpi.sh — issue 25's performance table (docs/collectives.md
# §6b): the builtin allreduce with AllreduceMode::Auto (Sum, FP32, in place,
# the loop inside one kernel) against MPI_Allreduce (bench/baselines/
# mpi_allreduce.c, the same loop), measured in the same run:
#   1. in one process (threads engine, auto_allreduce_bench) at P = 4 .. 64,
#      against MPI_Allreduce under mpirun -n P (oversubscribed past the cores);
#   2. on the MPI engine (mpi_exchange_bench allreduce_auto under mpirun) at
#      P = 2, 3, 4, 8, against MPI_Allreduce with the same P.
# Sizes: 960 floats, 64 KiB, 1 MiB and 4 MiB per rank. Ratios are anyp / MPI
# (below 1: anyp is faster); each figure is the median of REPS alternating
# runs, each the median of 5 repetitions.
#
#   bash bench/run_auto_vs_mpi.sh
#   PS="4 8" FLOATS="960" REPS=1 bash bench/run_auto_vs_mpi.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PS="${PS:-4 8 16 32 64}"
MPI_PS="${MPI_PS:-2 3 4 8}"
FLOATS="${FLOATS:-960 16384 262144 1048576}"
REPS="${REPS:-3}"
BUILD="${BUILD:-build/bench}"
bash scripts/setup.sh >/dev/null
if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DANYP_BUILD_BENCH=ON \
    -DANYP_BUILD_TESTS=OFF -DANYP_BUILD_EXAMPLES=OFF >/dev/null
fi
cmake --build "$BUILD" -j "${JOBS:-2}" --target auto_allreduce_bench mpi_exchange_bench \
  mpi_allreduce >/dev/null
B="$BUILD/bench"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export TMPDIR="$TMP"
CORES=$(nproc)
field() { sed -n "s/.*$1=\([0-9.A-Za-z]*\).*/\1/p"; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
rounds_for() { # as auto_allreduce_bench: fewer rounds for large vectors
  local bytes=$(($1 * 4 * $2))
  if ((bytes <= 1048576)); then echo 100; elif ((bytes <= 16777216)); then echo 20; else echo 4; fi
}
osc_for() { if (($1 > CORES)); then echo sm; else echo rdma; fi; }
echo "# $(date -u +%F) $CORES cores, $(mpirun --version | head -1); anyp Auto on the a2a3sim model"
echo "# us per allreduce: median of $REPS alternating runs, each the median of 5 repetitions"
printf '%-10s %3s %9s %-18s %11s %11s %6s\n' engine P bytes "Auto chose" "anyp us" "MPI us" ratio
# table ENGINE P FLOATS: REPS alternating runs of anyp and MPI_Allreduce.
table() {
  local engine="$1" P="$2" floats="$3" R tas=() tms=() out chose=""
  R=$(rounds_for "$floats" "$P")
  for ((i = 0; i < REPS; i++)); do
    if [[ $engine == threads ]]; then
      out=$("$B/auto_allreduce_bench" --ps "$P" --floats "$floats" --modes auto)
    else
      out=$(mpirun -n "$P" --mca osc "$(osc_for "$P")" "$B/mpi_exchange_bench" allreduce_auto \
        "$floats" "$R")
    fi
    chose=$(echo "$out" | field chose)
    tas+=("$(echo "$out" | field us_per_round)")
    tms+=("$(mpirun -n "$P" "$B/mpi_allreduce" "$floats" "$R" | field us_per_round)")
  done
  local ta tm
  ta=$(median "${tas[@]}")
  tm=$(median "${tms[@]}")
  printf '%-10s %3s %9s %-18s %11.2f %11.2f %6s\n' "$engine" "$P" "$((floats * 4))" "$chose" \
    "$ta" "$tm" "$(ratio "$ta" "$tm")"
}
for P in $PS; do
  for f in $FLOATS; do table threads "$P" "$f"; done
done
for P in $MPI_PS; do
  for f in $FLOATS; do table mpi "$P" "$f"; done
done
