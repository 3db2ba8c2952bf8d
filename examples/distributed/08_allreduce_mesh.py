"""08_allreduce_mesh — all-reduce 1: every rank pulls every peer's row.

The four phases of an all-reduce: stage my x into my window, a hand-rolled
barrier (hbar) on an [NR, 1] signal that travels through all three levels,
accumulate my own row plus every peer's row (pld.tile.remote_load, peers
in ascending order), and store the sum into my private y. y is private, so
nobody overwrites a window that a peer may still read: no read-done barrier.
The reduction order differs per rank, so the golden is compared with a
tolerance.

    python examples/distributed/08_allreduce_mesh.py                        (P = 4)
    python examples/distributed/08_allreduce_mesh.py -d 0,1,2,3,4,5,6,7 --cost
    python examples/distributed/08_allreduce_mesh.py --check-races --explore 20

Golden: y[r] = sum_k x[k], close.
Cost (N = 4 * SIZE = 3840 B): (P-1) * N in, P-1 RMA, P-1 notify / P-1 wait
per rank, 1 round. The C++ twin: examples/distributed/08_allreduce_mesh.cpp.
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

SIZE = 960
NR = pl.dynamic("NR")  # the rank count is a runtime dimension


@pl.jit.incore
def mesh_kernel(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    ctx = pld.get_comm_ctx(data)
    r = pld.rank(ctx)
    P = pld.nranks(ctx)
    # 1. stage: my row becomes reachable by every peer.
    data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
    # 2. hbar(signal): a credit to every peer in my cell [r, 0] of its
    #    signal, then wait for every peer's credit in my own copy.
    for p in pl.range(P):
        if p != r:
            pld.system.notify(signal, peer=p, offsets=[r, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    for s in pl.range(P):
        if s != r:
            pld.system.wait(signal, offsets=[s, 0], expected=1, cmp=pld.WaitCmp.Ge)
    # 3. accumulate: my own row, then every peer's (skipping myself).
    acc = pl.load(data, [0, 0], [1, SIZE])
    for p in pl.range(P):
        if p != r:
            acc = pl.add(acc, pld.tile.remote_load(data, p, [0, 0], [1, SIZE]))
    # 4. stage out into my private y.
    y = pl.store(acc, [0, 0], y)
    return y


@pl.jit
def per_rank(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    """The per-device orchestration: forwards its arguments to the kernel."""
    mesh_kernel(x, y, data, signal)


@pl.jit.host
def allreduce_mesh(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    data = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        per_rank(
            x[r],
            y[r],
            pld.window(data, [1, SIZE], dtype=pl.FP32),
            pld.window(signal, [NR, 1], dtype=pl.INT32),
            device=r,
        )


def sum_golden(x):
    """In double, every rank holds the sum over all ranks (k in order)."""
    acc = torch.zeros_like(x[0], dtype=torch.float64)
    for k in range(x.shape[0]):
        acc = acc + x[k].double()
    return acc.float().expand_as(x).contiguous()


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([P, 1, SIZE])
    y = torch.zeros((P, 1, SIZE), dtype=torch.float32)
    compiled = allreduce_mesh.compile(x, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y)
    return cli.report([cli.check_close("y", y, sum_golden(x), P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1,2,3", help="device ids, one per rank")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=8)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
