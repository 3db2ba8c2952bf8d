"""Planted mistakes in Python programs, each with its exact message: the
error names the file and line (with the line and a caret under it), the
function, the parameter or the construct, and what to do instead."""

import os

import numpy as np
import pytest
import torch

import anyp
import anyp.language as pl
import anyp.language.distributed as pld
from anyp.ir.distributed_compiled_program import DistributedConfig
from anyp.runtime import RunConfig

SIZE = 64
NR = pl.dynamic("NR")
HERE = os.path.basename(__file__)
LINES = open(__file__).read().splitlines()


def line_of(marker):
    """The 1-based line of this file holding `# <marker>` and its text."""
    for i, text in enumerate(LINES):
        if text.rstrip().endswith("# " + marker):
            return i + 1, text
    raise AssertionError(marker)


def located(marker, message, start=None, width=None):
    """The located text: 'file:line: message', the line, a caret under it."""
    line, text = line_of(marker)
    col = len(text) - len(text.lstrip()) if start is None else text.index(start)
    if width is None:  # the statement, up to its comment
        width = len(text.split("  #")[0].rstrip()) - col if start is None else len(start)
    return f"{HERE}:{line}: {message}\n    {text}\n    {' ' * col}{'^' * width}"


def host_of(kernel):
    @pl.jit
    def orch(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        kernel(x, y, s)

    @pl.jit.host
    def host(x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            s = pld.window(buf, [1, 1], dtype=pl.INT32)
            orch(x[r], y[r], s, device=r)

    return host


def tensors(P=2):
    return torch.zeros((P, 1, SIZE)), torch.zeros((P, 1, SIZE))


@pl.jit.incore
def copy_kernel(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    s: pld.DistributedTensor[[1, 1], pl.INT32],
):
    y = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], y)


COPY = host_of(copy_kernel)


def compile_error(host, P=2):
    x, y = tensors(P)
    with pytest.raises(anyp.CompileError) as e:
        host.compile(x, y, config=RunConfig(distributed_config=DistributedConfig(list(range(P)))))
    return str(e.value)


# ---- arguments ---------------------------------------------------------------


def test_a_non_contiguous_tensor_names_the_parameter():
    x, y = tensors()
    with pytest.raises(anyp.ConfigError) as e:
        COPY.compile(x.transpose(0, 2), y)
    assert str(e.value) == (
        "argument error: 'host', parameter 'x': the tensor is not contiguous; pass "
        "tensor.contiguous() (anyp reads and writes the caller's memory in place, row-major)"
    )


def test_an_unsupported_dtype_names_the_parameter():
    x, y = tensors()
    with pytest.raises(anyp.ConfigError) as e:
        COPY.compile(x, y.double())
    assert str(e.value) == (
        "argument error: 'host', parameter 'y': dtype torch.float64 is not supported "
        "(float32, float16, bfloat16, int8, int16, int32, int64)"
    )


def test_a_non_contiguous_numpy_array_names_the_parameter():
    x = np.zeros((2, 1, 2 * SIZE), np.float32)[:, :, ::2]
    with pytest.raises(anyp.ConfigError) as e:
        COPY.compile(x, np.zeros((2, 1, SIZE), np.float32))
    assert str(e.value) == (
        "argument error: 'host', parameter 'x': the array is not C-contiguous; pass "
        "numpy.ascontiguousarray(a) (anyp reads and writes the caller's memory in place, "
        "row-major)"
    )


def test_a_list_is_not_a_tensor():
    _, y = tensors()
    with pytest.raises(anyp.ConfigError) as e:
        COPY.compile([0.0] * 4, y)
    assert str(e.value) == (
        "argument error: 'host', parameter 'x': expected a torch tensor or a numpy array, "
        "got list"
    )


def test_a_missing_parameter_is_named():
    x, _ = tensors()
    with pytest.raises(TypeError) as e:
        COPY.compile(x)
    assert str(e.value) == "host() is missing parameter 'y'"


# ---- statements and names -----------------------------------------------------


def test_a_while_loop_is_refused_at_its_line():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        while True:  # planted: while
            pass

    assert compile_error(host_of(k)) == located(
        "planted: while",
        "not supported by anyp: while loops in a traced function (use pl.range and if)",
    )


def test_a_for_over_a_python_range_is_refused():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        for i in range(2):  # planted: python range
            pass

    assert compile_error(host_of(k)) == located(
        "planted: python range", "not supported by anyp: a for loop over anything but pl.range(...)"
    )


def test_an_op_anyp_lacks_is_named():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        t = pl.teleport(x)  # planted: unknown op

    assert compile_error(host_of(k)) == located(
        "planted: unknown op",
        "AttributeError: not supported by anyp: pl.teleport (docs/python.md lists what the "
        "Python front-end has)",
    )


def test_and_on_traced_scalars_is_refused():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        r = pld.rank(pld.get_comm_ctx(s))
        if r > 0 and r < 3:  # planted: and
            pass

    assert compile_error(host_of(k)) == located(
        "planted: and",
        "a traced scalar has no Python truth value (it is known only when the program runs): "
        "use it as the whole test of an if, or combine conditions with pl ops; and / or / not "
        "on traced scalars are not supported by anyp",
    )


def test_a_tracer_error_is_located_at_the_statement():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        pld.system.notify(s, 0.5, [0, 0], 1, pld.NotifyOp.Set)  # planted: peer

    assert compile_error(host_of(k)) == located(
        "planted: peer",
        "compile error: function 'k' (incore): pld.system.notify: peer must be an integer",
    )


def test_a_call_with_an_unknown_keyword_is_located():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        copy_kernel(x, y, signal=s)  # planted: keyword

    assert compile_error(host_of(k)) == located(
        "planted: keyword", "TypeError: copy_kernel() has no parameter 'signal'"
    )


def test_an_unannotated_parameter_is_refused_where_the_function_is_defined():
    with pytest.raises(anyp.CompileError) as e:

        @pl.jit.incore
        def k(x, y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):  # planted: annotation
            pass

    line, text = line_of("planted: annotation")
    assert str(e.value).splitlines()[0] == (
        f"{HERE}:{line}: function 'k', parameter 'x': annotate it with pl.Tensor[[shape], dtype], "
        "pl.Out[...], pl.InOut[...], pld.DistributedTensor[[shape], dtype] or pl.Scalar[dtype]"
    )


def test_a_run_on_another_platform_than_the_compile_is_refused():
    x, y = tensors()
    compiled = COPY.compile(x, y)
    with pytest.raises(anyp.ConfigError) as e:
        compiled(x, y, config=RunConfig(platform="a5sim"))
    assert str(e.value) == (
        "config error: the program was compiled for platform 'a2a3sim', not 'a5sim': compile it "
        "again"
    )


def test_an_unknown_run_config_keyword_is_refused():
    with pytest.raises(TypeError) as e:
        RunConfig(turbo=True)
    assert str(e.value) == "RunConfig: not supported by anyp: turbo"
