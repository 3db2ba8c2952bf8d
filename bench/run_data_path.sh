#!/usr/bin/env bash
# run_data_path.sh — issue 10's figures (docs/performance.md, "The data
# path"), every one against a baseline measured in the same run:
#   1. data_path_bench: copies against memcpy, a run's fixed cost, one
#      worker against two, the builtin ring at P = 64..256, the builtin mesh
#      allreduce of 960 floats at P = 4..64;
#   2. MPI_Allreduce of the same 960 floats at the same P (mpirun, one
#      process per rank, oversubscribed on this machine), beside the mesh;
#   3. tile_math_bench: tile loops against a plain C++ loop;
#   4. step 07 at P = 65 536 as a whole process (/usr/bin/time: wall, peak RSS).
#
#   BUILD=build/release bash bench/run_data_path.sh
# (BUILD defaults to build/bench, configured here with -DANYP_BUILD_BENCH=ON.)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_build.sh
targets=(data_path_bench tile_math_bench 07_dynamic_rank_count)
have_mpi=0
if grep -q "build bench/mpi_allreduce" "$BUILD/build.ninja" 2>/dev/null; then
  targets+=(mpi_allreduce)
  have_mpi=1
fi
ninja -C "$BUILD" "${targets[@]}" >/dev/null
echo "# $(date -u +%F) $(nproc) cores, $(uname -m); BUILD=$BUILD"
"$BUILD/bench/data_path_bench"
if [[ $have_mpi == 1 ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_rmaps_base_oversubscribe=1
  for P in 4 8 16 32 64; do
    rounds=$([[ $P -le 16 ]] && echo 200 || echo 40)
    TMPDIR=$(mktemp -d) mpirun -n "$P" "$BUILD/bench/mpi_allreduce" 960 "$rounds" | tail -1
  done
else
  echo "mpi_allreduce: not built (no MPI in this build)"
fi
"$BUILD/bench/tile_math_bench"
/usr/bin/time -f "step07 P=65536 wall_s=%e user_s=%U sys_s=%S peak_kb=%M" \
  "$BUILD/examples/07_dynamic_rank_count" -d 0-65535 2>&1 | tail -2
