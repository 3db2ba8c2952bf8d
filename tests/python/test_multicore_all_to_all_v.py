"""A host-level pld.tensor.all_to_all_v over core_num blocks, as PyPTO admits
them: core_num = L runs on B = L blocks below P and on L rounded down to a
multiple of P from P on (every destination then has B / P blocks, each
sending a part of its rows). The signal is [NR, S] with a lane per block, so
S >= B (not L); every lane is back at zero after the call, so one signal
serves call after call (each case makes two calls through one). More blocks than the platform's vector cores (48 on
a2a3sim) cannot all run at once and are refused. PyPTO's parameter sets,
then wider in P, exact values under the race checker."""

import re

import pytest
import torch

import anyp
import anyp.language as pl
import anyp.language.distributed as pld
from anyp.ir import DistributedConfig
from anyp.runtime import RunConfig

C = 16
MAX_RECV = 4


def admitted(nr, core_num):
    """The block count, restated here so the expectation does not come from
    the code under test."""
    return core_num if core_num < nr else core_num - core_num % nr


def exchange_host(nr, core_num, stride):
    total = nr * MAX_RECV

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
        signal: pld.DistributedTensor[[nr, stride], pl.INT32],
        out: pl.Out[pl.Tensor[[total, C], pl.FP32]],
        got: pl.Out[pl.Tensor[[nr, 1], pl.INT32]],
        lanes: pl.Out[pl.Tensor[[nr, stride], pl.INT32]],
    ):
        for row in pl.range(total):
            out = pl.store(pl.load(data, [row, 0], [1, C]), [row, 0], out)
        for s in pl.range(nr):
            pl.write(got, [s, 0], pl.read(recv, [s, 0]))
            for lane in pl.range(stride):
                pl.write(lanes, [s, lane], pl.read(signal, [s, lane]))

    @pl.jit
    def consume_orch(
        data: pld.DistributedTensor[[total, C], pl.FP32],
        recv: pld.DistributedTensor[[nr, 1], pl.INT32],
        signal: pld.DistributedTensor[[nr, stride], pl.INT32],
        out: pl.Out[pl.Tensor[[total, C], pl.FP32]],
        got: pl.Out[pl.Tensor[[nr, 1], pl.INT32]],
        lanes: pl.Out[pl.Tensor[[nr, stride], pl.INT32]],
    ):
        consume_step(data, recv, signal, out, got, lanes)

    # Two calls through one signal, written out (a collective that publishes
    # counts is refused in a loop).
    @pl.jit.host
    def two_calls(
        inputs: pl.Tensor[[2, nr, total, C], pl.FP32],
        counts_in: pl.Tensor[[2, nr, nr, 1], pl.INT32],
        outputs: pl.Out[pl.Tensor[[2, nr, total, C], pl.FP32]],
        got: pl.Out[pl.Tensor[[2, nr, nr, 1], pl.INT32]],
        lanes: pl.Out[pl.Tensor[[2, nr, nr, stride], pl.INT32]],
    ):
        input_buf = pld.alloc_window_buffer(total * C * pl.FP32.get_byte())
        data_buf = pld.alloc_window_buffer(total * C * pl.FP32.get_byte())
        signal_buf = pld.alloc_window_buffer(nr * stride * pl.INT32.get_byte())
        counts_buf = pld.alloc_window_buffer(nr * pl.INT32.get_byte())
        recv_buf = pld.alloc_window_buffer(nr * pl.INT32.get_byte())
        for r in pl.range(pld.world_size()):
            stage = pld.window(input_buf, [total, C], dtype=pl.FP32)
            counts = pld.window(counts_buf, [nr, 1], dtype=pl.INT32)
            stage_orch(inputs[0, r], counts_in[0, r], stage, counts, device=r)
        stage = pld.window(input_buf, [total, C], dtype=pl.FP32)
        data = pld.window(data_buf, [total, C], dtype=pl.FP32)
        signal = pld.window(signal_buf, [nr, stride], dtype=pl.INT32)
        counts = pld.window(counts_buf, [nr, 1], dtype=pl.INT32)
        recv = pld.window(recv_buf, [nr, 1], dtype=pl.INT32)
        data = pld.tensor.all_to_all_v(stage, data, signal, counts, recv, core_num=core_num)  # call
        for r in pl.range(pld.world_size()):
            consume_orch(data, recv, signal, outputs[0, r], got[0, r], lanes[0, r], device=r)
        for r in pl.range(pld.world_size()):
            stage = pld.window(input_buf, [total, C], dtype=pl.FP32)
            counts = pld.window(counts_buf, [nr, 1], dtype=pl.INT32)
            stage_orch(inputs[1, r], counts_in[1, r], stage, counts, device=r)
        stage = pld.window(input_buf, [total, C], dtype=pl.FP32)
        data = pld.window(data_buf, [total, C], dtype=pl.FP32)
        signal = pld.window(signal_buf, [nr, stride], dtype=pl.INT32)
        counts = pld.window(counts_buf, [nr, 1], dtype=pl.INT32)
        recv = pld.window(recv_buf, [nr, 1], dtype=pl.INT32)
        data = pld.tensor.all_to_all_v(stage, data, signal, counts, recv, core_num=core_num)
        for r in pl.range(pld.world_size()):
            consume_orch(data, recv, signal, outputs[1, r], got[1, r], lanes[1, r], device=r)

    return two_calls


def run(nr, core_num, stride, platform="a2a3sim"):
    rounds = 2
    """Runs two exchanges through one signal (the second meets whatever the
    first left); checks every row and count exactly and every lane at zero
    after each call; returns the lowered code."""
    total = nr * MAX_RECV
    # Round rd, rank r sends (r + d + rd) % (MAX_RECV + 2) rows to d: zero,
    # partial, full and over-capacity counts (clamped to MAX_RECV).
    counts = torch.tensor(
        [
            [[[(r + d + rd) % (MAX_RECV + 2)] for d in range(nr)] for r in range(nr)]
            for rd in range(rounds)
        ],
        dtype=torch.int32,
    )
    inputs = torch.arange(rounds * nr * total * C, dtype=torch.float32).reshape(
        rounds, nr, total, C
    )
    outputs = torch.full((rounds, nr, total, C), -1.0)
    got = torch.full((rounds, nr, nr, 1), -1, dtype=torch.int32)
    lanes = torch.full((rounds, nr, nr, stride), -1, dtype=torch.int32)
    config = RunConfig(
        platform=platform,
        distributed_config=DistributedConfig(list(range(nr))),
        check_races=True,
    )
    args = (inputs, counts, outputs, got, lanes)
    compiled = exchange_host(nr, core_num, stride).compile(*args, config=config)
    compiled(*args)
    for rd in range(rounds):
        for rank in range(nr):
            for src in range(nr):
                rows = min(int(counts[rd, src, rank, 0]), MAX_RECV)
                assert int(got[rd, rank, src, 0]) == rows
                mine = slice(src * MAX_RECV, src * MAX_RECV + rows)
                theirs = slice(rank * MAX_RECV, rank * MAX_RECV + rows)
                assert torch.equal(outputs[rd, rank, mine], inputs[rd, src, theirs])
        assert torch.equal(lanes[rd], torch.zeros((nr, nr, stride), dtype=torch.int32))
    return compiled.lowered_code()


# The line of the call in one_call, as errors name it.
CALL_LINE = next(
    n for n, line in enumerate(open(__file__).read().splitlines(), 1) if line.endswith("# call")
)


def launched_blocks(lowered):
    return sorted({int(n) for n in re.findall(r"block\.launch imm=(\d+)", lowered)})


# PyPTO's parameter sets (P, core_num, stride), then wider in P: below P,
# at P, above P and not a multiple, multiples of P.
CASES = [
    (2, 2, 2),
    (2, 5, 4),
    (2, 6, 6),
    (4, 2, 2),
    (4, 10, 8),
    (2, 2, 3),
    (3, 2, 2),
    (3, 4, 3),
    (3, 7, 6),
    (5, 3, 3),
    (5, 12, 10),
    (8, 3, 3),
    (8, 8, 8),
    (8, 17, 16),
    (16, 40, 32),
]


@pytest.mark.parametrize("nr, core_num, stride", CASES)
def test_runs_on_the_admitted_blocks(nr, core_num, stride):
    assert launched_blocks(run(nr, core_num, stride)) == [admitted(nr, core_num)]


@pytest.mark.parametrize("nr, core_num, stride", [(4, 10, 4), (2, 5, 2), (3, 7, 5), (4, 3, 2)])
def test_a_signal_narrower_than_the_blocks_is_named(nr, core_num, stride):
    blocks = admitted(nr, core_num)
    runs_on = (
        f"core_num = {core_num} blocks"
        if blocks == core_num
        else f"core_num = {core_num} runs on {blocks} blocks at P = {nr} (core_num rounded "
        "down to a multiple of P, a part of every destination's rows each)"
    )
    with pytest.raises(anyp.CompileError) as error:
        run(nr, core_num, stride)
    assert (
        f"op pld.tensor.all_to_all_v at test_multicore_all_to_all_v.py:{CALL_LINE}: the signal of a "
        f"collective over {runs_on} must be [P, S] INT32 with S >= {blocks} (a lane per block), "
        f"which is [{nr}, >= {blocks}] at P = {nr}, got [{nr}, {stride}]"
    ) in str(error.value)


def test_more_blocks_than_vector_cores_are_refused():
    with pytest.raises(anyp.CompileError) as error:
        run(2, 51, 50)
    at = f"op pld.tensor.all_to_all_v at test_multicore_all_to_all_v.py:{CALL_LINE}"
    why = (
        "(a collective's blocks run at once: block b of every rank waits for block b of its peers)"
    )
    assert (
        at + ": core_num = 51 runs on 50 blocks, which is more than a2a3sim's 48 vector cores "
        f"per device {why}; use core_num <= 48"
    ) in str(error.value)


def test_the_limit_is_the_platforms():
    # a5sim's model gives no vector-core count: 50 blocks run there.
    assert launched_blocks(run(2, 51, 50, platform="a5sim")) == [50]
