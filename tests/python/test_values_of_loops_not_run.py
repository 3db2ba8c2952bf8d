"""A tile assigned only inside a loop whose trip count is known at run time
(n = 0 here) and stored after it: when the loop ran no iteration the tile has
no value, and the store is a run error naming the line, never a crash (the
VM read a tile of no shape; found by scripts/fuzz_python.py, docs/testing.md).
When the loop runs, the tile is its last iteration's, as in Python."""

import pytest
import torch

import anyp
import anyp.language as pl
import anyp.language.distributed as pld
from anyp.ir import DistributedConfig
from anyp.runtime import RunConfig

from ring_harness import ring_host

C = 16


def program(rows):
    @pl.jit.incore
    def body(
        x: pl.Tensor[[1, C], pl.FP32],
        y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
        src: pld.DistributedTensor[[1, C], pl.FP32],
        dst: pld.DistributedTensor[[1, C], pl.FP32],
        signal: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        n = pl.read(signal, [0, 0]) + rows  # known only at run time
        for i in pl.range(n):
            t = pl.add(pl.load(x, [0, 0], [1, C]), 1.0)
        y = pl.store(t, [0, 0], y)  # the store

    return body


def run(rows, P=2):
    x = torch.arange(P * C, dtype=torch.float32).reshape(P, 1, C)
    y = torch.zeros_like(x)
    config = RunConfig(distributed_config=DistributedConfig(list(range(P))))
    ring_host(program(rows), C).compile(x, y, config=config)(x, y)
    return x, y


@pytest.mark.parametrize("P", [2, 3])
def test_a_tile_of_a_loop_that_ran_is_its_last_value(P):
    x, y = run(2, P)
    assert torch.equal(y, x + 1)


def test_a_tile_of_a_loop_that_did_not_run_is_a_run_error():
    with pytest.raises(anyp.RunError) as error:
        run(0)
    line = next(
        n for n, text in enumerate(open(__file__).read().splitlines(), 1) if "# the store" in text
    )
    assert str(error.value).startswith("run error: rank ")
    assert (
        f"op pl.store at test_values_of_loops_not_run.py:{line}: the tile it stores has no value "
        "here: it is assigned only where the run did not go (a loop that ran no iteration, or a "
        "branch not taken)"
    ) in str(error.value)
