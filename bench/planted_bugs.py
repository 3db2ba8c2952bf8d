"""planted_bugs.py — how many schedules each method runs before a bug that
only some interleavings of notifies expose shows itself: `verify` (every
schedule up to equivalence, docs/race-checker.md §7) against PCT schedules
(`--explore`: seeds 1..N at depth 2 and 3 over the calibration's steps)
and uniform random schedules (`--schedule-seed` 1..N). Every method runs
with the race checker on; these bugs are not races (every access is
ordered), they deadlock.

  eq_between_adds   ranks 1 and 2 each add 1 to rank 0's cell; rank 0
                    waits for it to equal 1, then 2: deadlocks when both
                    adds land before rank 0's first check
  lost_set          ranks 1 and 2 each Set rank 0's cell to 1; rank 0 waits
                    for 1, Sets its cell back to 0, waits for 1 again:
                    deadlocks when both Sets land before the reset (the
                    fix: a cell per setter)
  lost_set_late     the same, each setter's Set after 32 ops of its own:
                    the second Set must land in the few steps between the
                    first and rank 0's reset

  /usr/bin/python3 bench/planted_bugs.py [N]      (N = 200; the build in
                                                   ANYP_BUILD_DIR or build/release)
Per method and P: the first failing schedule (verify: its index; PCT and
uniform: the first failing seed) and how many of the N fail; then what
verify says of each fix.
"""

import os
import sys

import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("ANYP_BUILD_DIR", os.path.join(ROOT, "build", "release"))

import anyp.language as pl  # noqa: E402
import anyp.language.distributed as pld  # noqa: E402
from anyp import _core  # noqa: E402
from anyp.runtime import DistributedConfig, Pct, RunConfig  # noqa: E402

COLS = 8
NR = pl.dynamic("NR")


def eq_between_adds(fixed):
    """The bug, or its fix (waits with Ge: the cell only grows)."""
    cmp = pld.WaitCmp.Ge if fixed else pld.WaitCmp.Eq

    @pl.jit.incore
    def kernel(
        x: pl.Tensor[[1, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
        flag: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ):
        me = pld.rank(pld.get_comm_ctx(flag))
        y = pl.store(pl.load(x, [0, 0], [1, COLS]), [0, 0], y)
        if me == 0:
            pld.system.wait(flag, offsets=[0, 0], expected=1, cmp=cmp)
            pld.system.wait(flag, offsets=[0, 0], expected=2, cmp=cmp)
        if me == 1:
            pld.system.notify(flag, peer=0, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        if me == 2:
            pld.system.notify(flag, peer=0, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        return y

    return kernel


def lost_set(fixed, preamble):
    """The bug, or its fix (a cell per setter, waited on in turn); each
    setter first runs `preamble` load/store pairs of its own."""

    @pl.jit.incore
    def kernel(
        x: pl.Tensor[[1, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
        flag: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ):
        me = pld.rank(pld.get_comm_ctx(flag))
        y = pl.store(pl.load(x, [0, 0], [1, COLS]), [0, 0], y)
        if me == 0:
            pld.system.wait(flag, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Eq)
            pld.system.notify(flag, peer=0, offsets=[0, 0], value=0, op=pld.NotifyOp.Set)
            pld.system.wait(flag, offsets=[1 if fixed else 0, 0], expected=1, cmp=pld.WaitCmp.Eq)
        if me > 0:
            for _ in pl.range(preamble):
                y = pl.store(pl.load(x, [0, 0], [1, COLS]), [0, 0], y)
        if me == 1:
            pld.system.notify(flag, peer=0, offsets=[0, 0], value=1, op=pld.NotifyOp.Set)
        if me == 2:
            row = 1 if fixed else 0
            pld.system.notify(flag, peer=0, offsets=[row, 0], value=1, op=pld.NotifyOp.Set)
        return y

    return kernel


def host_of(kernel):
    @pl.jit
    def per_rank(
        x: pl.Tensor[[1, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
        flag: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ):
        kernel(x, y, flag)

    @pl.jit.host
    def program(
        x: pl.Tensor[[NR, 1, COLS], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, 1, COLS], pl.FP32]],
    ):
        buf = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            per_rank(x[r], y[r], pld.window(buf, [2, 1], dtype=pl.INT32), device=r)

    return program


PROGRAMS = {  # name: (the bug, its fix)
    "eq_between_adds": (host_of(eq_between_adds(False)), host_of(eq_between_adds(True))),
    "lost_set": (host_of(lost_set(False, 0)), host_of(lost_set(True, 0))),
    "lost_set_late": (host_of(lost_set(False, 16)), host_of(lost_set(True, 16))),
}


def run(program, P, config):
    """0 when the run passes, 1 when it fails (a deadlock, or any run error)."""
    x = torch.rand((P, 1, COLS), generator=torch.Generator().manual_seed(1))
    y = torch.zeros_like(x)
    try:
        program.compile(x, y, config=config)(x, y)
    except _core.Error:
        return 1
    return 0 if torch.equal(x, y) else 1


def config_of(P, **keywords):
    devices = DistributedConfig(device_ids=list(range(P)))
    return RunConfig(distributed_config=devices, check_races=True, **keywords)


def sampled(program, P, N, make):
    """(first failing seed or "-", failures) over seeds 1..N."""
    first, failures = "-", 0
    for seed in range(1, N + 1):
        if run(program, P, make(seed)):
            failures += 1
            first = seed if first == "-" else first
    return f"{first}/{failures}"


def main(argv):
    N = int(argv[0]) if argv else 200
    print(f"schedules until the first failure (first/failing of {N}; verify: the failing schedule)")
    print(f"{'bug':<16} {'P':>2} {'verify':>8} {'PCT d=2':>9} {'PCT d=3':>9} {'uniform':>9}")
    fixes = []
    for name, (program, fix) in PROGRAMS.items():
        for P in (3, 4, 8):
            code, text, complete, failure = _core.verify_schedules(
                config_of(P).to_dict(),
                10000,
                False,
                lambda d: run(program, P, RunConfig.from_dict(d)),
                ["bench"],
            )
            found = text.split(" ")[2] if failure is not None else "-"
            _, fixed_text, _, _ = _core.verify_schedules(
                config_of(P).to_dict(),
                10000,
                False,
                lambda d: run(fix, P, RunConfig.from_dict(d)),
                ["bench"],
            )
            fixes.append(f"{name} fixed, P = {P}: {fixed_text}")
            steps = 0
            calibration = config_of(P, pct=Pct(0, 1, 0))
            x = torch.zeros((P, 1, COLS))
            stats = program.compile(x, x.clone(), config=calibration)(x, x.clone())
            steps = stats.schedule_steps
            pct2 = sampled(program, P, N, lambda s: config_of(P, pct=Pct(s, 2, steps)))
            pct3 = sampled(program, P, N, lambda s: config_of(P, pct=Pct(s, 3, steps)))
            uniform = sampled(
                program, P, N, lambda s: config_of(P, deterministic=True, schedule_seed=s)
            )
            print(f"{name:<16} {P:>2} {found:>8} {pct2:>9} {pct3:>9} {uniform:>9}")
    print("\n".join(fixes))


if __name__ == "__main__":
    main(sys.argv[1:])
