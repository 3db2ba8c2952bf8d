"""run_on_mpi.py — one generated program (scripts/fuzz_programs.py) on the
MPI engine, under `mpirun -n P /usr/bin/python3 fuzz/run_on_mpi.py FILE`:
every process compiles it, runs its rank, and holds every rank's y after
the run; each compares y with the reference, and rank 0 prints OK, or the
difference (exit 1)."""

import ast
import importlib.util
import os
import pathlib
import sys

import program_generator as gen
from anyp.runtime import DistributedConfig, RunConfig


def main(path):
    path = pathlib.Path(path)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # The docstring's first line is "A generated program: Program(...)".
    text = ast.get_docstring(ast.parse(path.read_text())).split("A generated program: ", 1)[1]
    program = eval(text.splitlines()[0], {"Program": gen.Program})  # noqa: S307 (our own file)
    P = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    x = gen.inputs(program, P)
    y = x.new_zeros(x.shape)
    config = RunConfig(
        distributed_config=DistributedConfig(device_ids=list(range(P))), engine="mpi"
    )
    module.program.compile(x, y, config=config)(x, y)
    problem = gen.difference(program, y, gen.reference(program, x))
    if os.environ.get("OMPI_COMM_WORLD_RANK") == "0":
        print(problem or "OK", flush=True)
    return 0 if problem is None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
