"""window_rounds_bench.py — what the order of host dispatch groups costs
(docs/api.md §8, "Windows order dispatch groups"), against a baseline
measured in the same run:

  rounds  a host program of two rounds, each a stage loop (every rank writes
          its row into window `data`) and a read loop (every rank reads its
          right neighbour's row): three group edges, each ordered by P²
          order-cell releases;
  fused   the same two rounds in one dispatch per rank (stage, a barrier,
          read, a barrier, twice): no group edge.

Both give the same outputs (checked). Prints seconds per run (the best of
`--repeat` runs) and their ratio at each P.

  /usr/bin/python3 bench/window_rounds_bench.py            (P = 256, 1024)
  /usr/bin/python3 bench/window_rounds_bench.py 256 1024 4096
"""

import os
import sys
import time

import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("ANYP_BUILD_DIR", os.path.join(ROOT, "build", "release"))

import anyp.language as pl  # noqa: E402
import anyp.language.distributed as pld  # noqa: E402
from anyp.ir import DistributedConfig  # noqa: E402
from anyp.runtime import RunConfig  # noqa: E402

NR = pl.dynamic("NR")
S = 8


@pl.jit.incore
def stage_k(x: pl.Tensor[[1, S], pl.FP32], data: pl.InOut[pld.DistributedTensor[[1, S], pl.FP32]]):
    pl.store(pl.load(x, [0, 0], [1, S]), [0, 0], data)


@pl.jit
def stage(x: pl.Tensor[[1, S], pl.FP32], data: pl.InOut[pld.DistributedTensor[[1, S], pl.FP32]]):
    stage_k(x, data)


@pl.jit.incore
def read_k(data: pld.DistributedTensor[[1, S], pl.FP32], y: pl.Out[pl.Tensor[[1, S], pl.FP32]]):
    ctx = pld.get_comm_ctx(data)
    right = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    pl.store(pld.tile.remote_load(data, peer=right, offsets=[0, 0], shape=[1, S]), [0, 0], y)


@pl.jit
def read(data: pld.DistributedTensor[[1, S], pl.FP32], y: pl.Out[pl.Tensor[[1, S], pl.FP32]]):
    read_k(data, y)


@pl.jit.host
def rounds(x: pl.Tensor[[2, NR, 1, S], pl.FP32], y: pl.Out[pl.Tensor[[2, NR, 1, S], pl.FP32]]):
    buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    for rd in pl.range(2):
        for r in pl.range(pld.world_size()):
            stage(x[rd, r], pld.window(buf, [1, S], dtype=pl.FP32), device=r)
        for r in pl.range(pld.world_size()):
            read(pld.window(buf, [1, S], dtype=pl.FP32), y[rd, r], device=r)


@pl.jit.incore
def fused_k(
    x: pl.Tensor[[2, S], pl.FP32],
    y: pl.Out[pl.Tensor[[2, S], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, S], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    ctx = pld.get_comm_ctx(data)
    right = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    for rd in pl.range(2):
        pl.store(pl.load(x, [rd, 0], [1, S]), [0, 0], data)
        pld.tensor.barrier(signal)
        row = pld.tile.remote_load(data, peer=right, offsets=[0, 0], shape=[1, S])
        pl.store(row, [rd, 0], y)
        pld.tensor.barrier(signal)


@pl.jit
def fused_o(
    x: pl.Tensor[[2, S], pl.FP32],
    y: pl.Out[pl.Tensor[[2, S], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, S], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    fused_k(x, y, data, signal)


@pl.jit.host
def fused(x: pl.Tensor[[NR, 2, S], pl.FP32], y: pl.Out[pl.Tensor[[NR, 2, S], pl.FP32]]):
    buf = pld.alloc_window_buffer([1, S], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        fused_o(
            x[r],
            y[r],
            pld.window(buf, [1, S], dtype=pl.FP32),
            pld.window(sig, [NR, 1], dtype=pl.INT32),
            device=r,
        )


def best(compiled, args, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        compiled(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv):
    sizes = [int(a) for a in argv] or [256, 1024]
    repeat = 3
    print(f"{'P':>6} {'rounds s':>10} {'fused s':>10} {'ratio':>7}")
    for P in sizes:
        config = RunConfig(distributed_config=DistributedConfig(list(range(P))))
        x = torch.arange(2 * P * S, dtype=torch.float32).reshape(2, P, 1, S)
        y = torch.zeros_like(x)
        xf = x.permute(1, 0, 2, 3).reshape(P, 2, S).contiguous()
        yf = torch.zeros_like(xf)
        a = rounds.compile(x, y, config=config)
        b = fused.compile(xf, yf, config=config)
        t_rounds, t_fused = best(a, (x, y), repeat), best(b, (xf, yf), repeat)
        assert torch.equal(y, x.roll(-1, 1)), "rounds: wrong values"
        assert torch.equal(yf, y.permute(1, 0, 2, 3).reshape(P, 2, S)), "fused: wrong values"
        print(f"{P:>6} {t_rounds:>10.3f} {t_fused:>10.3f} {t_rounds / t_fused:>7.1f}")


if __name__ == "__main__":
    main(sys.argv[1:])
