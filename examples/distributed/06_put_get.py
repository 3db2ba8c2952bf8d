"""06_put_get — tensor-level RMA with a pairwise handshake instead of a barrier.

put: the sender starts the transfer. Stage x into my src window, push it
whole into the right neighbour's dst (pld.tensor.put, atomic=None_: an
overwrite; Add would accumulate), notify right, wait for left's notify,
then read my dst. get: the receiver starts it. Stage x into src, notify
left (the rank that reads me) that src is ready, wait for right (the rank I
read) to say the same, then pull right's src into my dst (pld.tensor.get).
Each signal cell has exactly one writer, so one notify and one wait per
rank suffice at any P: the cost does not grow with P.

    python examples/distributed/06_put_get.py                            (put, P = 2)
    python examples/distributed/06_put_get.py -d 0,1,2   --mode put
    python examples/distributed/06_put_get.py -d 0,1,2,3 --mode get
    python examples/distributed/06_put_get.py -d 0,1,2 --mode get --check-races --explore 20

Golden: put y[r] = x[(r - 1) % P]; get y[r] = x[(r + 1) % P]; both exact.
The C++ twin: examples/distributed/06_put_get.cpp.
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
    src: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    dst: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
):
    """Push my src into right's dst, tell right, wait for left's push."""
    ctx = pld.get_comm_ctx(src)
    my_rank = pld.rank(ctx)
    nranks = pld.nranks(ctx)
    right = (my_rank + 1) % nranks
    src = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)
    pld.tensor.put(dst, peer=right, src=src, atomic=pld.AtomicType.None_)
    pld.system.notify(signal, peer=right, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)  # only left writes it
    y = pl.store(pl.load(dst, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit.incore
def get_step(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    dst: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
):
    """Stage my src, tell left (my reader) it is ready, wait for right, pull."""
    ctx = pld.get_comm_ctx(src)
    my_rank = pld.rank(ctx)
    nranks = pld.nranks(ctx)
    left = (my_rank + nranks - 1) % nranks
    right = (my_rank + 1) % nranks
    src = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)
    pld.system.notify(signal, peer=left, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)  # right sets it
    pld.tensor.get(dst, peer=right, src=src)
    y = pl.store(pl.load(dst, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit
def per_rank_put(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    dst: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
):
    put_step(x, y, src, dst, signal)


@pl.jit
def per_rank_get(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    dst: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
):
    get_step(x, y, src, dst, signal)


@pl.jit.host
def ring_put(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    """Three symmetric windows, one view of each per rank."""
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


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([P, 1, SIZE])
    y = torch.zeros((P, 1, SIZE), dtype=torch.float32)
    get_mode = args.mode == "get"
    compiled = (ring_get if get_mode else ring_put).compile(x, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y)
    # get: y[r] = x[(r + 1) % P]; put: y[r] = x[(r - 1) % P].
    golden = torch.roll(x, shifts=-1 if get_mode else 1, dims=0)
    return cli.report([cli.check_exact("y", y, golden, P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--mode", choices=["put", "get"], default="put")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=6)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
