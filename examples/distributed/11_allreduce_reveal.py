"""11_allreduce_reveal — the builtin pld.tensor.allreduce replaces the
barrier-and-accumulate core of steps 08-10 with one call.

    python examples/distributed/11_allreduce_reveal.py --mode mesh --op sum        (P = 4)
    python examples/distributed/11_allreduce_reveal.py --mode ring --op max -d 0,1,2,3,4 --cost
    python examples/distributed/11_allreduce_reveal.py --mode ring --check-races --explore 20
    python examples/distributed/11_allreduce_reveal.py --mode auto -d 0-63 --explain-collectives

`mode` picks the algorithm (PyPTO's mode="mesh" / mode="ring") and fixes the
signal shape: ring uses [2 * (NR - 1), NR] (never share one signal between
two modes), the others [NR, 1]: recursive_doubling, rabenseifner and tree
(the logarithmic allreduces), and auto, which runs the one of least modeled
time. The call works in place on the window, so its
result is re-bound. The builtin ring copes with uneven segments (960
elements at P = 7).
Golden: y[r] = OP_k x[k] for every r, close.
The C++ twin: examples/distributed/11_allreduce_reveal.cpp.
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

SIZE = 960
NR = pl.dynamic("NR")

OPS = {
    "sum": pld.ReduceOp.Sum,
    "max": pld.ReduceOp.Max,
    "min": pld.ReduceOp.Min,
    "prod": pld.ReduceOp.Prod,
}


MODES = ["mesh", "ring", "recursive_doubling", "rabenseifner", "tree", "auto"]


def signal_shape(mode):
    """The mode's signal: [2 * (NR - 1), NR] for ring, else [NR, 1]."""
    return [2 * (NR - 1), NR] if mode == "ring" else [NR, 1]


def make_program(op, mode):
    """The host program for one ReduceOp and one mode."""
    sig = signal_shape(mode)

    @pl.jit.incore
    def allreduce_kernel(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[sig, pl.INT32]],
    ):
        data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)  # stage
        data = pld.tensor.allreduce(data, signal, op=op, mode=mode)  # re-bind the result
        y = pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], y)
        return y

    @pl.jit
    def per_rank(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[sig, pl.INT32]],
    ):
        allreduce_kernel(x, y, data, signal)

    @pl.jit.host
    def allreduce_reveal(
        x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        signal = pld.alloc_window_buffer(sig, dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            per_rank(
                x[r],
                y[r],
                pld.window(data, [1, SIZE], dtype=pl.FP32),
                pld.window(signal, sig, dtype=pl.INT32),
                device=r,
            )

    return allreduce_reveal


def combine(op, a, b):
    """The golden's reduction of two float64 tensors."""
    if op == "max":
        return torch.maximum(a, b)
    if op == "min":
        return torch.minimum(a, b)
    if op == "prod":
        return a * b
    return a + b


def reduce_golden(x, op):
    """In double, OP over the ranks in rank order, on every rank."""
    acc = x[0].double()
    for k in range(1, x.shape[0]):
        acc = combine(op, acc, x[k].double())
    return acc.float().expand_as(x).contiguous()


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([P, 1, SIZE])
    y = torch.zeros((P, 1, SIZE), dtype=torch.float32)
    program = make_program(OPS[args.op], args.mode)
    compiled = program.compile(x, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y)
    return cli.report([cli.check_close("y", y, reduce_golden(x, args.op), P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1,2,3", help="device ids, one per rank")
    parser.add_argument("--mode", choices=MODES, default="mesh")
    parser.add_argument("--op", choices=list(OPS), default="sum")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=11)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
