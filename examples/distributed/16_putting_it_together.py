"""16_putting_it_together — broadcast, mesh all-reduce and all-gather in one
kernel, then local math.

The root broadcasts its weight row w; every rank all-reduces its x (mesh,
Sum) and all-gathers every rank's x, then scales each gathered row by the
broadcast weights. Every rank calls each collective unconditionally and in
the same order; only the root's staging is conditional. The builtin
collectives clear their signals again (the credit protocol, docs/design.md
§11), so in `shared` mode one [NR, 1] signal serves all three calls; in
`separate` mode each call has its own [NR, 1] signal.
Only row ROOT of w holds the weights: the other rows are decoys, so a rank
that used its own w row instead of the broadcast copy fails the check.

    python examples/distributed/16_putting_it_together.py                           (shared, P = 2)
    python examples/distributed/16_putting_it_together.py -d 0,1,2,3 --mode separate --cost
    python examples/distributed/16_putting_it_together.py -d 0,1,2 --check-races --explore 20

Golden: allred[r] = sum_k x[k] and gathered[r] = concat_k (x[k] * w[ROOT]),
both close.
Cost (S = 256 B): a non-root takes S + (P-1) * S + (P-1) * S = (2P-1) * S in
and sends (P-1) * S out as puts; P RMA loads plus P-1 puts; 4 barriers
(1 + 2 + 1): 4(P-1) notify (+E 3(P-1)), 4 rounds.
The C++ twin: examples/distributed/16_putting_it_together.cpp.
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

SIZE = 64
ROOT = 0
NR = pl.dynamic("NR")  # the rank count is a runtime dimension


def shared_kernel():
    """The kernel with one signal for all three collectives."""

    @pl.jit.incore
    def together_shared(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        w: pl.Tensor[[1, SIZE], pl.FP32],
        allred: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        gathered: pl.Out[pl.Tensor[[1, NR * SIZE], pl.FP32]],
        w_data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        ar_data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        ag_data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
        sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(ar_data)
        r = pld.rank(ctx)
        P = pld.nranks(ctx)
        # 1. broadcast the root's weights; load them only after the call.
        if r == ROOT:
            w_data = pl.store(pl.load(w, [0, 0], [1, SIZE]), [0, 0], w_data)
        w_data = pld.tensor.broadcast(w_data, sig, root=ROOT)
        wt = pl.load(w_data, [0, 0], [1, SIZE])
        # 2. mesh all-reduce of x.
        ar_data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], ar_data)
        ar_data = pld.tensor.allreduce(ar_data, sig, op=pld.ReduceOp.Sum, mode="mesh")
        allred = pl.store(pl.load(ar_data, [0, 0], [1, SIZE]), [0, 0], allred)
        # 3. all-gather of x (the plain tensor is the source).
        ag_data = pld.tensor.allgather(x, ag_data, sig)
        # 4. local math: gathered row s = x[s] * w[ROOT].
        for s in pl.range(P):
            col = s * SIZE
            gathered = pl.store(pl.mul(pl.load(ag_data, [s, 0], [1, SIZE]), wt), [0, col], gathered)
        return allred, gathered

    return together_shared


def separate_kernel():
    """The same body, each collective on its own signal."""

    @pl.jit.incore
    def together_separate(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        w: pl.Tensor[[1, SIZE], pl.FP32],
        allred: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        gathered: pl.Out[pl.Tensor[[1, NR * SIZE], pl.FP32]],
        w_data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        ar_data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        ag_data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
        sig_b: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        sig_ar: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        sig_ag: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(ar_data)
        r = pld.rank(ctx)
        P = pld.nranks(ctx)
        # 1. broadcast the root's weights; load them only after the call.
        if r == ROOT:
            w_data = pl.store(pl.load(w, [0, 0], [1, SIZE]), [0, 0], w_data)
        w_data = pld.tensor.broadcast(w_data, sig_b, root=ROOT)
        wt = pl.load(w_data, [0, 0], [1, SIZE])
        # 2. mesh all-reduce of x.
        ar_data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], ar_data)
        ar_data = pld.tensor.allreduce(ar_data, sig_ar, op=pld.ReduceOp.Sum, mode="mesh")
        allred = pl.store(pl.load(ar_data, [0, 0], [1, SIZE]), [0, 0], allred)
        # 3. all-gather of x (the plain tensor is the source).
        ag_data = pld.tensor.allgather(x, ag_data, sig_ag)
        # 4. local math: gathered row s = x[s] * w[ROOT].
        for s in pl.range(P):
            col = s * SIZE
            gathered = pl.store(pl.mul(pl.load(ag_data, [s, 0], [1, SIZE]), wt), [0, col], gathered)
        return allred, gathered

    return together_separate


def make_program(shared):
    """The host program of one mode (as in C++, the kernel and the host share a name)."""
    if shared:
        kernel = shared_kernel()

        @pl.jit
        def per_rank(
            x: pl.Tensor[[1, SIZE], pl.FP32],
            w: pl.Tensor[[1, SIZE], pl.FP32],
            allred: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
            gathered: pl.Out[pl.Tensor[[1, NR * SIZE], pl.FP32]],
            w_data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
            ar_data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
            ag_data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
            sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        ):
            kernel(x, w, allred, gathered, w_data, ar_data, ag_data, sig)

        @pl.jit.host
        def together_shared(
            x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
            w: pl.Tensor[[NR, 1, SIZE], pl.FP32],
            allred: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
            gathered: pl.Out[pl.Tensor[[NR, 1, NR * SIZE], pl.FP32]],
        ):
            w_data = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
            ar_data = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
            ag_data = pld.alloc_window_buffer([NR, SIZE], dtype=pl.FP32)
            sig = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
            for r in pl.range(pld.world_size()):
                per_rank(
                    x[r],
                    w[r],
                    allred[r],
                    gathered[r],
                    pld.window(w_data, [1, SIZE], dtype=pl.FP32),
                    pld.window(ar_data, [1, SIZE], dtype=pl.FP32),
                    pld.window(ag_data, [NR, SIZE], dtype=pl.FP32),
                    pld.window(sig, [NR, 1], dtype=pl.INT32),
                    device=r,
                )

        return together_shared

    kernel = separate_kernel()

    @pl.jit
    def per_rank(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        w: pl.Tensor[[1, SIZE], pl.FP32],
        allred: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        gathered: pl.Out[pl.Tensor[[1, NR * SIZE], pl.FP32]],
        w_data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        ar_data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        ag_data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
        sig_b: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        sig_ar: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        sig_ag: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        kernel(x, w, allred, gathered, w_data, ar_data, ag_data, sig_b, sig_ar, sig_ag)

    @pl.jit.host
    def together_separate(
        x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        w: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        allred: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        gathered: pl.Out[pl.Tensor[[NR, 1, NR * SIZE], pl.FP32]],
    ):
        w_data = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        ar_data = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        ag_data = pld.alloc_window_buffer([NR, SIZE], dtype=pl.FP32)
        sig_b = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
        sig_ar = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
        sig_ag = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            per_rank(
                x[r],
                w[r],
                allred[r],
                gathered[r],
                pld.window(w_data, [1, SIZE], dtype=pl.FP32),
                pld.window(ar_data, [1, SIZE], dtype=pl.FP32),
                pld.window(ag_data, [NR, SIZE], dtype=pl.FP32),
                pld.window(sig_b, [NR, 1], dtype=pl.INT32),
                pld.window(sig_ar, [NR, 1], dtype=pl.INT32),
                pld.window(sig_ag, [NR, 1], dtype=pl.INT32),
                device=r,
            )

    return together_separate


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    x = gen.uniform([P, 1, SIZE])
    w = gen.uniform([P, 1, SIZE])  # row ROOT: the weights; others: decoys
    allred = torch.zeros((P, 1, SIZE), dtype=torch.float32)
    gathered = torch.zeros((P, 1, P * SIZE), dtype=torch.float32)
    program = make_program(args.mode == "shared")
    compiled = program.compile(x, w, allred, gathered, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(x, w, allred, gathered)
    # The goldens, in double.
    total = torch.zeros((1, SIZE), dtype=torch.float64)
    for k in range(P):
        total = total + x[k].double()
    golden_allred = total.float().expand(P, 1, SIZE).contiguous()
    scaled = (x.double() * w[ROOT].double()).float()  # [k, 0, j] = x[k][j] * w[ROOT][j]
    golden_gathered = scaled.reshape(1, 1, P * SIZE).expand(P, 1, P * SIZE).contiguous()
    checks = [
        cli.check_close("allred", allred, golden_allred, P),
        cli.check_close("gathered", gathered, golden_gathered, P),
    ]
    return cli.report(checks, args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--mode", choices=["shared", "separate"], default="shared")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=16)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
