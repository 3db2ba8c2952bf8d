"""01_hello_rank — the rank is the host loop index; P is pld.world_size().

The host loops r over pl.range(pld.world_size()) and gives each rank one
dispatch: host -> orchestration (per_rank) -> kernel (hello). The rank
reaches the kernel as an INT32 scalar parameter, listed after the tensors;
the kernel casts that parameter itself (never an expression such as r + 1)
to FP32 and adds it to every element with a broadcasting vector add.

    python examples/distributed/01_hello_rank.py                  (P = 2, devices 0,1)
    python examples/distributed/01_hello_rank.py -d 0,1,2,3       (P = 4: only -d changes)
    python examples/distributed/01_hello_rank.py -d 0,1,2 --check-races --explore 20

Golden: y[r] = x[r] + r, close. The C++ twin: examples/distributed/01_hello_rank.cpp.
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
def hello(
    x: pl.Tensor[[TILE, TILE], pl.FP32],
    y: pl.Out[pl.Tensor[[TILE, TILE], pl.FP32]],
    r: pl.Scalar[pl.INT32],
):
    """y = x + r: tensors first, then the scalar."""
    t = pl.load(x, [0, 0], [TILE, TILE])
    rf = pl.cast(r, pl.FP32)  # cast the parameter, not an expression
    y = pl.store(pl.add(t, rf), [0, 0], y)
    return y


@pl.jit
def per_rank(
    x: pl.Tensor[[TILE, TILE], pl.FP32],
    y: pl.Out[pl.Tensor[[TILE, TILE], pl.FP32]],
    r: pl.Scalar[pl.INT32],
):
    """The per-device orchestration: forwards its arguments to the kernel."""
    hello(x, y, r)


@pl.jit.host
def hello_rank(
    x: pl.Tensor[[NR, TILE, TILE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, TILE, TILE], pl.FP32]],
):
    """One dispatch per rank; the loop bound is P, never a literal."""
    for r in pl.range(pld.world_size()):
        per_rank(x[r], y[r], r, device=r)


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([P, TILE, TILE])
    y = torch.zeros((P, TILE, TILE), dtype=torch.float32)
    compiled = hello_rank.compile(x, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y)
    # The golden, derived from the actual P (in double, stored as FP32).
    ranks = torch.arange(P, dtype=torch.float64).view(P, 1, 1)
    golden = (x.double() + ranks).float()
    return cli.report([cli.check_close("y", y, golden, P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=1)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
