"""pl.create_tensor and the tensor-level ops (PyPTO's value-returning forms):
a tensor accumulated in a loop by rebinding, operators on tensors, casts,
slices read and assigned (`y[a:b, c:d] = v`, to the end of a dim with
`a:`), pl.assemble and the pl.tensor namespace, one tensor per block in a
multi-block kernel with pld.tensor.remote_store (and pld.remote_store's
short form) into the right neighbour, and tiles stored by slice
assignment. Each runs at P = 2, 3, 4, 5, 8 under the race checker and is
checked exactly against torch; the refusals are in test_errors.py."""

import sys

import mpi_support
import pytest
import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.ir.distributed_compiled_program import DistributedConfig
from anyp.runtime import RunConfig

RANKS = [2, 3, 4, 5, 8]
NR = pl.dynamic("NR")
R, C = 4, 6


def config(P, engine="threads"):
    devices = DistributedConfig(device_ids=list(range(P)))
    return RunConfig(distributed_config=devices, check_races=engine == "threads", engine=engine)


def inputs(P):
    """Quarters, so that every sum below is exact in FP32."""
    x = torch.arange(P * R * C, dtype=torch.float32).reshape(P, R, C) / 4 - 3
    return x, torch.zeros_like(x)


def per_rank(orch):
    @pl.jit.host
    def host(x: pl.Tensor[[NR, R, C], pl.FP32], y: pl.Out[pl.Tensor[[NR, R, C], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            orch(x[r], y[r], device=r)

    return host


@pl.jit.incore
def double(a: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    out = pl.assemble(out, pl.mul(a, 2.0), [0, 0])
    return out


@pl.jit
def accumulate(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    acc = pl.create_tensor([R, C], dtype=pl.FP32)
    for _ in pl.range(3):
        acc = pl.add(acc, x)  # 3x: rebinding writes the created tensor
    tmp = pl.create_tensor([R, C], pl.FP32)
    double(acc, tmp)  # 6x, by a kernel writing a created tensor
    y[0:R, 0:C] = tmp - x + 1.0  # 5x + 1
    y[0:2, 0:3] = pl.cast(pl.cast(x[0:2, 0:3], pl.INT32), pl.FP32)  # truncated
    return y


@pytest.mark.parametrize("P", RANKS)
def test_a_tensor_accumulated_by_rebinding_passed_to_a_kernel_and_sliced(P):
    x, y = inputs(P)
    per_rank(accumulate)(x, y, config=config(P))
    want = 5 * x + 1
    want[:, 0:2, 0:3] = torch.trunc(x[:, 0:2, 0:3])
    assert torch.equal(y, want)


@pl.jit
def namespace_forms(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    low = pl.tensor.maximum(pl.tensor.sub(x, 1.0), -2.0)  # max(x - 1, -2)
    high = pl.tensor.minimum(pl.tensor.div(x, 0.5), 4.0)  # min(2x, 4)
    both = pl.tensor.mul(pl.tensor.add(low, high), 0.25)
    y = pl.tensor.assemble(y, both, [0, 0])
    y[2:, :] = 2.0 - x[0:2, :]  # rows 2.. from rows 0..1: a slice to the end of each dim
    return y


@pytest.mark.parametrize("P", RANKS)
def test_the_pl_tensor_namespace_and_slices_to_the_end(P):
    x, y = inputs(P)
    per_rank(namespace_forms)(x, y, config=config(P))
    want = (torch.clamp(x - 1, min=-2) + torch.clamp(2 * x, max=4)) * 0.25
    want[:, 2:, :] = 2 - x[:, 0:2, :]
    assert torch.equal(y, want)


@pl.jit
def carried_view(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    t = x + 1.0  # made above the loop: a view of it may be carried
    prev = x[0:1, :]
    acc = pl.create_tensor([1, C], pl.FP32)
    for i in pl.range(3):
        acc = acc + prev
        prev = t[i : i + 1, :]
    y[0:1, :] = acc
    return y


@pytest.mark.parametrize("P", RANKS)
def test_a_loop_carries_a_view_of_a_tensor_made_above_it(P):
    x, y = inputs(P)
    per_rank(carried_view)(x, y, config=config(P))
    want = torch.zeros_like(x)
    want[:, 0, :] = (x[:, 0, :] + (x[:, 0, :] + 1)) + (x[:, 1, :] + 1)
    assert torch.equal(y, want)


@pl.jit.incore
def store_tiles(x: pl.Tensor[[R, 8], pl.FP32], y: pl.Out[pl.Tensor[[R, 8], pl.FP32]]):
    t = pl.load(x, [0, 0], [2, 8])
    y[1:3, 0:8] = pl.add(t, 1.0)  # a tile stored by slice assignment
    y[0:1, :] = pl.load(x, [3, 0], [1, 8])
    return y


@pl.jit
def tiles_orch(x: pl.Tensor[[R, 8], pl.FP32], y: pl.Out[pl.Tensor[[R, 8], pl.FP32]]):
    store_tiles(x, y)


@pytest.mark.parametrize("P", RANKS)
def test_a_tile_stored_by_slice_assignment(P):
    @pl.jit.host
    def host(x: pl.Tensor[[NR, R, 8], pl.FP32], y: pl.Out[pl.Tensor[[NR, R, 8], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            tiles_orch(x[r], y[r], device=r)

    x = torch.arange(P * R * 8, dtype=torch.float32).reshape(P, R, 8)
    y = torch.zeros_like(x)
    host(x, y, config=config(P))
    want = torch.zeros_like(x)
    want[:, 1:3] = x[:, 0:2] + 1
    want[:, 0:1] = x[:, 3:4]
    assert torch.equal(y, want)


B, W = 3, 5  # blocks, and the width of each block's row


@pl.jit.incore
def push(x: pl.Tensor[[B, W], pl.FP32], win: pld.DistributedTensor[[NR * B, W], pl.FP32]):
    ctx = pld.get_comm_ctx(win)
    me = pld.rank(ctx)
    b = pl.tile.get_block_idx()
    mine = pl.create_tensor([1, W], pl.FP32)  # one per block
    mine = pl.add(x[b : b + 1, 0:W], pl.cast(me * 100 + b, pl.FP32))
    right = (me + 1) % pld.nranks(ctx)
    if b == 0:
        pld.tensor.remote_store(mine, win, right, [me * B + b, 0])
    else:
        pld.remote_store(mine, win, right, [me * B + b, 0])  # the short form


@pl.jit.incore
def hand_over(sig: pld.DistributedTensor[[NR, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(sig)
    me = pld.rank(ctx)
    right = (me + 1) % pld.nranks(ctx)
    pld.system.notify(target=sig, peer=right, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(sig, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)


@pl.jit
def ring_orch(
    x: pl.Tensor[[B, W], pl.FP32],
    win: pld.DistributedTensor[[NR * B, W], pl.FP32],
    sig: pld.DistributedTensor[[NR, 1], pl.INT32],
    y: pl.Out[pl.Tensor[[NR * B, W], pl.FP32]],
):
    with pl.spmd(B):
        push(x, win)
    hand_over(sig)
    y = pl.assemble(y, win, [0, 0])
    return y


@pl.jit.host
def ring_host(x: pl.Tensor[[NR, B, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, NR * B, W], pl.FP32]]):
    win_buf = pld.alloc_window_buffer([NR * B, W], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        win = pld.window(win_buf, [NR * B, W], dtype=pl.FP32)
        sig = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
        ring_orch(x[r], win, sig, y[r], device=r)


def ring_agrees(P, engine="threads"):
    x = torch.arange(P * B * W, dtype=torch.float32).reshape(P, B, W)
    y = torch.zeros(P, P * B, W)
    ring_host(x, y, config=config(P, engine))
    want = torch.zeros_like(y)
    for r in range(P):
        left = (r - 1) % P
        for b in range(B):
            want[r, left * B + b] = x[left, b] + left * 100 + b
    return torch.equal(y, want)


@pytest.mark.parametrize("P", RANKS)
def test_one_tensor_per_block_remote_stored_to_the_right(P):
    assert ring_agrees(P)


@pytest.mark.skipif(mpi_support.MPIRUN is None, reason="no mpirun")
@pytest.mark.parametrize("P", [2, 3])
def test_created_tensors_on_the_mpi_engine(tmp_path, P):
    """The same ring, one process per rank (this file run as a script)."""
    code, out, err = mpi_support.run_script(__file__, P, tmp_path)
    assert (code, out) == (0, "OK\n"), err


if __name__ == "__main__":  # under mpirun: every process is one rank and checks its result
    mpi_support.report(ring_agrees(int(sys.argv[1]), engine="mpi"))
