"""04_barrier — a barrier from signals alone, and the builtin that replaces it.

hand: every rank notifies each peer p != r on cell [r, 0] of p's [NR, 1]
signal (AtomicAdd 1), then waits until each of its own cells [s, 0], s != r,
is >= 1. Every cell has exactly one writer, so the barrier is exact for any
P; the counts never reset, so one row serves one barrier. The kernel then
copies its signal cells into `tally`, one pl.read / pl.write at a time (a
tile load of a narrow INT32 window would break 32-byte alignment).
builtin: pld.tensor.barrier clears its signal again before it returns, so
ordering is shown through data instead: stage x into the window, barrier,
then pull the right neighbour's staged row.

    python examples/distributed/04_barrier.py                           (hand, P = 2)
    python examples/distributed/04_barrier.py -d 0,1,2,3 --mode hand
    python examples/distributed/04_barrier.py -d 0,1,2   --mode builtin
    python examples/distributed/04_barrier.py -d 0,1,2   --mode builtin --check-races --explore 20

Golden: hand tally[r][i] = (i == r ? 0 : 1); builtin y[r] = x[(r + 1) % P];
both exact. The C++ twin: examples/distributed/04_barrier.cpp.
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

SIZE = 64
NR = pl.dynamic("NR")  # the rank count is a runtime dimension


@pl.jit.incore
def hand_barrier(
    tally: pl.Out[pl.Tensor[[NR, 1], pl.INT32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    """hbar(signal), then tally[i] = signal[i] for every i."""
    ctx = pld.get_comm_ctx(signal)
    my_rank = pld.rank(ctx)
    nranks = pld.nranks(ctx)
    # 1. one credit to every peer, in the cell that only I write ...
    for p in pl.range(nranks):
        if p != my_rank:
            pld.system.notify(
                signal, peer=p, offsets=[my_rank, 0], value=1, op=pld.NotifyOp.AtomicAdd
            )
    # 2. ... then wait for every peer's credit in my own copy.
    for s in pl.range(nranks):
        if s != my_rank:
            pld.system.wait(signal, offsets=[s, 0], expected=1, cmp=pld.WaitCmp.Ge)
    # The cells, one at a time: 1 from each peer, 0 in my own (no self-notify).
    for i in pl.range(nranks):
        pl.write(tally, [i, 0], pl.read(signal, [i, 0]))
    return tally


@pl.jit.incore
def builtin_barrier(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    """Stage, barrier, pull the right neighbour's row."""
    ctx = pld.get_comm_ctx(data)
    my_rank = pld.rank(ctx)
    nranks = pld.nranks(ctx)
    right = (my_rank + 1) % nranks
    data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
    signal = pld.tensor.barrier(signal)  # self-clearing: all cells are 0 again
    y = pl.store(pld.tile.remote_load(data, right, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit
def per_rank_hand(
    tally: pl.Out[pl.Tensor[[NR, 1], pl.INT32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    hand_barrier(tally, signal)


@pl.jit
def per_rank_builtin(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    builtin_barrier(x, y, data, signal)


@pl.jit.host
def barrier_hand(tally: pl.Out[pl.Tensor[[NR, NR, 1], pl.INT32]]):
    """tally[r] is rank r's [NR, 1] row of the [NR, NR, 1] output."""
    signal_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        per_rank_hand(tally[r], signal, device=r)


@pl.jit.host
def barrier_builtin(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        per_rank_builtin(x[r], y[r], data, signal, device=r)


def run_hand(args, config):
    P = len(config.device_ids())
    tally = torch.zeros((P, P, 1), dtype=torch.int32)
    compiled = barrier_hand.compile(tally, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(tally)
    # The golden: one credit from every peer, none in the own cell.
    golden = (1 - torch.eye(P, dtype=torch.int32)).view(P, P, 1)
    return cli.report([cli.check_exact("tally", tally, golden, P)], args, stats)


def run_builtin(args, config):
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([P, 1, SIZE])
    y = torch.zeros((P, 1, SIZE), dtype=torch.float32)
    compiled = barrier_builtin.compile(x, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y)
    golden = torch.roll(x, shifts=-1, dims=0)  # y[r] = x[(r + 1) % P]
    return cli.report([cli.check_exact("y", y, golden, P)], args, stats)


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    return run_builtin(args, config) if args.mode == "builtin" else run_hand(args, config)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--mode", choices=["hand", "builtin"], default="hand")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=4)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
