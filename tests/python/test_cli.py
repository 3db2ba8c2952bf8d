"""anyp.runtime.cli, the Python examples' command line: exact text of the
flags (cost card, timeline, trace, --explore and its replay command,
--compile-only, --dump-outputs), exit codes and usage errors, as the C++
example command line prints them (the seed, examples/distributed/
07_dynamic_rank_count.py, against its C++ twin; a planted bug defined here
for a failing schedule)."""

import argparse
import contextlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import torch

from conftest import ROOT
import anyp.language as pl
import anyp.language.distributed as pld
from anyp.ir.distributed_compiled_program import DistributedConfig
from anyp.runtime import RunConfig, cli

BUILD = os.environ.get("ANYP_BUILD_DIR", os.path.join(ROOT, "build", "release"))
EXAMPLE = os.path.join(ROOT, "examples", "distributed", "07_dynamic_rank_count.py")
TWIN = os.path.join(BUILD, "examples", "07_dynamic_rank_count")
_spec = importlib.util.spec_from_file_location("cli_step07", EXAMPLE)
step07 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(step07)

needs_twin = pytest.mark.skipif(not os.path.exists(TWIN), reason="C++ twin not built")


def run(main, argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def twin(argv):
    done = subprocess.run([TWIN, *argv], capture_output=True, text=True, check=False)
    return done.returncode, done.stdout, done.stderr


# ---- the flags' output ---------------------------------------------------------


def test_default_run_prints_ok():
    assert run(step07.main, []) == (0, "OK\n", "")


@pytest.mark.parametrize("P", [2, 3, 4, 5, 8])
def test_cost_card_text(P):
    code, out, err = run(step07.main, ["-d", ",".join(map(str, range(P))), "--cost"])
    lines = out.splitlines()
    assert (code, err) == (0, "")
    assert lines[:3] == [
        "OK",
        f"cost card (P={P})",
        "  rank   bytes_in  bytes_out    RMA  notify    +E   wait    time_us  rounds",
    ]
    rows = lines[3 : 3 + P]
    for r, row in enumerate(rows):
        assert row.split()[:7] == [str(r), "256", "256", "1", "1", "0", "1"]
    assert lines[3 + P].split()[:7] == [
        "total",
        str(256 * P),
        str(256 * P),
        str(P),
        str(P),
        "0",
        str(P),
    ]
    assert lines[4 + P] == "(time: modeled on a2a3sim, the total is the makespan)"
    assert lines[5 + P].startswith("memory (this process, planned before the run): ")


def test_timeline_header_and_table():
    code, out, err = run(step07.main, ["-d", "0,1,2", "--timeline"])
    lines = out.splitlines()
    assert (code, err, lines[0]) == (0, "", "OK")
    assert re.fullmatch(
        r"timeline \(model a2a3sim, P=3\): makespan \d+\.\d{3} us, 1 round", lines[1]
    )
    assert lines[2] == "  rank   finish_us     busy_us     wait_us  rounds"
    # a2a3sim runs transfers on 4 DMA engines over shared links: their
    # tables come before the critical path.
    assert lines[6] == "dma engines (4 per rank, issue 0.100 us):"
    assert lines[11] == "links (shared; the 6 busiest of 6 ports that carried data):"
    assert lines[18] == "critical path (7 ops, in time order):"


@needs_twin
@pytest.mark.parametrize(
    "argv",
    [
        ["-d", "0,1,2", "--cost"],
        ["-d", "0,1,2,3", "--mode", "get", "--timeline"],
        ["-d", "0-4", "--cost", "--timeline", "--check-races"],
        ["-d", "0,1,2", "--schedule-seed", "5", "--cost"],
        ["-d", "0,1,2", "--pct-seed", "3", "--pct-steps", "10", "--cost"],
        ["-d", "0,1", "--workers", "1", "--preempt-budget", "7", "--memory-limit", "1MiB"],
        ["-d", "0,1,2", "--explore", "5", "--explore-depth", "2", "--cost"],
        ["-d", "0,1,2", "--seed", "11", "--cost"],
    ],
)
def test_the_flags_print_what_the_cpp_twin_prints(argv):
    assert run(step07.main, argv) == twin(argv)


STEP11 = os.path.join(ROOT, "examples", "distributed", "11_allreduce_reveal.py")
STEP11_TWIN = os.path.join(BUILD, "examples", "11_allreduce_reveal")
_spec11 = importlib.util.spec_from_file_location("cli_step11", STEP11)
step11 = importlib.util.module_from_spec(_spec11)
_spec11.loader.exec_module(step11)


@pytest.mark.skipif(not os.path.exists(STEP11_TWIN), reason="C++ twin not built")
@pytest.mark.parametrize(
    "argv",
    [
        ["-d", "0-7", "--mode", "auto", "--explain-collectives"],
        ["-d", "0-4", "--mode", "ring", "--explain-collectives", "--cost"],
        ["-d", "0-63", "--mode", "auto", "--timeline"],
        ["-d", "0-2", "--mode", "tree", "--op", "max", "--cost"],
    ],
)
def test_collective_choices_print_what_the_cpp_twin_prints(argv):
    code, out, err = run(step11.main, argv)
    done = subprocess.run([STEP11_TWIN, *argv], capture_output=True, text=True, check=False)
    assert (code, out, err) == (done.returncode, done.stdout, done.stderr)
    assert code == 0 and out.startswith("OK\n")
    if "--explain-collectives" in argv:
        assert "collectives (model a2a3sim, P=" in out and "  <- runs\n" in out
    if "auto" in argv and ("--cost" in argv or "--timeline" in argv):
        assert out.splitlines()[-1].startswith("per_rank: pld.tensor.allreduce (Sum, ")


def test_trace_file_is_written_as_chrome_trace_json(tmp_path):
    path = tmp_path / "run.json"
    assert run(step07.main, ["-d", "0,1,2", "--trace", str(path)]) == (0, "OK\n", "")
    trace = json.loads(path.read_text())
    assert trace["otherData"]["model"] == "a2a3sim"
    names = [e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"]
    # A track per rank and one per DMA engine of it that ran a transfer
    # (step 07 issues one put per rank).
    assert names == [name for r in range(3) for name in (f"rank {r}", f"rank {r} dma 0")]
    assert any(e["ph"] == "X" and e["name"] == "pld.tensor.put" for e in trace["traceEvents"])


@needs_twin
def test_trace_is_the_cpp_twins(tmp_path):
    py, cpp = tmp_path / "py.json", tmp_path / "cpp.json"
    assert run(step07.main, ["-d", "0,1,2,3", "--trace", str(py)])[0] == 0
    assert twin(["-d", "0,1,2,3", "--trace", str(cpp)])[0] == 0
    assert py.read_text() == cpp.read_text()


def test_explore_prints_ok():
    assert run(step07.main, ["-d", "0,1,2", "--explore", "10"]) == (0, "OK\n", "")


def test_compile_only_writes_the_artifact(tmp_path):
    out = str(tmp_path / "artifact")
    code, text, err = run(step07.main, ["-d", "0,1,2", "--compile-only", "--output-dir", out])
    assert (code, text, err) == (0, f"compile_only done: {out}\n", "")
    assert os.listdir(out)


def test_dump_outputs_writes_the_checked_tensor(tmp_path):
    directory = tmp_path / "dump"
    assert run(step07.main, ["-d", "0,1,2", "--dump-outputs", str(directory)])[0] == 0
    gen = cli.InputGenerator(7)
    x = gen.uniform([3, 1, step07.SIZE])
    golden = torch.roll(x, shifts=1, dims=0)  # put: y[r] = x[r - 1]
    assert (directory / "y.bin").read_bytes() == golden.numpy().tobytes()


def test_run_stats_are_returned():
    x = cli.InputGenerator(7).uniform([4, 1, step07.SIZE])
    y = torch.zeros_like(x)
    compiled = step07.ring_put.compile(
        x, y, config=RunConfig(distributed_config=DistributedConfig(list(range(4))), timeline=True)
    )
    stats = compiled(x, y)
    assert len(stats.cost) == 4 and stats.cost[0].bytes_out == 256
    assert stats.total().rma == 4 and stats.has_timeline and stats.rounds == 1
    assert stats.cost_card().startswith("cost card (P=4)\n")
    # A ring does no tile compute: its run never recruits a second worker.
    assert stats.workers == 1 and stats.run_seconds > 0
    # On that one worker, rank 0 stays parked on rank 3 while the others
    # start and finish one after another: two rank VMs at most.
    assert stats.vms_at_most == 2


# ---- InputGenerator ----------------------------------------------------------------


def test_input_generator_is_the_cpp_one():
    gen = cli.InputGenerator(7)
    x = gen.uniform([2, 3])
    assert x.dtype == torch.float32 and list(x.shape) == [2, 3]
    assert all(0.5 <= v < 1.5 for v in x.flatten().tolist())
    # Each value is 0.5 + (g() >> 9) * 2^-23 of std::mt19937(7), in order.
    mt = _mt19937(7)
    expected = [0.5 + (next(mt) >> 9) * 2.0**-23 for _ in range(6)]
    assert x.flatten().tolist() == expected
    assert gen.next() == 0.5 + (next(mt) >> 9) * 2.0**-23


def _mt19937(seed):
    """std::mt19937(seed), spelled out."""
    state = [seed & 0xFFFFFFFF]
    for i in range(1, 624):
        state.append((1812433253 * (state[-1] ^ (state[-1] >> 30)) + i) & 0xFFFFFFFF)
    index = 624
    while True:
        if index == 624:
            for i in range(624):
                y = (state[i] & 0x80000000) | (state[(i + 1) % 624] & 0x7FFFFFFF)
                state[i] = state[(i + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
            index = 0
        y = state[index]
        index += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        yield y


# ---- exit codes and usage errors ---------------------------------------------------------


@needs_twin
@pytest.mark.parametrize(
    "argv",
    [
        ["-d", "0"],
        ["-d", "0,0"],
        ["-d", "0,-1"],
        ["--explore", "0"],
        ["--pct-steps", "5"],
        ["--explore-depth", "2"],
        ["--model", "m.model"],
        ["--schedule-seed", "1", "--explore", "2"],
        ["--workers", "-1"],
        ["--memory-limit", "lots"],
        ["--output-dir", "x"],
        ["-p", "a2a3"],
        ["--engine", "carrier-pigeon"],
        ["--trace", "/nonexistent/dir/t.json"],
    ],
)
def test_usage_errors_are_the_cpp_twins(argv):
    got = run(step07.main, argv)
    assert got[0] == 2
    assert got == twin(argv)


def test_usage_error_message_and_code():
    assert run(step07.main, ["-d", "0"]) == (2, "", "need at least 2 devices, got [0]\n")
    assert run(step07.main, ["--pct-steps", "5"]) == (
        2,
        "",
        "--pct-steps: only meaningful with --pct-seed\n",
    )


def test_argparse_errors_exit_2():
    with pytest.raises(SystemExit) as e, contextlib.redirect_stderr(io.StringIO()):
        step07.main(["--mode", "sideways"])
    assert e.value.code == 2


def test_a_body_usage_error_exits_2_and_a_run_error_1():
    def usage(args, config):
        raise cli.UsageError("this step needs an even P, got 3")

    def failing(args, config):
        raise RuntimeError("boom")

    assert run(lambda argv: cli.run_example(parser().parse_args(argv), usage), ["-d", "0,1,2"]) == (
        2,
        "",
        "this step needs an even P, got 3\n",
    )
    assert run(lambda argv: cli.run_example(parser().parse_args(argv), failing), []) == (
        1,
        "",
        "error: boom\n",
    )


def test_cost_without_a_run_is_refused():
    def body(args, config):
        return cli.report([True], args, None)

    assert run(lambda argv: cli.run_example(parser().parse_args(argv), body), ["--cost"]) == (
        2,
        "",
        "--cost: the program reported its outcome, but no anyp run finished (no CompiledProgram "
        "or Session run), so there is no run to print\n",
    )


def test_a_run_on_a_config_of_its_own_is_refused():
    def body(args, config):
        x = torch.zeros((2, 1, step07.SIZE), dtype=torch.float32)
        y = torch.zeros_like(x)
        own = RunConfig(distributed_config=DistributedConfig([0, 1]))
        stats = step07.ring_put.compile(x, y, config=own)(x, y)
        return cli.report([True], args, stats)

    code, out, err = run(
        lambda argv: cli.run_example(parser().parse_args(argv), body), ["--check-races"]
    )
    assert (code, out) == (2, "")
    assert err.startswith("--check-races: the program ran with a RunConfig of its own")


def test_a_programs_own_settings_that_no_flag_asked_for_are_not_refused():
    # The body turns on the timeline and the race checker itself; no flag
    # was given, so nothing is refused (a flag given is named as given).
    def body(args, config):
        x = torch.zeros((2, 1, step07.SIZE), dtype=torch.float32)
        y = torch.zeros_like(x)
        own = RunConfig(
            distributed_config=DistributedConfig([0, 1]), timeline=True, check_races=True
        )
        stats = step07.ring_put.compile(x, y, config=own)(x, y)
        return cli.report([True], args, stats)

    code, out, err = run(lambda argv: cli.run_example(parser().parse_args(argv), body), [])
    assert (code, out, err) == (0, "OK\n", "")
    code, out, err = run(
        lambda argv: cli.run_example(parser().parse_args(argv), body), ["--workers", "2"]
    )
    assert (code, out) == (2, "")
    assert err.startswith("--workers: the program ran with a RunConfig of its own")


# ---- a planted bug: the pull before the wait (examples/pitfalls/01_read_before_wait) ------

SIZE = 64
NR = pl.dynamic("NR")


@pl.jit.incore
def early_get_step(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pld.DistributedTensor[[1, SIZE], pl.FP32],
    dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
    ready: pld.DistributedTensor[[1, 1], pl.INT32],
):
    ctx = pld.get_comm_ctx(src)
    r = pld.rank(ctx)
    n = pld.nranks(ctx)
    src = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)
    pld.system.notify(
        ready, peer=(r + n - 1) % n, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd
    )
    pld.tensor.get(dst, peer=(r + 1) % n, src=src)  # the bug: before the wait
    pld.system.wait(ready, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    y = pl.store(pl.load(dst, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit
def early_get(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pld.DistributedTensor[[1, SIZE], pl.FP32],
    dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
    ready: pld.DistributedTensor[[1, 1], pl.INT32],
):
    early_get_step(x, y, src, dst, ready)


@pl.jit.host
def early_ring(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    src_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    dst_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    ready_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        src = pld.window(src_buf, [1, SIZE], dtype=pl.FP32)
        dst = pld.window(dst_buf, [1, SIZE], dtype=pl.FP32)
        ready = pld.window(ready_buf, [1, 1], dtype=pl.INT32)
        early_get(x[r], y[r], src, dst, ready, device=r)


def planted(args, config):
    P = len(config.device_ids())
    x = cli.InputGenerator(args.seed).uniform([P, 1, SIZE])
    y = torch.zeros_like(x)
    stats = early_ring.compile(x, y, config=config)(x, y)
    return cli.report([cli.check_exact("y", y, torch.roll(x, -1, 0), P)], args, stats)


def parser():
    p = argparse.ArgumentParser()
    p.add_argument("-p", "--platform", default="a2a3sim")
    p.add_argument("-d", "--device", default="0,1")
    p.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(p, step=1)
    return p


def planted_main(argv):
    return cli.run_example(parser().parse_args(argv), planted)


def test_a_failing_schedule_prints_its_replay_command():
    code, out, err = run(planted_main, ["-d", "0,1,2", "--explore", "20"])
    script = os.path.relpath(os.path.abspath(__file__))
    lines = err.splitlines()
    assert (code, out) == (1, "")
    assert re.fullmatch(r"y mismatch: max diff = [0-9.e-]+ \(P=3\)", lines[0])
    assert (
        lines[1]
        == "explore: the calibration schedule (PCT seed 0, depth 1) failed; replay it with:"
    )
    assert lines[2] == (
        f"  {sys.executable} {script} -d 0,1,2 --pct-seed 0 --explore-depth 1 --pct-steps 0"
    )
    # The replay fails the same way.
    replay = lines[2].split()[2:]
    assert run(planted_main, replay) == (1, "", lines[0] + "\n")


def test_the_race_checker_names_the_planted_race():
    code, out, err = run(planted_main, ["-d", "0,1,2", "--check-races"])
    assert (code, out) == (1, "")
    assert err.startswith("race")


@pl.jit.incore
def waits_forever_step(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    ready: pld.DistributedTensor[[1, 1], pl.INT32],
):
    pld.system.wait(ready, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)  # never notified
    y = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit
def waits_forever(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    ready: pld.DistributedTensor[[1, 1], pl.INT32],
):
    waits_forever_step(x, y, ready)


@pl.jit.host
def deadlocked(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    ready_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        ready = pld.window(ready_buf, [1, 1], dtype=pl.INT32)
        waits_forever(x[r], y[r], ready, device=r)


def test_a_deadlock_exits_1():
    def body(args, config):
        x = torch.zeros((2, 1, SIZE), dtype=torch.float32)
        stats = deadlocked.compile(x, x.clone(), config=config)(x, x.clone())
        return cli.report([True], args, stats)

    code, out, err = run(lambda argv: cli.run_example(parser().parse_args(argv), body), [])
    assert (code, out) == (1, "")
    assert "deadlock" in err.lower()


# ---- the MPI engine ------------------------------------------------------------------------

MPIRUN = shutil.which("mpirun")


def mpirun(tmp_path, n, *argv):
    env = dict(
        os.environ,
        PYTHONPATH=os.path.join(ROOT, "python"),
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        TMPDIR=str(tmp_path),
    )
    return subprocess.run(
        [
            MPIRUN,
            "-n",
            str(n),
            "--oversubscribe",
            sys.executable,
            EXAMPLE,
            "--engine",
            "mpi",
            *argv,
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


@pytest.mark.skipif(MPIRUN is None, reason="no mpirun")
def test_mpi_engine_prints_once(tmp_path):
    done = mpirun(tmp_path, 3, "--cost")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("OK\ncost card (P=3)\n")
    assert done.stdout.count("OK\n") == 1


@pytest.mark.skipif(MPIRUN is None, reason="no mpirun")
def test_mpi_engine_refuses_one_process_flags_once(tmp_path):
    done = mpirun(tmp_path, 2, "--check-races")
    message = (
        "--check-races: needs every rank in one process (--engine threads); --engine mpi runs "
        "one rank per process\n"
    )
    assert (done.returncode != 0, done.stdout) == (True, "")
    assert done.stderr.startswith(message) and done.stderr.count(message) == 1
