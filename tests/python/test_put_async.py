"""pld.tensor.put_async in PyPTO's form: a session from
pld.system.async_session(), the event waited with
pld.system.wait_async_event(evt, sess) before the notify, local work in
between. The ring shuffle at P = 2 .. 8 equals the synchronous put's,
race-checked; a region form; the misuses (a source written while the
transfer is in flight, an event never waited, a wrong session) refused."""

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
SIZE = 64


def ring_program(step):
    return ring_host(step, SIZE)


@pl.jit.incore
def async_step(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pld.DistributedTensor[[1, SIZE], pl.FP32],
    dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
    signal: pld.DistributedTensor[[1, 1], pl.INT32],
):
    ctx = pld.get_comm_ctx(src)
    peer = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    src = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)
    sess = pld.system.async_session()
    evt = pld.tensor.put_async(dst, peer, src, sess)
    scratch = pl.load(x, [0, 0], [1, SIZE])  # local work while the put flies
    scratch = pl.mul(pl.add(scratch, scratch), scratch)
    pld.system.wait_async_event(evt, sess)
    pld.system.notify(signal, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    y = pl.store(pl.add(pl.load(dst, [0, 0], [1, SIZE]), pl.mul(scratch, 0.0)), [0, 0], y)
    return y


@pl.jit.incore
def sync_step(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pld.DistributedTensor[[1, SIZE], pl.FP32],
    dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
    signal: pld.DistributedTensor[[1, 1], pl.INT32],
):
    ctx = pld.get_comm_ctx(src)
    peer = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    src = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)
    pld.tensor.put(dst, peer=peer, src=src)
    pld.system.notify(signal, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    y = pl.store(pl.load(dst, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit.incore
def half_async_step(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pld.DistributedTensor[[1, SIZE], pl.FP32],
    dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
    signal: pld.DistributedTensor[[1, 1], pl.INT32],
):
    """The region form: the first half of src into the second half of dst."""
    ctx = pld.get_comm_ctx(src)
    peer = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    src = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)
    evt = pld.tensor.put_async(
        dst, peer, src, dst_offsets=[0, SIZE // 2], src_offsets=[0, 0], shape=[1, SIZE // 2]
    )
    pld.system.wait_async_event(evt)
    pld.system.notify(signal, peer=peer, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    y = pl.store(pl.load(dst, [0, 0], [1, SIZE]), [0, 0], y)
    return y


def line_of(marker):
    """The line of this file that ends with `marker`."""
    with open(__file__) as source:
        return next(n for n, text in enumerate(source, 1) if text.rstrip().endswith(marker))


def run(step, P):
    x = torch.arange(P * SIZE, dtype=torch.float32).reshape(P, 1, SIZE) + 1
    y = torch.zeros_like(x)
    config = RunConfig(distributed_config=DistributedConfig(list(range(P))), check_races=True)
    ring_program(step).compile(x, y, config=config)(x, y)
    return x, y


@pytest.mark.parametrize("P", RANKS)
def test_the_async_ring_equals_the_synchronous_one(P):
    x, y_async = run(async_step, P)
    _, y_sync = run(sync_step, P)
    assert torch.equal(y_async, torch.roll(x, shifts=1, dims=0))
    assert torch.equal(y_async, y_sync)


@pytest.mark.parametrize("P", RANKS)
def test_a_region_put_async_moves_only_its_region(P):
    x, y = run(half_async_step, P)
    want = torch.zeros_like(x)
    want[:, :, SIZE // 2 :] = torch.roll(x, shifts=1, dims=0)[:, :, : SIZE // 2]
    assert torch.equal(y, want)


def test_a_source_written_while_in_flight_and_an_unwaited_event_are_run_errors():
    @pl.jit.incore
    def overwrites(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        src: pld.DistributedTensor[[1, SIZE], pl.FP32],
        dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
        signal: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        ctx = pld.get_comm_ctx(src)
        peer = (pld.rank(ctx) + 1) % pld.nranks(ctx)
        evt = pld.tensor.put_async(dst, peer, src)
        src = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)  # in flight: refused
        pld.system.wait_async_event(evt)

    with pytest.raises(anyp.RunError) as e:
        run(overwrites, 2)
    assert str(e.value).splitlines()[0] == (
        "run error: rank 0 (device 0), function 'overwrites', op pl.store at "
        f"test_put_async.py:{line_of('# in flight: refused')}: it writes rank 0's window "
        "'src_buf', the source of the pld.tensor.put_async in function 'overwrites' (event 1) "
        "still in flight; call pld.system.wait_async_event on its event before writing the source"
    )

    @pl.jit.incore
    def never_waits(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        src: pld.DistributedTensor[[1, SIZE], pl.FP32],
        dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
        signal: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        ctx = pld.get_comm_ctx(src)
        pld.tensor.put_async(dst, (pld.rank(ctx) + 1) % pld.nranks(ctx), src)  # never waited

    with pytest.raises(anyp.RunError) as e:
        run(never_waits, 2)
    assert str(e.value).splitlines()[0] == (
        "run error: rank 0 (device 0), function 'never_waits', op pld.tensor.put_async at "
        f"test_put_async.py:{line_of('# never waited')}: the kernel ended with this put in "
        "flight (event 1); wait for it with pld.system.wait_async_event before the kernel returns"
    )


def test_a_session_or_event_of_another_kind_is_refused_at_its_line():
    @pl.jit.incore
    def wrong_session(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        src: pld.DistributedTensor[[1, SIZE], pl.FP32],
        dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
        signal: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        evt = pld.tensor.put_async(dst, 0, src, "sdma")

    with pytest.raises(anyp.CompileError) as e:
        run(wrong_session, 2)
    assert (
        str(e.value)
        .splitlines()[0]
        .endswith(
            "TypeError: pld.tensor.put_async: session must be pld.system.async_session()'s, got str"
        )
    )
