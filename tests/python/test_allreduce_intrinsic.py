"""The allreduce intrinsic inside a kernel, written as PyPTO's system test
writes it: a stage-in loop and a stage-out loop over chunks, each with its
own `valid = pl.min(CHUNK, size - col)` and a loop-carried tensor
(`pl.range(..., init_values=...)` / `pl.yield_`), the chunk tile wider than
a short row ([1, 8192] for a row of 17), a size-1 row staged through an
[8, 1] tile. Every length, op and dtype of PyPTO's test, at more P; exact:
the mesh reduces in rank order, so the golden is the same fold."""

import functools

import pytest
import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp import ir
from anyp.ir import DistributedConfig

STAGE_CHUNK = 8192


def program(nr, size, op=pld.ReduceOp.Sum, dtype=pl.FP32):
    item = dtype.get_byte()
    rows = 32 // item if size == 1 else 1
    if size == 1:
        cols = 1
    elif item == 2:
        cols = min(STAGE_CHUNK, -(-size // 16) * 16)
    else:
        cols = STAGE_CHUNK

    @pl.program
    class AllreduceIntrinsic:
        @pl.function(type=pl.FunctionType.InCore)
        def reduce_step(
            self,
            inp: pl.Tensor[[1, size], dtype],
            out: pl.Out[pl.Tensor[[1, size], dtype]],
            data: pl.InOut[pld.DistributedTensor[[1, size], dtype]],
            signal: pl.InOut[pld.DistributedTensor[[nr, 1], pl.INT32]],
        ) -> pl.Tensor[[1, size], dtype]:
            for col, (data_iter,) in pl.range(0, size, cols, init_values=(data,)):
                valid = pl.min(cols, size - col)
                chunk = pl.load(inp, [0, col], [rows, cols], valid_shape=[1, valid])
                data_iter = pl.store(chunk, [0, col], data_iter)
                staged = pl.yield_(data_iter)
            data = pld.tensor.allreduce(staged, signal, op=op)
            for col, (out_iter,) in pl.range(0, size, cols, init_values=(out,)):
                valid = pl.min(cols, size - col)
                chunk = pl.load(data, [0, col], [rows, cols], valid_shape=[1, valid])
                out_iter = pl.store(chunk, [0, col], out_iter)
                result = pl.yield_(out_iter)
            return result

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip_orch(
            self,
            inp: pl.Tensor[[1, size], dtype],
            out: pl.Out[pl.Tensor[[1, size], dtype]],
            data: pl.InOut[pld.DistributedTensor[[1, size], dtype]],
            signal: pl.InOut[pld.DistributedTensor[[nr, 1], pl.INT32]],
        ) -> pl.Tensor[[1, size], dtype]:
            return self.reduce_step(inp, out, data, signal)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(
            self,
            inputs: pl.Tensor[[nr, 1, size], dtype],
            outputs: pl.Out[pl.Tensor[[nr, 1, size], dtype]],
        ) -> pl.Tensor[[nr, 1, size], dtype]:
            data_buf = pld.alloc_window_buffer(size * item)
            signal_buf = pld.alloc_window_buffer(pld.world_size() * pl.INT32.get_byte())
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [1, size], dtype=dtype)
                signal = pld.window(signal_buf, [pld.world_size(), 1], dtype=pl.INT32)
                self.chip_orch(inputs[r], outputs[r], data, signal, device=r)
            return outputs

    return AllreduceIntrinsic


def inputs(nr, size, torch_dtype, small):
    if small:  # products and FP16 stay in range
        rows = [1.0 + r * 0.125 + torch.arange(size).remainder(5) * 0.0625 for r in range(nr)]
    else:
        rows = [torch.arange(r * 100.0, r * 100.0 + size) for r in range(nr)]
    return torch.stack(rows).reshape(nr, 1, size).to(torch_dtype)


FOLDS = {
    pld.ReduceOp.Sum: torch.add,
    pld.ReduceOp.Max: torch.maximum,
    pld.ReduceOp.Min: torch.minimum,
    pld.ReduceOp.Prod: torch.mul,
}


def golden(x, op):
    """Rank 0's row folded with rank 1's, 2's, ... in the tensor's dtype."""
    acc = x[0]
    for r in range(1, x.shape[0]):
        acc = FOLDS[op](acc, x[r])
    return acc.expand_as(x)


def run(nr, size, op=pld.ReduceOp.Sum, dtype=pl.FP32, torch_dtype=torch.float32):
    compiled = ir.compile(
        program(nr, size, op, dtype),
        platform="a2a3sim",
        distributed_config=DistributedConfig(device_ids=list(range(nr)), num_sub_workers=0),
    )
    x = inputs(nr, size, torch_dtype, small=op == pld.ReduceOp.Prod or dtype == pl.FP16)
    y = torch.zeros_like(x)
    compiled(x, y)
    return x, y


@pytest.mark.parametrize("size", [1, 17, 4097, 65537])
@pytest.mark.parametrize("nr", [2, 3, 4, 5, 8])
def test_every_length_at_every_p(nr, size):
    x, y = run(nr, size)
    assert torch.equal(y, golden(x, pld.ReduceOp.Sum))


@pytest.mark.parametrize("op", list(FOLDS), ids=lambda o: o.name)
@pytest.mark.parametrize(
    "dtype,torch_dtype", [(pl.FP32, torch.float32), (pl.FP16, torch.float16)], ids=["fp32", "fp16"]
)
@pytest.mark.parametrize("nr", [2, 3])
def test_every_op_and_dtype(nr, op, dtype, torch_dtype):
    x, y = run(nr, 17, op, dtype, torch_dtype)
    assert torch.equal(y, golden(x, op))


@pytest.mark.parametrize("size", [1, 17, 8193])
@pytest.mark.parametrize("nr", [1, 2, 4, 5])
def test_fp16_at_any_length(nr, size):
    x, y = run(nr, size, dtype=pl.FP16, torch_dtype=torch.float16)
    assert torch.equal(y, golden(x, pld.ReduceOp.Sum))
