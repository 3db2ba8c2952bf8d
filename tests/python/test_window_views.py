"""Window views as PyPTO's hosts make them: a 1-D [SIZE] view (and a [1]
signal view) passed for a [1, SIZE] (and [1, 1]) parameter is the same bytes
in the same order and takes the parameter's shape; views that differ in
more than dims of extent 1 are refused with both shapes. Two overlapping
groups of ranks, each with its own windows and group-local peers (PyPTO's
overlapping two-group swap), and a ring at P = 2 ... 8."""

import pytest
import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp import ir
from anyp.ir import DistributedConfig
from anyp.runtime import RunConfig

SIZE = 64
NR = pl.dynamic("NR")


@pl.jit.incore
def swap_step(
    inp: pl.Tensor[[1, SIZE], pl.FP32],
    out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    scratch: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    peer: pl.Scalar[pl.INT32],
):
    pl.store(pl.load(inp, [0, 0], [1, SIZE]), [0, 0], scratch)
    pld.system.notify(signal, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    recv = pld.tile.remote_load(scratch, peer=peer, offsets=[0, 0], shape=[1, SIZE])
    return pl.store(recv, [0, 0], out)


@pl.jit
def swap_orch(
    inp: pl.Tensor[[1, SIZE], pl.FP32],
    out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    scratch: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
    peer: pl.Scalar[pl.INT32],
):
    return swap_step(inp, out, scratch, signal, peer)


@pl.jit.host
def two_groups(
    inputs: pl.Tensor[[3, 1, SIZE], pl.FP32],
    outputs_a: pl.Out[pl.Tensor[[3, 1, SIZE], pl.FP32]],
    outputs_b: pl.Out[pl.Tensor[[3, 1, SIZE], pl.FP32]],
):
    scratch_a = pld.alloc_window_buffer(SIZE * 4)
    signal_a = pld.alloc_window_buffer(4)
    scratch_b = pld.alloc_window_buffer(SIZE * 4)
    signal_b = pld.alloc_window_buffer(4)
    for r in pl.range(2):  # group {0, 1}: peer 1 - r
        scratch = pld.window(scratch_a, [SIZE], dtype=pl.FP32)
        signal = pld.window(signal_a, [1], dtype=pl.INT32)
        swap_orch(inputs[r], outputs_a[r], scratch, signal, 1 - r, device=r)
    for r in pl.range(1, 3):  # group {1, 2}: group-local peer 2 - r
        scratch = pld.window(scratch_b, [SIZE], dtype=pl.FP32)
        signal = pld.window(signal_b, [1], dtype=pl.INT32)
        swap_orch(inputs[r], outputs_b[r], scratch, signal, 2 - r, device=r)


def test_one_d_views_for_two_d_parameters_in_two_overlapping_groups():
    compiled = ir.compile(
        two_groups, platform="a2a3sim", distributed_config=DistributedConfig([0, 1, 2])
    )
    x = torch.stack([torch.full((1, SIZE), 10.0 + r) for r in range(3)])
    a, b = torch.zeros(3, 1, SIZE), torch.zeros(3, 1, SIZE)
    compiled(x, a, b)
    zero = torch.zeros(1, SIZE)
    assert torch.equal(a, torch.stack([x[1], x[0], zero]))
    assert torch.equal(b, torch.stack([zero, x[2], x[1]]))


@pl.jit.incore
def ring_step(
    inp: pl.Tensor[[1, SIZE], pl.FP32],
    out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    scratch: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
):
    """Stage, tell the left neighbour, wait for the right one, read it."""
    ctx = pld.get_comm_ctx(scratch)
    me, n = pld.rank(ctx), pld.nranks(ctx)
    pl.store(pl.load(inp, [0, 0], [1, SIZE]), [0, 0], scratch)
    pld.system.notify(
        signal, peer=(me + n - 1) % n, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd
    )
    pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    recv = pld.tile.remote_load(scratch, peer=(me + 1) % n, offsets=[0, 0], shape=[1, SIZE])
    return pl.store(recv, [0, 0], out)


@pl.jit
def ring_orch(
    inp: pl.Tensor[[1, SIZE], pl.FP32],
    out: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    scratch: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
):
    return ring_step(inp, out, scratch, signal)


@pl.jit.host
def ring(
    inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]
):
    scratch_buf = pld.alloc_window_buffer(SIZE * 4)
    signal_buf = pld.alloc_window_buffer(4)
    for r in pl.range(pld.world_size()):
        scratch = pld.window(scratch_buf, [SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [1], dtype=pl.INT32)
        ring_orch(inputs[r], outputs[r], scratch, signal, device=r)


@pytest.mark.parametrize("P", [2, 3, 5, 8])
def test_a_ring_of_one_d_views(P):
    x = torch.arange(P * SIZE, dtype=torch.float32).reshape(P, 1, SIZE)
    y = torch.zeros_like(x)
    config = RunConfig(distributed_config=DistributedConfig(list(range(P))), check_races=True)
    ring.compile(x, y, config=config)(x, y)
    assert torch.equal(y, x.roll(-1, 0))


@pl.jit.host
def wrong_view(
    inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]
):
    scratch_buf = pld.alloc_window_buffer(SIZE * 4)
    signal_buf = pld.alloc_window_buffer(4)
    for r in pl.range(pld.world_size()):
        scratch = pld.window(scratch_buf, [2, SIZE // 2], dtype=pl.FP32)
        signal = pld.window(signal_buf, [1], dtype=pl.INT32)
        swap_orch(inputs[r], outputs[r], scratch, signal, 1 - r, device=r)


def test_a_view_of_another_shape_is_refused_with_both_shapes():
    x = torch.zeros(2, 1, SIZE)
    with pytest.raises(Exception) as e:
        wrong_view.compile(x, torch.zeros_like(x))
    assert type(e.value).__name__ == "CompileError"
    assert (
        "dispatch of 'swap_orch', argument 2 ('scratch'): expected DistributedTensor[1, 64] FP32, "
        "got DistributedTensor[2, 32] FP32" in str(e.value)
    ), str(e.value)
