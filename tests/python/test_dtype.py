"""The element types as PyPTO's DataType offers them: pl.FP32.get_byte() and
its kin, exact for every dtype anyp has, and window buffers sized in bytes
with them (`pld.alloc_window_buffer(SIZE * pl.FP32.get_byte())`, PyPTO's
tutorial form), run at P = 2 .. 16 and checked exactly; a buffer sized with
the wrong dtype is refused by name."""

import pytest
import torch

import anyp
import anyp.language as pl
import anyp.language.distributed as pld
from anyp.ir.distributed_compiled_program import DistributedConfig
from anyp.runtime import RunConfig

NR = pl.dynamic("NR")
SIZE = 24

# dtype: get_byte, get_bit, to_string, to_c_type_string, is_float, code
PYPTO_DATATYPE = [
    (pl.FP32, 4, 32, "fp32", "float", True, 0x34),
    (pl.FP16, 2, 16, "fp16", "half", True, 0x33),
    (pl.BF16, 2, 16, "bfloat16", "bfloat16", True, 0x40),
    (pl.INT8, 1, 8, "int8", "int8_t", False, 0x11),
    (pl.INT16, 2, 16, "int16", "int16_t", False, 0x12),
    (pl.INT32, 4, 32, "int32", "int32_t", False, 0x13),
    (pl.INT64, 8, 64, "int64", "int64_t", False, 0x14),
]


@pytest.mark.parametrize("dtype, nbytes, bits, name, c_type, is_float, code", PYPTO_DATATYPE)
def test_each_dtype_answers_as_pyptos_datatype(dtype, nbytes, bits, name, c_type, is_float, code):
    assert dtype.get_byte() == nbytes
    assert dtype.get_bit() == bits
    assert dtype.to_string() == name
    assert dtype.to_c_type_string() == c_type
    assert dtype.is_float() is is_float
    assert dtype.is_int() is (not is_float)
    assert dtype.is_signed_int() is (not is_float)
    assert dtype.is_unsigned_int() is False
    assert dtype.code() == code


def test_index_is_int64():
    assert pl.INDEX == pl.INT64 and pl.INDEX.get_byte() == 8


def ring_get_program(data_bytes_per_element, signal_bytes_per_element):
    """Step 07's ring get with its windows sized in bytes, as PyPTO's
    tutorial sizes them."""

    @pl.program
    class RingGetBytes:
        @pl.function(type=pl.FunctionType.InCore)
        def get_step(
            self,
            x: pl.Tensor[[1, SIZE], pl.FP32],
            y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
            src: pld.DistributedTensor[[1, SIZE], pl.FP32],
            signal: pld.DistributedTensor[[NR], pl.INT32],
        ) -> pl.Tensor[[1, SIZE], pl.FP32]:
            ctx = pld.get_comm_ctx(src)
            me = pld.rank(ctx)
            nranks = pld.nranks(ctx)
            right = (me + 1) % nranks
            left = (me + nranks - 1) % nranks
            pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)
            pld.system.notify(signal, peer=left, offsets=[me], value=1, op=pld.NotifyOp.AtomicAdd)
            pld.system.wait(signal, offsets=[right], expected=1, cmp=pld.WaitCmp.Ge)
            tile = pld.remote_load(src, peer=right, offsets=[0, 0], shape=[1, SIZE])
            out = pl.store(tile, [0, 0], y)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def chip_orch(
            self,
            x: pl.Tensor[[1, SIZE], pl.FP32],
            y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
            src: pld.DistributedTensor[[1, SIZE], pl.FP32],
            signal: pld.DistributedTensor[[NR], pl.INT32],
        ) -> pl.Tensor[[1, SIZE], pl.FP32]:
            out = self.get_step(x, y, src, signal)
            return out

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(
            self,
            x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
            y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        ) -> pl.Tensor[[NR, 1, SIZE], pl.FP32]:
            src_buf = pld.alloc_window_buffer(SIZE * data_bytes_per_element)
            signal_buf = pld.alloc_window_buffer(pld.world_size() * signal_bytes_per_element)
            for r in pl.range(pld.world_size()):
                src = pld.window(src_buf, [1, SIZE], dtype=pl.FP32)
                signal = pld.window(signal_buf, [NR], dtype=pl.INT32)
                self.chip_orch(x[r], y[r], src, signal, device=r)
            return y

    return RingGetBytes


def run(program, P):
    x = torch.arange(P * SIZE, dtype=torch.float32).reshape(P, 1, SIZE)
    y = torch.zeros_like(x)
    config = RunConfig(
        distributed_config=DistributedConfig(device_ids=list(range(P))), check_races=True
    )
    program.compile(x, y, config=config)(x, y)
    return x, y


@pytest.mark.parametrize("P", [2, 3, 4, 5, 8, 16])
def test_windows_sized_with_get_byte_run_exactly(P):
    x, y = run(ring_get_program(pl.FP32.get_byte(), pl.INT32.get_byte()), P)
    assert torch.equal(y, torch.roll(x, shifts=-1, dims=0))


def located(text, message):
    """A host compile error at the line of this file holding `text`: the
    place, the message, then the line with a caret under its code."""
    with open(__file__) as f:
        line, source = next((n, t.rstrip("\n")) for n, t in enumerate(f, 1) if text in t)
    code = source.strip()
    caret = " " * (len(source) - len(code)) + "^" * len(code)
    return (
        f"compile error: function 'host_orch' (host) at test_dtype.py:{line}: {message}\n"
        f"  test_dtype.py:{line}\n    {source}\n    {caret}"
    )


def test_a_window_sized_with_the_wrong_dtype_is_refused():
    with pytest.raises(anyp.CompileError) as refused:
        run(ring_get_program(pl.FP16.get_byte(), pl.INT32.get_byte()), 3)
    assert str(refused.value) == located(
        "src = pld.window(src_buf",
        "pld.window: a view [1, 24] FP32 (96 B) does not fit window buffer 'src_buf' (48 B)",
    )
    with pytest.raises(anyp.CompileError) as refused:
        run(ring_get_program(pl.FP32.get_byte(), pl.INT8.get_byte()), 5)
    assert str(refused.value) == located(
        "signal = pld.window(signal_buf",
        "pld.window: a view [5] INT32 (20 B) does not fit window buffer 'signal_buf' (5 B)",
    )
