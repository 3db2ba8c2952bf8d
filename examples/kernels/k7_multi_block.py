"""k7_multi_block — a kernel over several blocks of each rank, then a host allreduce over as many blocks.

The Python twin of k7_multi_block.cpp. A rank is more than one core:
`with pl.spmd(n):` in an orchestration function launches the incore kernels
it calls on n blocks of the rank at once (C++ pl::blocks(n)); they share
the rank's windows and tensors and tell themselves apart by
pl.tile.get_block_idx() and pl.tile.get_block_num(), so the kernel deals
its tiles out block-cyclically (tile j to block j mod n). The call returns
when every block has finished. The host allreduce given core_num=n runs
the same way: block b of every rank reduces the tiles j = b (mod n) and
synchronises on its own lane, column b of an [NR, n] signal.

    python examples/kernels/k7_multi_block.py -d 0,1,2,3 --timeline              (4 blocks per rank)
    python examples/kernels/k7_multi_block.py -d 0,1,2,3 --mode one --timeline   (one block: the baseline)

Golden: y[r] = sum_q (x[q]^2 + 1) on every rank, in float64 (torch).
Cost (per rank, N FP32 elements): bytes_in 4N (P - 1) in both modes; the
blocks split the pulls, not their sum.
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

N = 65536  # elements per rank: 256 KiB, 16 chunks of 16 KiB
TILE = 256  # the kernel's unit of work
BLOCKS = 4
NR = pl.dynamic("NR")


@pl.jit.incore
def square_plus_one(
    x: pl.Tensor[[1, N], pl.FP32],
    data: pl.Out[pld.DistributedTensor[[1, N], pl.FP32]],
):
    """data = x^2 + 1, tile by tile: block b takes the tiles b, b + n, b + 2n, ..."""
    for j in pl.range(pl.tile.get_block_idx(), N // TILE, pl.tile.get_block_num()):
        t = pl.load(x, [0, j * TILE], [1, TILE])
        data = pl.store(pl.add(pl.mul(t, t), 1.0), [0, j * TILE], data)
    return data


@pl.jit.incore
def copy_out(
    data: pld.DistributedTensor[[1, N], pl.FP32],
    y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
):
    y = pl.store(pl.load(data, [0, 0], [1, N]), [0, 0], y)
    return y


@pl.jit
def compute_blocks(
    x: pl.Tensor[[1, N], pl.FP32],
    data: pl.Out[pld.DistributedTensor[[1, N], pl.FP32]],
):
    with pl.spmd(BLOCKS):
        square_plus_one(x, data)


@pl.jit
def compute_one(
    x: pl.Tensor[[1, N], pl.FP32],
    data: pl.Out[pld.DistributedTensor[[1, N], pl.FP32]],
):
    with pl.spmd(1):
        square_plus_one(x, data)


@pl.jit
def finish(
    data: pld.DistributedTensor[[1, N], pl.FP32],
    y: pl.Out[pl.Tensor[[1, N], pl.FP32]],
):
    copy_out(data, y)


@pl.jit.host
def multi_block(
    x: pl.Tensor[[NR, 1, N], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
):
    data = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
    signal = pld.alloc_window_buffer([NR, BLOCKS], dtype=pl.INT32)  # a lane (column) per block
    for r in pl.range(pld.world_size()):
        compute_blocks(x[r], pld.window(data, [1, N], dtype=pl.FP32), device=r)
    view = pld.window(data, [1, N], dtype=pl.FP32)
    lanes = pld.window(signal, [NR, BLOCKS], dtype=pl.INT32)
    pld.tensor.allreduce(view, lanes, core_num=BLOCKS)
    for r in pl.range(pld.world_size()):
        finish(pld.window(data, [1, N], dtype=pl.FP32), y[r], device=r)


@pl.jit.host
def one_block(
    x: pl.Tensor[[NR, 1, N], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, N], pl.FP32]],
):
    data = pld.alloc_window_buffer([1, N], dtype=pl.FP32)
    signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        compute_one(x[r], pld.window(data, [1, N], dtype=pl.FP32), device=r)
    view = pld.window(data, [1, N], dtype=pl.FP32)
    lanes = pld.window(signal, [NR, 1], dtype=pl.INT32)
    pld.tensor.allreduce(view, lanes)
    for r in pl.range(pld.world_size()):
        finish(pld.window(data, [1, N], dtype=pl.FP32), y[r], device=r)


def golden(x):
    """y[r] = sum over q of x[q]^2 + 1, on every rank, in float64."""
    total = (x.double() * x.double() + 1).sum(dim=0, keepdim=True)
    return total.expand_as(x)


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([P, 1, N])
    y = torch.zeros((P, 1, N), dtype=torch.float32)
    program = one_block if args.mode == "one" else multi_block
    compiled = program.compile(x, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y)
    return cli.report([cli.check_close("y", y, golden(x), P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1,2,3", help="device ids, one per rank")
    parser.add_argument("--mode", choices=["blocks", "one"], default="blocks")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=107)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
