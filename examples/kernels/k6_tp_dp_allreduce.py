"""k6_tp_dp_allreduce — a 2-D (tensor-parallel x data-parallel) allreduce with sub-communicator groups.

The Python twin of k6_tp_dp_allreduce.cpp. A collective over a group is
the same builtin collective on a window of a smaller domain. The P = DP x
TP ranks form a grid, rank d * TP + t at row d, column t. Domain "tp" has
one group per row (the TP ranks of replica d), domain "dp" one group per
column. A window buffer allocated in a domain is reached through the
rank's group: pld.rank and pld.nranks of its view are the rank's index in
the group and the group size, and pld.tensor.allreduce on it sums over the
group only. Summing over the row and then over the column sums over the
whole grid. (pld.comm_domain / pld.comm_group are anyp's: PyPTO infers the
groups from the dispatched ranks.)

    python examples/kernels/k6_tp_dp_allreduce.py -d 0,1,2,3,4,5 --cost              (2d: TP = 2, DP = 3)
    python examples/kernels/k6_tp_dp_allreduce.py -d 0,1,2,3,4,5 --mode flat --cost  (one world allreduce)

The grid: TP is the largest divisor of P that is at most sqrt(P) (a prime
P gives TP = 1, groups of one rank).
Golden: every rank's y is the sum over all ranks of x, in float64 (torch);
each rank's "coords" row holds its (rank, nranks) in "tp" and in "dp".
Cost (mesh, N FP32 elements, per rank): bytes_in 4N ((TP-1) + (DP-1)) in
2d, 4N (P-1) flat.
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

N = 1024  # elements per rank: one 4 KiB chunk
P = pld.world_size()
TP = pl.dynamic("TP")  # the group size of "tp" (bound from x's dims)
DP = pl.dynamic("DP")  # the group size of "dp"


def named(name, decorator):
    """`decorator` applied to the function renamed `name` (the C++ twin's names)."""

    def apply(fn):
        fn.__name__ = name
        return decorator(fn)

    return apply


@pl.jit.incore
def two_level_allreduce(
    x: pl.Tensor[[1, N], pl.FP32],
    y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
    coords: pl.Out[pl.Tensor[[1, 8], pl.INT32]],
    row: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]],
    row_signal: pl.InOut[pld.DistributedTensor[[TP, 1], pl.INT32]],
    col: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]],
    col_signal: pl.InOut[pld.DistributedTensor[[DP, 1], pl.INT32]],
):
    """Sums x over the rank's row group, then over its column group."""
    in_row = pld.get_comm_ctx(row)
    in_col = pld.get_comm_ctx(col)
    pl.write(coords, [0, 0], pld.rank(in_row))
    pl.write(coords, [0, 1], pld.nranks(in_row))
    pl.write(coords, [0, 2], pld.rank(in_col))
    pl.write(coords, [0, 3], pld.nranks(in_col))
    row = pl.store(pl.load(x, [0, 0], [1, N]), [0, 0], row)
    row = pld.tensor.allreduce(row, row_signal)  # over my TP group
    col = pl.store(pl.load(row, [0, 0], [1, N]), [0, 0], col)
    col = pld.tensor.allreduce(col, col_signal)  # over my DP group
    y = pl.store(pl.load(col, [0, 0], [1, N]), [0, 0], y)
    return y


@named("flat_allreduce", pl.jit.incore)
def flat_allreduce_kernel(
    x: pl.Tensor[[1, N], pl.FP32],
    y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[P, 1], pl.INT32]],
):
    """The baseline: one allreduce over the world."""
    data = pl.store(pl.load(x, [0, 0], [1, N]), [0, 0], data)
    data = pld.tensor.allreduce(data, signal)
    y = pl.store(pl.load(data, [0, 0], [1, N]), [0, 0], y)
    return y


@named("per_rank", pl.jit)
def two_level_per_rank(
    x: pl.Tensor[[1, N], pl.FP32],
    y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
    coords: pl.Out[pl.Tensor[[1, 8], pl.INT32]],
    row: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]],
    row_signal: pl.InOut[pld.DistributedTensor[[TP, 1], pl.INT32]],
    col: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]],
    col_signal: pl.InOut[pld.DistributedTensor[[DP, 1], pl.INT32]],
):
    two_level_allreduce(x, y, coords, row, row_signal, col, col_signal)


@named("per_rank_flat", pl.jit)
def flat_per_rank(
    x: pl.Tensor[[1, N], pl.FP32],
    y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[P, 1], pl.INT32]],
):
    flat_allreduce_kernel(x, y, data, signal)


@pl.jit.host
def tp_dp_allreduce(
    x: pl.Tensor[[DP, TP, 1, N], pl.FP32],
    y: pl.Out[pl.Tensor[[DP, TP, 1, N], pl.FP32]],
    coords: pl.Out[pl.Tensor[[DP, TP, 1, 8], pl.INT32]],
):
    # The grid's rows and columns, as two domains of disjoint groups.
    tp = pld.comm_domain("tp")
    dp = pld.comm_domain("dp")
    for d in pl.range(DP):
        pld.comm_group(tp, d * TP, TP)  # d*TP + 0..TP-1
    for t in pl.range(TP):
        pld.comm_group(dp, t, DP, TP)  # t, t+TP, ...
    row = pld.alloc_window_buffer([1, N], dtype=pl.FP32, domain=tp)
    row_signal = pld.alloc_window_buffer([TP, 1], dtype=pl.INT32, domain=tp)
    col = pld.alloc_window_buffer([1, N], dtype=pl.FP32, domain=dp)
    col_signal = pld.alloc_window_buffer([DP, 1], dtype=pl.INT32, domain=dp)
    for d in pl.range(DP):
        for t in pl.range(TP):
            two_level_per_rank(
                x[d][t],
                y[d][t],
                coords[d][t],
                pld.window(row, [1, N], dtype=pl.FP32),
                pld.window(row_signal, [TP, 1], dtype=pl.INT32),
                pld.window(col, [1, N], dtype=pl.FP32),
                pld.window(col_signal, [DP, 1], dtype=pl.INT32),
                device=d * TP + t,
            )


@pl.jit.host
def flat_allreduce(
    x: pl.Tensor[[DP, TP, 1, N], pl.FP32],
    y: pl.Out[pl.Tensor[[DP, TP, 1, N], pl.FP32]],
    coords: pl.Out[pl.Tensor[[DP, TP, 1, 8], pl.INT32]],
):
    data = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
    signal = pld.alloc_window_buffer([P, 1], dtype=pl.INT32)
    for d in pl.range(DP):
        for t in pl.range(TP):
            flat_per_rank(
                x[d][t],
                y[d][t],
                pld.window(data, [1, N], dtype=pl.FP32),
                pld.window(signal, [P, 1], dtype=pl.INT32),
                device=d * TP + t,
            )


def grid_columns(p):
    """The largest divisor of p that is at most sqrt(p)."""
    tp = 1
    k = 1
    while k * k <= p:
        if p % k == 0:
            tp = k
        k += 1
    return tp


def golden(x):
    """Every rank's y: the sum over all ranks of x, in float64."""
    total = x.double().sum(dim=(0, 1), keepdim=True)
    return total.expand_as(x)


def golden_coords(dp, tp):
    """Rank (d, t): index t of tp in the row group, index d of dp in the column group."""
    want = torch.zeros((dp, tp, 1, 8), dtype=torch.int32)
    for d in range(dp):
        for t in range(tp):
            want[d, t, 0, :4] = torch.tensor([t, tp, d, dp], dtype=torch.int32)
    return want


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    world = len(config.device_ids())
    tp = grid_columns(world)
    dp = world // tp
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([dp, tp, 1, N])
    y = torch.zeros((dp, tp, 1, N), dtype=torch.float32)
    coords = torch.zeros((dp, tp, 1, 8), dtype=torch.int32)
    program = flat_allreduce if args.mode == "flat" else tp_dp_allreduce
    compiled = program.compile(x, y, coords, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y, coords)
    checks = [cli.check_close("y", y, golden(x), world)]
    if args.mode != "flat":
        checks.append(cli.check_exact("coords", coords, golden_coords(dp, tp), world))
    return cli.report(checks, args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1,2,3", help="device ids, one per rank")
    parser.add_argument("--mode", choices=["2d", "flat"], default="2d")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=106)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
