"""`//` and `%` on traced integers mean what PyPTO's generated code computes
at each level: a kernel (PTO code: divsi, remsi) and an orchestration
function (C++) truncate, a host function (Python) floors. So the seed's
pitfall, `(my_rank - 1) % nranks` in a kernel, is -1 at rank 0 and fails the
run with the C++ front-end's message and hint, as it fails on PyPTO; the fix
`(my_rank + nranks - 1) % nranks` passes at every P; and the host's
`(r - 1) % NR` is P - 1 at r = 0."""

import pytest
import torch

import anyp
import anyp.language as pl
import anyp.language.distributed as pld
from anyp.ir.distributed_compiled_program import DistributedConfig
from anyp.runtime import RunConfig
from ring_harness import ring_host

RANKS = [2, 3, 4, 5, 8]
NR = pl.dynamic("NR")
SIZE = 16


def ring(kernel):
    """Rank r runs `kernel` on x[r] -> y[r] with src, dst and a signal."""
    return ring_host(kernel, SIZE)


@pl.jit.incore
def push_right_negative(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pld.DistributedTensor[[1, SIZE], pl.FP32],
    dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
    signal: pld.DistributedTensor[[1, 1], pl.INT32],
):
    """The seed's pitfall: tell the left neighbour, computed with a negative dividend."""
    ctx = pld.get_comm_ctx(src)
    my_rank = pld.rank(ctx)
    nranks = pld.nranks(ctx)
    left = (my_rank - 1) % nranks  # the seed's pitfall: -1 at rank 0
    right = (my_rank + 1) % nranks
    src = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)
    pld.system.notify(signal, left, [0, 0], 1, pld.NotifyOp.AtomicAdd)  # planted: notify
    pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    pld.tensor.get(dst, peer=right, src=src)
    y = pl.store(pl.load(dst, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit.incore
def push_right_fixed(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pld.DistributedTensor[[1, SIZE], pl.FP32],
    dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
    signal: pld.DistributedTensor[[1, 1], pl.INT32],
):
    ctx = pld.get_comm_ctx(src)
    my_rank = pld.rank(ctx)
    nranks = pld.nranks(ctx)
    left = (my_rank + nranks - 1) % nranks
    right = (my_rank + 1) % nranks
    src = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)
    pld.system.notify(signal, peer=left, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    pld.tensor.get(dst, peer=right, src=src)
    y = pl.store(pl.load(dst, [0, 0], [1, SIZE]), [0, 0], y)
    return y


def run(host, P):
    x = torch.arange(P * SIZE, dtype=torch.float32).reshape(P, 1, SIZE)
    y = torch.zeros_like(x)
    config = RunConfig(distributed_config=DistributedConfig(list(range(P))), check_races=True)
    host.compile(x, y, config=config)(x, y)
    return x, y


def line_of(marker):
    with open(__file__) as source:
        return next(n for n, text in enumerate(source, 1) if text.rstrip().endswith(marker))


@pytest.mark.parametrize("P", RANKS)
def test_the_seeds_negative_dividend_fails_at_rank_0_with_the_hint(P):
    with pytest.raises(anyp.RunError) as e:
        run(ring(push_right_negative), P)
    lines = str(e.value).splitlines()
    notify_line = line_of("# planted: notify")
    assert lines[0] == (
        "run error: rank 0 (device 0), function 'push_right_negative', op pld.system.notify at "
        f"test_arithmetic_levels.py:{notify_line}: peer -1 is out of range [0, {P})"
    )
    assert lines[1] == (
        "  hint: a negative peer usually comes from (r - 1) % P, which C++ truncates to -1 at "
        "r = 0; write (r + P - 1) % P"
    )


@pytest.mark.parametrize("P", RANKS)
def test_the_fix_passes_at_every_P(P):
    x, y = run(ring(push_right_fixed), P)
    assert torch.equal(y, torch.roll(x, shifts=-1, dims=0))


def test_kernel_and_orchestration_truncate_and_the_host_floors():
    assert " mod " in push_right_negative.ir_text()
    assert "floormod" not in push_right_negative.ir_text()

    @pl.jit.incore
    def takes(s: pld.DistributedTensor[[1, 1], pl.INT32], v: pl.Scalar[pl.INT32]):
        pl.write(s, [0, 0], v)

    @pl.jit
    def orch_level(s: pld.DistributedTensor[[1, 1], pl.INT32], k: pl.Scalar[pl.INT32]):
        takes(s, (k - 3) // 2)

    text = orch_level.ir_text()
    assert " div " in text and "floordiv" not in text


@pl.jit.incore
def copy_kernel(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    s: pld.DistributedTensor[[1, 1], pl.INT32],
):
    y = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit
def copy_orch(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    s: pld.DistributedTensor[[1, 1], pl.INT32],
):
    copy_kernel(x, y, s)


@pl.jit.host
def from_the_left(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]
):
    buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        # A host function floors, as PyPTO's generated Python: r = 0 reads x[P - 1].
        copy_orch(
            x[(r - 1) % pld.world_size()], y[r], pld.window(buf, [1, 1], dtype=pl.INT32), device=r
        )


@pytest.mark.parametrize("P", RANKS)
def test_a_host_function_floors(P):
    x, y = run(from_the_left, P)
    assert torch.equal(y, torch.roll(x, shifts=1, dims=0))
