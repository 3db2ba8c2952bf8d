"""workers_in_process.py — two workers against one, per ladder step and
kernel, in one process (docs/performance.md, "Workers"): each example's
Python program runs REPS times with --workers 1 and REPS times with
--workers 2, interleaved, after a warm-up of each; the figure is the median
of the engine's own wall time for the run (RunStats.run_seconds: arguments
in, every rank to its end, outputs out), so neither the process start, the
compile nor the example's reference is in it, and the heap and the worker
pool are warm, as in a program that runs a kernel many times. Speedup =
t1 / t2 (below 1.0: two workers are slower than one).

  /usr/bin/python3 bench/workers_in_process.py                 (P = 4 16 64)
  PS="4 8" STEPS="08 k2" REPS=21 /usr/bin/python3 bench/workers_in_process.py

Steps 09, 10 and k1 need P dividing 120: they run at 4, 8, 24 and 120.
The native module comes from $ANYP_BUILD_DIR (default build/release).
"""

import contextlib
import glob
import importlib.util
import io
import os
import statistics
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("ANYP_BUILD_DIR", os.path.join(ROOT, "build", "release"))

from anyp.ir import distributed_compiled_program as dcp  # noqa: E402


def example_files(steps):
    files = sorted(glob.glob(os.path.join(ROOT, "examples", "distributed", "[01]*.py")))
    files += sorted(glob.glob(os.path.join(ROOT, "examples", "kernels", "k*.py")))
    by_step = {os.path.basename(f).split("_")[0]: f for f in files}
    return [(s, by_step[s]) for s in steps if s in by_step]


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_seconds(module, P, workers):
    """One run of the example's main at P on `workers`: the run's wall seconds."""
    argv = ["-d", f"0-{P - 1}", "--workers", str(workers)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = module.main(argv)
    if code != 0 or out.getvalue() != "OK\n":
        raise SystemExit(f"{module.__name__} {' '.join(argv)}: exit {code}, {out.getvalue()!r}")
    return dcp.last_run_stats[0].run_seconds


def main():
    steps = os.environ.get("STEPS", "").split() or [
        *(f"{i:02d}" for i in range(1, 17)),
        *(f"k{i}" for i in range(1, 8)),
    ]
    ps = [int(p) for p in os.environ.get("PS", "4 16 64").split()]
    reps = int(os.environ.get("REPS", "11"))
    print(f"two workers against one, in process: median run seconds of {reps} runs, t1 / t2")
    print(f"{'example':<24} {'P':>5} {'1 worker':>11} {'2 workers':>11} {'speedup':>8}")
    for step, path in example_files(steps):
        module = load(path)
        step_ps = [4, 8, 24, 120] if step in ("09", "10", "k1") else ps
        for P in step_ps:
            for workers in (1, 2):
                run_seconds(module, P, workers)  # warm-up: plan, heap, pool
            t = {1: [], 2: []}
            for _ in range(reps):
                for workers in (1, 2):
                    t[workers].append(run_seconds(module, P, workers))
            t1, t2 = statistics.median(t[1]), statistics.median(t[2])
            name = os.path.basename(path)[:-3]
            print(f"{name:<24} {P:>5} {t1:>11.6f} {t2:>11.6f} {t1 / t2:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
