"""ring_harness.py — the host the ring tests of tests/python run their kernel
under: rank r runs `kernel(x, y, src, dst, signal)` on x[r] -> y[r], with
two [1, size] FP32 windows (src, dst) and a [1, 1] INT32 signal; the host's
rank count is `rows` (NR, or a constant to plant the seed's pitfall)."""

import anyp.language as pl
import anyp.language.distributed as pld

NR = pl.dynamic("NR")


def ring_host(kernel, size, rows=NR):
    @pl.jit
    def orch(
        x: pl.Tensor[[1, size], pl.FP32],
        y: pl.Out[pl.Tensor[[1, size], pl.FP32]],
        src: pld.DistributedTensor[[1, size], pl.FP32],
        dst: pld.DistributedTensor[[1, size], pl.FP32],
        signal: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        kernel(x, y, src, dst, signal)

    @pl.jit.host
    def host(
        x: pl.Tensor[[rows, 1, size], pl.FP32], y: pl.Out[pl.Tensor[[rows, 1, size], pl.FP32]]
    ):
        src_buf = pld.alloc_window_buffer([1, size], dtype=pl.FP32)
        dst_buf = pld.alloc_window_buffer([1, size], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            orch(
                x[r],
                y[r],
                pld.window(src_buf, [1, size], dtype=pl.FP32),
                pld.window(dst_buf, [1, size], dtype=pl.FP32),
                pld.window(signal_buf, [1, 1], dtype=pl.INT32),
                device=r,
            )

    return host
