"""k2_allgather_gemm — AllGather + GEMM with overlap: C_r = gather_q(A_q) @ B_r.

The Python twin of k2_allgather_gemm.cpp (the column-parallel linear after
a sequence-parallel layer). Rank q holds rows A_q [MP, K] of A and rank r
its weight shard B_r [K, NP]. Do not wait for the whole gather: each rank
first pushes its rows to every peer (a put into row block r of the peer's
`gathered` window, then a Set of the peer's signal cell r), multiplies its
OWN rows while the others are in flight, and then, for each peer q, waits
on cell q alone and multiplies chunk q as soon as it has landed. Peers
send in ring order (rank q's step s goes to q + s) and rank r waits in the
same order (step s: q = r - s). --mode bulk is the same product after the
builtin allgather.

    python examples/kernels/k2_allgather_gemm.py                         (overlap, P = 2)
    python examples/kernels/k2_allgather_gemm.py -d 0,1,2,3 --mode bulk --timeline

No P constraint: A grows with P (MP rows per rank).
Golden: C_r = A B_r in float64 (torch), every rank.
Cost (overlap): (P-1) puts of MP*K*4 = 4 KiB out per rank, P-1 notifies,
1 round.
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

MP = 16  # rows of A per rank
K = 64
NP = 32  # columns of this rank's weight shard
NR = pl.dynamic("NR")


@pl.jit.incore
def allgather_gemm_overlap(
    a: pl.Tensor[[MP, K], pl.FP32],
    b: pl.Tensor[[K, NP], pl.FP32],
    c: pl.Out[pl.Tensor[[NR * MP, NP], pl.FP32]],
    gathered: pl.InOut[pld.DistributedTensor[[NR * MP, K], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    ctx = pld.get_comm_ctx(gathered)
    r = pld.rank(ctx)
    P = pld.nranks(ctx)
    # 1. Push my rows to every peer, each followed by the Set of its cell r.
    for s in pl.range(1, P):
        peer = (r + s) % P
        pld.tensor.put(
            gathered, peer=peer, src=a, dst_offsets=[r * MP, 0], src_offsets=[0, 0], shape=[MP, K]
        )
        pld.system.notify(signal, peer=peer, offsets=[r, 0], value=1, op=pld.NotifyOp.Set)
    w = pl.load(b, [0, 0], [K, NP])
    # 2. My own rows first: no wait, while the peers' rows are in flight.
    c = pl.store(pl.matmul(pl.load(a, [0, 0], [MP, K]), w), [r * MP, 0], c)
    # 3. Each peer's chunk as soon as its own cell says it has landed.
    for s in pl.range(1, P):
        q = (r - s + P) % P  # as the C++ twin writes it (Python's % would floor anyway)
        pld.system.wait(signal, offsets=[q, 0], expected=1, cmp=pld.WaitCmp.Ge)
        c = pl.store(pl.matmul(pl.load(gathered, [q * MP, 0], [MP, K]), w), [q * MP, 0], c)
    return c


@pl.jit.incore
def allgather_gemm_bulk(
    a: pl.Tensor[[MP, K], pl.FP32],
    b: pl.Tensor[[K, NP], pl.FP32],
    c: pl.Out[pl.Tensor[[NR * MP, NP], pl.FP32]],
    gathered: pl.InOut[pld.DistributedTensor[[NR * MP, K], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    # The whole gather first (the builtin: P puts and a barrier), then one GEMM.
    gathered = pld.tensor.allgather(a, gathered, signal)
    c = pl.store(
        pl.matmul(pl.load(gathered, [0, 0], [NR * MP, K]), pl.load(b, [0, 0], [K, NP])), [0, 0], c
    )
    return c


def make_host(name, kernel):
    @pl.jit
    def per_rank(
        a: pl.Tensor[[MP, K], pl.FP32],
        b: pl.Tensor[[K, NP], pl.FP32],
        c: pl.Out[pl.Tensor[[NR * MP, NP], pl.FP32]],
        gathered: pl.InOut[pld.DistributedTensor[[NR * MP, K], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        kernel(a, b, c, gathered, signal)

    def host(
        a: pl.Tensor[[NR, MP, K], pl.FP32],
        b: pl.Tensor[[NR, K, NP], pl.FP32],
        c: pl.Out[pl.Tensor[[NR, NR * MP, NP], pl.FP32]],
    ):
        gathered = pld.alloc_window_buffer([NR * MP, K], dtype=pl.FP32)
        signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            per_rank(
                a[r],
                b[r],
                c[r],
                pld.window(gathered, [NR * MP, K], dtype=pl.FP32),
                pld.window(signal, [NR, 1], dtype=pl.INT32),
                device=r,
            )

    host.__name__ = name  # the C++ twin's program names
    return pl.jit.host(host)


overlap_program = make_host("allgather_gemm_overlap", allgather_gemm_overlap)
bulk_program = make_host("allgather_gemm_bulk", allgather_gemm_bulk)


def golden(a, b):
    """C_r = A B_r in float64: row i of the gathered A is row i % MP of rank i // MP's shard."""
    P = a.shape[0]
    gathered = a.double().reshape(P * MP, K)
    return gathered @ b.double()  # [P, P*MP, NP]


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    a = gen.uniform([P, MP, K])
    b = gen.uniform([P, K, NP])
    c = torch.zeros((P, P * MP, NP), dtype=torch.float32)
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
    cli.add_anyp_arguments(parser, step=102)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
