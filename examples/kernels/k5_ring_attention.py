"""k5_ring_attention — exact softmax attention over a sequence split across the ranks.

The Python twin of k5_ring_attention.cpp. Rank r keeps its queries Q_r
[BQ, D]; the key/value blocks K_q, V_q [BK, D] travel the ring, one hop per
step, so after P steps every rank has seen every block:
O_r = softmax(Q_r K^T / sqrt(D)) V.

Online softmax (a running row max m and row sum l) makes the blocks
composable in any order: per block, S = Q K_b^T * scale; m' = max(m,
row_max(S)); p = exp(S - m'); l = l * exp(m - m') + row_sum(p); O = O *
exp(m - m') + p V_b; at the end O / l. The ring is double-buffered: slot
s % 2 of the `kv` window holds step s's block ([K; V], 2 BK rows). At step
s a rank first forwards that block to the next rank's slot (s + 1) % 2,
then computes. `ready[b]` counts the blocks that landed in my slot b;
`credit[b]` counts the times my next rank freed its slot b. Both only grow.

    python examples/kernels/k5_ring_attention.py                  (P = 2)
    python examples/kernels/k5_ring_attention.py -d 0,1,2,3,4 --check-races --explore 20

No P constraint: the sequence grows with P (BK keys per rank).
Golden: softmax attention of each rank's queries over all P*BK keys, in
float64 (torch). Cost: (P-1) puts of 2*BK*D*4 = 2 KiB out per rank;
2(P-1) - 1 notifies per rank (P-1 ready, P-2 credit).
"""

import argparse
import math
import sys

import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp.runtime import cli

BQ = 8  # queries per rank
BK = 8  # keys (and values) per rank
D = 32  # head dim
NR = pl.dynamic("NR")


@pl.jit.incore
def ring_attention(
    q: pl.Tensor[[BQ, D], pl.FP32],
    k: pl.Tensor[[BK, D], pl.FP32],
    v: pl.Tensor[[BK, D], pl.FP32],
    o: pl.Out[pl.Tensor[[BQ, D], pl.FP32]],
    kv: pl.InOut[pld.DistributedTensor[[2, 2 * BK, D], pl.FP32]],
    ready: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    credit: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
):
    ctx = pld.get_comm_ctx(kv)
    r = pld.rank(ctx)
    P = pld.nranks(ctx)
    nxt = (r + 1) % P
    prev = (r - 1 + P) % P  # % truncates in a kernel, as on PyPTO: keep it non-negative
    scale = 1.0 / math.sqrt(D)
    # Step 0's block is my own: into slot 0.
    kv = pl.store(pl.reshape(pl.load(k, [0, 0], [BK, D]), [1, BK, D]), [0, 0, 0], kv)
    kv = pl.store(pl.reshape(pl.load(v, [0, 0], [BK, D]), [1, BK, D]), [0, BK, 0], kv)
    qt = pl.load(q, [0, 0], [BQ, D])
    m = pl.full([BQ, 1], dtype=pl.FP32, value=-math.inf)
    l = pl.zeros([BQ, 1], dtype=pl.FP32)  # noqa: E741
    acc = pl.zeros([BQ, D], dtype=pl.FP32)
    for s in pl.range(P):
        slot = s % 2
        other = (s + 1) % 2
        # This step's block has landed in my slot (the (s+1)/2-th arrival there).
        if s > 0:
            pld.system.wait(ready, offsets=[slot, 0], expected=(s + 1) // 2, cmp=pld.WaitCmp.Ge)
        # Forward it first, so the transfer overlaps the math below: the next
        # rank must have freed its slot `other` (used at its step s-1).
        if s < P - 1:
            if s > 0:
                pld.system.wait(
                    credit, offsets=[other, 0], expected=(s + 1) // 2, cmp=pld.WaitCmp.Ge
                )
            pld.tensor.put(
                kv,
                peer=nxt,
                src=kv,
                dst_offsets=[other, 0, 0],
                src_offsets=[slot, 0, 0],
                shape=[1, 2 * BK, D],
            )
            pld.system.notify(
                ready, peer=nxt, offsets=[other, 0], value=1, op=pld.NotifyOp.AtomicAdd
            )
        # Online softmax over this block.
        kb = pl.reshape(pl.load(kv, [slot, 0, 0], [1, BK, D]), [BK, D])
        vb = pl.reshape(pl.load(kv, [slot, BK, 0], [1, BK, D]), [BK, D])
        scores = pl.mul(pl.matmul(qt, pl.transpose(kb, 0, 1)), scale)  # [BQ, BK]
        m_new = pl.maximum(m, pl.row_max(scores))
        p = pl.exp(pl.row_expand_sub(scores, m_new))
        alpha = pl.exp(pl.sub(m, m_new))
        # (Named in the order the C++ twin's compiler records them, so that
        # both programs are the same IR.)
        p_sum = pl.row_sum(p)
        l = pl.add(pl.mul(l, alpha), p_sum)  # noqa: E741
        pv = pl.matmul(p, vb)
        acc = pl.add(pl.row_expand_mul(acc, alpha), pv)
        m = m_new
        # Done with my slot: the previous rank may refill it, if it sends again.
        if s + 2 < P:
            pld.system.notify(
                credit, peer=prev, offsets=[slot, 0], value=1, op=pld.NotifyOp.AtomicAdd
            )
    o = pl.store(pl.row_expand_div(acc, l), [0, 0], o)
    return o


@pl.jit
def per_rank(
    q: pl.Tensor[[BQ, D], pl.FP32],
    k: pl.Tensor[[BK, D], pl.FP32],
    v: pl.Tensor[[BK, D], pl.FP32],
    o: pl.Out[pl.Tensor[[BQ, D], pl.FP32]],
    kv: pl.InOut[pld.DistributedTensor[[2, 2 * BK, D], pl.FP32]],
    ready: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
    credit: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],
):
    ring_attention(q, k, v, o, kv, ready, credit)


@pl.jit.host
def attention(
    q: pl.Tensor[[NR, BQ, D], pl.FP32],
    k: pl.Tensor[[NR, BK, D], pl.FP32],
    v: pl.Tensor[[NR, BK, D], pl.FP32],
    o: pl.Out[pl.Tensor[[NR, BQ, D], pl.FP32]],
):
    kv = pld.alloc_window_buffer([2, 2 * BK, D], dtype=pl.FP32)
    ready = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    credit = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        per_rank(
            q[r],
            k[r],
            v[r],
            o[r],
            pld.window(kv, [2, 2 * BK, D], dtype=pl.FP32),
            pld.window(ready, [2, 1], dtype=pl.INT32),
            pld.window(credit, [2, 1], dtype=pl.INT32),
            device=r,
        )


def golden(q, k, v):
    """Plain softmax attention of every rank's queries over all P*BK keys, in float64."""
    P = q.shape[0]
    keys = k.double().reshape(P * BK, D)
    values = v.double().reshape(P * BK, D)
    scores = q.double() @ keys.T / math.sqrt(D)  # [P, BQ, P*BK]
    return torch.softmax(scores, dim=-1) @ values


def run(args, config):
    """One run on `config` (a RunConfig); returns the exit code."""
    P = len(config.device_ids())
    gen = cli.InputGenerator(args.seed)
    q = gen.uniform([P, BQ, D])
    k = gen.uniform([P, BK, D])
    v = gen.uniform([P, BK, D])
    o = torch.zeros((P, BQ, D), dtype=torch.float32)
    compiled = attention.compile(q, k, v, o, config=config)
    if args.compile_only:
        return cli.finish_compile_only(compiled, args)
    stats = compiled(q, k, v, o)
    return cli.report([cli.check_close("o", o, golden(q, k, v), P)], args, stats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1", help="device ids, one per rank")
    parser.add_argument("--compile-only", action="store_true")
    cli.add_anyp_arguments(parser, step=105)
    return cli.run_example(parser.parse_args(argv), run)


if __name__ == "__main__":
    sys.exit(main())
