"""A dim that only a dispatched function names, bound from the argument the
host passes it (PyPTO's GATHERED = pl.dynamic("GATHERED"), NR * SIZE at run
time): the first dispatch binds it, the others must agree, and an extent
that cannot be solved is named."""

import pytest
import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.ir import DistributedConfig
from anyp.runtime import RunConfig

NR = pl.dynamic("NR")
GATHERED = pl.dynamic("GATHERED")
SIZE = 16


@pl.jit.incore
def gather_step(
    inp: pl.Tensor[[1, SIZE], pl.FP32],
    out: pl.Out[pl.Tensor[[1, GATHERED], pl.FP32]],
    scratch: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    ctx = pld.get_comm_ctx(scratch)
    me = pld.rank(ctx)
    nranks = pld.nranks(ctx)
    pl.store(pl.load(inp, [0, 0], [1, SIZE]), [0, 0], scratch)
    for peer in pl.range(nranks):
        if peer != me:
            pld.system.notify(
                signal, peer=peer, offsets=[me, 0], value=1, op=pld.NotifyOp.AtomicAdd
            )
    for src in pl.range(nranks):
        if src != me:
            pld.system.wait(signal, offsets=[src, 0], expected=1, cmp=pld.WaitCmp.Ge)
    for peer in pl.range(nranks):
        row = pld.tile.remote_load(scratch, peer=peer, offsets=[0, 0], shape=[1, SIZE])
        pl.store(row, [0, peer * SIZE], out)
    return out


@pl.jit
def gather_orch(
    inp: pl.Tensor[[1, SIZE], pl.FP32],
    out: pl.Out[pl.Tensor[[1, GATHERED], pl.FP32]],
    scratch: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    return gather_step(inp, out, scratch, signal)


@pl.jit.host
def gather(
    inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    outputs: pl.Out[pl.Tensor[[NR, 1, NR * SIZE], pl.FP32]],
):
    scratch_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        scratch = pld.window(scratch_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        gather_orch(inputs[r], outputs[r], scratch, signal, device=r)
    return outputs


def config(P):
    return RunConfig(distributed_config=DistributedConfig(list(range(P))))


@pytest.mark.parametrize("P", [2, 3, 4, 5, 8, 16])
def test_a_dim_only_the_kernel_names_is_bound_from_the_dispatch(P):
    x = torch.arange(P * SIZE, dtype=torch.float32).reshape(P, 1, SIZE)
    y = torch.zeros(P, 1, P * SIZE)
    compiled = gather.compile(x, y, config=config(P))
    compiled(x, y)
    assert torch.equal(y, x.reshape(1, 1, P * SIZE).expand(P, 1, P * SIZE))


@pl.jit.host
def mixed_widths(
    inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    wide: pl.Out[pl.Tensor[[1, NR * SIZE], pl.FP32]],
    narrow: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
):
    scratch_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        scratch = pld.window(scratch_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        if r == 0:
            gather_orch(inputs[r], wide, scratch, signal, device=r)
        else:
            gather_orch(inputs[r], narrow, scratch, signal, device=r)


def test_a_later_dispatch_must_agree_with_the_binding():
    P = 2
    x = torch.zeros(P, 1, SIZE)
    with pytest.raises(Exception) as e:
        mixed_widths.compile(x, torch.zeros(1, P * SIZE), torch.zeros(1, SIZE), config=config(P))
    assert type(e.value).__name__ == "CompileError"
    assert (
        "dispatch of 'gather_orch', argument 1 ('out'): expected Tensor[1, 32] FP32, got "
        "Tensor[1, 16] FP32" in str(e.value)
    ), str(e.value)


WIDTH = pl.dynamic("WIDTH")
DEPTH = pl.dynamic("DEPTH")


@pl.jit
def two_unknowns(out: pl.Out[pl.Tensor[[1, WIDTH * DEPTH], pl.FP32]]):
    pass


@pl.jit.host
def two_unknowns_host(outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        two_unknowns(outputs[r], device=r)


def test_an_extent_with_two_unknown_dims_is_named():
    with pytest.raises(Exception) as e:
        two_unknowns_host.compile(torch.zeros(2, 1, SIZE), config=config(2))
    assert type(e.value).__name__ == "CompileError"
    assert (
        "compile error: function 'two_unknowns' (orchestration), parameter 'out', dim 1: extent "
        "WIDTH * DEPTH is not a positive exact integer (dim WIDTH is not bound)" in str(e.value)
    ), str(e.value)
