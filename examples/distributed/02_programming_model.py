"""02_programming_model — the three levels, and the three ways values flow down.

The host allocates, loops and dispatches; the orchestration forwards per
device; the kernel computes (and, from step 03 on, communicates). Values
reach the kernel three ways: a sliced tensor (x[r], y[r]: rank r's rows),
an unsliced tensor (b: the same [8, 8] tensor, whole, on every rank) and a
scalar (r). The kernel forms x*(r+1) as x*r + x: no scalar FP "+1".

    python examples/distributed/02_programming_model.py                  (P = 2)
    python examples/distributed/02_programming_model.py -d 0,1,2,3       (P = 4)
    python examples/distributed/02_programming_model.py -d 0,1,2 --check-races --explore 20

Golden: y[r] = x[r]*(r+1) + b, close. The C++ twin: examples/distributed/02_programming_model.cpp.
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

TILE = 8  # an [8, 8] FP32 tile: rows of 32 bytes
NR = pl.dynamic("NR")  # the rank count is a runtime dimension


@pl.jit.incore
def scale_shift(
    x: pl.Tensor[[TILE, TILE], pl.FP32],
    b: pl.Tensor[[TILE, TILE], pl.FP32],
    y: pl.Out[pl.Tensor[[TILE, TILE], pl.FP32]],
    r: pl.Scalar[pl.INT32],
):
    """y = x*r + x + b: tensors first, then the scalar."""
    t = pl.load(x, [0, 0], [TILE, TILE])
    rf = pl.cast(r, pl.FP32)
    bt = pl.load(b, [0, 0], [TILE, TILE])
    y = pl.store(pl.add(pl.add(pl.mul(t, rf), t), bt), [0, 0], y)
    return y


@pl.jit
def per_rank(
    x: pl.Tensor[[TILE, TILE], pl.FP32],
    b: pl.Tensor[[TILE, TILE], pl.FP32],
    y: pl.Out[pl.Tensor[[TILE, TILE], pl.FP32]],
    r: pl.Scalar[pl.INT32],
):
    """The per-device orchestration: forwards its arguments to the kernel."""
    scale_shift(x, b, y, r)


@pl.jit.host
def programming_model(
    x: pl.Tensor[[NR, TILE, TILE], pl.FP32],
    b: pl.Tensor[[TILE, TILE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, TILE, TILE], pl.FP32]],
):
    """x and y carry the rank dim NR and are sliced; b goes to every rank whole."""
    for r in pl.range(pld.world_size()):
        per_rank(x[r], b, y[r], r, device=r)


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([P, TILE, TILE])
    b = gen.uniform([TILE, TILE])
    y = torch.zeros((P, TILE, TILE), dtype=torch.float32)
    compiled = programming_model.compile(x, b, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, b, y)
    # The golden, derived from the actual P (in double, stored as FP32).
    scale = torch.arange(1, P + 1, dtype=torch.float64).view(P, 1, 1)
    golden = (x.double() * scale + b.double()).float()
    return cli.report([cli.check_close("y", y, golden, P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=2)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
