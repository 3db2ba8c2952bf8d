"""12_broadcast — one-to-all: the root stages its row, everyone pulls it.

hand: the root is a runtime INT32 argument. Only the staging depends on it
(`if r == root`); every rank then joins the hand-rolled barrier (hbar) and
pulls the root's row with pld.tile.remote_load (a local read on the root).
Nothing overwrites the window afterwards, so one barrier is enough.
builtin: pld.tensor.broadcast(data, signal, root=ROOT) with ROOT a
compile-time constant in [0, P); it copies the root's window into every
rank's window.

    python examples/distributed/12_broadcast.py                               (hand, P = 2)
    python examples/distributed/12_broadcast.py -d 0,1,2,3 --mode builtin --cost
    python examples/distributed/12_broadcast.py -d 0,1,2 --mode builtin --check-races --explore 20

Golden: y[r] = x[ROOT] for every r, exact (rows differ, so a non-root input
that leaks through fails the check).
Cost (N = 4 * SIZE = 256 B): each non-root takes N in with 1 RMA, the root
serves (P-1) * N (pulled by the peers, so --cost shows the root with 0 in,
0 out); P-1 notify per rank (+E P-1 in builtin mode); 1 round.
The C++ twin: examples/distributed/12_broadcast.cpp.
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

SIZE = 64
ROOT = 0
NR = pl.dynamic("NR")  # the rank count is a runtime dimension


@pl.jit.incore
def hand_broadcast(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    root: pl.Scalar[pl.INT32],
):
    """The root arrives as a scalar, after the tensors."""
    ctx = pld.get_comm_ctx(data)
    r = pld.rank(ctx)
    P = pld.nranks(ctx)
    # 1. only the staging is conditional ...
    if r == root:
        data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
    # 2. ... every rank joins hbar(signal) ...
    for p in pl.range(P):
        if p != r:
            pld.system.notify(signal, peer=p, offsets=[r, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    for s in pl.range(P):
        if s != r:
            pld.system.wait(signal, offsets=[s, 0], expected=1, cmp=pld.WaitCmp.Ge)
    # 3. ... and pulls from the root (not from r).
    y = pl.store(pld.tile.remote_load(data, root, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit.incore
def builtin_broadcast(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    ctx = pld.get_comm_ctx(data)
    r = pld.rank(ctx)
    if r == ROOT:
        data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
    data = pld.tensor.broadcast(data, signal, root=ROOT)  # every rank calls it
    y = pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit
def per_rank_hand(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    root: pl.Scalar[pl.INT32],
):
    hand_broadcast(x, y, data, signal, root)


@pl.jit
def per_rank_builtin(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    builtin_broadcast(x, y, data, signal)


@pl.jit.host
def broadcast_hand(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    data = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        per_rank_hand(
            x[r],
            y[r],
            pld.window(data, [1, SIZE], dtype=pl.FP32),
            pld.window(signal, [NR, 1], dtype=pl.INT32),
            ROOT,
            device=r,
        )


@pl.jit.host
def broadcast_builtin(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    data = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        per_rank_builtin(
            x[r],
            y[r],
            pld.window(data, [1, SIZE], dtype=pl.FP32),
            pld.window(signal, [NR, 1], dtype=pl.INT32),
            device=r,
        )


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([P, 1, SIZE])
    y = torch.zeros((P, 1, SIZE), dtype=torch.float32)
    program = broadcast_builtin if args.mode == "builtin" else broadcast_hand
    compiled = program.compile(x, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y)
    golden = x[ROOT : ROOT + 1].expand_as(x).contiguous()  # the root's row on every rank
    return cli.report([cli.check_exact("y", y, golden, P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--mode", choices=["hand", "builtin"], default="hand")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=12)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
