"""15_all_to_all — a personalized exchange: a distinct chunk for every peer.

Row d of rank r's x is the chunk for rank d; it lands in row r of rank d's
window (the MoE dispatch/combine pattern). hand: one region put per
destination (myself included), then a barrier whose cells each have a
single writer, so a Set notify is legal; then every row is copied out.
builtin: pld.tensor.all_to_all(x, data, signal), whose source (the plain
tensor x) and target (the window) are distinct buffers, as they must be.

    python examples/distributed/15_all_to_all.py                               (hand, P = 2)
    python examples/distributed/15_all_to_all.py -d 0,1,2,3 --mode builtin --cost
    python examples/distributed/15_all_to_all.py -d 0,1,2 --mode builtin --check-races --explore 20

Golden: y[r][s] = x[s][r] (the first two dimensions transposed), exact.
Cost (S = 256 B, N = P * S): (P-1)/P * N out as P-1 puts, and (P-1)/P * N
in, which arrives by the peers' puts (--cost counts a push as out for the
sender and in for the receiver); P-1 notify per rank (+E P-1 in builtin
mode); 1 round. The C++ twin: examples/distributed/15_all_to_all.cpp.
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
def hand_all_to_all(
    x: pl.Tensor[[NR, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    ctx = pld.get_comm_ctx(data)
    r = pld.rank(ctx)
    P = pld.nranks(ctx)
    # 1. my row d goes to row r of rank d's window (d == r included).
    for d in pl.range(P):
        pld.tensor.put(
            data,
            peer=d,
            src=x,
            dst_offsets=[r, 0],
            src_offsets=[d, 0],
            shape=[1, SIZE],
            atomic=pld.AtomicType.None_,
        )
    # 2. barrier: cell [r, 0] of each peer has one writer (me), so Set works.
    for p in pl.range(P):
        if p != r:
            pld.system.notify(signal, peer=p, offsets=[r, 0], value=1, op=pld.NotifyOp.Set)
    for s in pl.range(P):
        if s != r:
            pld.system.wait(signal, offsets=[s, 0], expected=1, cmp=pld.WaitCmp.Ge)
    # 3. read back only after the barrier: row s of my window into row s of y.
    for s in pl.range(P):
        y = pl.store(pl.load(data, [s, 0], [1, SIZE]), [s, 0], y)
    return y


@pl.jit.incore
def builtin_all_to_all(
    x: pl.Tensor[[NR, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    ctx = pld.get_comm_ctx(data)
    P = pld.nranks(ctx)
    data = pld.tensor.all_to_all(x, data, signal)
    for s in pl.range(P):
        y = pl.store(pl.load(data, [s, 0], [1, SIZE]), [s, 0], y)
    return y


@pl.jit
def per_rank_hand(
    x: pl.Tensor[[NR, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    hand_all_to_all(x, y, data, signal)


@pl.jit
def per_rank_builtin(
    x: pl.Tensor[[NR, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    builtin_all_to_all(x, y, data, signal)


@pl.jit.host
def all_to_all_hand(
    x: pl.Tensor[[NR, NR, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, NR, SIZE], pl.FP32]],
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
def all_to_all_builtin(
    x: pl.Tensor[[NR, NR, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, NR, SIZE], pl.FP32]],
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
    x = gen.uniform([P, P, SIZE])
    y = torch.zeros((P, P, SIZE), dtype=torch.float32)
    program = all_to_all_builtin if args.mode == "builtin" else all_to_all_hand
    compiled = program.compile(x, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y)
    golden = x.transpose(0, 1).contiguous()  # y[r][s] = x[s][r]
    return cli.report([cli.check_exact("y", y, golden, P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--mode", choices=["hand", "builtin"], default="hand")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=15)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
