"""The seed's program in Python (examples/distributed/07_dynamic_rank_count.py)
at P = 2, 3, 4, 5, 8 in both modes: exact against the golden, also under the
race checker, and the seed's own command line prints OK (also in-process through
main(argv), the example command line of anyp.runtime.cli)."""

import contextlib
import importlib.util
import io
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from conftest import ROOT
from anyp.ir.distributed_compiled_program import DistributedConfig
from anyp.runtime import RunConfig

EXAMPLE = os.path.join(ROOT, "examples", "distributed", "07_dynamic_rank_count.py")
_spec = importlib.util.spec_from_file_location("step07", EXAMPLE)
step07 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(step07)

RANKS = [2, 3, 4, 5, 8]


def config(P, **kwargs):
    return RunConfig(distributed_config=DistributedConfig(device_ids=list(range(P))), **kwargs)


@pytest.mark.parametrize("mode", ["get", "put"])
@pytest.mark.parametrize("P", RANKS)
@pytest.mark.parametrize("check_races", [False, True])
def test_ring_shift_is_exact(P, mode, check_races):
    x = torch.randn(
        (P, 1, step07.SIZE), dtype=torch.float32, generator=torch.Generator().manual_seed(P)
    )
    y = torch.zeros((P, 1, step07.SIZE), dtype=torch.float32)
    program = step07.ring_get if mode == "get" else step07.ring_put
    compiled = program.compile(x, y, config=config(P, check_races=check_races))
    compiled(x, y)
    for r in range(P):
        source = (r + 1) % P if mode == "get" else (r - 1) % P
        assert torch.equal(y[r], x[source]), f"rank {r}"


def test_numpy_arrays_are_written_in_place():
    x = np.arange(3 * step07.SIZE, dtype=np.float32).reshape(3, 1, step07.SIZE)
    y = np.zeros_like(x)
    step07.ring_get.compile(x, y, config=config(3))(x, y)
    assert np.array_equal(y, np.roll(x, -1, axis=0))


@pytest.mark.parametrize("devices,mode", [("0,1", "get"), ("0,1,2", "put"), ("0,1,2,3", "get")])
def test_the_seeds_command_prints_ok(devices, mode):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run(
        [sys.executable, EXAMPLE, "-p", "a2a3sim", "-d", devices, "--mode", mode],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert (out.returncode, out.stdout, out.stderr) == (0, "OK\n", "")


def test_percent_in_its_kernels_truncates_as_on_pypto():
    # get_step computes left = (my_rank + nranks - 1) % nranks: a kernel's %
    # truncates, as PyPTO's generated kernel code does (tests/python/
    # test_arithmetic_levels.py), so the step keeps the dividend non-negative.
    text = step07.ring_get.ir_text()
    assert " mod " in text and "floormod" not in text


@pytest.mark.parametrize("mode", ["put", "get"])
@pytest.mark.parametrize("P", RANKS)
def test_main_prints_ok_in_process(P, mode):
    # The example's own inputs (cli.InputGenerator(7), the C++ twin's) and
    # golden check, through anyp.runtime.cli.
    out, err = io.StringIO(), io.StringIO()
    argv = ["-d", ",".join(map(str, range(P))), "--mode", mode, "--check-races"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = step07.main(argv)
    assert (code, out.getvalue(), err.getvalue()) == (0, "OK\n", "")
