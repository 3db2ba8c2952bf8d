"""05_remote_load_store — tile-level RMA: a ring shift by one, pulled or pushed.

load: stage my x into my window, barrier, then pull the right neighbour's
row with pld.tile.remote_load. store: push my x into the right
neighbour's window with pld.tile.remote_store, barrier, then read my own
window, which my left neighbour filled. The barrier goes after staging for
a pull and after the store for a push.

    python examples/distributed/05_remote_load_store.py                            (load, P = 2)
    python examples/distributed/05_remote_load_store.py -d 0,1,2   --mode load
    python examples/distributed/05_remote_load_store.py -d 0,1,2,3 --mode store
    python examples/distributed/05_remote_load_store.py -d 0,1,2 --mode store --check-races --explore 20

Golden: load y[r] = x[(r + 1) % P]; store y[r] = x[(r - 1) % P]; both exact.
The C++ twin: examples/distributed/05_remote_load_store.cpp.
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
def load_step(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    """stage -> barrier -> pull from right."""
    ctx = pld.get_comm_ctx(data)
    my_rank = pld.rank(ctx)
    nranks = pld.nranks(ctx)
    right = (my_rank + 1) % nranks
    data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
    signal = pld.tensor.barrier(signal)  # everyone has staged
    y = pl.store(pld.tile.remote_load(data, peer=right, offsets=[0, 0], shape=[1, SIZE]), [0, 0], y)
    return y


@pl.jit.incore
def store_step(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    """push to right -> barrier -> read what left pushed to me."""
    ctx = pld.get_comm_ctx(data)
    my_rank = pld.rank(ctx)
    nranks = pld.nranks(ctx)
    right = (my_rank + 1) % nranks
    t = pl.load(x, [0, 0], [1, SIZE])
    pld.tile.remote_store(t, data, peer=right, offsets=[0, 0])
    signal = pld.tensor.barrier(signal)  # every push has landed
    y = pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit
def per_rank_load(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    load_step(x, y, data, signal)


@pl.jit
def per_rank_store(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    store_step(x, y, data, signal)


@pl.jit.host
def shift_load(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    """One data window and one [NR, 1] signal, shared by the ranks."""
    data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        per_rank_load(x[r], y[r], data, signal, device=r)


@pl.jit.host
def shift_store(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
        per_rank_store(x[r], y[r], data, signal, device=r)


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([P, 1, SIZE])
    y = torch.zeros((P, 1, SIZE), dtype=torch.float32)
    load_mode = args.mode == "load"
    compiled = (shift_load if load_mode else shift_store).compile(x, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, y)
    # load: y[r] = x[(r + 1) % P]; store: y[r] = x[(r - 1) % P].
    golden = torch.roll(x, shifts=-1 if load_mode else 1, dims=0)
    return cli.report([cli.check_exact("y", y, golden, P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--mode", choices=["load", "store"], default="load")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=5)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
