"""10_allreduce_ring — all-reduce 3: a ring of 2(P-1) neighbour exchanges.

The window `scratch` holds P chunks of C = SIZE // NR columns. In P-1
reduce-scatter rounds every rank adds its left neighbour's partial chunk
k = (r - s - 2 + P) % P into its own; after the last one, rank r holds chunk
r complete. In P-1 all-gather rounds it copies chunk k = (r - s - 1 + P) % P
from the left. Handshakes go to `right` only: one row per round of the
[2(NR-1), NR] signal, and cell [row, r] of right's copy has a single writer
(r) that moves it once, 0 -> 1. So each rank sends O(P) notifies, not
O(P^2). C must be a whole number of 32 B units: P must divide
SIZE / 8 = 120, checked before compiling (exit 2).

    python examples/distributed/10_allreduce_ring.py                        (P = 4)
    python examples/distributed/10_allreduce_ring.py -d 0,1,2,3,4,5 --cost
    python examples/distributed/10_allreduce_ring.py --check-races --explore 20

Golden: y[r] = sum_k x[k], close.
Cost (N = 4 * SIZE = 3840 B): 2(P-1)/P * N in, as 2(P-1) RMA of N/P each;
2(P-1) notify (all to `right`) / 2(P-1) wait per rank; 2(P-1) sequential
rounds. The C++ twin: examples/distributed/10_allreduce_ring.cpp.
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

SIZE = 960
NR = pl.dynamic("NR")  # the rank count is a runtime dimension
C = SIZE // NR  # chunk width, resolved per P (must divide exactly)


@pl.jit.incore
def ring_kernel(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    scratch: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[2 * (NR - 1), NR], pl.INT32]],
):
    ctx = pld.get_comm_ctx(scratch)
    r = pld.rank(ctx)
    P = pld.nranks(ctx)
    left = (r + P - 1) % P
    right = (r + 1) % P
    # 1. stage, and tell right that my chunks are ready for round 0.
    scratch = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], scratch)
    pld.system.notify(signal, peer=right, offsets=[0, r], value=1, op=pld.NotifyOp.AtomicAdd)
    # 2. reduce-scatter, rows 0..P-2: chunk k += left's chunk k.
    for s in pl.range(P - 1):
        col = ((r - s - 2 + P) % P) * C
        pld.system.wait(signal, offsets=[s, left], expected=1, cmp=pld.WaitCmp.Ge)
        theirs = pld.tile.remote_load(scratch, left, [0, col], [1, C])
        mine = pl.load(scratch, [0, col], [1, C])
        scratch = pl.store(pl.add(mine, theirs), [0, col], scratch)
        # The last one (s = P-2) announces row P-1, the first all-gather row.
        pld.system.notify(
            signal, peer=right, offsets=[s + 1, r], value=1, op=pld.NotifyOp.AtomicAdd
        )
    # 3. all-gather, rows P-1..2P-3: chunk k = left's (complete) chunk k.
    for s in pl.range(P - 1):
        row = P - 1 + s
        col = ((r - s - 1 + P) % P) * C
        pld.system.wait(signal, offsets=[row, left], expected=1, cmp=pld.WaitCmp.Ge)
        scratch = pl.store(pld.tile.remote_load(scratch, left, [0, col], [1, C]), [0, col], scratch)
        if s < P - 2:
            pld.system.notify(
                signal, peer=right, offsets=[row + 1, r], value=1, op=pld.NotifyOp.AtomicAdd
            )
    # 4. stage out.
    y = pl.store(pl.load(scratch, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit
def per_rank(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    scratch: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[2 * (NR - 1), NR], pl.INT32]],
):
    """The per-device orchestration: forwards its arguments to the kernel."""
    ring_kernel(x, y, scratch, signal)


@pl.jit.host
def allreduce_ring(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    scratch = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    signal = pld.alloc_window_buffer([2 * (NR - 1), NR], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        per_rank(
            x[r],
            y[r],
            pld.window(scratch, [1, SIZE], dtype=pl.FP32),
            pld.window(signal, [2 * (NR - 1), NR], dtype=pl.INT32),
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
    # Checked before compiling, --compile-only included (docs/ladder-steps.md §3).
    if SIZE % (8 * P) != 0:
        raise cli.UsageError(
            f"SIZE={SIZE} cannot be split into 32-byte-aligned chunks for P={P}: "
            "need SIZE % (8*P) == 0 (P must divide 120)"
        )
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([P, 1, SIZE])
    y = torch.zeros((P, 1, SIZE), dtype=torch.float32)
    compiled = allreduce_ring.compile(x, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y)
    return cli.report([cli.check_close("y", y, sum_golden(x), P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1,2,3", help="device ids, one per rank")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=10)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
