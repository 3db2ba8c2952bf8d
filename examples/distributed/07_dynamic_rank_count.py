"""07_dynamic_rank_count — the seed, in PyPTO's Python: step 06's ring shift,
rank-count agnostic.

NR = pl.dynamic("NR") names the world size in the host signature, so this
one source runs at P = 2, 3, 4, ...: only -d changes.

    python examples/distributed/07_dynamic_rank_count.py -p a2a3sim -d 0,1 --mode get
    python examples/distributed/07_dynamic_rank_count.py -p a2a3sim -d 0,1,2 --mode put
    python examples/distributed/07_dynamic_rank_count.py -d 0,1,2,3 --cost --timeline
    python examples/distributed/07_dynamic_rank_count.py -d 0-7 --check-races --explore 20
    mpirun -n 4 python examples/distributed/07_dynamic_rank_count.py --engine mpi

The command line, inputs, golden check and output are its C++ twin's
(examples/distributed/07_dynamic_rank_count.cpp, anyp.runtime.cli): inputs
from cli.InputGenerator(seed 7), --mode put (default) or get.

The kernels read P at run time from the comm context and compute peers as
(my_rank + nranks - 1) % nranks, as the C++ twin does (the same ops, so the
same cost card). A kernel's % truncates, as PyPTO's generated kernel code
does, so (my_rank - 1) % nranks would be -1 at rank 0 and fail the run.
Golden: get y[r] = x[(r + 1) % P]; put y[r] = x[(r - 1) % P]; both exact.
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

SIZE = 64
NR = pl.dynamic("NR")  # the rank count is a runtime dimension


@pl.jit.incore
def put_step(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pld.DistributedTensor[[1, SIZE], pl.FP32],
    dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
    signal: pld.DistributedTensor[[1, 1], pl.INT32],
):
    """Push my src into right's dst, tell right, wait for left's push."""
    ctx = pld.get_comm_ctx(src)
    my_rank = pld.rank(ctx)
    nranks = pld.nranks(ctx)
    right = (my_rank + 1) % nranks
    src = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)
    pld.tensor.put(dst, peer=right, src=src, atomic=pld.AtomicType.None_)
    pld.system.notify(signal, peer=right, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    y = pl.store(pl.load(dst, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit.incore
def get_step(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pld.DistributedTensor[[1, SIZE], pl.FP32],
    dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
    signal: pld.DistributedTensor[[1, 1], pl.INT32],
):
    """Stage my src, tell left (my reader) it is ready, wait for right, pull."""
    ctx = pld.get_comm_ctx(src)
    my_rank = pld.rank(ctx)
    nranks = pld.nranks(ctx)
    left = (my_rank + nranks - 1) % nranks
    right = (my_rank + 1) % nranks
    src = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)
    pld.system.notify(signal, peer=left, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    pld.tensor.get(dst, peer=right, src=src)
    y = pl.store(pl.load(dst, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit
def per_rank_put(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pld.DistributedTensor[[1, SIZE], pl.FP32],
    dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
    signal: pld.DistributedTensor[[1, 1], pl.INT32],
):
    put_step(x, y, src, dst, signal)


@pl.jit
def per_rank_get(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pld.DistributedTensor[[1, SIZE], pl.FP32],
    dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
    signal: pld.DistributedTensor[[1, 1], pl.INT32],
):
    get_step(x, y, src, dst, signal)


@pl.jit.host
def ring_put(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    src_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    dst_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        src = pld.window(src_buf, [1, SIZE], dtype=pl.FP32)
        dst = pld.window(dst_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [1, 1], dtype=pl.INT32)
        per_rank_put(x[r], y[r], src, dst, signal, device=r)


@pl.jit.host
def ring_get(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    src_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    dst_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        src = pld.window(src_buf, [1, SIZE], dtype=pl.FP32)
        dst = pld.window(dst_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [1, 1], dtype=pl.INT32)
        per_rank_get(x[r], y[r], src, dst, signal, device=r)


def expected_ring(x, get_mode):
    """y[r] = x[(r + 1) % P] (get), x[(r - 1) % P] (put)."""
    shift = -1 if get_mode else 1
    return torch.roll(x, shifts=shift, dims=0)


def run(args, config):
    """One run on `config`; returns the exit code (the C++ twin's run)."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([P, 1, SIZE])
    y = torch.zeros((P, 1, SIZE), dtype=torch.float32)
    get_mode = args.mode == "get"
    program = ring_get if get_mode else ring_put
    compiled = program.compile(x, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y)
    return cli.report([cli.check_exact("y", y, expected_ring(x, get_mode), P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--mode", choices=["put", "get"], default="put")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=7)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
