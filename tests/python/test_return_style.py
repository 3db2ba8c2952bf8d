"""PyPTO's return-style call: a host function that returns, called with its
inputs only (`y = compiled(x)`), gets its pl.Out outputs allocated (zeroed,
shaped from the dims the inputs bind) and returned: one output as itself,
several as a tuple in parameter order. Every way to call a program, at
P = 2 ... 8; torch in, torch out; numpy in, numpy out; an output whose
shape no input binds is named. Also PyPTO's other names for the compiled
program: DistributedCompiledProgram (from_dir refused by name) and the
device toolchain module (each name refused with the reason)."""

import numpy
import pytest
import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp import ir
from anyp.ir import DistributedConfig
from anyp.runtime import RunConfig

NR = pl.dynamic("NR")
W = pl.dynamic("W")


@pl.jit.incore
def plus_one(
    x: pl.Tensor[[1, W], pl.FP32],
    y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
    z: pl.Out[pl.Tensor[[1, W], pl.FP32]],
):
    t = pl.load(x, [0, 0], [1, W])
    pl.store(pl.add(t, 1.0), [0, 0], y)
    pl.store(pl.mul(t, 2.0), [0, 0], z)


@pl.jit
def plus_one_orch(
    x: pl.Tensor[[1, W], pl.FP32],
    y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
    z: pl.Out[pl.Tensor[[1, W], pl.FP32]],
):
    plus_one(x, y, z)


@pl.jit.host
def returns_two(
    x: pl.Tensor[[NR, 1, W], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]],
    z: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]],
) -> tuple[pl.Tensor[[NR, 1, W], pl.FP32], pl.Tensor[[NR, 1, W], pl.FP32]]:
    for r in pl.range(pld.world_size()):
        plus_one_orch(x[r], y[r], z[r], device=r)
    return y, z


@pl.program
class ReturnsOne:
    @pl.function(type=pl.FunctionType.InCore)
    def step(
        self, x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]]
    ) -> pl.Tensor[[1, W], pl.FP32]:
        return pl.store(pl.add(pl.load(x, [0, 0], [1, W]), 1.0), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self, x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]]
    ) -> pl.Tensor[[1, W], pl.FP32]:
        return self.step(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self, x: pl.Tensor[[NR, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]]
    ) -> pl.Tensor[[NR, 1, W], pl.FP32]:
        for r in pl.range(pld.world_size()):
            self.orch(x[r], y[r], device=r)
        return y


def devices(P):
    return DistributedConfig(device_ids=list(range(P)))


@pytest.mark.parametrize("P", [2, 3, 5, 8])
def test_a_program_returns_its_output(P):
    x = torch.arange(P * 16, dtype=torch.float32).reshape(P, 1, 16)
    compiled = ir.compile(ReturnsOne, platform="a2a3sim", distributed_config=devices(P))
    y = compiled(x)  # compiles on this first call, for these shapes
    assert isinstance(y, torch.Tensor) and torch.equal(y, x + 1)
    y = compiled(x)  # and again, a fresh output
    assert torch.equal(y, x + 1)
    given = torch.zeros_like(x)  # the in-place call still works, and returns its stats
    stats = compiled(x, given)
    assert torch.equal(given, x + 1) and not isinstance(stats, torch.Tensor)


@pytest.mark.parametrize("P", [2, 3])
def test_several_outputs_come_back_as_a_tuple(P):
    x = torch.arange(P * 8, dtype=torch.float32).reshape(P, 1, 8)
    config = RunConfig(distributed_config=devices(P))
    y, z = returns_two(x, config=config)  # run directly
    assert torch.equal(y, x + 1) and torch.equal(z, x * 2)
    compiled = returns_two.compile(x, torch.zeros_like(x), torch.zeros_like(x), config=config)
    y, z = compiled(x)  # a compiled program, called with its inputs only
    assert torch.equal(y, x + 1) and torch.equal(z, x * 2)


def test_numpy_inputs_get_numpy_outputs():
    x = numpy.arange(2 * 8, dtype=numpy.float32).reshape(2, 1, 8)
    compiled = ir.compile(ReturnsOne, platform="a2a3sim", distributed_config=devices(2))
    y = compiled(x)
    assert isinstance(y, numpy.ndarray) and (y == x + 1).all()


@pl.jit
def widen(x: pl.Tensor[[1, 8], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]]):
    pass


@pl.jit.host
def unbound_output(
    x: pl.Tensor[[NR, 1, 8], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]]
) -> pl.Tensor[[NR, 1, W], pl.FP32]:
    for r in pl.range(pld.world_size()):
        widen(x[r], y[r], device=r)
    return y


def test_an_output_no_input_shapes_is_named():
    with pytest.raises(TypeError) as e:
        unbound_output(torch.zeros(2, 1, 8), config=RunConfig(distributed_config=devices(2)))
    assert str(e.value).startswith(
        "unbound_output() returns its output 'y', but the inputs bind no shape for it"
    ) and str(e.value).endswith(": pass 'y'"), str(e.value)


@pl.jit.host
def no_return(x: pl.Tensor[[NR, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        plus_one_orch(x[r], y[r], y[r], device=r)


def test_a_host_that_returns_nothing_takes_every_parameter():
    with pytest.raises(TypeError) as e:
        no_return(torch.zeros(2, 1, 8), config=RunConfig(distributed_config=devices(2)))
    assert str(e.value) == "no_return() is missing parameter 'y'"


def test_pyptos_build_directory_and_device_toolchain_names_are_refused_by_name():
    from anyp.ir.distributed_compiled_program import (
        CompiledProgram,
        DistributedCompiledProgram,
    )

    assert DistributedCompiledProgram is CompiledProgram
    with pytest.raises(Exception) as e:
        DistributedCompiledProgram.from_dir("build_output/prog")
    assert type(e.value).__name__ == "UnsupportedError"
    assert str(e.value).startswith(
        "not supported by anyp: DistributedCompiledProgram.from_dir ('build_output/prog'): "
    )
    with pytest.raises(Exception) as e:
        from anyp.runtime.device_runner import compile_and_assemble  # noqa: F401
    assert type(e.value).__name__ == "UnsupportedError"
    assert str(e.value).startswith(
        "not supported by anyp: anyp.runtime.device_runner.compile_and_assemble (PyPTO's "
        "device toolchain"
    )
