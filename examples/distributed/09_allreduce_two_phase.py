"""09_allreduce_two_phase — all-reduce 2: reduce-scatter, then all-gather.

Rank r owns chunk r, columns [r*C, (r+1)*C) with C = SIZE // NR: it pulls
chunk r from every peer and reduces it into its `result` window (phase 1),
then every rank pulls chunk c from its owner c (phase 2). That moves about
half of mesh's bytes. Each barrier round gets its own row of the [2, NR]
signal (hand-rolled barriers are monotonic: one row serves one barrier).
C is a tile shape and an RMA offset, so it must be a whole number of 32 B
units: P must divide SIZE / 8 = 120, checked before compiling (exit 2).

    python examples/distributed/09_allreduce_two_phase.py                   (P = 4)
    python examples/distributed/09_allreduce_two_phase.py -d 0,1,2,3,4,5 --cost
    python examples/distributed/09_allreduce_two_phase.py --check-races --explore 20

Golden: y[r] = sum_k x[k], close.
Cost (N = 4 * SIZE = 3840 B): 2(P-1)/P * N in, as 2(P-1) RMA of N/P each;
2(P-1) notify / 2(P-1) wait per rank; 2 rounds.
The C++ twin: examples/distributed/09_allreduce_two_phase.cpp.
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
def two_phase_kernel(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    result: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[2, NR], pl.INT32]],
):
    ctx = pld.get_comm_ctx(data)
    r = pld.rank(ctx)
    P = pld.nranks(ctx)
    mine = r * C  # my chunk's first column
    # 1. stage, 2. everyone has staged: hbar on row 0 (my cell is [0, r]).
    data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
    for p in pl.range(P):
        if p != r:
            pld.system.notify(signal, peer=p, offsets=[0, r], value=1, op=pld.NotifyOp.AtomicAdd)
    for s in pl.range(P):
        if s != r:
            pld.system.wait(signal, offsets=[0, s], expected=1, cmp=pld.WaitCmp.Ge)
    # 3. reduce-scatter: chunk r over all ranks, into my result window.
    acc = pl.load(data, [0, mine], [1, C])
    for p in pl.range(P):
        if p != r:
            acc = pl.add(acc, pld.tile.remote_load(data, p, [0, mine], [1, C]))
    result = pl.store(acc, [0, mine], result)
    # 4. every reduced chunk is ready: hbar on row 1 (a fresh row for a new barrier).
    for p in pl.range(P):
        if p != r:
            pld.system.notify(signal, peer=p, offsets=[1, r], value=1, op=pld.NotifyOp.AtomicAdd)
    for s in pl.range(P):
        if s != r:
            pld.system.wait(signal, offsets=[1, s], expected=1, cmp=pld.WaitCmp.Ge)
    # 5. all-gather: chunk c from its owner c (a local read when c == r).
    for c in pl.range(P):
        col = c * C
        y = pl.store(pld.tile.remote_load(result, c, [0, col], [1, C]), [0, col], y)
    return y


@pl.jit
def per_rank(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    result: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[2, NR], pl.INT32]],
):
    """The per-device orchestration: forwards its arguments to the kernel."""
    two_phase_kernel(x, y, data, result, signal)


@pl.jit.host
def allreduce_two_phase(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    data = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    result = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    signal = pld.alloc_window_buffer([2, NR], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        per_rank(
            x[r],
            y[r],
            pld.window(data, [1, SIZE], dtype=pl.FP32),
            pld.window(result, [1, SIZE], dtype=pl.FP32),
            pld.window(signal, [2, NR], dtype=pl.INT32),
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
    compiled = allreduce_two_phase.compile(x, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y)
    return cli.report([cli.check_close("y", y, sum_golden(x), P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1,2,3", help="device ids, one per rank")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=9)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
