"""03_window_buffer — symmetric window memory: one allocation, one view per rank.

pld.alloc_window_buffer runs once, above the rank loop: it reserves the
same slot in every rank's window. pld.window runs per rank, inside the
loop, and types that slot as a [1, SIZE] FP32 view (a DistributedTensor, a
type distinct from a plain tensor). A local load/store on a window sees only
this rank's slice; reaching a peer's slice takes RMA (step 05).

    python examples/distributed/03_window_buffer.py                  (P = 2)
    python examples/distributed/03_window_buffer.py -d 0,1,2,3       (P = 4)
    python examples/distributed/03_window_buffer.py -d 0,1,2 --check-races --explore 20

Golden: y[r] = x[r], exact (1 KiB of window per rank, no remote traffic).
The C++ twin: examples/distributed/03_window_buffer.cpp.
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

SIZE = 256
NR = pl.dynamic("NR")  # the rank count is a runtime dimension


@pl.jit.incore
def roundtrip(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
):
    """Stage x into my window slot, then read it back into y."""
    data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
    y = pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit
def per_rank(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
):
    """The per-device orchestration: forwards its arguments to the kernel."""
    roundtrip(x, y, data)


@pl.jit.host
def window_buffer(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    """Allocate once, above the loop; make the view per rank."""
    data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        per_rank(x[r], y[r], data, device=r)


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([P, 1, SIZE])
    y = torch.zeros((P, 1, SIZE), dtype=torch.float32)
    compiled = window_buffer.compile(x, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y)
    golden = x.clone()  # every rank gets its own row back
    return cli.report([cli.check_exact("y", y, golden, P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=3)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
