#!/usr/bin/env bash
# run_mpi.sh — the MPI engine against hand-written Open MPI programs doing
# the same exchange (docs/mpi.md): per-round time of a ring put + notify
# (step 07's exchange) at 256 B, and put bandwidth at 1 MiB and 16 MiB,
# against bench/baselines/ring_put_notify.c; step 10's hand-written ring
# allreduce and the builtin ring and mesh allreduce (steps 11, 08) of 960
# floats against bench/baselines/rma_ring_allreduce.c; at P = 2, 4, 8
# (oversubscribed past the cores). Ratios are anyp / baseline, measured in the same run.
#
#   bash bench/run_mpi.sh
#   PS="2 4" REPS=5 bash bench/run_mpi.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PS="${PS:-2 4 8}"
REPS="${REPS:-3}"
bash scripts/setup.sh >/dev/null
cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DANYP_BUILD_BENCH=ON \
  -DANYP_BUILD_TESTS=OFF -DANYP_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build/bench -j "${JOBS:-2}" \
  --target mpi_exchange_bench ring_put_notify rma_ring_allreduce >/dev/null
B=build/bench/bench
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export TMPDIR="$TMP"
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "MPI engine vs hand-written Open MPI ($(mpirun --version | head -1)), $(nproc) cores"
echo "us per round: each program times 5 repetitions and keeps the median; the table shows"
echo "the median of $REPS such runs of each (alternating); anyp's loop runs inside one kernel"
printf '%-24s %3s %12s %12s %7s %11s\n' exchange P "anyp us" "MPI us" ratio "anyp run us"
row() {  # row LABEL P ANYP_ARGS... -- BASELINE_ARGS...
  local label="$1" P="$2"
  shift 2
  local anyp_args=() base_args=()
  while [[ "$1" != "--" ]]; do anyp_args+=("$1"); shift; done
  shift
  base_args=("$@")
  # REPS alternating runs of each; the median of each column.
  local tas=() tbs=() t0s=() a b
  for ((i = 0; i < REPS; i++)); do
    a=$(mpirun -n "$P" "$B/mpi_exchange_bench" "${anyp_args[@]}")
    b=$(mpirun -n "$P" "${base_args[@]}")
    tas+=("$(echo "$a" | field us_per_round)")
    t0s+=("$(echo "$a" | field us_per_run)")
    tbs+=("$(echo "$b" | field us_per_round)")
  done
  local ta tb t0
  ta=$(median "${tas[@]}")
  tb=$(median "${tbs[@]}")
  t0=$(median "${t0s[@]}")
  printf '%-24s %3s %12.2f %12.2f %7.2f %11.0f\n' "$label" "$P" "$ta" "$tb" \
    "$(awk -v a="$ta" -v b="$tb" 'BEGIN { print a / b }')" "$t0"
}
for P in $PS; do
  row "ring put+notify 256 B" "$P" ring 256 2000 -- "$B/ring_put_notify" 256 2000
done
for P in $PS; do
  row "ring put 1 MiB" "$P" ring 1048576 200 -- "$B/ring_put_notify" 1048576 200
done
for P in 2 4; do
  row "ring put 16 MiB" "$P" ring 16777216 20 -- "$B/ring_put_notify" 16777216 20
done
for P in $PS; do
  # Fewer rounds where a round is slow (the builtin ring's notifies grow as P^2).
  R=$((P <= 4 ? 300 : 20))
  row "step 10 hand ring 960" "$P" allreduce_hand_ring 960 300 -- "$B/rma_ring_allreduce" 960 300
  row "allreduce ring 960 f32" "$P" allreduce_ring 960 "$R" -- "$B/rma_ring_allreduce" 960 "$R"
  row "allreduce mesh 960 f32" "$P" allreduce_mesh 960 "$R" -- "$B/rma_ring_allreduce" 960 "$R"
done
echo "bandwidth = bytes / us per round (MB/s): see the 1 MiB and 16 MiB rows"
