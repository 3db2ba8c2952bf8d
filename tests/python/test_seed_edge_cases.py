"""The seed's table of edge cases (its step 07), row by row, in Python: each
row's mistake is caught with a message that names it, and each row's fix
passes at P = 2 .. 8.

  row 1  a constant rank count in the host signature: a compile error with
         the pl.dynamic hint at P = 3;
  row 2  a negative dividend, (my_rank - 1) % nranks: tests/python/
         test_arithmetic_levels.py (the C++ front-end's run error and hint);
  row 3  the handshake notifies the wrong rank (the one it reads, not the one
         that reads it): right at P = 2, where they are one rank, and a race
         report from P = 3 on, naming the unordered get and store.
"""

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
N_RANKS = 2  # the seed's constant of steps 01 - 06
SIZE = 16


def line_of(marker):
    with open(__file__) as source:
        return next(n for n, text in enumerate(source, 1) if text.rstrip().endswith(marker))


def config(P):
    return RunConfig(distributed_config=DistributedConfig(list(range(P))), check_races=True)


def ring(kernel, rows=NR):
    """Rank r runs `kernel` on x[r] -> y[r]; the host's rank count is `rows`."""
    return ring_host(kernel, SIZE, rows)


@pl.jit.incore
def get_from_right(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pld.DistributedTensor[[1, SIZE], pl.FP32],
    dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
    signal: pld.DistributedTensor[[1, 1], pl.INT32],
):
    """The fix of every row: tell the left rank (my reader), wait, pull from the right."""
    ctx = pld.get_comm_ctx(src)
    me, n = pld.rank(ctx), pld.nranks(ctx)
    src = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)
    pld.system.notify(signal, (me + n - 1) % n, [0, 0], 1, pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    pld.tensor.get(dst, peer=(me + 1) % n, src=src)
    y = pl.store(pl.load(dst, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit.incore
def notifies_the_rank_it_reads(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pld.DistributedTensor[[1, SIZE], pl.FP32],
    dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
    signal: pld.DistributedTensor[[1, 1], pl.INT32],
):
    ctx = pld.get_comm_ctx(src)
    me, n = pld.rank(ctx), pld.nranks(ctx)
    src = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)  # row 3: the store
    pld.system.notify(signal, (me + 1) % n, [0, 0], 1, pld.NotifyOp.AtomicAdd)  # the wrong rank
    pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    pld.tensor.get(dst, peer=(me + 1) % n, src=src)  # row 3: the get
    y = pl.store(pl.load(dst, [0, 0], [1, SIZE]), [0, 0], y)
    return y


def inputs(P):
    x = torch.arange(P * SIZE, dtype=torch.float32).reshape(P, 1, SIZE)
    return x, torch.zeros_like(x)


@pytest.mark.parametrize("P", RANKS)
def test_the_fix_of_every_row_passes(P):
    x, y = inputs(P)
    ring(get_from_right).compile(x, y, config=config(P))(x, y)
    assert torch.equal(y, torch.roll(x, shifts=-1, dims=0))


def test_row_1_a_constant_rank_count_is_a_compile_error_with_the_dynamic_hint():
    x, y = inputs(3)
    with pytest.raises(anyp.CompileError) as e:
        ring(get_from_right, rows=N_RANKS).compile(x, y, config=config(3))
    assert str(e.value).splitlines()[:2] == [
        "compile error: function 'host', parameter 'x', dim 0: declared 2, actual 3 (P = 3)",
        "  hint: a constant in the host signature pins this dim to 2; if it is the rank count, "
        'declare NR = pl.dynamic("NR") and write NR in the host signature',
    ]


def test_row_3_the_wrong_rank_passes_at_2_where_left_is_right():
    x, y = inputs(2)
    ring(notifies_the_rank_it_reads).compile(x, y, config=config(2))(x, y)
    assert torch.equal(y, torch.roll(x, shifts=-1, dims=0))


@pytest.mark.parametrize("P", [3, 4, 5, 8])
def test_row_3_the_wrong_rank_is_a_race_report_from_3_on(P):
    x, y = inputs(P)
    with pytest.raises(anyp.RaceError) as e:
        ring(notifies_the_rank_it_reads).compile(x, y, config=config(P))(x, y)
    report = str(e.value)
    assert report.startswith("race report: ")
    get_at = f"function 'notifies_the_rank_it_reads', op pld.tensor.get at "
    get_at += f"test_seed_edge_cases.py:{line_of('# row 3: the get')}"
    store_at = f"function 'notifies_the_rank_it_reads', op pl.store at "
    store_at += f"test_seed_edge_cases.py:{line_of('# row 3: the store')}"
    assert get_at in report and store_at in report
    assert "missing: no wait on rank" in report
