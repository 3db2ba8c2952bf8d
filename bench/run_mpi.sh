#!/usr/bin/env bash
# run_mpi.sh — the MPI engine against hand-written Open MPI programs
# (docs/mpi.md#figures), at P = 2, 4, 8 (oversubscribed past the cores).
# Each row times one exchange in a loop inside one kernel and compares it,
# in the same run, with
#   "same": a C/MPI program doing exactly the same exchange with the MPI
#           engine's rules (bench/baselines/ring_put_notify.c,
#           same_exchange_allreduce.c hand|ring|mesh): the engine's overhead;
#   "expert": what an expert writes for the job in plain MPI (the push ring
#           with MPI_Barrier, rma_ring_allreduce.c; MPI_Allreduce,
#           mpi_allreduce.c): the algorithm's and the engine's cost together.
# Rows: a ring put + notify (step 07's exchange) at 256 B, put bandwidth at
# 1 MiB and 16 MiB; step 10's hand-written ring allreduce + barrier, and the
# builtin ring and mesh allreduce (steps 11, 08), of 960 floats.
# Ratios are anyp / baseline; every program reports the median of 5 timed
# repetitions, and the table shows the median of REPS alternating runs. All
# programs of a row run on the one-sided component the engine picks by
# default (docs/mpi.md): rdma, or sm where P exceeds the cores; OSC=rdma (or
# sm) forces one for every row.
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
cmake --build build/bench -j "${JOBS:-2}" --target mpi_exchange_bench ring_put_notify \
  rma_ring_allreduce same_exchange_allreduce mpi_allreduce >/dev/null
B=build/bench/bench
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export TMPDIR="$TMP"
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "MPI engine vs hand-written Open MPI ($(mpirun --version | head -1)), $(nproc) cores"
echo "us per round: median of $REPS alternating runs, each the median of 5 repetitions"
CORES=$(nproc)
printf '%-24s %3s %4s %10s %10s %6s %10s %6s %9s\n' exchange P osc "anyp us" "same us" ratio \
  "expert us" ratio "anyp run"
# row LABEL P "ANYP ARGS" "SAME BASELINE ARGS" ["EXPERT BASELINE ARGS"]
row() {
  local label="$1" P="$2" anyp="$3" same="$4" expert="${5:-}"
  local tas=() tss=() tes=() t0s=() out osc="${OSC:-}"
  if [[ -z "$osc" ]]; then
    if ((P > CORES)); then osc=sm; else osc=rdma; fi
  fi
  local run=(mpirun -n "$P" --mca osc "$osc")
  for ((i = 0; i < REPS; i++)); do
    # shellcheck disable=SC2086
    out=$("${run[@]}" "$B/mpi_exchange_bench" $anyp)
    tas+=("$(echo "$out" | field us_per_round)")
    t0s+=("$(echo "$out" | field us_per_run)")
    # shellcheck disable=SC2086
    tss+=("$("${run[@]}" $same | field us_per_round)")
    if [[ -n "$expert" ]]; then
      # shellcheck disable=SC2086
      tes+=("$("${run[@]}" $expert | field us_per_round)")
    fi
  done
  local ta ts te="" t0
  ta=$(median "${tas[@]}")
  ts=$(median "${tss[@]}")
  t0=$(median "${t0s[@]}")
  if [[ -n "$expert" ]]; then
    te=$(median "${tes[@]}")
    printf '%-24s %3s %4s %10.2f %10.2f %6s %10.2f %6s %9.0f\n' "$label" "$P" "$osc" "$ta" \
      "$ts" "$(ratio "$ta" "$ts")" "$te" "$(ratio "$ta" "$te")" "$t0"
  else
    printf '%-24s %3s %4s %10.2f %10.2f %6s %10s %6s %9.0f\n' "$label" "$P" "$osc" "$ta" "$ts" \
      "$(ratio "$ta" "$ts")" "-" "-" "$t0"
  fi
}
for P in $PS; do
  row "ring put+notify 256 B" "$P" "ring 256 2000" "$B/ring_put_notify 256 2000"
done
for P in $PS; do
  row "ring put 1 MiB" "$P" "ring 1048576 200" "$B/ring_put_notify 1048576 200"
done
for P in 2 4; do
  row "ring put 16 MiB" "$P" "ring 16777216 20" "$B/ring_put_notify 16777216 20"
done
for P in $PS; do
  R=$((P <= 4 ? 300 : 600))  # many rounds where 4 processes share a core: past a scheduler quantum
  row "step 10 hand ring 960" "$P" "allreduce_hand_ring 960 $R" \
    "$B/same_exchange_allreduce 960 $R hand" "$B/rma_ring_allreduce 960 $R"
  row "allreduce ring 960 f32" "$P" "allreduce_ring 960 $R" \
    "$B/same_exchange_allreduce 960 $R ring" "$B/mpi_allreduce 960 $R"
  row "allreduce mesh 960 f32" "$P" "allreduce_mesh 960 $R" \
    "$B/same_exchange_allreduce 960 $R mesh" "$B/mpi_allreduce 960 $R"
done
echo "bandwidth = bytes / us per round (MB/s): see the 1 MiB and 16 MiB rows"
