"""k3_gemm_reduce_scatter — GEMM + ReduceScatter with overlap: C = sum_r A_r B_r, rank d keeps row block d.

The Python twin of k3_gemm_reduce_scatter.cpp (the row-parallel linear
before a sequence-parallel layer). Every rank r holds a K-shard A_r [M, KP]
of the activations and the matching rows B_r [KP, N] of the weight. Send
each partial block the moment it is computed: rank r computes the block
rank d = r+1, r+2, ... needs, writes it straight from the tile into slot r
of rank d's `recv` window (pld.tile.remote_store: no staging copy) and Sets
rank d's signal cell r; its own block comes last, and then it adds the P-1
partials it received, waiting on each slot's cell only when it needs that
slot. --mode bulk computes the whole [M, N] partial first and runs the
builtin reduce_scatter on it.

    python examples/kernels/k3_gemm_reduce_scatter.py                       (overlap, P = 2)
    python examples/kernels/k3_gemm_reduce_scatter.py -d 0,1,2,3,4 --mode bulk --cost

No P constraint: M grows with P (MD rows per rank).
Golden: C[d] = the rows of block d of sum_r A_r B_r, in float64 (torch).
Cost (overlap): P-1 remote stores of MD*N*4 = 1 KiB out per rank, P-1
notifies, 1 round.
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

MD = 8  # rows of C each rank keeps
KP = 32  # this rank's shard of the inner dim
N = 32
NR = pl.dynamic("NR")


def named(name, decorator):
    """`decorator` applied to the function renamed `name` (the C++ twin's names)."""

    def apply(fn):
        fn.__name__ = name
        return decorator(fn)

    return apply


@pl.jit.incore
def gemm_rs_overlap(
    a: pl.Tensor[[NR * MD, KP], pl.FP32],
    b: pl.Tensor[[KP, N], pl.FP32],
    c: pl.Out[pl.Tensor[[MD, N], pl.FP32]],
    recv: pl.InOut[pld.DistributedTensor[[NR * MD, N], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    ctx = pld.get_comm_ctx(recv)
    r = pld.rank(ctx)
    P = pld.nranks(ctx)
    w = pl.load(b, [0, 0], [KP, N])
    # 1. The peers' blocks, each sent as soon as it is computed.
    for s in pl.range(1, P):
        d = (r + s) % P
        part = pl.matmul(pl.load(a, [d * MD, 0], [MD, KP]), w)
        pld.tile.remote_store(part, recv, d, [r * MD, 0])
        pld.system.notify(signal, peer=d, offsets=[r, 0], value=1, op=pld.NotifyOp.Set)
    # 2. My own block, then the partials the peers sent me (rank r - s sent
    #    its at its step s, so that is the order they are due).
    acc = pl.matmul(pl.load(a, [r * MD, 0], [MD, KP]), w)
    for s in pl.range(1, P):
        q = (r - s + P) % P  # as the C++ twin writes it (Python's % would floor anyway)
        pld.system.wait(signal, offsets=[q, 0], expected=1, cmp=pld.WaitCmp.Ge)
        acc = pl.add(acc, pl.load(recv, [q * MD, 0], [MD, N]))
    c = pl.store(acc, [0, 0], c)
    return c


@pl.jit.incore
def gemm_rs_bulk(
    a: pl.Tensor[[NR * MD, KP], pl.FP32],
    b: pl.Tensor[[KP, N], pl.FP32],
    c: pl.Out[pl.Tensor[[MD, N], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[NR, MD * N], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    ctx = pld.get_comm_ctx(data)
    r = pld.rank(ctx)
    # The whole partial product, one row of `data` per destination block.
    part = pl.matmul(pl.load(a, [0, 0], [NR * MD, KP]), pl.load(b, [0, 0], [KP, N]))
    data = pl.store(pl.reshape(part, [NR, MD * N]), [0, 0], data)
    data = pld.tensor.reduce_scatter(data, signal)
    c = pl.store(pl.reshape(pl.load(data, [r, 0], [1, MD * N]), [MD, N]), [0, 0], c)
    return c


@named("per_rank", pl.jit)
def per_rank_overlap(
    a: pl.Tensor[[NR * MD, KP], pl.FP32],
    b: pl.Tensor[[KP, N], pl.FP32],
    c: pl.Out[pl.Tensor[[MD, N], pl.FP32]],
    recv: pl.InOut[pld.DistributedTensor[[NR * MD, N], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    gemm_rs_overlap(a, b, c, recv, signal)


@named("per_rank", pl.jit)
def per_rank_bulk(
    a: pl.Tensor[[NR * MD, KP], pl.FP32],
    b: pl.Tensor[[KP, N], pl.FP32],
    c: pl.Out[pl.Tensor[[MD, N], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[NR, MD * N], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    gemm_rs_bulk(a, b, c, data, signal)


@named("gemm_rs_overlap", pl.jit.host)
def overlap_program(
    a: pl.Tensor[[NR, NR * MD, KP], pl.FP32],
    b: pl.Tensor[[NR, KP, N], pl.FP32],
    c: pl.Out[pl.Tensor[[NR, MD, N], pl.FP32]],
):
    recv = pld.alloc_window_buffer([NR * MD, N], dtype=pl.FP32)
    signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        per_rank_overlap(
            a[r],
            b[r],
            c[r],
            pld.window(recv, [NR * MD, N], dtype=pl.FP32),
            pld.window(signal, [NR, 1], dtype=pl.INT32),
            device=r,
        )


@named("gemm_rs_bulk", pl.jit.host)
def bulk_program(
    a: pl.Tensor[[NR, NR * MD, KP], pl.FP32],
    b: pl.Tensor[[NR, KP, N], pl.FP32],
    c: pl.Out[pl.Tensor[[NR, MD, N], pl.FP32]],
):
    data = pld.alloc_window_buffer([NR, MD * N], dtype=pl.FP32)
    signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        per_rank_bulk(
            a[r],
            b[r],
            c[r],
            pld.window(data, [NR, MD * N], dtype=pl.FP32),
            pld.window(signal, [NR, 1], dtype=pl.INT32),
            device=r,
        )


def golden(a, b):
    """C[d] = rows [d*MD, (d+1)*MD) of sum_r A_r B_r, in float64."""
    P = a.shape[0]
    total = (a.double() @ b.double()).sum(dim=0)  # [P*MD, N]
    return total.reshape(P, MD, N)


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    a = gen.uniform([P, P * MD, KP])
    b = gen.uniform([P, KP, N])
    c = torch.zeros((P, MD, N), dtype=torch.float32)
    program = bulk_program if args.mode == "bulk" else overlap_program
    compiled = program.compile(a, b, c, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(a, b, c)
    return cli.report([cli.check_close("c", c, golden(a, b), P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--mode", choices=["overlap", "bulk"], default="overlap")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=103)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
