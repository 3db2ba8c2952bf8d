"""k1_tp_mlp — a tensor-parallel MLP (Megatron's column-then-row split): y = relu(x @ W1) @ W2 with the hidden width F split over the P ranks.

The Python twin of k1_tp_mlp.cpp. Two GEMMs need only ONE collective when
the first weight is split by columns and the second by rows: rank r holds
W1's columns [r*F/P, (r+1)*F/P) and the same rows of W2, so relu(x @ W1_r)
is rank r's slice of the hidden activation and relu(x @ W1_r) @ W2_r a
full-size partial of y. One allreduce of the [M, H] partials gives every
rank y.

    python examples/kernels/k1_tp_mlp.py                          (mesh allreduce, P = 2)
    python examples/kernels/k1_tp_mlp.py -d 0,1,2,3,4 --mode ring --cost

P constraint: the shard width F/P is a tile row, so F % (8*P) == 0 (F =
960: P must divide 120), checked before compiling (exit 2).
Golden: y[r] = relu(x W1) W2 for every r, in float64 (torch).
Cost: the builtin allreduce's: mesh (P-1) * 2 KiB out per rank; ring
2 (P-1)/P * 2 KiB.
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

M = 8  # tokens
H = 64  # model width
F = 960  # hidden width, split over the ranks
NR = pl.dynamic("NR")
FP = F // NR  # this rank's shard of the hidden width
MESH_SIGNAL = [NR, 1]
RING_SIGNAL = [2 * (NR - 1), NR]


def make_kernel(ring):
    signal_shape = RING_SIGNAL if ring else MESH_SIGNAL
    mode = "ring" if ring else "mesh"

    def tp_mlp(
        x: pl.Tensor[[M, H], pl.FP32],
        w1: pl.Tensor[[H, FP], pl.FP32],
        w2: pl.Tensor[[FP, H], pl.FP32],
        y: pl.Out[pl.Tensor[[M, H], pl.FP32]],
        partial: pl.InOut[pld.DistributedTensor[[M, H], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[signal_shape, pl.INT32]],
    ):
        # Column-parallel GEMM and the activation: my slice of the hidden layer.
        z = pl.relu(pl.matmul(pl.load(x, [0, 0], [M, H]), pl.load(w1, [0, 0], [H, FP])))
        # Row-parallel GEMM: a full-size partial of y.
        partial = pl.store(pl.matmul(z, pl.load(w2, [0, 0], [FP, H])), [0, 0], partial)
        # The one collective: sum the partials on every rank.
        partial = pld.tensor.allreduce(partial, signal, op=pld.ReduceOp.Sum, mode=mode)
        y = pl.store(pl.load(partial, [0, 0], [M, H]), [0, 0], y)
        return y

    tp_mlp.__name__ = f"tp_mlp_{mode}"  # the C++ twin's names: tp_mlp_mesh, tp_mlp_ring
    return pl.jit.incore(tp_mlp)


def make_host(ring):
    kernel = make_kernel(ring)
    signal_shape = RING_SIGNAL if ring else MESH_SIGNAL

    @pl.jit
    def per_rank(
        x: pl.Tensor[[M, H], pl.FP32],
        w1: pl.Tensor[[H, FP], pl.FP32],
        w2: pl.Tensor[[FP, H], pl.FP32],
        y: pl.Out[pl.Tensor[[M, H], pl.FP32]],
        partial: pl.InOut[pld.DistributedTensor[[M, H], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[signal_shape, pl.INT32]],
    ):
        kernel(x, w1, w2, y, partial, signal)

    def tp_mlp(
        x: pl.Tensor[[NR, M, H], pl.FP32],
        w1: pl.Tensor[[NR, H, FP], pl.FP32],
        w2: pl.Tensor[[NR, FP, H], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, M, H], pl.FP32]],
    ):
        partial = pld.alloc_window_buffer([M, H], dtype=pl.FP32)
        signal = pld.alloc_window_buffer(signal_shape, dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            per_rank(
                x[r],
                w1[r],
                w2[r],
                y[r],
                pld.window(partial, [M, H], dtype=pl.FP32),
                pld.window(signal, signal_shape, dtype=pl.INT32),
                device=r,
            )

    tp_mlp.__name__ = "tp_mlp_ring" if ring else "tp_mlp_mesh"
    return pl.jit.host(tp_mlp)


tp_mlp_mesh = make_host(ring=False)
tp_mlp_ring = make_host(ring=True)


def check_ranks(P):
    """The shard F/P must be whole 32-byte rows: F % (8*P) == 0."""
    if F % (8 * P) != 0:
        raise cli.UsageError(
            f"F={F} cannot be split into 32-byte-aligned shards for P={P}: "
            "need F % (8*P) == 0 (P must divide 120)"
        )


def inputs(gen, P):
    """x, w1, w2 (the per-rank shards) and the unsplit x1, w1_full, w2_full."""
    x1 = gen.uniform([M, H]) - 1.0  # centered: relu clips about half the units
    w1_full = gen.uniform([H, F]) - 1.0
    w2_full = gen.uniform([F, H]) - 1.0
    fp = F // P
    x = x1.expand(P, M, H).contiguous()
    w1 = torch.stack([w1_full[:, r * fp : (r + 1) * fp] for r in range(P)]).contiguous()
    w2 = torch.stack([w2_full[r * fp : (r + 1) * fp, :] for r in range(P)]).contiguous()
    return (x, w1, w2), (x1, w1_full, w2_full)


def golden(x1, w1_full, w2_full, P):
    """relu(x W1) W2 unsplit, in float64, for every rank."""
    y = torch.relu(x1.double() @ w1_full.double()) @ w2_full.double()
    return y.expand(P, M, H)


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    check_ranks(P)
    (x, w1, w2), full = inputs(cli.InputGenerator(args.seed), P)
    y = torch.zeros((P, M, H), dtype=torch.float32)
    program = tp_mlp_ring if args.mode == "ring" else tp_mlp_mesh
    compiled = program.compile(x, w1, w2, y, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, w1, w2, y)
    return cli.report([cli.check_close("y", y, golden(*full, P), P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--mode", choices=["mesh", "ring"], default="mesh")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=101)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
