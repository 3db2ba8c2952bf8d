"""compiled.prepare(): PyPTO's DistributedWorker on anyp's Session. Blocking
dispatches (rt(...), rt.run), bounded asynchronous ones (rt.submit and its
handle), windows that persist between dispatches or are zeroed before each,
several programs on one worker, and the refusals (an ambiguous rt(...), an
unprepared program, a closed worker, an unknown callback, an unknown
method), each at P = 2 .. 8 and checked exactly."""

import pytest
import torch

import anyp
import anyp.language as pl
import anyp.language.distributed as pld
from anyp.ir.distributed_compiled_program import DistributedConfig
from anyp.runtime import DistributedWorker, RunConfig

RANKS = [2, 3, 5, 8]
NR = pl.dynamic("NR")
SIZE = 16


@pl.jit.incore
def accumulate(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    acc: pld.DistributedTensor[[1, SIZE], pl.FP32],
):
    """acc += x (a window of this rank's, kept or zeroed between
    dispatches); y = acc."""
    total = pl.add(pl.load(acc, [0, 0], [1, SIZE]), pl.load(x, [0, 0], [1, SIZE]))
    acc = pl.store(total, [0, 0], acc)
    y = pl.store(total, [0, 0], y)
    return y


@pl.jit
def accumulate_orch(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    acc: pld.DistributedTensor[[1, SIZE], pl.FP32],
):
    accumulate(x, y, acc)


@pl.jit.host
def accumulating(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]
):
    acc_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        accumulate_orch(x[r], y[r], pld.window(acc_buf, [1, SIZE], dtype=pl.FP32), device=r)


@pl.jit.incore
def doubling(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    acc: pld.DistributedTensor[[1, SIZE], pl.FP32],
):
    y = pl.store(pl.mul(pl.load(x, [0, 0], [1, SIZE]), 2.0), [0, 0], y)
    return y


@pl.jit
def doubling_orch(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    acc: pld.DistributedTensor[[1, SIZE], pl.FP32],
):
    doubling(x, y, acc)


@pl.jit.host
def doubler(x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
    buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        doubling_orch(x[r], y[r], pld.window(buf, [1, SIZE], dtype=pl.FP32), device=r)


def inputs(P):
    x = torch.arange(P * SIZE, dtype=torch.float32).reshape(P, 1, SIZE)
    return x, torch.zeros_like(x)


def compiled_for(host, P):
    x, y = inputs(P)
    config = RunConfig(distributed_config=DistributedConfig(list(range(P))), check_races=True)
    return host.compile(x, y, config=config)


@pytest.mark.parametrize("P", RANKS)
def test_blocking_dispatches_start_from_zeroed_windows_by_default(P):
    compiled = compiled_for(accumulating, P)
    x, y = inputs(P)
    with compiled.prepare() as rt:
        for _ in range(3):
            rt(x, y)
            assert torch.equal(y, x)
        rt.run(compiled, x, y)
        assert torch.equal(y, x)


@pytest.mark.parametrize("P", RANKS)
def test_persistent_windows_keep_what_the_last_dispatch_left(P):
    compiled = compiled_for(accumulating, P)
    x, y = inputs(P)
    with compiled.prepare(persistent=True, reset_persistent_windows=False) as rt:
        for k in range(1, 4):
            rt(x, y)
            assert torch.equal(y, k * x)
        rt.reset_persistent_windows()
        rt(x, y)
        assert torch.equal(y, x)
    with compiled.prepare(persistent=True) as rt:  # zeroed before every dispatch
        rt(x, y)
        rt(x, y)
        assert torch.equal(y, x)


@pytest.mark.parametrize("P", RANKS)
def test_submitted_dispatches_run_in_order_and_their_handles_give_the_stats(P):
    compiled = compiled_for(accumulating, P)
    x, _ = inputs(P)
    outs = [torch.zeros_like(x) for _ in range(5)]
    with compiled.prepare(persistent=True, reset_persistent_windows=False) as rt:
        handles = [rt.submit(compiled, x, out) for out in outs]
        stats = [h.result(timeout=60) for h in handles]
        assert all(h.done for h in handles)
        assert handles[0].wait() is not None  # PyPTO's alias, again after the end
    for k, out in enumerate(outs, 1):
        assert torch.equal(out, k * x), k
    assert [type(s).__name__ for s in stats] == ["RunStats"] * 5


@pytest.mark.parametrize("P", RANKS)
def test_several_programs_share_a_worker_and_dispatch_by_name(P):
    first, second = compiled_for(accumulating, P), compiled_for(doubler, P)
    x, y = inputs(P)
    with first.prepare(extra_compiled=[second]) as rt:
        rt.run(first, x, y)
        assert torch.equal(y, x)
        rt.run(second, x, y)
        assert torch.equal(y, 2 * x)
        with pytest.raises(TypeError) as e:
            rt(x, y)
        assert str(e.value) == (
            "rt(...) is ambiguous on a worker of several programs: dispatch with "
            "rt.run(compiled, ...)"
        )
    with first.prepare() as rt:
        with pytest.raises(ValueError) as e:
            rt.run(second, x, y)
        assert str(e.value) == (
            "this program was not prepared on this worker: pass it in "
            "prepare(extra_compiled=[...])"
        )


def test_a_worker_is_also_made_directly_and_refuses_dispatches_once_closed():
    compiled = compiled_for(doubler, 2)
    x, y = inputs(2)
    rt = DistributedWorker(compiled)
    rt(x, y)
    assert torch.equal(y, 2 * x)
    rt.close()
    with pytest.raises(anyp.ConfigError) as e:
        rt(x, y)
    assert str(e.value) == "config error: the prepared worker of 'doubler' is closed"


def test_what_anyp_has_not_is_refused_by_name():
    compiled = compiled_for(doubler, 2)
    with pytest.raises(ValueError) as e:
        compiled.prepare(callbacks={"verify": print})
    assert str(e.value) == (
        "prepare(): callbacks names 'verify', which is not a host worker of the program (its "
        "host workers: none)"
    )
    with pytest.raises(TypeError) as e:
        compiled.prepare(turbo=True)
    assert str(e.value) == "prepare() got an unexpected keyword argument 'turbo'"
    with pytest.raises(ValueError) as e:
        compiled.prepare(startup_timeout_s=0)
    assert str(e.value) == (
        "prepare(): startup_timeout_s must be a positive finite number of seconds, got 0"
    )
    with compiled.prepare(RunConfig(), startup_timeout_s=30) as rt:
        with pytest.raises(AttributeError) as e:
            rt.turbo()
        assert str(e.value) == "'DistributedWorker' object has no attribute 'turbo'"


@pl.jit.incore
def waits_forever(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    acc: pld.DistributedTensor[[1, SIZE], pl.FP32],
    flag: pld.DistributedTensor[[1, 1], pl.INT32],
):
    pld.system.wait(flag, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)  # nobody notifies


@pl.jit
def waits_forever_orch(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    acc: pld.DistributedTensor[[1, SIZE], pl.FP32],
    flag: pld.DistributedTensor[[1, 1], pl.INT32],
):
    waits_forever(x, y, acc, flag)


@pl.jit.host
def deadlocking(x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
    buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    flag_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        waits_forever_orch(
            x[r],
            y[r],
            pld.window(buf, [1, SIZE], dtype=pl.FP32),
            pld.window(flag_buf, [1, 1], dtype=pl.INT32),
            device=r,
        )


def test_a_submitted_dispatch_that_fails_raises_from_its_handle():
    compiled = compiled_for(deadlocking, 2)
    x, y = inputs(2)
    with compiled.prepare() as rt:
        handle = rt.submit(compiled, x, y)
        with pytest.raises(anyp.DeadlockError) as e:
            handle.result()
    assert str(e.value).startswith("deadlock: ")


@pl.jit.incore
def read_right_unordered(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    acc: pld.DistributedTensor[[1, SIZE], pl.FP32],
):
    """Writes its window, then reads the right neighbour's with no
    handshake: a race the race checker reports, a run without it does not."""
    ctx = pld.get_comm_ctx(acc)
    right = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], acc)
    y = pl.store(pld.tile.remote_load(acc, peer=right, offsets=[0, 0], shape=[1, SIZE]), [0, 0], y)
    return y


@pl.jit
def read_right_orch(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    acc: pld.DistributedTensor[[1, SIZE], pl.FP32],
):
    read_right_unordered(x, y, acc)


@pl.jit.host
def racy(x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
    buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        read_right_orch(x[r], y[r], pld.window(buf, [1, SIZE], dtype=pl.FP32), device=r)


def test_a_call_runs_with_the_config_it_is_given():
    # Compiled without the race checker; a call that asks for it gets it
    # (the config is not accepted and then ignored).
    P = 3
    x, y = inputs(P)
    compiled = racy.compile(
        x, y, config=RunConfig(distributed_config=DistributedConfig(list(range(P))))
    )
    compiled(x, y)  # unchecked: no report
    with pytest.raises(anyp.RaceError) as e:
        compiled(x, y, config=RunConfig(check_races=True))
    assert "read by rank" in str(e.value) and "function 'read_right_unordered'" in str(e.value)
    with pytest.raises(anyp.ConfigError) as e:
        compiled(x, y, config=RunConfig(platform="a5sim"))
    assert str(e.value).startswith(
        "config error: the program was compiled for platform 'a2a3sim', not 'a5sim'"
    )


def test_a_prepared_worker_takes_each_dispatchs_config_or_names_what_differs():
    P = 2
    compiled = compiled_for(accumulating, P)  # check_races=True
    x, y = inputs(P)
    same = RunConfig(distributed_config=DistributedConfig(list(range(P))), check_races=True)
    with compiled.prepare(config=same) as rt:
        rt(x, y, config=same)
        assert torch.equal(y, x)
        with pytest.raises(anyp.ConfigError) as e:
            rt(x, y, config=RunConfig())
        assert str(e.value).startswith(
            "config error: a prepared worker runs its program as compiled; this dispatch's "
            "RunConfig differs in check_races (check_races=False): compile the program with "
            "that RunConfig, then prepare it"
        ), str(e.value)
        with pytest.raises(TypeError):
            rt(x, y, config="a2a3sim")
