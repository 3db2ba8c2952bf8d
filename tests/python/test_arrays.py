"""PyPTO's small on-core arrays: `pl.array.create(n, dtype)`, `arr[i] = v`,
`arr[i]`. An array of numbers is zeroed storage of the rank's own, written
and read at constant or traced indices, in an orchestration function and in
a kernel, carried by a loop; an index outside it at run time is a run error
naming the line, a constant one a compile error. An array of task ids
(`pl.TASK_ID`) holds a manual scope's tasks for deps=: `deps=[tids]`
depends on every task stored in it, including across a loop's init_values
and yield (PyPTO's phase pattern). Exact values at P = 2 ... 8, the golden
IR, and each misuse's message."""

import re

import pytest
import torch

import anyp
import anyp.language as pl
import anyp.language.distributed as pld
from anyp import ir
from anyp.ir import DistributedConfig
from anyp.runtime import RunConfig

NR = pl.dynamic("NR")
W = 8
K = 4


def _config(P):
    return RunConfig(distributed_config=DistributedConfig(list(range(P))), check_races=True)


@pl.program
class Weights:
    """Rank r scales x by the sum of the first n weights, weight i being
    r * 10 + i but weight 0 being 7; a kernel then adds the sum of an FP32
    array it fills itself."""

    @pl.function(type=pl.FunctionType.InCore)
    def scale(
        self,
        x: pl.Tensor[[1, W], pl.FP32],
        out: pl.Out[pl.Tensor[[1, W], pl.FP32]],
        k: pl.Scalar[pl.FP32],
    ):
        halves = pl.array.create(3, pl.FP32)
        for i in pl.range(3):
            halves[i] = pl.cast(i, pl.FP32) * 0.5
        extra = halves[0] + halves[1] + halves[2]  # 1.5
        pl.store(pl.add(pl.mul(pl.load(x, [0, 0], [1, W]), k), extra), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def per_rank(
        self,
        x: pl.Tensor[[1, W], pl.FP32],
        out: pl.Out[pl.Tensor[[1, W], pl.FP32]],
        me: pl.Scalar[pl.INT32],
        n: pl.Scalar[pl.INT32],
    ):
        weights = pl.array.create(K, pl.INT32)
        for i in pl.range(K):
            weights[i] = me * 10 + i
        weights[0] = 7
        total: pl.Scalar[pl.INT32] = 0
        for i in pl.range(n):
            total = total + weights[i]
        self.scale(x, out, pl.cast(total, pl.FP32))

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(
        self,
        x: pl.Tensor[[NR, 1, W], pl.FP32],
        out: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]],
        n: pl.Scalar[pl.INT32],
    ):
        for r in pl.range(pld.world_size()):
            self.per_rank(x[r], out[r], r, n, device=r)


def _weight_sum(r, n):
    return sum(7 if i == 0 else r * 10 + i for i in range(n))


@pytest.mark.parametrize("P", [2, 3, 5, 8])
@pytest.mark.parametrize("n", [1, K])
def test_a_number_array_is_written_and_read_at_traced_and_constant_indices(P, n):
    x = torch.arange(P * W, dtype=torch.float32).reshape(P, 1, W)
    out = torch.zeros(P, 1, W)
    ir.compile(Weights, config=_config(P))(x, out, n)
    want = torch.stack([x[r] * _weight_sum(r, n) + 1.5 for r in range(P)])
    assert torch.equal(out, want)


def test_an_array_is_created_storage_read_and_written_cell_by_cell():
    text = Weights.host.ir_text()
    assert "  %weights = pl.create_tensor [4] : Tensor[4] INT32\n" in text
    assert "    pl.write %weights[%5] = %7\n" in text
    assert "  pl.write %weights[0] = 7\n" in text
    assert "    %10 = pl.read %weights[%9] : Scalar INT32\n" in text
    assert "  %halves = pl.create_tensor [3] : Tensor[3] FP32\n" in text
    assert "  %7 = pl.read %halves[0] : Scalar FP32\n" in text


def test_an_index_past_the_end_at_run_time_is_a_run_error_naming_the_line():
    P = 2
    with pytest.raises(anyp.RunError) as caught:
        ir.compile(Weights, config=_config(P))(torch.ones(P, 1, W), torch.zeros(P, 1, W), K + 1)
    message = re.sub(r"py:\d+", "py:N", str(caught.value)).splitlines()[0]
    assert message == (
        "run error: rank 0 (device 0), function 'per_rank', op pl.read at test_arrays.py:N: "
        "region out of bounds: offsets [4] + shape [1] exceeds the tensor [4] (rank 0's tensor "
        "'per_rank.weights' (pl.create_tensor)) in dim 0"
    )


@pl.program
class Carried:
    """A loop carries an array through init_values: each iteration yields
    a new array holding the old one's cells plus the iteration's index
    (written with PyPTO's functional spellings, get_element and
    update_element)."""

    @pl.function(type=pl.FunctionType.InCore)
    def put_value(
        self,
        out: pl.Out[pl.Tensor[[1, K], pl.INT32]],
        col: pl.Scalar[pl.INDEX],
        v: pl.Scalar[pl.INT32],
    ):
        pl.write(out, [0, col], v)

    @pl.function(type=pl.FunctionType.Orchestration)
    def per_rank(self, out: pl.Out[pl.Tensor[[1, K], pl.INT32]], me: pl.Scalar[pl.INT32]):
        acc = pl.array.create(K, pl.INT32)
        for j in pl.range(K):
            acc[j] = me
        for step, (cur,) in pl.range(3, init_values=(acc,)):
            nxt = pl.array.create(K, pl.INT32)
            for j in pl.range(K):
                nxt = pl.array.update_element(nxt, j, pl.array.get_element(cur, j) + step)
            acc = pl.yield_(nxt)
        for j in pl.range(K):
            self.put_value(out, j, acc[j])

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, out: pl.Out[pl.Tensor[[NR, 1, K], pl.INT32]]):
        for r in pl.range(pld.world_size()):
            self.per_rank(out[r], r, device=r)


@pytest.mark.parametrize("P", [2, 3, 8])
def test_a_loop_carries_an_array_through_init_values_and_yield(P):
    out = torch.zeros(P, 1, K, dtype=torch.int32)
    ir.compile(Carried, config=_config(P))(out)
    want = torch.tensor([[[r + 0 + 1 + 2] * K] for r in range(P)], dtype=torch.int32)
    assert torch.equal(out, want)


# ---- arrays of task ids ---------------------------------------------------------------------


def _phases_program(depend_on):
    """Two deferred gathers stored in a TASK_ID array (one per slot, or by a
    loop at a traced index), then a copy whose deps= is `depend_on`."""

    @pl.program
    class Phases:
        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(
            self,
            a: pl.Tensor[[1, W], pl.FP32],
            b: pl.Tensor[[1, W], pl.FP32],
            out: pl.Out[pl.Tensor[[2 * NR, W], pl.FP32]],
            da: pl.InOut[pld.DistributedTensor[[NR, W], pl.FP32]],
            db: pl.InOut[pld.DistributedTensor[[NR, W], pl.FP32]],
            sa: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
            sb: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        ):
            with pl.manual_scope():
                tids = pl.array.create(2, pl.TASK_ID)
                tids[1] = pl.system.task_invalid()
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="gather_a") as ta:
                    pld.tensor.allgather(a, da, sa, defer=True)
                tids[0] = ta
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="gather_b") as tb:
                    pld.tensor.allgather(b, db, sb, defer=True)
                tids[1] = tb
                deps = {"all": [tids], "first": [tids[0]], "each": [tids[0], tids[1]]}[depend_on]
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy_out", deps=deps):
                    for r in pl.range(NR):
                        pl.store(pl.load(da, [r, 0], [1, W]), [r, 0], out)
                        pl.store(pl.load(db, [r, 0], [1, W]), [NR + r, 0], out)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(
            self,
            a: pl.Tensor[[NR, 1, W], pl.FP32],
            b: pl.Tensor[[NR, 1, W], pl.FP32],
            out: pl.Out[pl.Tensor[[NR, 2 * NR, W], pl.FP32]],
        ):
            da_buf = pld.alloc_window_buffer(NR * W * pl.FP32.get_byte())
            db_buf = pld.alloc_window_buffer(NR * W * pl.FP32.get_byte())
            sa_buf = pld.alloc_window_buffer(NR * pl.INT32.get_byte())
            sb_buf = pld.alloc_window_buffer(NR * pl.INT32.get_byte())
            for r in pl.range(pld.world_size()):
                da = pld.window(da_buf, [NR, W], dtype=pl.FP32)
                db = pld.window(db_buf, [NR, W], dtype=pl.FP32)
                sa = pld.window(sa_buf, [NR, 1], dtype=pl.INT32)
                sb = pld.window(sb_buf, [NR, 1], dtype=pl.INT32)
                self.per_rank(a[r], b[r], out[r], da, db, sa, sb, device=r)

    return Phases


def _rows(P, offset):
    return torch.arange(P * W, dtype=torch.float32).reshape(P, 1, W) + offset


@pytest.mark.parametrize("P", [2, 3, 4, 8])
@pytest.mark.parametrize("depend_on", ["all", "each"])
def test_deps_on_a_task_array_wait_for_every_task_stored_in_it(P, depend_on):
    a, b = _rows(P, 0.0), _rows(P, 1000.0)
    out = torch.zeros(P, 2 * P, W)
    ir.compile(_phases_program(depend_on), config=_config(P))(a, b, out)
    gathered = torch.cat([a.reshape(P, W), b.reshape(P, W)])
    assert torch.equal(out, gathered.expand(P, 2 * P, W))


def _compile_error(program, *args):
    with pytest.raises(anyp.CompileError) as caught:
        ir.compile(program, config=_config(2))(*args)
    return re.sub(r"line \d+", "line N", re.sub(r"py:\d+", "py:N", str(caught.value)))


def test_deps_on_one_slot_miss_the_other_task_and_are_refused():
    message = _compile_error(
        _phases_program("first"), _rows(2, 0.0), _rows(2, 0.0), torch.zeros(2, 4, W)
    )
    assert message.startswith(
        "test_arrays.py:N: compile error: the pl.at task 'copy_out' takes 'db', which the "
        "deferred collective (defer=True) of task 'gather_b' (line N) writes, but its deps= do "
        "not include that task"
    )


@pl.program
class LoopPhases:
    """PyPTO's phase pattern: a loop of branches stores each branch's task
    at a traced index, yields the array, and the next phase depends on it."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def per_rank(
        self,
        a: pl.Tensor[[1, W], pl.FP32],
        out: pl.Out[pl.Tensor[[NR, W], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[NR, W], pl.FP32]],
        sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        with pl.manual_scope():
            tids = pl.array.create(2, pl.TASK_ID)
            for phase, (prev,) in pl.range(1, init_values=(tids,)):
                nxt = pl.array.create(2, pl.TASK_ID)
                for branch in pl.parallel(1):
                    with pl.at(level=pl.Level.CORE_GROUP, name_hint="gather", deps=[prev]) as t:
                        pld.tensor.allgather(a, data, sig, defer=True)
                    nxt[branch] = t
                tids = pl.yield_(nxt)
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy_out", deps=[tids]):
                for r in pl.range(NR):
                    pl.store(pl.load(data, [r, 0], [1, W]), [r, 0], out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, a: pl.Tensor[[NR, 1, W], pl.FP32], out: pl.Out[pl.Tensor[[NR, NR, W], pl.FP32]]):
        data_buf = pld.alloc_window_buffer(NR * W * pl.FP32.get_byte())
        sig_buf = pld.alloc_window_buffer(NR * pl.INT32.get_byte())
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [NR, W], dtype=pl.FP32)
            sig = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
            self.per_rank(a[r], out[r], data, sig, device=r)


@pytest.mark.parametrize("P", [2, 5])
def test_a_task_array_yielded_by_a_loop_carries_its_tasks_to_deps(P):
    a = _rows(P, 3.0)
    out = torch.zeros(P, P, W)
    ir.compile(LoopPhases, config=_config(P))(a, out)
    assert torch.equal(out, a.reshape(1, P, W).expand(P, P, W))


# ---- misuse -----------------------------------------------------------------------------------


def _misuse(kind):
    @pl.program
    class Misuse:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, out: pl.Out[pl.Tensor[[1, K], pl.INT32]], n: pl.Scalar[pl.INT32]):
            arr = pl.array.create(K, pl.INT32)
            if kind == "constant index":
                arr[K] = 1
            elif kind == "traced extent":
                arr = pl.array.create(n, pl.INT32)
            elif kind == "tile element":
                arr[0] = pl.full([1, K], pl.INT32, 0)
            elif kind == "task in a number array":
                arr[0] = pl.system.task_invalid()
            elif kind == "iterate":
                arr = list(arr)
            elif kind == "rebound in a loop":
                for i in pl.range(2):
                    v = arr[0]
                    arr = pl.array.create(K, pl.INT32)
            elif kind == "update_element of a tensor":
                arr = pl.array.update_element(out, 0, 1)
            pl.write(out, [0, 0], arr[0])

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, out: pl.Out[pl.Tensor[[NR, 1, K], pl.INT32]], n: pl.Scalar[pl.INT32]):
            for r in pl.range(pld.world_size()):
                self.kernel(out[r], n, device=r)

    return Misuse


@pytest.mark.parametrize(
    "kind, error",
    [
        (
            "constant index",
            "IndexError: pl.array [4] INT32 index 4 is out of range [0, 4)",
        ),
        (
            "traced extent",
            "TypeError: pl.array.create: the extent must be a Python int (an array has a static "
            "size), got a traced scalar",
        ),
        (
            "tile element",
            "TypeError: pl.array [4] INT32 element must be a number or a traced "
            "scalar, got Tile",
        ),
        (
            "task in a number array",
            "TypeError: pl.array [4] INT32 element must be a number or a traced "
            "scalar, got TaskId",
        ),
        ("iterate", "TypeError: iterating over a pl.array [4] INT32 (index it"),
        (
            "rebound in a loop",
            "not supported by anyp: 'arr' (pl.array [4] INT32) is carried by a loop and rebound "
            "here to another value; the body is read once, so an array a loop carries is rebound "
            "only to itself (pl.array.update_element returns it), or carried through init_values",
        ),
        (
            "update_element of a tensor",
            "TypeError: pl.array.update_element: expected a pl.array, got Value",
        ),
    ],
)
def test_each_misuse_is_refused_at_its_line(kind, error):
    message = _compile_error(_misuse(kind), torch.zeros(2, 1, K, dtype=torch.int32), 2)
    assert message.startswith("test_arrays.py:N: " + error), message


def test_an_array_named_inside_a_pl_at_block_is_refused():
    @pl.program
    class Inside:
        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, out: pl.Out[pl.Tensor[[1, K], pl.INT32]]):
            arr = pl.array.create(K, pl.INT32)
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="use"):
                pl.write(out, [0, 0], arr[0])

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, out: pl.Out[pl.Tensor[[NR, 1, K], pl.INT32]]):
            for r in pl.range(pld.world_size()):
                self.per_rank(out[r], device=r)

    message = _compile_error(Inside, torch.zeros(2, 1, K, dtype=torch.int32))
    assert message.startswith(
        "test_arrays.py:N: not supported by anyp: 'arr' (pl.array [4] INT32) inside a pl.at "
        "block: an array stays in its function (read the elements the block needs into scalars "
        "before it)"
    ), message


def test_the_array_annotation_and_task_dtype_print_as_pypto_spells_them():
    assert repr(pl.Array[4, pl.INT32]) == "pl.Array[4, pl.INT32]"
    assert repr(pl.Array[2, pl.TASK_ID]) == "pl.Array[2, pl.TASK_ID]"
    assert repr(pl.TASK_ID) == "pl.TASK_ID"
    with pytest.raises(TypeError, match=r"^pl.Array takes \[extent, dtype\]$"):
        pl.Array[4]
