"""k4_moe — a mixture-of-experts layer, top-1, one expert per rank: y_t = g_t * relu(x_t @ W_e(t)).

The Python twin of k4_moe.cpp. Every token goes to the rank of its expert,
is multiplied there by that expert's weight, and comes back scaled by its
gate. A data-dependent exchange is two all_to_all_v's around the expert
GEMM: dispatch packs each rank's tokens by destination (block d of `send`,
T rows of one token each, counting rows in send_counts[d], as PyPTO's
all_to_all_v counts); all_to_all_v delivers block r of rank d's `recv`
with its count in recv_counts[r]. The expert runs a gemv per
received token (the count is only known at run time), packing the results
in the same order into `back`; the second all_to_all_v returns them, and
the combine replays the packing counters to find each token's result.

    python examples/kernels/k4_moe.py                                    (P = 2)
    python examples/kernels/k4_moe.py -d 0,1,2,3,4 --cost --check-races

No P constraint: P experts, T tokens per rank; a rank may receive from 0 up
to P*T tokens (the blocks of `send` and `recv` have room for T each).
Golden: y_t = g_t * relu(x_t W_e) in float64 (torch).
"""

import argparse
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

T = 8  # tokens per rank
H = 32  # token width
H2 = 32  # expert output width
NR = pl.dynamic("NR")


@pl.jit.incore
def moe_layer(
    x: pl.Tensor[[T, H], pl.FP32],
    route: pl.Tensor[[T, 1], pl.INT32],
    gate: pl.Tensor[[T, 1], pl.FP32],
    w: pl.Tensor[[H, H2], pl.FP32],
    y: pl.Out[pl.Tensor[[T, H2], pl.FP32]],
    # Private staging: tokens by destination, and the results going back.
    send: pl.InOut[pl.Tensor[[NR * T, H], pl.FP32]],
    send_counts: pl.InOut[pl.Tensor[[NR, 1], pl.INT32]],
    back: pl.InOut[pl.Tensor[[NR * T, H2], pl.FP32]],
    back_counts: pl.InOut[pl.Tensor[[NR, 1], pl.INT32]],
    # Windows: what arrives, with its counts, and each call's signal.
    recv: pl.InOut[pld.DistributedTensor[[NR * T, H], pl.FP32]],
    recv_counts: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    dispatch_signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ret: pl.InOut[pld.DistributedTensor[[NR * T, H2], pl.FP32]],
    ret_counts: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    combine_signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    ctx = pld.get_comm_ctx(recv)
    P = pld.nranks(ctx)
    # 1. Dispatch: pack my tokens by expert, then exchange.
    for d in pl.range(P):
        pl.write(send_counts, [d, 0], 0)
    for t in pl.range(T):
        e = pl.read(route, [t, 0])
        at = pl.read(send_counts, [e, 0])
        send = pl.store(pl.load(x, [t, 0], [1, H]), [e * T + at, 0], send)
        pl.write(send_counts, [e, 0], at + 1)
    recv = pld.tensor.all_to_all_v(send, recv, dispatch_signal, send_counts, recv_counts)
    # 2. My expert: one gemv per token that arrived, packed in arrival order.
    wt = pl.load(w, [0, 0], [H, H2])
    for s in pl.range(P):
        n = pl.read(recv_counts, [s, 0])
        pl.write(back_counts, [s, 0], n)
        for i in pl.range(n):
            out = pl.relu(pl.gemv(pl.load(recv, [s * T + i, 0], [1, H]), wt))
            back = pl.store(out, [s * T + i, 0], back)
    ret = pld.tensor.all_to_all_v(back, ret, combine_signal, back_counts, ret_counts)
    # 3. Combine: replay the packing order to find each token's result.
    for d in pl.range(P):
        pl.write(send_counts, [d, 0], 0)
    for t in pl.range(T):
        e = pl.read(route, [t, 0])
        k = pl.read(send_counts, [e, 0])
        out = pl.load(ret, [e * T + k, 0], [1, H2])
        y = pl.store(pl.mul(out, pl.read(gate, [t, 0])), [t, 0], y)
        pl.write(send_counts, [e, 0], k + 1)
    return y


@pl.jit
def per_rank(
    x: pl.Tensor[[T, H], pl.FP32],
    route: pl.Tensor[[T, 1], pl.INT32],
    gate: pl.Tensor[[T, 1], pl.FP32],
    w: pl.Tensor[[H, H2], pl.FP32],
    y: pl.Out[pl.Tensor[[T, H2], pl.FP32]],
    send: pl.InOut[pl.Tensor[[NR * T, H], pl.FP32]],
    send_counts: pl.InOut[pl.Tensor[[NR, 1], pl.INT32]],
    back: pl.InOut[pl.Tensor[[NR * T, H2], pl.FP32]],
    back_counts: pl.InOut[pl.Tensor[[NR, 1], pl.INT32]],
    recv: pl.InOut[pld.DistributedTensor[[NR * T, H], pl.FP32]],
    recv_counts: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    dispatch_signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ret: pl.InOut[pld.DistributedTensor[[NR * T, H2], pl.FP32]],
    ret_counts: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    combine_signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    moe_layer(
        x,
        route,
        gate,
        w,
        y,
        send,
        send_counts,
        back,
        back_counts,
        recv,
        recv_counts,
        dispatch_signal,
        ret,
        ret_counts,
        combine_signal,
    )


@pl.jit.host
def moe(
    x: pl.Tensor[[NR, T, H], pl.FP32],
    route: pl.Tensor[[NR, T, 1], pl.INT32],
    gate: pl.Tensor[[NR, T, 1], pl.FP32],
    w: pl.Tensor[[NR, H, H2], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, T, H2], pl.FP32]],
    send: pl.InOut[pl.Tensor[[NR, NR * T, H], pl.FP32]],
    send_counts: pl.InOut[pl.Tensor[[NR, NR, 1], pl.INT32]],
    back: pl.InOut[pl.Tensor[[NR, NR * T, H2], pl.FP32]],
    back_counts: pl.InOut[pl.Tensor[[NR, NR, 1], pl.INT32]],
):
    recv = pld.alloc_window_buffer([NR * T, H], dtype=pl.FP32)
    recv_counts = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    dispatch_signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    ret = pld.alloc_window_buffer([NR * T, H2], dtype=pl.FP32)
    ret_counts = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    combine_signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        per_rank(
            x[r],
            route[r],
            gate[r],
            w[r],
            y[r],
            send[r],
            send_counts[r],
            back[r],
            back_counts[r],
            pld.window(recv, [NR * T, H], dtype=pl.FP32),
            pld.window(recv_counts, [NR, 1], dtype=pl.INT32),
            pld.window(dispatch_signal, [NR, 1], dtype=pl.INT32),
            pld.window(ret, [NR * T, H2], dtype=pl.FP32),
            pld.window(ret_counts, [NR, 1], dtype=pl.INT32),
            pld.window(combine_signal, [NR, 1], dtype=pl.INT32),
            device=r,
        )


def inputs(gen, P):
    """x, route, gate, w and the zeroed outputs and staging tensors."""
    x = gen.uniform([P, T, H])
    gate = gen.uniform([P, T, 1])
    w = gen.uniform([P, H, H2]) - 1.0  # relu clips some
    # An uneven routing: some experts get many tokens, some none.
    route = torch.tensor(
        [[[(3 * r + t * t) % P] for t in range(T)] for r in range(P)], dtype=torch.int32
    )
    y = torch.zeros((P, T, H2), dtype=torch.float32)
    staging = [
        torch.zeros((P, P * T, H), dtype=torch.float32),
        torch.zeros((P, P, 1), dtype=torch.int32),
        torch.zeros((P, P * T, H2), dtype=torch.float32),
        torch.zeros((P, P, 1), dtype=torch.int32),
    ]
    return [x, route, gate, w, y, *staging]


def golden(x, route, gate, w):
    """y_t = g_t * relu(x_t W_e(t)) in float64."""
    experts = w.double()[route[..., 0].long()]  # [P, T, H, H2]
    out = torch.einsum("pth,pthk->ptk", x.double(), experts)
    return gate.double() * torch.relu(out)


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    tensors = inputs(cli.InputGenerator(args.seed), P)
    compiled = moe.compile(*tensors, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(*tensors)
    x, route, gate, w, y = tensors[:5]
    return cli.report([cli.check_close("y", y, golden(x, route, gate, w), P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=104)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
