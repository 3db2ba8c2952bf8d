"""PyPTO's RunTiming (anyp.runtime.task_interface): after every run,
`compiled.last_run_timing` and a prepared worker's `rt.last_run_timing`
hold the measured host wall time and the modeled device wall time — the
run's makespan on the cost model when the run computed the timeline, else
0 (PyPTO's L3 programs report 0); an orchestration function of a program
without a host (PyPTO's L2 call) always reports its modeled time."""

import pytest
import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp import ir
from anyp.ir import DistributedConfig
from anyp.runtime import RunConfig
from anyp.runtime.task_interface import RunTiming

NR = pl.dynamic("NR")
W = 64


@pl.program
class Shift:
    @pl.function(type=pl.FunctionType.InCore)
    def add_one(self, x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]]):
        pl.store(pl.add(pl.load(x, [0, 0], [1, W]), 1.0), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def per_rank(self, x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]]):
        self.add_one(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            self.per_rank(x[r], y[r], device=r)


def _config(P, **fields):
    return RunConfig(distributed_config=DistributedConfig(list(range(P))), **fields)


@pytest.mark.parametrize("P", [1, 3])
def test_a_run_reports_its_host_wall_and_no_device_wall_without_the_model(P):
    compiled = ir.compile(Shift, config=_config(P))
    assert compiled.last_run_timing is None
    x = torch.zeros(P, 1, W)
    y = torch.zeros(P, 1, W)
    compiled(x, y)
    timing = compiled.last_run_timing
    assert isinstance(timing, RunTiming)
    assert timing.host_wall_ns > 0 and timing.host_wall_us == timing.host_wall_ns / 1000
    assert timing.device_wall_ns == 0 and timing.device_wall_us == 0.0
    with compiled.prepare() as rt:
        rt(x, y)
    assert rt.last_run_timing.host_wall_ns > 0 and rt.last_run_timing.device_wall_ns == 0


@pytest.mark.parametrize("P", [2, 4])
def test_with_the_timeline_the_device_wall_is_the_modeled_makespan(P):
    x, y = torch.zeros(P, 1, W), torch.zeros(P, 1, W)
    compiled = ir.compile(Shift, config=_config(P, timeline=True))
    stats = compiled(x, y)
    assert stats.has_timeline and stats.makespan_ns > 0
    assert compiled.last_run_timing.device_wall_ns == round(stats.makespan_ns)


@pl.program
class TwoEntries:
    @pl.function(type=pl.FunctionType.InCore)
    def add_one(self, x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]]):
        pl.store(pl.add(pl.load(x, [0, 0], [1, W]), 1.0), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def plus(self, x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]]):
        self.add_one(x, y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def plus_again(self, x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]]):
        self.add_one(x, y)


def test_an_l2_call_reports_its_modeled_device_time():
    compiled = ir.compile(TwoEntries, platform="a2a3sim")
    plus = compiled["plus"]
    x, y = torch.zeros(1, W), torch.zeros(1, W)
    stats = plus(x, y, config=RunConfig(platform="a2a3sim"))
    assert torch.equal(y, torch.ones(1, W))
    timing = plus.last_run_timing
    assert stats.has_timeline and timing.device_wall_ns == round(stats.makespan_ns) > 0
    assert timing.host_wall_ns > 0
