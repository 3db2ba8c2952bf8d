#!/usr/bin/python3
"""scripts/fuzz_programs.py — differential fuzzing: random well-formed
programs (fuzz/program_generator.py: tile math, branches on the rank,
gets and puts with their handshakes, builtin allreduce and broadcast), each
run at several P under several engines' settings and schedules, compared
with the host reference (docs/testing.md).

    /usr/bin/python3 scripts/fuzz_programs.py [SECONDS] [--seed N] [--count N]

Per program: P drawn from 2, 3, 4, 5, 7 (two of them), and at each P the
free schedule on 2 workers, one worker, a seeded random schedule, a PCT
schedule, the race checker, at P <= 3 `verify` (every schedule up to
equivalence, budget 64), and for every 4th program (--mpi-every) the MPI
engine under mpirun -n P (fuzz/run_on_mpi.py). Any difference from the reference (bit-exact, or
within 1e-5 when a Sum allreduce adds in its own order), any anyp error
(the program is well-formed: a CompileError, RunError, DeadlockError or
RaceError is a bug), any other exception, or a verify that finds a failing
schedule, is a finding: the program is reduced (rounds dropped while the
same settings still fail) and kept as build/fuzz/programs/finding_<k>.py,
its settings and what went wrong in its docstring. Exit 1 if any.
Runs with Debian's /usr/bin/python3 and the build named by ANYP_BUILD_DIR
(default build/release).
"""

import argparse
import importlib.util
import os
import pathlib
import random
import shutil
import subprocess
import sys
import time
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "fuzz"))
os.environ.setdefault("ANYP_BUILD_DIR", str(ROOT / "build" / "release"))

import torch  # noqa: E402

from anyp import _core  # noqa: E402
from anyp.runtime import DistributedConfig, Pct, RunConfig  # noqa: E402
import program_generator as gen  # noqa: E402

OUT = ROOT / "build" / "fuzz" / "programs"
MPIRUN = shutil.which("mpirun")
RANKS = (2, 3, 4, 5, 7)


def settings(rng, P, mpi):
    """(key, name, RunConfig keywords) of the settings one program runs
    under at P (with `mpi`: the MPI engine too)."""
    seed = rng.randrange(1, 2**31)
    out = [
        ("2 workers", "free schedule, 2 workers", {"workers": 2}),
        ("1 worker", "one worker", {"workers": 1}),
        ("random", f"random schedule {seed}", {"deterministic": True, "schedule_seed": seed}),
        ("PCT", f"PCT seed {seed}", {"pct": Pct(seed, 3, 200)}),
        ("race checker", "race checker", {"check_races": True}),
    ]
    if P <= 3:
        out.append(("verify", "verify", {"verify": True}))
    if mpi:
        out.append(("MPI", "MPI engine", {"engine": "mpi"}))
    return out


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_once(program, path, P, keywords):
    """None when the run matches the reference, else what went wrong."""
    module = load(path)
    x = gen.inputs(program, P)
    want = gen.reference(program, x)
    keywords = dict(keywords)
    verify = keywords.pop("verify", False)
    config = RunConfig(distributed_config=DistributedConfig(device_ids=list(range(P))), **keywords)
    problems = []

    def one(config_dict):
        y = torch.zeros_like(x)
        try:
            module.program.compile(x, y, config=RunConfig.from_dict(config_dict))(x, y)
        except _core.Error as e:
            problems.append(f"{type(e).__name__}: {e}")
            return 1
        problem = gen.difference(program, y, want)
        if problem is not None:
            problems.append(problem)
            return 1
        return 0

    if not verify:
        one(config.to_dict())
        return problems[0] if problems else None
    code, text, complete, failure = _core.verify_schedules(
        config.to_dict(), 64, False, one, ["fuzz"]
    )
    if failure is not None:
        return (problems[-1] + "\n" if problems else "") + failure
    return None


def run_on_mpi(path, P):
    """None when `mpirun -n P` of fuzz/run_on_mpi.py matches the reference,
    else its output."""
    tmp = OUT / "mpi_tmp"
    tmp.mkdir(exist_ok=True)
    env = dict(
        os.environ,
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_rmaps_base_oversubscribe="1",
        TMPDIR=str(tmp),
        PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(ROOT / "fuzz")]),
    )
    command = [MPIRUN, "-n", str(P), "/usr/bin/python3", str(ROOT / "fuzz" / "run_on_mpi.py")]
    try:
        done = subprocess.run(
            command + [str(path)], capture_output=True, text=True, env=env, timeout=120
        )
    except subprocess.TimeoutExpired:
        return f"the MPI engine did not finish in 120 s (mpirun -n {P})"
    if done.returncode == 0 and done.stdout == "OK\n":
        return None
    return f"mpirun -n {P} exited {done.returncode}:\n{done.stdout}{done.stderr}"


def check(program, path, P, keywords):
    path.write_text(gen.source(program))
    try:
        if keywords.get("engine") == "mpi":
            return run_on_mpi(path, P)
        return run_once(program, path, P, keywords)
    except Exception:  # noqa: BLE001 (anything else is an internal error: a finding)
        return "internal error:\n" + traceback.format_exc()


def reduce(program, path, P, keywords):
    """Rounds dropped one at a time while the program still fails."""
    rounds = list(program.rounds)
    i = 0
    while i < len(rounds) and len(rounds) > 1:
        candidate = program.with_rounds(rounds[:i] + rounds[i + 1 :])
        if check(candidate, path, P, keywords) is not None:
            rounds = candidate.rounds
        else:
            i += 1
    return program.with_rounds(rounds)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seconds", nargs="?", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=0, help="stop after N programs (0: none)")
    parser.add_argument(
        "--mpi-every",
        type=int,
        default=4,
        help="run every N-th program on the MPI engine too, under mpirun (0: never)",
    )
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    start = time.monotonic()
    programs = runs = findings = 0
    by_setting = {}
    scratch = OUT / "current.py"
    while time.monotonic() - start < args.seconds and (args.count == 0 or programs < args.count):
        program = gen.random_program(rng)
        programs += 1
        mpi = MPIRUN is not None and args.mpi_every > 0 and programs % args.mpi_every == 0
        for P in rng.sample(RANKS, 2):
            for key, name, keywords in settings(rng, P, mpi and "mpi" in _core.available_engines()):
                runs += 1
                by_setting[key] = by_setting.get(key, 0) + 1
                problem = check(program, scratch, P, keywords)
                if problem is None:
                    continue
                small = reduce(program, scratch, P, keywords)
                problem = check(small, scratch, P, keywords) or problem
                findings += 1
                kept = OUT / f"finding_{findings}.py"
                kept.write_text(
                    f'"""Finding {findings} of seed {args.seed}: P = {P}, {name} '
                    f"({keywords!r})\n\n{problem}\n"
                    f'Reduced from {program!r}"""\n\n' + gen.source(small)
                )
                print(f"finding {findings}: {kept} (P = {P}, {name}): {problem.splitlines()[0]}")
                break
    seconds = time.monotonic() - start
    print(
        f"programs: {programs} generated, {runs} runs compared with the reference in "
        f"{seconds:.0f} s ({', '.join(f'{k}: {v}' for k, v in by_setting.items())}); "
        f"findings: {findings}"
    )
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
