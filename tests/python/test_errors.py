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


def at(marker):
    """How the core names the place of the op on the line marked `marker`."""
    return f" at {HERE}:{line_of(marker)[0]}"


def source_line(marker):
    """What the Python layer appends to a core error found after the trace:
    the marked line, a caret under its code (up to its comment)."""
    line, text = line_of(marker)
    col = len(text) - len(text.lstrip())
    width = len(text.split("  #")[0].rstrip()) - col
    return f"\n  {HERE}:{line}\n    {text}\n    {' ' * col}{'^' * width}"


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


def test_a_float_signal_value_or_expected_count_is_refused():
    @pl.jit.incore
    def value(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        pld.system.notify(s, 0, [0, 0], 1.5, pld.NotifyOp.Set)  # planted: float value

    @pl.jit.incore
    def expected(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        pld.system.wait(s, [0, 0], 1.5, pld.WaitCmp.Ge)  # planted: float expected

    assert compile_error(host_of(value)) == located(
        "planted: float value",
        "compile error: function 'value' (incore): pld.system.notify: the value (a signal cell "
        "is INT32) must be an integer",
    )
    assert compile_error(host_of(expected)) == located(
        "planted: float expected",
        "compile error: function 'expected' (incore): pld.system.wait: the expected value (a "
        "signal cell is INT32) must be an integer",
    )


def test_an_argument_of_the_wrong_kind_names_the_op_and_each_argument():
    @pl.jit.incore
    def cmp_tuple(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        pld.system.wait(s, [0, 0], 1, (pld.WaitCmp.Ge,))  # planted: cmp tuple

    @pl.jit.incore
    def offsets_none(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        t = pl.load(x, None, [1, SIZE])  # planted: offsets None

    assert compile_error(host_of(cmp_tuple)) == located(
        "planted: cmp tuple",
        "pld.system.wait(signal=tensor or window view, offsets=list of 2, expected=int, "
        "cmp=tuple of 1): an argument is of the wrong kind; it takes (tensor or window view, "
        "list, value, pld.WaitCmp)",
    )
    assert compile_error(host_of(offsets_none)) == located(
        "planted: offsets None",
        "pl.load(tensor=tensor or window view, offsets=None, shapes=list of 2, "
        "valid_shapes=None, valid_shape=None, target_memory=None): an argument is of the wrong "
        "kind (TypeError: 'NoneType' object is not iterable)",
    )


def test_an_integer_beyond_64_bits_is_named():
    @pl.jit.incore
    def huge_peer(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        pld.system.notify(s, 10**20, [0, 0], 1, pld.NotifyOp.Set)  # planted: huge peer

    assert compile_error(host_of(huge_peer)) == located(
        "planted: huge peer",
        "compile error: the integer 100000000000000000000 does not fit in 64 bits (anyp's "
        "integers are INT64 at most)",
    )

    @pl.jit.host
    def host(x: pl.Tensor[[NR, 1, SIZE], pl.FP32], n: pl.Scalar[pl.INT64]):
        pass

    with pytest.raises(anyp.ConfigError) as e:
        host.compile(torch.zeros(2, 1, SIZE), 2**64)
    assert str(e.value) == (
        "argument error: 'host', parameter 'n': the integer 18446744073709551616 does not fit "
        "in 64 bits (anyp's integers are INT64 at most)"
    )


def test_a_function_without_a_source_file_is_refused_by_name():
    namespace = {"pl": pl, "SIZE": SIZE}
    with pytest.raises(anyp.UnsupportedError) as e:
        exec(  # noqa: S102 (the point: a function exec makes has no source file)
            "@pl.jit.incore\ndef made(x: pl.Tensor[[1, SIZE], pl.FP32]):\n    pass\n", namespace
        )
    assert str(e.value) == (
        "not supported by anyp: 'made' has no source file to read (anyp reads a decorated "
        "function from its source, so it cannot take one made by exec, eval or the interactive "
        "prompt; define it in a .py file)"
    )


def test_a_column_vector_stored_into_a_row_gets_the_reshape_hint():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        column = pl.row_sum(pl.zeros([8, 8], dtype=pl.FP32))  # [8, 1]
        y = pl.store(column, [0, 0], y)  # planted: column store

    first_lines = compile_error(host_of(k)).splitlines()[:2]
    assert first_lines == [
        f"compile error: function 'k' (incore), op pl.store at {HERE}:"
        f"{line_of('planted: column store')[0]}: the region [8, 1] is larger than the target "
        f"'y' [1, {SIZE}] in dim 0",
        "  hint: the tile is a column vector [8, 1]; pl.reshape it to [1, 8] before storing it "
        "as a row",
    ]


def test_a_kernel_dispatched_from_the_host_is_located():
    @pl.jit.host
    def host(x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            s = pld.window(buf, [1, 1], dtype=pl.INT32)
            copy_kernel(x[r], y[r], s, device=r)  # planted: kernel from the host

    line, _ = line_of("planted: kernel from the host")
    assert compile_error(host) == (
        f"compile error: function 'host' (host), op call @copy_kernel at {HERE}:{line}: "
        "'copy_kernel' is incore, but the host may only dispatch orchestration functions (device "
        "dispatch of a non-orchestration function); wrap the kernel in a @pl.jit function and "
        "dispatch that" + source_line("planted: kernel from the host")
    )


def test_a_literal_rank_loop_bound_names_the_dispatch():
    @pl.jit
    def orch(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        copy_kernel(x, y, s)

    @pl.jit.host
    def host(x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        for r in pl.range(2):
            orch(x[r], y[r], pld.window(buf, [1, 1], dtype=pl.INT32), device=r)  # planted: two

    line, _ = line_of("planted: two")
    assert compile_error(host, 3) == (
        f"compile error: function 'host' (host): rank 2 of P = 3 gets no dispatch; the dispatch "
        f"of 'orch' at {HERE}:{line} does not reach it; loop the dispatch over "
        "pl.range(pld.world_size()), never a literal bound" + source_line("planted: two")
    )


def test_calling_a_kernel_from_python_names_its_level():
    x, y = tensors()
    with pytest.raises(anyp.UnsupportedError) as e:
        copy_kernel(x, y, None)
    assert str(e.value) == (
        "'copy_kernel' is an incore function: call it from a traced function, or run a "
        "@pl.jit.host function"
    )


def test_a_device_that_is_not_a_rank_is_located():
    @pl.jit
    def orch(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        copy_kernel(x, y, s)

    @pl.jit.host
    def host(x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            orch(x[r], y[r], pld.window(buf, [1, 1], dtype=pl.INT32), device=0.5)  # planted: dev

    assert compile_error(host) == located(
        "planted: dev",
        "compile error: device= must be a rank: an int, a traced scalar (a rank loop's index) "
        "or a pl.dynamic dim expression such as NR - 1, got float",
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


def test_pyptos_runtime_switches_and_ring_sizes_are_accepted_as_pypto_types_them():
    config = RunConfig(enable_dep_gen=True, enable_scope_stats=False, enable_chip_swimlane=True)
    assert (config.enable_dep_gen, config.enable_scope_stats, config.enable_chip_swimlane) == (
        True,
        False,
        True,
    )
    RunConfig(ring_task_window=64, ring_heap=[1 << 20, 1 << 24, 1 << 30, 0], ring_dep_pool=(8,) * 4)
    for switch in ("enable_dep_gen", "enable_scope_stats", "enable_chip_swimlane"):
        with pytest.raises(TypeError) as e:
            RunConfig(**{switch: 1})
        assert str(e.value) == f"RunConfig: {switch} must be a bool, got 1"
    with pytest.raises(TypeError) as e:
        RunConfig(ring_heap=[1, 2, 3])
    assert str(e.value) == (
        "RunConfig: ring_heap must be an int >= 0 or a list of 4 of them (one per ring), "
        "got [1, 2, 3]"
    )
    with pytest.raises(TypeError) as e:
        RunConfig(ring_task_window=-1)
    assert str(e.value) == (
        "RunConfig: ring_task_window must be an int >= 0 or a list of 4 of them (one per ring), "
        "got -1"
    )


# ---- loops, branches and names --------------------------------------------------


def test_a_kind_change_of_a_loop_carried_name_is_refused():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        acc = pl.load(x, [0, 0], [1, SIZE])
        for i in pl.range(4):
            acc = pl.add(acc, acc)
            acc = pld.rank(pld.get_comm_ctx(s))  # planted: kind change

    line, _ = line_of("planted: kind change")
    assert compile_error(host_of(k)) == located(
        "planted: kind change",
        f"not supported by anyp: 'acc' is carried by the loop at line {line - 2} as "
        "Tile[1, 64] FP32 and rebound here to Scalar INT32; a loop-carried name keeps its kind, "
        "dtype and shape (give the new value another name)",
    )


def test_a_shape_change_of_a_loop_carried_name_is_refused():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        t = pl.load(x, [0, 0], [1, SIZE])
        for i in pl.range(2):
            y = pl.store(t, [0, 0], y)
            t = pl.load(x, [0, 0], [1, 32])  # planted: shape change

    line, _ = line_of("planted: shape change")
    assert compile_error(host_of(k)) == located(
        "planted: shape change",
        f"not supported by anyp: 't' is carried by the loop at line {line - 2} as "
        "Tile[1, 64] FP32 and rebound here to Tile[1, 32] FP32; a loop-carried name keeps its "
        "kind, dtype and shape (give the new value another name)",
    )


def test_a_python_list_carried_by_a_traced_loop_is_refused():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        offsets = [0, 0]
        for i in pl.range(2):  # planted: python carried
            y = pl.store(pl.load(x, offsets, [1, SIZE]), [0, 0], y)
            offsets = [0, 0]

    assert compile_error(host_of(k)) == located(
        "planted: python carried",
        "not supported by anyp: 'offsets' is carried by this loop (read, then assigned in its "
        "body) but holds a Python list; the body is read once, so it would keep one value (make "
        "it a traced value, or give the new value another name)",
    )


def test_break_is_refused_at_its_line():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        for i in pl.range(4):
            break  # planted: break

    assert compile_error(host_of(k)) == located(
        "planted: break",
        "not supported by anyp: break in a traced function (use pl.range and if)",
    )


def test_a_comprehension_over_a_traced_value_is_refused():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        rows = [row for row in x]  # planted: comprehension

    assert compile_error(host_of(k)) == located(
        "planted: comprehension",
        "not supported by anyp: iterating over a traced value (a comprehension, unpacking or for "
        "loop over a tensor, tile or scalar); loop with pl.range",
    )


def test_a_return_inside_a_loop_is_refused():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        for i in pl.range(4):
            return y  # planted: return in loop

    assert compile_error(host_of(k)) == located(
        "planted: return in loop",
        "not supported by anyp: return inside a for loop (a return ends the function or a "
        "branch of an if)",
    )


def test_a_loop_with_init_values_must_yield():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        t = pl.load(x, [0, 0], [1, SIZE])
        for i, (acc,) in pl.range(4, init_values=(t,)):  # planted: no yield
            acc2 = pl.add(acc, t)

    assert compile_error(host_of(k)) == located(
        "planted: no yield",
        "not supported by anyp: a for loop with init_values whose body does not end in "
        "pl.yield_(...)",
    )


def test_a_yield_of_another_kind_than_the_init_value_is_refused():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        t = pl.load(x, [0, 0], [1, SIZE])
        for i, (acc,) in pl.range(4, init_values=(t,)):
            out = pl.yield_(i)  # planted: yield kind

    assert compile_error(host_of(k)) == located(
        "planted: yield kind",
        "not supported by anyp: pl.yield_ value 0 is Scalar INT32, but the loop carries "
        "Tile[1, 64] FP32 there; a loop-carried value keeps its kind, dtype and shape",
    )


def test_a_yield_outside_a_loop_is_refused():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        t = pl.yield_(pl.load(x, [0, 0], [1, SIZE]))  # planted: stray yield

    assert compile_error(host_of(k)) == located(
        "planted: stray yield",
        "not supported by anyp: pl.yield_ outside a for loop with init_values (or an if on a "
        "traced scalar)",
    )


def test_a_name_of_another_kind_in_each_branch_is_refused():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        r = pld.rank(pld.get_comm_ctx(s))
        v = pl.load(x, [0, 0], [1, SIZE])
        if r == 0:  # planted: branch kinds
            v = r
        y = pl.store(v, [0, 0], y)

    assert compile_error(host_of(k)) == located(
        "planted: branch kinds",
        "not supported by anyp: 'v' is Scalar INT32 after the then branch of this if on a traced "
        "scalar and Tile[1, 64] FP32 after its else branch; a name keeps its kind, dtype and "
        "shape across the branches (or give it another name)",
    )


def test_a_traced_scalar_in_a_tile_shape_is_refused():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        n = pld.nranks(pld.get_comm_ctx(s))
        t = pl.load(x, [0, 0], [1, n])  # planted: scalar shape

    assert compile_error(host_of(k)) == located(
        "planted: scalar shape",
        "not supported by anyp: a tile shape from a traced scalar (pl.load's shapes are ints "
        "or pl.dynamic dims: a tile has a static shape; its valid_shapes may be traced)",
    )


# ---- calls, keywords and annotations ----------------------------------------------


def test_a_wrong_keyword_of_an_op_is_located():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        pld.system.wait(s, offset=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)  # planted: op keyword

    assert compile_error(host_of(k)) == located(
        "planted: op keyword",
        "TypeError: wait() got an unexpected keyword argument 'offset'",
    )


def test_a_missing_argument_of_a_traced_call_is_located():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        copy_kernel(x, y)  # planted: missing argument

    assert compile_error(host_of(k)) == located(
        "planted: missing argument", "TypeError: copy_kernel() is missing parameter 's'"
    )


def test_a_shape_without_a_dtype_is_refused_where_it_is_written():
    with pytest.raises(TypeError) as e:

        @pl.jit.incore
        def k(x: pl.Tensor[[1, SIZE]]):  # planted: no dtype
            pass

    assert str(e.value) == "pl.Tensor[[shape], dtype]: give a shape list and a dtype"
    assert e.traceback[-1].lineno + 1 != 0  # raised by Python while the def line runs
    line, _ = line_of("planted: no dtype")
    assert any(entry.lineno + 1 == line for entry in e.traceback)


def test_an_out_scalar_is_refused():
    with pytest.raises(TypeError) as e:

        @pl.jit.incore
        def k(n: pl.Out[pl.Scalar[pl.INT32]]):
            pass

    assert str(e.value) == "pl.Out / pl.InOut take a tensor type, not a scalar"


def test_a_program_without_a_host_entry_is_refused():
    @pl.program
    class NoHost:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, x: pl.Tensor[[1, SIZE], pl.FP32]):
            pass

    x, y = tensors()
    with pytest.raises(anyp.CompileError) as e:
        NoHost.compile(x, y)
    assert str(e.value) == (
        "not supported by anyp: @pl.program 'NoHost' needs exactly one "
        "@pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator) entry (found none), or "
        "one orchestration function that no other one calls"
    )


def test_an_unknown_function_type_is_refused():
    with pytest.raises(anyp.CompileError) as e:
        pl.function(type=pl.FunctionType.Inline)
    assert str(e.value) == "not supported by anyp: @pl.function(type=pl.FunctionType.Inline)"


# ---- the traceback shows the user's lines -----------------------------------------


def test_the_traceback_ends_at_the_users_line():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        t = pl.load(x, [0, 0], [1, SIZE], 1)  # planted: traceback

    x, y = tensors()
    with pytest.raises(anyp.CompileError) as e:
        host_of(k).compile(x, y)
    line, _ = line_of("planted: traceback")
    frames = [(os.path.basename(t.path), t.lineno + 1, t.name) for t in e.traceback]
    # The call site in this test, anyp's entry point, then the user's frames:
    # the host's dispatch, the orchestration's call and the kernel's line.
    user = [f for f in frames if f[0] == HERE]
    assert user[-1] == (HERE, line, "k")
    assert [f[2] for f in user[-3:]] == ["host", "orch", "k"]
    assert [f[0] for f in frames if f[0] != HERE] == ["_errors.py"]  # _user_facing's entry


# ---- errors the core finds after the trace: the core names the op's line, the
# Python layer appends it with a caret --------------------------------------------------


def test_a_tile_shape_that_breaks_the_row_rule_is_refused():
    @pl.jit.incore
    def row_kernel(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        t = pl.load(x, [0, 0], [1, 3])  # planted: row rule

    assert compile_error(host_of(row_kernel)) == (
        "compile error: function 'row_kernel' (incore), op pl.load"
        + at("planted: row rule")
        + ": a tile row of 3 x FP32 = 12 B is not a whole number of 32-byte units (tile [1, 3]); "
        "load a tile of a multiple of 8 elements per row with a valid_shape of the part you need "
        "(only that part is read), or pl.read one element" + source_line("planted: row rule")
    )


def test_a_notify_at_the_host_level_is_refused():
    @pl.jit.host
    def host_notify(
        x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]
    ):
        buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        s = pld.window(buf, [1, 1], dtype=pl.INT32)
        pld.system.notify(s, peer=0, offsets=[0, 0], value=1, op=pld.NotifyOp.Set)  # planted: host

    assert compile_error(host_notify) == (
        "compile error: function 'host_notify' (host): op pld.system.notify"
        + at("planted: host")
        + " is not allowed at the host level (it is an incore op)"
        + source_line("planted: host")
    )


def test_a_tensor_of_another_dtype_than_declared_names_the_parameter():
    _, y = tensors()
    with pytest.raises(anyp.CompileError) as e:
        COPY.compile(torch.zeros((2, 1, SIZE), dtype=torch.int32), y)
    assert str(e.value) == (
        "compile error: function 'host', parameter 'x': dtype mismatch: declared FP32, actual INT32"
    )


def test_a_wait_nobody_notifies_is_a_deadlock_report():
    @pl.jit.incore
    def lonely(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        pld.system.wait(s, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)  # planted: lonely

    x, y = tensors()
    compiled = host_of(lonely).compile(x, y)
    with pytest.raises(anyp.DeadlockError) as e:
        compiled(x, y)
    assert str(e.value) == (
        "deadlock: no rank can make progress (2 of 2 ranks waiting)\n"
        "  ranks 0, 1 (2 ranks): function 'lonely', op pld.system.wait"
        + at("planted: lonely")
        + ": waits for signal 'buf' cell [0, 0] Ge 1; current value 0; never notified"
        + source_line("planted: lonely")
    )


def test_two_unordered_puts_into_one_window_are_a_race_report():
    @pl.jit.incore
    def racy(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        pld.tensor.put(s, peer=0, src=s)  # planted: racy put

    x, y = tensors()
    compiled = host_of(racy).compile(x, y, config=RunConfig(check_races=True))
    with pytest.raises(anyp.RaceError) as e:
        compiled(x, y)
    put = "op pld.tensor.put" + at("planted: racy put")
    assert str(e.value) == (
        "race report: 1 op pair accesses the same elements from two ranks with no happens-before "
        "order (at least one writes)\n"
        "  race 1: window 'buf' of rank 0, elements [0, 0]\n"
        f"    first:  write by rank 0 (device 0), function 'racy', {put}\n"
        f"    second: write by rank 1 (device 1), function 'racy', {put}\n"
        "    missing: no wait on rank 1 observed a notify that rank 0 issued after its write; rank "
        "1 never synchronised with rank 0" + source_line("planted: racy put")
    )


def test_a_tile_parameter_is_refused_where_the_function_is_defined():
    with pytest.raises(anyp.CompileError) as e:

        @pl.jit.incore
        def k(t: pl.Tile[[1, SIZE], pl.FP32]):  # planted: tile parameter
            pass

    assert str(e.value) == located(
        "planted: tile parameter",
        "function 'k', parameter 't': not supported by anyp: a pl.Tile parameter (pass a tensor "
        "and pl.load it)",
    )


def test_an_assignment_expression_is_refused_under_it():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        y = pl.store((t := pl.load(x, [0, 0], [1, SIZE])), [0, 0], y)  # planted: walrus

    assert compile_error(host_of(k)) == located(
        "planted: walrus",
        "not supported by anyp: an assignment expression (:=); assign in a statement",
        start="t := pl.load(x, [0, 0], [1, SIZE])",
    )


def test_an_assignment_to_an_element_is_refused():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        y[0] = pl.load(x, [0, 0], [1, SIZE])  # planted: element assignment

    assert compile_error(host_of(k)) == located(
        "planted: element assignment",
        "not supported by anyp: assigning to x[i] (slice every dim: x[a:b, c:d] = value writes "
        "a slice)",
    )


def test_a_tile_min_is_refused_with_the_ops_that_do_it():
    @pl.jit.incore
    def k(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        t = pl.min(pl.load(x, [0, 0], [1, SIZE]), 0.0)  # planted: tile min

    assert compile_error(host_of(k)) == located(
        "planted: tile min",
        "not supported by anyp: pl.min of a tile (PyPTO's reduction with an axis): use "
        "pl.row_min / pl.col_min, or pl.minimum for the elementwise minimum",
    )


# ---- tensors made by pl.create_tensor and the tensor-level ops ----------------------


def orch_host(orch):
    """A host dispatching orch(x[r], y[r]) with [1, SIZE] FP32 rows."""

    @pl.jit.host
    def host(x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            orch(x[r], y[r], device=r)

    return host


def test_a_loop_that_rebinds_a_parameter_to_a_new_tensor_is_refused():
    @pl.jit
    def orch(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        for i in pl.range(2):
            y = pl.add(y, x)  # planted: carried parameter

    line = line_of("planted: carried parameter")[0]
    assert compile_error(orch_host(orch)) == located(
        "planted: carried parameter",
        f"not supported by anyp: 'y' is carried by the loop at line {line - 1} and names a "
        "parameter, a window view or a slice; assigning it a new tensor would leave that tensor "
        "unchanged (write into it with pl.assemble or a slice assignment, or create 'y' with "
        "pl.create_tensor above the loop)",
    )


def test_a_view_of_a_loop_local_tensor_kept_past_its_iteration_is_refused():
    @pl.jit
    def orch(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        prev = x[0:1, 0:8]
        for i in pl.range(3):
            t = pl.add(x, 1.0)
            y[0:1, 0:8] = prev
            prev = t[0:1, 8:16]  # planted: kept view

    assert compile_error(orch_host(orch)) == located(
        "planted: kept view",
        "compile error: function 'orch' (orchestration): assignment of a view of the tensor "
        "'orch.t' (pl.create_tensor inside a pl.range loop) to a variable from outside that "
        "loop: the loop makes that tensor again, zeroed and in the same storage, in every "
        "iteration, so the variable would not keep this iteration's elements; create the "
        "tensor above the loop, or copy the view into a tensor created above it "
        "(pl.tensor.copy / pl.assemble)",
    )


def test_a_slice_with_a_run_time_extent_is_refused():
    @pl.jit
    def orch(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        for i in pl.range(1, 4):
            y[0:1, 0:i] = x[0:1, 0:i]  # planted: run-time extent

    assert compile_error(orch_host(orch)) == located(
        "planted: run-time extent",
        "not supported by anyp: a slice whose extent in dim 1 is known only at run time (write "
        "the slice as start : start + extent with a static extent)",
    )


def test_a_slice_with_a_step_is_refused():
    @pl.jit
    def orch(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        y[0:1, 0:SIZE] = x[0:1, 0:SIZE:2]  # planted: step

    assert compile_error(orch_host(orch)) == located(
        "planted: step",
        "not supported by anyp: a slice with a step (slices are contiguous)",
        start="0:SIZE:2",
    )


def test_an_index_among_slices_is_refused():
    @pl.jit
    def orch(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        y[0, 0:SIZE] = x  # planted: index

    assert compile_error(orch_host(orch)) == located(
        "planted: index",
        "not supported by anyp: indexing one dim of a slice (slice every dim with start:stop, "
        "e.g. x[0:8, 0:16])",
        start="0",
        width=1,
    )


def test_a_slice_assignment_of_another_shape_names_both_shapes():
    @pl.jit
    def orch(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        y[0:1, 0:8] = x  # planted: slice shape

    assert compile_error(orch_host(orch)) == (
        "compile error: function 'orch' (orchestration), op pl.tensor.copy"
        + at("planted: slice shape")
        + ": the source [1, 64] and the destination [1, 8] differ; copy takes one shape "
        "(pl.tensor.slice the larger one)" + source_line("planted: slice shape")
    )


def test_a_tensor_op_anyp_lacks_names_the_ones_it_has():
    @pl.jit
    def orch(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        y[0:1, 0:SIZE] = pl.exp(x)  # planted: exp of a tensor

    assert compile_error(orch_host(orch)) == located(
        "planted: exp of a tensor",
        "not supported by anyp: pl.exp of a tensor (anyp's tensor-level ops are pl.add, sub, "
        "mul, div, maximum, minimum and cast); pl.load a tile and use the tile form",
    )


def test_a_tensor_created_in_the_host_function_is_refused():
    @pl.jit.host
    def host(x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        t = pl.create_tensor([1, SIZE], pl.FP32)  # planted: host tensor

    assert compile_error(host) == located(
        "planted: host tensor",
        "compile error: function 'host' (host): pl.create_tensor in the host function: a host "
        "function allocates window buffers (pld.alloc_window_buffer) or takes tensors as "
        "parameters; create the tensor in the orchestration function or kernel that uses it",
    )


def test_a_run_error_names_the_created_tensor_by_its_variable():
    @pl.jit
    def orch(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
        scratch = pl.create_tensor([1, 8], pl.FP32)
        for i in pl.range(2):
            y[0:1, i * 8 : i * 8 + 8] = scratch[0:1, i : i + 8]  # planted: past the tensor

    x, y = tensors()
    with pytest.raises(anyp.RunError) as e:  # both ranks fail: one worker names rank 0 every time
        orch_host(orch)(x, y, config=RunConfig(workers=1))
    assert str(e.value) == (
        "run error: rank 0 (device 0), function 'orch', op pl.tensor.slice"
        + at("planted: past the tensor")
        + ": region out of bounds: offsets [0, 1] + shape [1, 8] exceeds the tensor [1, 8] "
        "(rank 0's tensor 'orch.scratch' (pl.create_tensor)) in dim 1"
        + source_line("planted: past the tensor")
    )


def test_the_mode_names_are_the_cpp_algorithm_lists():
    """anyp._core.collective_modes(): the rows of
    include/anyp/collective_algorithms.hpp, then "auto" — what every
    pld.tensor collective checks its mode= against."""
    assert anyp._core.collective_modes() == {
        "allreduce": ["mesh", "ring", "recursive_doubling", "rabenseifner", "tree", "auto"],
        "broadcast": ["mesh", "tree", "scatter_allgather", "auto"],
        "allgather": ["mesh", "bruck", "recursive_doubling", "auto"],
        "reduce_scatter": ["mesh", "recursive_halving", "pairwise", "auto"],
        "all_to_all": ["mesh", "pairwise", "bruck", "auto"],
    }
    with pytest.raises(ValueError) as e:
        pld.tensor.allgather(None, None, None, mode="ring")
    assert str(e.value) == (
        'pld.tensor.allgather mode must be "mesh", "bruck", "recursive_doubling" or "auto", '
        "got 'ring'"
    )


# ---- errors of the host's run at compile time name the host's line ----------


@pl.jit.host
def unviewed_buffer(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]
):
    buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    spare = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)  # planted: never viewed
    for r in pl.range(pld.world_size()):
        s = pld.window(buf, [1, 1], dtype=pl.INT32)
        orch_of_copy(x[r], y[r], s, device=r)


@pl.jit.host
def undispatched_view(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]
):
    buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        s = pld.window(buf, [1, 1], dtype=pl.INT32)
        idle = pld.window(buf, [1, 1], dtype=pl.INT32)  # planted: never dispatched
        orch_of_copy(x[r], y[r], s, device=r)


@pl.jit
def orch_of_copy(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    s: pld.DistributedTensor[[1, 1], pl.INT32],
):
    copy_kernel(x, y, s)


def test_a_buffer_never_viewed_names_its_allocation():
    assert compile_error(unviewed_buffer) == (
        "compile error: function 'unviewed_buffer' (host)"
        + at("planted: never viewed")
        + ": window buffer 'spare' is allocated but never viewed with pld.window (dead allocation)"
        + source_line("planted: never viewed")
    )


def test_a_view_never_dispatched_names_its_window_call():
    assert compile_error(undispatched_view) == (
        "compile error: function 'undispatched_view' (host)"
        + at("planted: never dispatched")
        + ": a pld.window view of buffer 'buf' is never passed to a dispatch"
        + source_line("planted: never dispatched")
    )
