"""13_allgather — every rank publishes one row; every rank assembles all rows.

hand (pull): rank r stores its x into row r of its [NR, SIZE] window, joins
the hand-rolled barrier (hbar), then pulls row p from rank p into columns
[p*SIZE, (p+1)*SIZE) of y, for every p (a local read when p == r).
builtin (push): pld.tensor.allgather(x, data, signal) puts my x into row r
of every rank's window (P puts, one of them local), then runs one barrier.
Its source must be a buffer separate from the target: the plain tensor x.

    python examples/distributed/13_allgather.py                               (hand, P = 2)
    python examples/distributed/13_allgather.py -d 0,1,2,3 --mode builtin --cost
    python examples/distributed/13_allgather.py -d 0,1,2 --mode builtin --check-races --explore 20

Golden: y[r] = concat_k x[k] for every r, exact.
Cost (S = 256 B, N = P * S): hand (P-1)/P * N in as P-1 RMA loads, P-1
notify, 1 round; builtin (P-1)/P * N out as P-1 puts (plus a local
self-put), P-1 notify (+E P-1), 1 round.
The C++ twin: examples/distributed/13_allgather.cpp.
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
def hand_allgather(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, NR * SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    ctx = pld.get_comm_ctx(data)
    r = pld.rank(ctx)
    P = pld.nranks(ctx)
    # 1. publish my row in row r of my window.
    data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [r, 0], data)
    # 2. hbar(signal): every row is published.
    for p in pl.range(P):
        if p != r:
            pld.system.notify(signal, peer=p, offsets=[r, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    for s in pl.range(P):
        if s != r:
            pld.system.wait(signal, offsets=[s, 0], expected=1, cmp=pld.WaitCmp.Ge)
    # 3. row p comes from rank p and lands at column p * SIZE.
    for p in pl.range(P):
        col = p * SIZE
        y = pl.store(pld.tile.remote_load(data, p, [p, 0], [1, SIZE]), [0, col], y)
    return y


@pl.jit.incore
def builtin_allgather(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, NR * SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    ctx = pld.get_comm_ctx(data)
    P = pld.nranks(ctx)
    data = pld.tensor.allgather(x, data, signal)  # source: the plain tensor x
    for p in pl.range(P):
        col = p * SIZE
        y = pl.store(pl.load(data, [p, 0], [1, SIZE]), [0, col], y)
    return y


@pl.jit
def per_rank_hand(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, NR * SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    hand_allgather(x, y, data, signal)


@pl.jit
def per_rank_builtin(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, NR * SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    builtin_allgather(x, y, data, signal)


@pl.jit.host
def allgather_hand(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, NR * SIZE], pl.FP32]],
):
    data = pld.alloc_window_buffer([NR, SIZE], dtype=pl.FP32)
    signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        per_rank_hand(
            x[r],
            y[r],
            pld.window(data, [NR, SIZE], dtype=pl.FP32),
            pld.window(signal, [NR, 1], dtype=pl.INT32),
            device=r,
        )


@pl.jit.host
def allgather_builtin(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, NR * SIZE], pl.FP32]],
):
    data = pld.alloc_window_buffer([NR, SIZE], dtype=pl.FP32)
    signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        per_rank_builtin(
            x[r],
            y[r],
            pld.window(data, [NR, SIZE], dtype=pl.FP32),
            pld.window(signal, [NR, 1], dtype=pl.INT32),
            device=r,
        )


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([P, 1, SIZE])
    y = torch.zeros((P, 1, P * SIZE), dtype=torch.float32)
    program = allgather_builtin if args.mode == "builtin" else allgather_hand
    compiled = program.compile(x, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y)
    golden = x.reshape(1, 1, P * SIZE).expand(P, 1, P * SIZE).contiguous()  # all rows, in order
    return cli.report([cli.check_exact("y", y, golden, P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--mode", choices=["hand", "builtin"], default="hand")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=13)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
