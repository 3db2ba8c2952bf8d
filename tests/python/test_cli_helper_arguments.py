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

import anyp
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
        (
            lambda: cli.add_anyp_arguments(argparse.ArgumentParser(), step=2**40),
            "add_anyp_arguments: step must be in [0, 2^31), got 1099511627776",
        ),
        (
            lambda: cli.add_anyp_arguments("parser", step=7),
            "add_anyp_arguments: parser must be an argparse.ArgumentParser, got 'parser'",
        ),
        (
            lambda: cli.check_exact("y", torch.zeros(2), None, 2),
            "check_exact: the golden of 'y' must be a tensor, an array or numbers, got NoneType",
        ),
        (
            lambda: cli.check_exact("y", torch.zeros(2), torch.zeros(2), torch.ones(2)),
            "check_exact: world_size must be an int, got a tensor [2]",
        ),
        (
            lambda: cli.run_example(argparse.Namespace(), "run"),
            "cli.run_example: run must be a function run(args, config), got 'run'",
        ),
        (
            lambda: cli.run_example(argparse.Namespace(), lambda args: 0),
            "cli.run_example: run must take (args, config): too many positional arguments",
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


NR = pl.dynamic("NR")


@pl.jit.incore
def allreduce_with_a_dim(data: pld.DistributedTensor[[1, 16], pl.FP32]):
    pld.tensor.allreduce(data, NR)  # the signal is a dim


def test_an_op_given_a_dim_for_a_window_is_named_at_its_line():
    with pytest.raises(anyp.CompileError) as error:
        ring_host_of(allreduce_with_a_dim)
    line = next(
        n
        for n, text in enumerate(open(__file__).read().splitlines(), 1)
        if "the signal is a dim" in text
    )
    assert str(error.value).startswith(
        f"test_cli_helper_arguments.py:{line}: pld.tensor.allreduce(target=tensor or window "
        "view, signal=dim, op=pld.ReduceOp, mode=str, core_num=int): an argument is of the wrong "
        "kind\n"
    )


def ring_host_of(kernel):
    @pl.jit.incore
    def body(
        x: pl.Tensor[[1, 16], pl.FP32],
        y: pl.Out[pl.Tensor[[1, 16], pl.FP32]],
        src: pld.DistributedTensor[[1, 16], pl.FP32],
        dst: pld.DistributedTensor[[1, 16], pl.FP32],
        signal: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        kernel(dst)

    x = torch.zeros(2, 1, 16)
    ring_host(body, 16).compile(x, torch.zeros_like(x))


def test_a_closure_variable_bound_after_the_function_is_a_located_name_error():
    def make():
        @pl.jit.incore
        def uses_later(
            x: pl.Tensor[[1, 16], pl.FP32],
            y: pl.Out[pl.Tensor[[1, 16], pl.FP32]],
            src: pld.DistributedTensor[[1, 16], pl.FP32],
            dst: pld.DistributedTensor[[1, 16], pl.FP32],
            signal: pld.DistributedTensor[[1, 1], pl.INT32],
        ):
            y = pl.store(pl.add(pl.load(x, [0, 0], [1, 16]), later), [0, 0], y)

        x = torch.zeros(2, 1, 16)
        ring_host(uses_later, 16).compile(x, torch.zeros_like(x))
        later = 1.0  # noqa: F841 (bound after the compile: the cell is still empty)

    with pytest.raises(anyp.CompileError) as error:
        make()
    assert "NameError: " in str(error.value) and "'later'" in str(error.value)
