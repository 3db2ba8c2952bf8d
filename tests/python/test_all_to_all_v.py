"""pld.tensor.all_to_all_v as PyPTO's programs mean it: the source is a flat
[NR * MAX_RECV, C] block of MAX_RECV rows per destination, send_counts[d]
counts rows (clamped to [0, MAX_RECV]: a negative count sends nothing, one
over capacity sends MAX_RECV), the receiver finds the clamped count in
recv_counts[src], and rows past it are never sent. Without counts every row
goes (an all_to_all of MAX_RECV-row blocks). In a kernel and at the host
level, at P = 2 ... 8, with PyPTO's count patterns; MAX_RECV = 1 counts
rows too (one row or none)."""

import pytest
import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.ir import DistributedConfig
from anyp.runtime import RunConfig

C = 16


def config(P):
    return RunConfig(distributed_config=DistributedConfig(list(range(P))), check_races=True)


def kernel_host(nr, mr, with_counts=True):
    total = nr * mr

    @pl.jit.incore
    def exchange(
        inp: pl.Tensor[[total, C], pl.FP32],
        counts: pl.Tensor[[nr, 1], pl.INT32],
        out: pl.Out[pl.Tensor[[total, C], pl.FP32]],
        got: pl.Out[pl.Tensor[[nr, 1], pl.INT32]],
        data: pl.InOut[pld.DistributedTensor[[total, C], pl.FP32]],
        recv: pl.InOut[pld.DistributedTensor[[nr, 1], pl.INT32]],
        signal: pl.InOut[pld.DistributedTensor[[nr, 1], pl.INT32]],
    ):
        if with_counts:
            data = pld.tensor.all_to_all_v(inp, data, signal, counts, recv)
        else:
            data = pld.tensor.all_to_all_v(inp, data, signal)
        for row in pl.range(total):
            out = pl.store(pl.load(data, [row, 0], [1, C]), [row, 0], out)
        for s in pl.range(nr):
            pl.write(got, [s, 0], pl.read(recv, [s, 0]))

    @pl.jit
    def exchange_orch(
        inp: pl.Tensor[[total, C], pl.FP32],
        counts: pl.Tensor[[nr, 1], pl.INT32],
        out: pl.Out[pl.Tensor[[total, C], pl.FP32]],
        got: pl.Out[pl.Tensor[[nr, 1], pl.INT32]],
        data: pl.InOut[pld.DistributedTensor[[total, C], pl.FP32]],
        recv: pl.InOut[pld.DistributedTensor[[nr, 1], pl.INT32]],
        signal: pl.InOut[pld.DistributedTensor[[nr, 1], pl.INT32]],
    ):
        exchange(inp, counts, out, got, data, recv, signal)

    @pl.jit.host
    def host(
        inputs: pl.Tensor[[nr, total, C], pl.FP32],
        counts: pl.Tensor[[nr, nr, 1], pl.INT32],
        outputs: pl.Out[pl.Tensor[[nr, total, C], pl.FP32]],
        got: pl.Out[pl.Tensor[[nr, nr, 1], pl.INT32]],
    ):
        data_buf = pld.alloc_window_buffer(total * C * pl.FP32.get_byte())
        recv_buf = pld.alloc_window_buffer(nr * pl.INT32.get_byte())
        signal_buf = pld.alloc_window_buffer(nr * pl.INT32.get_byte())
        for r in pl.range(pld.world_size()):
            exchange_orch(
                inputs[r],
                counts[r],
                outputs[r],
                got[r],
                pld.window(data_buf, [total, C], dtype=pl.FP32),
                pld.window(recv_buf, [nr, 1], dtype=pl.INT32),
                pld.window(signal_buf, [nr, 1], dtype=pl.INT32),
                device=r,
            )

    return host


def payload(nr, mr):
    """inputs[r, d * mr + k, j] = 1000 r + 100 d + 10 k + j % 10 + 1 (never 0)."""
    r, d, k, j = torch.meshgrid(
        torch.arange(nr), torch.arange(nr), torch.arange(mr), torch.arange(C), indexing="ij"
    )
    return (1000 * r + 100 * d + 10 * k + j % 10 + 1).to(torch.float32).reshape(nr, nr * mr, C)


def check(inputs, counts, outputs, got, nr, mr):
    for rank in range(nr):
        for src in range(nr):
            rows = max(0, min(int(counts[src, rank, 0]), mr))
            assert int(got[rank, src, 0]) == rows, (rank, src)
            block = outputs[rank, src * mr : (src + 1) * mr]
            sent = inputs[src, rank * mr : rank * mr + rows]
            assert torch.equal(block[:rows], sent), (rank, src)
            assert not block[rows:].any(), (rank, src)  # never sent: the window's zeros


def run_kernel(nr, mr, counts, with_counts=True):
    inputs = payload(nr, mr)
    outputs = torch.zeros_like(inputs)
    got = torch.zeros((nr, nr, 1), dtype=torch.int32)
    kernel_host(nr, mr, with_counts).compile(inputs, counts, outputs, got, config=config(nr))(
        inputs, counts, outputs, got
    )
    return inputs, outputs, got


def pattern(name, nr, mr):
    """PyPTO's count patterns: rows[r][d] that rank r sends to rank d."""
    return {
        "variable": lambda r, d: nr - d if nr - d <= mr else mr,
        "zero_and_full": lambda r, d: 0 if d % 2 == 0 else mr,
        "one_and_full": lambda r, d: 1 if d % 2 == 0 else mr,
        "over_capacity": lambda r, d: mr + 3,
        "negative": lambda r, d: -2 if d % 2 == 0 else mr,
    }[name]


PATTERNS = ["variable", "zero_and_full", "one_and_full", "over_capacity", "negative"]


@pytest.mark.parametrize("name", PATTERNS)
@pytest.mark.parametrize("nr", [2, 3, 4, 5, 8])
def test_row_counts_in_a_kernel(nr, name):
    mr = 4
    rows = pattern(name, nr, mr)
    counts = torch.tensor([[[rows(r, d)] for d in range(nr)] for r in range(nr)], dtype=torch.int32)
    inputs, outputs, got = run_kernel(nr, mr, counts)
    check(inputs, counts, outputs, got, nr, mr)


@pytest.mark.parametrize("nr", [2, 3, 5])
def test_one_row_per_destination_still_counts_rows(nr):
    # MAX_RECV = 1: a count is 0 or 1 row of C elements, not elements.
    counts = torch.tensor(
        [[[(r + d) % 2] for d in range(nr)] for r in range(nr)], dtype=torch.int32
    )
    inputs, outputs, got = run_kernel(nr, 1, counts)
    check(inputs, counts, outputs, got, nr, 1)


@pytest.mark.parametrize("nr", [2, 3, 4, 5, 8])
def test_without_counts_every_row_goes(nr):
    mr = 3
    counts = torch.zeros((nr, nr, 1), dtype=torch.int32)  # not passed to the collective
    inputs, outputs, _ = run_kernel(nr, mr, counts, with_counts=False)
    for rank in range(nr):
        for src in range(nr):
            assert torch.equal(
                outputs[rank, src * mr : (src + 1) * mr], inputs[src, rank * mr : (rank + 1) * mr]
            )


def host_level_host(nr, mr):
    total = nr * mr

    @pl.jit.incore
    def stage_step(
        inp: pl.Tensor[[total, C], pl.FP32],
        counts_row: pl.Tensor[[nr, 1], pl.INT32],
        stage: pl.Out[pld.DistributedTensor[[total, C], pl.FP32]],
        counts: pl.Out[pld.DistributedTensor[[nr, 1], pl.INT32]],
    ):
        for row in pl.range(total):
            stage = pl.store(pl.load(inp, [row, 0], [1, C]), [row, 0], stage)
        for d in pl.range(nr):
            pl.write(counts, [d, 0], pl.read(counts_row, [d, 0]))

    @pl.jit
    def stage_orch(
        inp: pl.Tensor[[total, C], pl.FP32],
        counts_row: pl.Tensor[[nr, 1], pl.INT32],
        stage: pl.Out[pld.DistributedTensor[[total, C], pl.FP32]],
        counts: pl.Out[pld.DistributedTensor[[nr, 1], pl.INT32]],
    ):
        stage_step(inp, counts_row, stage, counts)

    @pl.jit.incore
    def consume_step(
        data: pld.DistributedTensor[[total, C], pl.FP32],
        recv: pld.DistributedTensor[[nr, 1], pl.INT32],
        out: pl.Out[pl.Tensor[[total, C], pl.FP32]],
        got: pl.Out[pl.Tensor[[nr, 1], pl.INT32]],
    ):
        for row in pl.range(total):
            out = pl.store(pl.load(data, [row, 0], [1, C]), [row, 0], out)
        for s in pl.range(nr):
            pl.write(got, [s, 0], pl.read(recv, [s, 0]))

    @pl.jit
    def consume_orch(
        data: pld.DistributedTensor[[total, C], pl.FP32],
        recv: pld.DistributedTensor[[nr, 1], pl.INT32],
        out: pl.Out[pl.Tensor[[total, C], pl.FP32]],
        got: pl.Out[pl.Tensor[[nr, 1], pl.INT32]],
    ):
        consume_step(data, recv, out, got)

    @pl.jit.host
    def host(
        inputs: pl.Tensor[[nr, total, C], pl.FP32],
        counts_in: pl.Tensor[[nr, nr, 1], pl.INT32],
        outputs: pl.Out[pl.Tensor[[nr, total, C], pl.FP32]],
        got: pl.Out[pl.Tensor[[nr, nr, 1], pl.INT32]],
    ):
        input_buf = pld.alloc_window_buffer(total * C * pl.FP32.get_byte())
        data_buf = pld.alloc_window_buffer(total * C * pl.FP32.get_byte())
        signal_buf = pld.alloc_window_buffer(nr * pl.INT32.get_byte())
        counts_buf = pld.alloc_window_buffer(nr * pl.INT32.get_byte())
        recv_buf = pld.alloc_window_buffer(nr * pl.INT32.get_byte())
        for r in pl.range(pld.world_size()):
            stage = pld.window(input_buf, [total, C], dtype=pl.FP32)
            counts = pld.window(counts_buf, [nr, 1], dtype=pl.INT32)
            stage_orch(inputs[r], counts_in[r], stage, counts, device=r)
        stage = pld.window(input_buf, [total, C], dtype=pl.FP32)
        data = pld.window(data_buf, [total, C], dtype=pl.FP32)
        signal = pld.window(signal_buf, [nr, 1], dtype=pl.INT32)
        counts = pld.window(counts_buf, [nr, 1], dtype=pl.INT32)
        recv = pld.window(recv_buf, [nr, 1], dtype=pl.INT32)
        data = pld.tensor.all_to_all_v(stage, data, signal, counts, recv)
        for r in pl.range(pld.world_size()):
            consume_orch(data, recv, outputs[r], got[r], device=r)

    return host


@pytest.mark.parametrize("name", ["variable", "over_capacity", "negative"])
@pytest.mark.parametrize("nr", [2, 3, 4])
def test_row_counts_at_the_host_level(nr, name):
    mr = 4
    rows = pattern(name, nr, mr)
    counts = torch.tensor([[[rows(r, d)] for d in range(nr)] for r in range(nr)], dtype=torch.int32)
    inputs = payload(nr, mr)
    outputs = torch.zeros_like(inputs)
    got = torch.zeros((nr, nr, 1), dtype=torch.int32)
    host_level_host(nr, mr).compile(inputs, counts, outputs, got, config=config(nr))(
        inputs, counts, outputs, got
    )
    check(inputs, counts, outputs, got, nr, mr)


def test_the_counts_come_together():
    @pl.jit.incore
    def one_count(
        inp: pl.Tensor[[4, C], pl.FP32],
        counts: pl.Tensor[[2, 1], pl.INT32],
        data: pl.InOut[pld.DistributedTensor[[4, C], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    ):
        pld.tensor.all_to_all_v(inp, data, signal, send_counts=counts)

    with pytest.raises(Exception) as e:
        one_count.ir_text()
    assert type(e.value).__name__ == "CompileError"
    assert (
        "TypeError: pld.tensor.all_to_all_v takes send_counts and recv_counts together (or "
        "neither: every row of every block goes)" in str(e.value)
    ), str(e.value)


@pl.jit.incore
def three_rows(
    inp: pl.Tensor[[3, C], pl.FP32],
    counts: pl.Tensor[[2, 1], pl.INT32],
    data: pl.InOut[pld.DistributedTensor[[3, C], pl.FP32]],
    recv: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
):
    pld.tensor.all_to_all_v(inp, data, signal, counts, recv)


@pl.jit
def three_rows_orch(
    inp: pl.Tensor[[3, C], pl.FP32],
    counts: pl.Tensor[[2, 1], pl.INT32],
    data: pl.InOut[pld.DistributedTensor[[3, C], pl.FP32]],
    recv: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    signal: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
):
    three_rows(inp, counts, data, recv, signal)


@pl.jit.host
def three_rows_host(inputs: pl.Tensor[[2, 3, C], pl.FP32], counts: pl.Tensor[[2, 2, 1], pl.INT32]):
    data_buf = pld.alloc_window_buffer([3, C], dtype=pl.FP32)
    recv_buf = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    signal_buf = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        three_rows_orch(
            inputs[r],
            counts[r],
            pld.window(data_buf, [3, C], dtype=pl.FP32),
            pld.window(recv_buf, [2, 1], dtype=pl.INT32),
            pld.window(signal_buf, [2, 1], dtype=pl.INT32),
            device=r,
        )


def test_a_source_of_no_whole_blocks_is_named():
    with pytest.raises(Exception) as e:
        three_rows_host.compile(
            torch.zeros(2, 3, C), torch.zeros((2, 2, 1), dtype=torch.int32), config=config(2)
        )
    assert type(e.value).__name__ == "CompileError"
    assert "op pld.tensor.all_to_all_v at test_all_to_all_v.py:" in str(
        e.value
    ) and ": the source must have a multiple of P = 2 rows in dim 0 (a block of rows per " "rank), got [3, 16]" in str(
        e.value
    ), str(
        e.value
    )
