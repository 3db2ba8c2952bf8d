"""PyPTO's task scopes. In an orchestration function, `with pl.at(level=
pl.Level.CORE_GROUP, name_hint=..., deps=[...]) as task:` outlines the block
into an incore task (its tensors narrowed to In where it writes none), and
`with pl.manual_scope():` orders tasks by deps=. A split-phase collective
(`allgather(..., defer=True)`) completes where it stands; a task of a manual
scope that reads its window without depending on its task is refused, since
PyPTO may run it before the gather completes. Exact values at P = 2 ... 8:
one deferred gather, two back to back on one signal (the second wins), the
second behind a traced if (the task joined across the branches), and a
prepared worker with persistent windows; the golden IR; the refusals."""

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
W = 32


@pl.program
class Gathers:
    """Rank r gathers a[r] (and, when `twice` is 1, then b[r]) from every
    rank into its window, deferred, and copies the window out."""

    @pl.function(type=pl.FunctionType.Orchestration)
    def per_rank(
        self,
        a: pl.Tensor[[1, W], pl.FP32],
        b: pl.Tensor[[1, W], pl.FP32],
        out: pl.Out[pl.Tensor[[NR, W], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[NR, W], pl.FP32]],
        sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        twice: pl.Scalar[pl.INT32],
    ):
        with pl.manual_scope():
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="gather_a") as first:
                pld.tensor.allgather(a, data, sig, defer=True)
            if twice == 1:
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="gather_b", deps=[first]) as then:
                    pld.tensor.allgather(b, data, sig, defer=True)
                latest = then
            else:
                latest = first
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy_out", deps=[latest]):
                for r in pl.range(NR):
                    pl.store(pl.load(data, [r, 0], [1, W]), [r, 0], out)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(
        self,
        a: pl.Tensor[[NR, 1, W], pl.FP32],
        b: pl.Tensor[[NR, 1, W], pl.FP32],
        out: pl.Out[pl.Tensor[[NR, NR, W], pl.FP32]],
        twice: pl.Scalar[pl.INT32],
    ):
        data_buf = pld.alloc_window_buffer(NR * W * pl.FP32.get_byte())
        sig_buf = pld.alloc_window_buffer(NR * pl.INT32.get_byte())
        for r in pl.range(pld.world_size()):
            data = pld.window(data_buf, [NR, W], dtype=pl.FP32)
            sig = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
            self.per_rank(a[r], b[r], out[r], data, sig, twice, device=r)


def _rows(P, offset):
    return torch.arange(P * W, dtype=torch.float32).reshape(P, 1, W) + offset


def _gathered(rows):
    P = rows.shape[0]
    return rows.reshape(1, P, W).expand(P, P, W)


def _config(P):
    return RunConfig(distributed_config=DistributedConfig(list(range(P))), check_races=True)


@pytest.mark.parametrize("P", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("twice", [0, 1])
def test_deferred_gathers_then_the_copy_that_depends_on_them(P, twice):
    a, b = _rows(P, 0.0), _rows(P, 100000.0)
    out = torch.zeros(P, P, W)
    ir.compile(Gathers, config=_config(P))(a, b, out, twice)
    assert torch.equal(out, _gathered(b if twice else a))


@pytest.mark.parametrize("P", [2, 3])
def test_a_prepared_worker_with_persistent_windows_sees_only_the_latest_inputs(P):
    compiled = ir.compile(
        Gathers, platform="a2a3sim", distributed_config=DistributedConfig(list(range(P)))
    )
    out = torch.zeros(P, P, W)
    with compiled.prepare(persistent=True, reset_persistent_windows=False) as worker:
        worker(_rows(P, 0.0), _rows(P, 0.5), out, 1)
        assert torch.equal(out, _gathered(_rows(P, 0.5)))
        out.fill_(0)
        worker(_rows(P, 7.0), _rows(P, 9.0), out, 1)
        assert torch.equal(out, _gathered(_rows(P, 9.0)))


def test_the_tasks_are_incore_functions_with_the_intents_they_use():
    text = Gathers.host.ir_text()
    assert "  call @gather_a(%a, %data, %sig)\n" in text
    assert "  call @copy_out(%out, %data)\n" in text
    assert (
        "incore gather_a(%a: Tensor[1, 32] FP32 in, %data: DistributedTensor[NR, 32] FP32 inout, "
        "%sig: DistributedTensor[NR, 1] INT32 inout) {\n"
        "  %data = pld.tensor.allgather %a, %data, %sig\n"
        "}\n"
    ) in text
    assert (
        "incore copy_out(%out: Tensor[NR, 32] FP32 inout, %data: DistributedTensor[NR, 32] FP32 "
        "inout) {\n"
    ) in text


def _compile_error(program, P=2):
    with pytest.raises(anyp.CompileError) as caught:
        ir.compile(program, config=_config(P))(_rows(P, 0.0), torch.zeros(P, P, W))
    return re.sub(r"py:\d+", "py:N", str(caught.value))


def _gather_program(consume_deps, scope="manual"):
    @pl.program
    class Program:
        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(
            self,
            a: pl.Tensor[[1, W], pl.FP32],
            out: pl.Out[pl.Tensor[[NR, W], pl.FP32]],
            data: pl.InOut[pld.DistributedTensor[[NR, W], pl.FP32]],
            sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
        ):
            with pl.manual_scope():
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="gather") as gathered:
                    pld.tensor.allgather(a, data, sig, defer=True)
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
                    pl.store(pl.mul(pl.load(a, [0, 0], [1, W]), 2.0), [0, 0], out)
                with pl.at(
                    level=pl.Level.CORE_GROUP,
                    name_hint="copy_out",
                    deps=[gathered] if consume_deps else [],
                ):
                    for r in pl.range(NR):
                        pl.store(pl.load(data, [r, 0], [1, W]), [r, 0], out)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(
            self, a: pl.Tensor[[NR, 1, W], pl.FP32], out: pl.Out[pl.Tensor[[NR, NR, W], pl.FP32]]
        ):
            data_buf = pld.alloc_window_buffer(NR * W * pl.FP32.get_byte())
            sig_buf = pld.alloc_window_buffer(NR * pl.INT32.get_byte())
            for r in pl.range(pld.world_size()):
                data = pld.window(data_buf, [NR, W], dtype=pl.FP32)
                sig = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
                self.per_rank(a[r], out[r], data, sig, device=r)

    return Program


@pytest.mark.parametrize("P", [2, 5])
def test_an_independent_task_needs_no_deps(P):
    out = torch.zeros(P, P, W)
    ir.compile(_gather_program(True), config=_config(P))(_rows(P, 0.0), out)
    assert torch.equal(out, _gathered(_rows(P, 0.0)))


def test_reading_a_deferred_window_without_its_task_in_deps_is_refused():
    assert _compile_error(_gather_program(False)) == (
        "test_task_scopes.py:N: compile error: the pl.at task 'copy_out' takes 'data', which the "
        "deferred collective (defer=True) of task 'gather' (line N) writes, but its deps= do not "
        "include that task: in a pl.manual_scope PyPTO may run 'copy_out' before the collective "
        "completes; bind the task (with pl.at(...) as t) and list it in deps=\n"
        "                    with pl.at(\n"
        "                    ^^^^^^^^^^^"
    ).replace("(line N)", "(line " + str(_line_of('name_hint="gather"')) + ")")


def _line_of(text):
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def _scope_program(kind):
    """A program whose orchestration function (or host) holds the misuse `kind`."""

    @pl.program
    class Program:
        @pl.function(type=pl.FunctionType.Orchestration)
        def per_rank(self, a: pl.Tensor[[1, W], pl.FP32], out: pl.Out[pl.Tensor[[NR, W], pl.FP32]]):
            if kind == "inline worker":
                with pl.at(level=pl.Level.HOST, role=pl.Role.Worker):
                    pass
            if kind == "inline chip":
                with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):
                    pass
            if kind == "tensor deps":
                with pl.at(level=pl.Level.CORE_GROUP, deps=[a]):
                    pass
            if kind == "rebinding":
                t = pl.create_tensor([1, W], dtype=pl.FP32)
                with pl.at(level=pl.Level.CORE_GROUP):
                    t = pl.load(a, [0, 0], [1, W])
            if kind == "writes an input":
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="clobber"):
                    pl.store(pl.load(out, [0, 0], [1, W]), [0, 0], a)

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(
            self, a: pl.Tensor[[NR, 1, W], pl.FP32], out: pl.Out[pl.Tensor[[NR, NR, W], pl.FP32]]
        ):
            if kind == "in the host":
                with pl.at(level=pl.Level.CORE_GROUP):
                    pass
            for r in pl.range(pld.world_size()):
                self.per_rank(a[r], out[r], device=r)

    return Program


@pytest.mark.parametrize(
    "kind, message",
    [
        (
            "inline worker",
            "not supported by anyp: pl.at(level=pl.Level.HOST) in an orchestration function (it "
            "makes a host worker of a host function's block)",
        ),
        (
            "inline chip",
            "not supported by anyp: pl.at(level=pl.Level.CHIP) in an orchestration function (it "
            "makes a chip orchestration of a host function's block)",
        ),
        (
            "tensor deps",
            "not supported by anyp: deps= lists Tensor[1, 32] FP32, which is not a task (what "
            "`with pl.at(...) as t` binds) or an array of them (pl.array.create(n, pl.TASK_ID))",
        ),
        (
            "rebinding",
            "not supported by anyp: assigning 't' inside a pl.at block: it names a value of the "
            "enclosing function, which the block cannot rebind (write into the tensor with "
            "pl.store, pl.assemble or a slice assignment, or use a new name)",
        ),
        (
            "writes an input",
            "compile error: function 'per_rank' (orchestration): call @clobber at "
            "test_task_scopes.py:N passes parameter 'a', which is declared an input (a plain "
            "annotation), to parameter 'a' of 'clobber', which is pl.InOut[...] ('clobber' may "
            "write it); declare 'a' pl.InOut[...], or declare 'a' an input (a plain annotation) if "
            "'clobber' only reads it",
        ),
        (
            "in the host",
            "not supported by anyp: pl.at(level=pl.Level.CORE_GROUP) in a host function (it makes "
            "an incore task of an orchestration function's block)",
        ),
    ],
)
def test_misuse_of_a_scope_is_refused(kind, message):
    first_line = _compile_error(_scope_program(kind)).split("\n")[0]
    assert first_line == "test_task_scopes.py:N: " + message


checked = []  # what the inline host workers saw


@pl.program
class Inline:
    """Every level inlined into the host function (a one-rank program): a
    chip orchestration holding an incore task, then a host worker."""

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(
        self,
        a: pl.Tensor[[8, W], pl.FP32],
        b: pl.Tensor[[8, W], pl.FP32],
        f: pl.Out[pl.Tensor[[8, W], pl.FP32]],
    ):
        with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):
            with pl.at(level=pl.Level.CORE_GROUP):
                total = pl.add(a, b)
                result = pl.assemble(f, total, [0, 0])
        with pl.at(level=pl.Level.HOST, role=pl.Role.Worker):
            checked.append(float(result.sum()))
            if float(result.min()) < 0:
                raise AssertionError(f"negative sum: {float(result.min())}")


def test_every_level_inline():
    checked.clear()
    a = torch.arange(8 * W, dtype=torch.float32).reshape(8, W)
    f = torch.zeros(8, W)
    ir.compile(Inline, config=_config(1))(a, torch.ones(8, W), f)
    assert torch.equal(f, a + 1)
    assert checked == [float((a + 1).sum())]
    text = Inline.host.ir_text()
    assert "  call @host_at_" in text and "orchestration host_at_" in text
    assert "incore host_at_" in text and "pl.host_worker(%result)" in text
    with pytest.raises(AssertionError, match="^negative sum: -2.0$"):
        ir.compile(Inline, config=_config(1))(a, -2 * torch.ones(8, W) - a, f)


@pl.program
class Writing:
    """An inline worker that writes a tensor by name (f[0, 0] = 99.0): f is
    its InOut, so the write stays and the task after it reads it."""

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(
        self,
        a: pl.Tensor[[8, W], pl.FP32],
        f: pl.Out[pl.Tensor[[8, W], pl.FP32]],
        g: pl.Out[pl.Tensor[[8, W], pl.FP32]],
    ):
        with pl.at(level=pl.Level.CHIP):
            with pl.at(level=pl.Level.CORE_GROUP):
                pl.assemble(f, pl.mul(a, 2.0), [0, 0])
        with pl.at(level=pl.Level.HOST, role=pl.Role.SubWorker, name_hint="mark"):
            f[0, 0] = 99.0
            f[1] += 0.5
        with pl.at(level=pl.Level.CHIP):
            with pl.at(level=pl.Level.CORE_GROUP):
                pl.assemble(g, pl.add(f, 1.0), [0, 0])


def test_an_inline_worker_writes_the_tensors_it_writes_by_name():
    a = torch.arange(8 * W, dtype=torch.float32).reshape(8, W)
    f, g = torch.zeros(8, W), torch.zeros(8, W)
    ir.compile(Writing, config=_config(1))(a, f, g)
    want = 2 * a
    want[0, 0] = 99.0
    want[1] += 0.5
    assert torch.equal(f, want)
    assert torch.equal(g, want + 1)


@pl.program
class Meddling:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, a: pl.Tensor[[8, W], pl.FP32], f: pl.Out[pl.Tensor[[8, W], pl.FP32]]):
        with pl.at(level=pl.Level.CHIP):
            with pl.at(level=pl.Level.CORE_GROUP):
                pl.assemble(f, pl.mul(a, 2.0), [0, 0])
        with pl.at(level=pl.Level.HOST, role=pl.Role.SubWorker, name_hint="meddle"):
            alias = f
            alias[0, 0] = 99.0


def test_an_inline_worker_that_changes_a_tensor_it_does_not_write_by_name_is_refused():
    with pytest.raises(ValueError) as caught:
        ir.compile(Meddling, config=_config(1))(torch.ones(8, W), torch.zeros(8, W))
    assert str(caught.value) == (
        "host worker 'meddle' changed 'f', which its block does not write by name (f[...] = ..., "
        "f += ..., f.copy_(...) or out=f): anyp orders the block after and before what it can "
        "see it write, so the change would be lost; write it by name"
    )
