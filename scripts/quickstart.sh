#!/usr/bin/env bash
# scripts/quickstart.sh — the README's first command: installs what is
# needed, builds in the release tree what it runs (the library, step 07 and
# the Python module; scripts/test.sh builds the rest) and runs step 07 (dynamic rank count) in
# both modes at P = 2, 3 and 4 on the threads engine, then, when the build
# has the MPI engine, at P = 2, 3 and 4 under mpirun (--engine mpi); then the
# seed's own three commands, the Python version of step 07 (python/anyp on
# Debian's interpreter, scripts/python_path.sh). Fails if any run fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh
TARGETS="07_dynamic_rank_count anyp_python_core" bash scripts/build.sh release

EXAMPLE=build/release/examples/07_dynamic_rank_count
for devices in 0,1 0,1,2 0,1,2,3; do
  for mode in put get; do
    echo "\$ $EXAMPLE --mode $mode -d $devices"
    "$EXAMPLE" --mode "$mode" -d "$devices"
  done
done
if "$EXAMPLE" --help | grep -q "engines in this build: threads, mpi"; then
  # Root needs Open MPI's consent; P may exceed the cores.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_rmaps_base_oversubscribe=1
  for P in 2 3 4; do
    echo "\$ mpirun -n $P $EXAMPLE --engine mpi"
    mpirun -n "$P" "$EXAMPLE" --engine mpi
  done
fi
bash scripts/python_path.sh
# Debian's `python` (python-is-python3), whatever python is first on PATH.
for devices in 0,1 0,1,2 0,1,2,3; do
  echo "\$ python examples/distributed/07_dynamic_rank_count.py -p a2a3sim -d $devices"
  /usr/bin/python examples/distributed/07_dynamic_rank_count.py -p a2a3sim -d "$devices"
done
echo "quickstart: all runs passed"
