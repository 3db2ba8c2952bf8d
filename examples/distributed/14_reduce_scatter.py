"""14_reduce_scatter — rank r ends with chunk r reduced over all ranks.

Every rank stages all P chunks of its x into the rows of its [NR, SIZE]
window. hand: after the hand-rolled barrier (hbar), rank r seeds the
accumulator with its own row r and folds in row r of every peer (pulled with
pld.tile.remote_load) with the chosen op. builtin:
pld.tensor.reduce_scatter(data, signal, op=...) does the same in place (it
overwrites row r, so it runs a second, read-done barrier before the store);
rank r then reads its row r. Both modes accept every ReduceOp.

    python examples/distributed/14_reduce_scatter.py                                 (hand, sum, P = 2)
    python examples/distributed/14_reduce_scatter.py -d 0,1,2,3 --mode builtin --op max --cost
    python examples/distributed/14_reduce_scatter.py -d 0,1,2 --mode builtin --check-races --explore 20

Golden: y[r][j] = OP_k x[k][0][r*SIZE + j], close.
Cost (S = 256 B, N = P * S): (P-1)/P * N in, as P-1 RMA of N/P each. hand:
P-1 notify, 1 round; builtin: 2(P-1) notify (+E P-1), 2 rounds.
The C++ twin: examples/distributed/14_reduce_scatter.cpp.
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

SIZE = 64
NR = pl.dynamic("NR")  # the rank count is a runtime dimension

OPS = {
    "sum": pld.ReduceOp.Sum,
    "max": pld.ReduceOp.Max,
    "min": pld.ReduceOp.Min,
    "prod": pld.ReduceOp.Prod,
}


def combine(op, a, b):
    """The tile op of a ReduceOp, for the hand-written loop (read while tracing)."""
    if op == pld.ReduceOp.Max:
        return pl.maximum(a, b)
    if op == pld.ReduceOp.Min:
        return pl.minimum(a, b)
    if op == pld.ReduceOp.Prod:
        return pl.mul(a, b)
    return pl.add(a, b)


def make_program(builtin, op):
    """The host program for one mode and one ReduceOp."""

    @pl.jit.incore
    def hand_reduce_scatter(
        x: pl.Tensor[[1, NR * SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(data)
        r = pld.rank(ctx)
        P = pld.nranks(ctx)
        # Chunk c of x (columns [c*SIZE, (c+1)*SIZE)) into row c of the window.
        for c in pl.range(P):
            data = pl.store(pl.load(x, [0, c * SIZE], [1, SIZE]), [c, 0], data)
        # hbar(signal): every rank has staged every chunk.
        for p in pl.range(P):
            if p != r:
                pld.system.notify(
                    signal, peer=p, offsets=[r, 0], value=1, op=pld.NotifyOp.AtomicAdd
                )
        for s in pl.range(P):
            if s != r:
                pld.system.wait(signal, offsets=[s, 0], expected=1, cmp=pld.WaitCmp.Ge)
        # Seeded with my own row r (the loop skips p == r), never with zero.
        acc = pl.load(data, [r, 0], [1, SIZE])
        for p in pl.range(P):
            if p != r:
                acc = combine(op, acc, pld.tile.remote_load(data, p, [r, 0], [1, SIZE]))
        y = pl.store(acc, [0, 0], y)
        return y

    @pl.jit.incore
    def builtin_reduce_scatter(
        x: pl.Tensor[[1, NR * SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(data)
        r = pld.rank(ctx)
        P = pld.nranks(ctx)
        for c in pl.range(P):
            data = pl.store(pl.load(x, [0, c * SIZE], [1, SIZE]), [c, 0], data)
        data = pld.tensor.reduce_scatter(data, signal, op=op)  # in place: row r is reduced
        y = pl.store(pl.load(data, [r, 0], [1, SIZE]), [0, 0], y)
        return y

    kernel = builtin_reduce_scatter if builtin else hand_reduce_scatter

    @pl.jit
    def per_rank(
        x: pl.Tensor[[1, NR * SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        kernel(x, y, data, signal)

    @pl.jit.host
    def reduce_scatter_hand(
        x: pl.Tensor[[NR, 1, NR * SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data = pld.alloc_window_buffer([NR, SIZE], dtype=pl.FP32)
        signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            per_rank(
                x[r],
                y[r],
                pld.window(data, [NR, SIZE], dtype=pl.FP32),
                pld.window(signal, [NR, 1], dtype=pl.INT32),
                device=r,
            )

    @pl.jit.host
    def reduce_scatter_builtin(
        x: pl.Tensor[[NR, 1, NR * SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data = pld.alloc_window_buffer([NR, SIZE], dtype=pl.FP32)
        signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            per_rank(
                x[r],
                y[r],
                pld.window(data, [NR, SIZE], dtype=pl.FP32),
                pld.window(signal, [NR, 1], dtype=pl.INT32),
                device=r,
            )

    return reduce_scatter_builtin if builtin else reduce_scatter_hand


def combine_golden(op, a, b):
    if op == "max":
        return torch.maximum(a, b)
    if op == "min":
        return torch.minimum(a, b)
    if op == "prod":
        return a * b
    return a + b


def reduce_golden(x, op):
    """In double: chunk r reduced over every rank's x, in rank order."""
    P = x.shape[0]
    chunks = x.double().view(P, P, SIZE)  # [k, r, j] = x[k][0][r*SIZE + j]
    acc = chunks[0]
    for k in range(1, P):
        acc = combine_golden(op, acc, chunks[k])
    return acc.float().view(P, 1, SIZE).contiguous()


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([P, 1, P * SIZE])
    y = torch.zeros((P, 1, SIZE), dtype=torch.float32)
    program = make_program(args.mode == "builtin", OPS[args.op])
    compiled = program.compile(x, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y)
    return cli.report([cli.check_close("y", y, reduce_golden(x, args.op), P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--mode", choices=["hand", "builtin"], default="hand")
    parser.add_argument("--op", choices=list(OPS), default="sum")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=14)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
