"""The example helpers of anyp.runtime.cli (InputGenerator, check_exact,
check_close, report, add_anyp_arguments, compile's config=) given an
argument of the wrong kind: a TypeError naming the helper and the argument,
never an internal exception (each case was found by scripts/fuzz_python.py,
docs/testing.md). A check whose output and golden differ in shape is a
failed check that says so."""

import argparse
import contextlib
import io

import pytest
import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

from ring_harness import ring_host


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: cli.InputGenerator("x"), "InputGenerator: seed must be an int, got 'x'"),
        (lambda: cli.InputGenerator(1.5), "InputGenerator: seed must be an int, got 1.5"),
        (lambda: cli.InputGenerator(-1), "InputGenerator: seed must be in [0, 2^32), got -1"),
        (
            lambda: cli.InputGenerator(1).uniform([2, None]),
            "InputGenerator.uniform: shape must be an int, got None",
        ),
        (
            lambda: cli.InputGenerator(1).uniform(3),
            "InputGenerator.uniform: shape must be a list of ints, got 3",
        ),
        (
            lambda: cli.InputGenerator(1).uniform([2, -1]),
            "InputGenerator.uniform: shape [2, -1] has a negative extent",
        ),
        (
            lambda: cli.InputGenerator(1).uniform([2], [1]),
            "InputGenerator.uniform: dtype must be a pl dtype, got [1]",
        ),
        (
            lambda: cli.check_exact("y", 3, torch.zeros(2), 2),
            "check_exact: the output 'y' must be a torch tensor, got 3",
        ),
        (
            lambda: cli.check_close("y", torch.zeros(2), torch.zeros(2), "c"),
            "check_close: world_size must be an int, got 'c'",
        ),
        (
            lambda: cli.report(None),
            "report: checks must be a list of check results (check_exact, check_close), got "
            "NoneType",
        ),
        (
            lambda: cli.report([True], None, "stats"),
            "report: stats must be the RunStats a run " "returned, got str",
        ),
        (
            lambda: cli.add_anyp_arguments(argparse.ArgumentParser(), step="x"),
            "add_anyp_arguments: step must be an int, got 'x'",
        ),
    ],
)
def test_a_wrong_argument_is_named(call, message):
    with pytest.raises(TypeError) as error:
        call()
    assert str(error.value) == message


@pl.jit.incore
def copy_row(
    x: pl.Tensor[[1, 16], pl.FP32],
    y: pl.Out[pl.Tensor[[1, 16], pl.FP32]],
    src: pld.DistributedTensor[[1, 16], pl.FP32],
    dst: pld.DistributedTensor[[1, 16], pl.FP32],
    signal: pld.DistributedTensor[[1, 1], pl.INT32],
):
    y = pl.store(pl.load(x, [0, 0], [1, 16]), [0, 0], y)


def test_compile_names_a_config_that_is_not_a_run_config():
    x = torch.zeros(2, 1, 16)
    with pytest.raises(TypeError) as error:
        ring_host(copy_row, 16).compile(x, torch.zeros_like(x), config=3)
    assert str(error.value) == "compile: config must be an anyp.runtime.RunConfig, got 3"


def test_a_shape_mismatch_is_a_failed_check():
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert not cli.check_exact("y", torch.zeros(3, 8), torch.zeros(3, 3, 8), 3)
    assert err.getvalue() == "y mismatch: the output is [3, 8] but the golden is [3, 3, 8] (P=3)\n"


def test_an_allocation_beyond_the_machine_is_a_memory_error():
    with pytest.raises(MemoryError) as error:
        cli.InputGenerator(1).uniform([2**20, 2**20, 2**20], pl.FP32)
    assert str(error.value) == (
        "InputGenerator.uniform: a tensor of shape [1048576, 1048576, 1048576] and dtype "
        "DType.FP32 is more than this machine can allocate"
    )
