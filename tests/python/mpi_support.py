"""mpi_support.py — runs a test file as a script under `mpirun -n P` (one
rank per process, the MPI engine), for the tests that check a program on
both engines: each process checks its own result, rank 0 prints OK."""

import os
import shutil
import subprocess
import sys

MPIRUN = shutil.which("mpirun")


def run_script(script, P, tmp_path):
    """`mpirun -n P python script P`: its exit code and standard output."""
    env = dict(
        os.environ,
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        TMPDIR=str(tmp_path),
        PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
    )
    done = subprocess.run(
        [MPIRUN, "-n", str(P), "--oversubscribe", sys.executable, script, str(P)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr


def report(ok):
    """In the script: a wrong result exits non-zero; rank 0 prints OK."""
    if not ok:
        sys.exit("WRONG")
    if os.environ.get("OMPI_COMM_WORLD_RANK") == "0":
        print("OK", flush=True)
