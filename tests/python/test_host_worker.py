"""PyPTO's HOST SubWorker (`@pl.function(level=pl.Level.HOST,
role=pl.Role.SubWorker)`, or role Worker, in a @pl.program): a Python
function the host orchestrator calls between its dispatch loops. It sees
every rank's writes of what it takes, the dispatches after it see what it
writes (pl.Out), and a dispatch that overwrites what it read waits for it:
exact values at P = 1 ... 8 with the race checker on. It gets torch tensors;
its exception is the one the call raises (with the run error as a note);
misuse is refused by name; its IR is one pl.host_worker op."""

import os
import re
import subprocess
import sys
import textwrap
import types

import pytest
import torch

import anyp
import anyp.language as pl
import anyp.language.distributed as pld
from anyp import _host_worker, ir
from anyp.ir import DistributedConfig
from anyp.runtime import RunConfig

NR = pl.dynamic("NR")
W = 16
seen = []  # what the workers saw, in call order


@pl.program
class Pipeline:
    """Round 1: y[r] = x[r] + 1. fold: s = the sum of y over ranks. Round 2:
    z[r] = y[r] * s. Round 3 overwrites y[r] = x[r] + 1000."""

    @pl.function(type=pl.FunctionType.InCore)
    def add_k(
        self,
        x: pl.Tensor[[1, W], pl.FP32],
        y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
        k: pl.Scalar[pl.FP32],
    ):
        pl.store(pl.add(pl.load(x, [0, 0], [1, W]), k), [0, 0], y)

    @pl.function(type=pl.FunctionType.InCore)
    def scale(
        self,
        y: pl.Tensor[[1, W], pl.FP32],
        s: pl.Tensor[[1, W], pl.FP32],
        z: pl.Out[pl.Tensor[[1, W], pl.FP32]],
    ):
        pl.store(pl.mul(pl.load(y, [0, 0], [1, W]), pl.load(s, [0, 0], [1, W])), [0, 0], z)

    @pl.function(type=pl.FunctionType.Orchestration)
    def stage(
        self,
        x: pl.Tensor[[1, W], pl.FP32],
        y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
        k: pl.Scalar[pl.FP32],
    ):
        self.add_k(x, y, k)

    @pl.function(type=pl.FunctionType.Orchestration)
    def use(
        self,
        y: pl.Tensor[[1, W], pl.FP32],
        s: pl.Tensor[[1, W], pl.FP32],
        z: pl.Out[pl.Tensor[[1, W], pl.FP32]],
    ):
        self.scale(y, s, z)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def fold(y: pl.Tensor[[NR, 1, W], pl.FP32], s: pl.Out[pl.Tensor[[1, W], pl.FP32]]):
        seen.append(y.clone())
        s[:] = y.sum(dim=0)
        return s

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(
        self,
        x: pl.Tensor[[NR, 1, W], pl.FP32],
        y: pl.InOut[pl.Tensor[[NR, 1, W], pl.FP32]],
        s: pl.Out[pl.Tensor[[1, W], pl.FP32]],
        z: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]],
    ):
        for r in pl.range(pld.world_size()):
            self.stage(x[r], y[r], 1.0, device=r)
        self.fold(y, s)
        for r in pl.range(pld.world_size()):
            self.use(y[r], s, z[r], device=r)
        for r in pl.range(pld.world_size()):
            self.stage(x[r], y[r], 1000.0, device=r)


def _config(P, **fields):
    return RunConfig(distributed_config=DistributedConfig(device_ids=list(range(P))), **fields)


@pytest.mark.parametrize("P", [1, 2, 3, 4, 5, 8])
@pytest.mark.parametrize(
    "fields",
    [{"check_races": True, "workers": 2}, {"check_races": True, "deterministic": True}],
    ids=["free", "deterministic"],
)
def test_worker_between_rounds(P, fields):
    seen.clear()
    x = torch.arange(P * W, dtype=torch.float32).reshape(P, 1, W)
    y, s, z = torch.zeros(P, 1, W), torch.zeros(1, W), torch.zeros(P, 1, W)
    ir.compile(Pipeline, config=_config(P, **fields))(x, y, s, z)
    assert len(seen) == 1 and torch.equal(seen[0], x + 1)
    assert torch.equal(s, (x + 1).sum(dim=0))
    assert torch.equal(z, (x + 1) * (x + 1).sum(dim=0))
    assert torch.equal(y, x + 1000)


@pl.jit.incore
def double(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]]):
    t = pl.load(x, [0, 0], [1, W])
    pl.store(pl.add(t, t), [0, 0], y)


@pl.jit
def double_orch(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]]):
    double(x, y)


@pl.program
class EachRow:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Worker)
    def bump(self, row: pl.InOut[pl.Tensor[[1, W], pl.FP32]]):
        assert self is EachRow  # a method's self is its program
        seen.append(float(row[0, 0]))
        row += 0.5

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            double_orch(x[r], y[r], device=r)
            self.bump(y[r])


@pytest.mark.parametrize("P", [2, 3, 7])
def test_worker_in_the_rank_loop_runs_once_per_call_in_host_order(P):
    seen.clear()
    x = torch.arange(P * W, dtype=torch.float32).reshape(P, 1, W)
    y = torch.zeros(P, 1, W)
    ir.compile(EachRow, config=_config(P, check_races=True))(x, y)
    assert seen == [2.0 * W * r for r in range(P)]
    assert torch.equal(y, 2 * x + 0.5)


def test_ir_text_shows_the_worker():
    text = Pipeline.host.ir_text()
    assert "  call @fold(%y, %s)\n" in text
    assert (
        "orchestration fold(%y: Tensor[NR, 1, 16] FP32 in, %s: Tensor[1, 16] FP32 out) {\n" in text
    )
    assert "  pl.host_worker(%y, %s)\n" in text


@pl.program
class Checked:
    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def verify(y: pl.Tensor[[NR, 1, W], pl.FP32]):
        if float(y.max()) > 100:
            raise AssertionError(f"verify failed: max={float(y.max())}")

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            double_orch(x[r], y[r], device=r)
        self.verify(y)


def test_the_workers_exception_is_the_calls():
    x = torch.full((3, 1, W), 60.0)
    y = torch.zeros(3, 1, W)
    compiled = ir.compile(Checked, config=_config(3))
    with pytest.raises(AssertionError, match=r"^verify failed: max=120.0$") as caught:
        compiled(x, y)
    assert caught.value.__notes__ == [
        "anyp: it ended the run: run error: rank 0 (device 0), function 'verify', op "
        "pl.host_worker: host worker 'verify' failed: AssertionError: verify failed: max=120.0"
    ]
    compiled(torch.full((3, 1, W), 5.0), y)  # the program runs again
    assert torch.equal(y, torch.full((3, 1, W), 10.0))


def test_a_device_is_refused():
    @pl.program
    class WithDevice:
        @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
        def look(y: pl.Tensor[[1, W], pl.FP32]):
            pass

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(
            self, x: pl.Tensor[[NR, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]]
        ):
            for r in pl.range(pld.world_size()):
                double_orch(x[r], y[r], device=r)
                self.look(y[r], device=r)

    with pytest.raises(anyp.CompileError) as caught:
        ir.compile(WithDevice, config=_config(2))(torch.zeros(2, 1, W), torch.zeros(2, 1, W))
    assert re.sub(r"py:\d+", "py:N", str(caught.value)) == (
        "compile error: function 'host' (host): call of host worker 'look' at "
        "test_host_worker.py:N names a device: a host worker runs on the host (PyPTO's "
        "SubWorker); call it without device=\n  test_host_worker.py:N\n"
        "                    self.look(y[r], device=r)\n"
        "                    ^^^^^^^^^^^^^^^^^^^^^^^^^"
    )


def test_numpy_arrays_when_torch_is_not_imported(tmp_path):
    script = tmp_path / "numpy_worker.py"
    script.write_text(
        textwrap.dedent(
            """
        import sys
        import numpy
        import anyp.language as pl
        import anyp.language.distributed as pld
        from anyp import ir
        from anyp.runtime import RunConfig
        NR = pl.dynamic("NR")
        kinds = []

        @pl.program
        class Prog:
            @pl.function(type=pl.FunctionType.InCore)
            def neg(self, x: pl.Tensor[[1, 8], pl.INT32], y: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
                pl.store(pl.neg(pl.load(x, [0, 0], [1, 8])), [0, 0], y)

            @pl.function(type=pl.FunctionType.Orchestration)
            def orch(self, x: pl.Tensor[[1, 8], pl.INT32], y: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
                self.neg(x, y)

            @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
            def twice(y: pl.InOut[pl.Tensor[[NR, 1, 8], pl.INT32]]):
                kinds.append(type(y).__module__ + " " + str(y.dtype))
                y *= 2

            @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
            def host(self, x: pl.Tensor[[NR, 1, 8], pl.INT32], y: pl.Out[pl.Tensor[[NR, 1, 8], pl.INT32]]):
                for r in pl.range(pld.world_size()):
                    self.orch(x[r], y[r], device=r)
                self.twice(y)

        x = numpy.arange(24, dtype=numpy.int32).reshape(3, 1, 8)
        y = numpy.zeros((3, 1, 8), dtype=numpy.int32)
        ir.compile(Prog, config=RunConfig(distributed_config=ir.DistributedConfig(device_ids=[0, 1, 2])))(x, y)
        assert "torch" not in sys.modules
        print(kinds, (y == -2 * x).all())
        """
        )
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "['numpy int32'] True\n"


@pl.program
class Inspected:
    """A worker whose body is `...`: bound at run time, by prepare(callbacks=...)."""

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def inspect(y: pl.Tensor[[NR, 1, W], pl.FP32], total: pl.Out[pl.Tensor[[1, 1], pl.FP32]]):
        """Supplied at run time."""
        ...

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(
        self,
        x: pl.Tensor[[NR, 1, W], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]],
        total: pl.Out[pl.Tensor[[1, 1], pl.FP32]],
    ):
        for r in pl.range(pld.world_size()):
            double_orch(x[r], y[r], device=r)
        self.inspect(y, total)


def _lazy(program, P):
    return ir.compile(
        program, platform="a2a3sim", distributed_config=DistributedConfig(list(range(P)))
    )


@pytest.mark.parametrize("P", [2, 3, 5])
@pytest.mark.parametrize("keyword", ["callbacks", "sub_worker_overrides"])
def test_a_bound_callback_runs_for_the_abstract_worker(P, keyword):
    from anyp.runtime.distributed_runner import _tensor_from_continuous

    assert Inspected.inspect.requires_runtime_binding
    assert not Inspected.host.requires_runtime_binding
    totals = []

    def inspect(args):
        y = _tensor_from_continuous(args.tensor(0))
        totals.append(float(y.sum()))
        args.tensor(1)[0, 0] = -1.0  # written back: pl.Out

    x = torch.arange(P * W, dtype=torch.float32).reshape(P, 1, W)
    y, total = torch.zeros(P, 1, W), torch.zeros(1, 1)
    with _lazy(Inspected, P).prepare(**{keyword: {"inspect": inspect}}) as rt:
        rt(x, y, total)
        rt(x + 1, y, total)
    n = P * W
    assert totals == [float(n * (n - 1)), float(n * (n - 1) + 2 * n)]
    assert torch.equal(y, 2 * (x + 1)) and total.item() == -1.0
    assert Inspected.inspect.binding is None  # closing the worker unbinds it


def test_an_abstract_worker_must_be_bound():
    compiled = _lazy(Inspected, 2)
    tensors = (torch.zeros(2, 1, W), torch.zeros(2, 1, W), torch.zeros(1, 1))
    unbound = (
        "host worker 'inspect' has no body (`...`): bind one with "
        "compiled.prepare(callbacks={'inspect': fn})"
    )
    with pytest.raises(ValueError) as caught:
        compiled(*tensors)
    assert str(caught.value) == unbound
    with pytest.raises(ValueError) as caught:
        compiled.prepare()
    assert str(caught.value) == "prepare(): " + unbound
    with pytest.raises(ValueError) as caught:
        compiled.prepare(callbacks={"inspect": print, "verify": print})
    assert str(caught.value) == (
        "prepare(): callbacks names 'verify', which is not a host worker of the program "
        "(its host workers: inspect)"
    )
    with pytest.raises(TypeError) as caught:
        compiled.prepare(callbacks={"inspect": 3})
    assert str(caught.value) == "prepare(): the callback for 'inspect' is not callable: 3"
    with compiled.prepare(callbacks={"inspect": lambda args: None}):
        with pytest.raises(ValueError) as caught:
            _lazy(Inspected, 2).prepare(callbacks={"inspect": print})
        assert str(caught.value) == (
            "prepare(): host worker 'inspect' is bound by another prepared worker; close that "
            "one first"
        )


def test_a_window_view_is_refused():
    @pl.program
    class GivesAWindow:
        @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
        def look(y: pl.Tensor[[1, W], pl.FP32]):
            pass

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, x: pl.Tensor[[NR, 1, W], pl.FP32]):
            buf = pld.alloc_window_buffer(W * pl.FP32.get_byte())
            self.look(pld.window(buf, [1, W], dtype=pl.FP32))  # planted

    with pytest.raises(anyp.CompileError) as caught:
        ir.compile(GivesAWindow, config=_config(2))(torch.zeros(2, 1, W))
    assert re.sub(r"py:\d+", "py:N", str(caught.value)) == (
        "test_host_worker.py:N: compile error: function 'host' (host): call of 'look': argument "
        "0 ('y') must be Tensor[1, 16] FP32, got DistributedTensor[1, 16] FP32 (a window view "
        "and a plain tensor are distinct types)\n"
        "                self.look(pld.window(buf, [1, W], dtype=pl.FP32))  # planted\n"
        "                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"
    )


@pl.program
class WritesItsInput:
    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def scribble(y: pl.Tensor[[NR, 1, W], pl.FP32]):
        y[0, 0, 0] = 1.0

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            double_orch(x[r], y[r], device=r)
        self.scribble(y)


def test_a_worker_that_changes_an_input_is_refused():
    with pytest.raises(ValueError) as caught:
        ir.compile(WritesItsInput, config=_config(2))(torch.ones(2, 1, W), torch.zeros(2, 1, W))
    assert str(caught.value) == (
        "host worker 'scribble' changed its argument 0, which it takes as an input: the change "
        "would be lost (declare the parameter pl.Out or pl.InOut, or change a copy)"
    )


def test_a_worker_in_runs_still_queued_when_the_prepared_worker_goes_away(tmp_path):
    """Ending a prepared worker (dropped without close(), or reset_windows())
    waits for its queued runs without holding the GIL their host workers
    need: run in a subprocess, so a deadlock is a timeout, not a hang."""
    script = tmp_path / "queued.py"
    script.write_text(
        textwrap.dedent(
            """
        import gc
        import torch
        import anyp.language as pl
        import anyp.language.distributed as pld
        from anyp import ir
        from anyp.ir import DistributedConfig

        NR = pl.dynamic("NR")
        seen = []

        @pl.jit.incore
        def double(x: pl.Tensor[[1, 16], pl.FP32], y: pl.Out[pl.Tensor[[1, 16], pl.FP32]]):
            t = pl.load(x, [0, 0], [1, 16])
            pl.store(pl.add(t, t), [0, 0], y)

        @pl.jit
        def double_orch(x: pl.Tensor[[1, 16], pl.FP32], y: pl.Out[pl.Tensor[[1, 16], pl.FP32]]):
            double(x, y)

        @pl.program
        class Slow:
            @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
            def look(y: pl.Tensor[[NR, 1, 16], pl.FP32]):
                import time
                time.sleep(0.05)
                seen.append(float(y.sum()))

            @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
            def host(self, x: pl.Tensor[[NR, 1, 16], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, 16], pl.FP32]]):
                for r in pl.range(pld.world_size()):
                    double_orch(x[r], y[r], device=r)
                self.look(y)

        c = ir.compile(Slow, platform="a2a3sim", distributed_config=DistributedConfig([0, 1]))
        x, y = torch.ones(2, 1, 16), torch.zeros(2, 1, 16)
        rt = c.prepare(persistent=True)
        rt.submit(c, x, y)
        rt.reset_persistent_windows()
        rt.submit(c, x, y)
        rt.submit(c, x, y)
        del rt
        gc.collect()
        print(seen)
        """
        )
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[64.0, 64.0, 64.0]\n"
    # A script that fails with runs in flight ends after them, with its own error.
    failing = script.read_text().replace("del rt", "raise RuntimeError('boom')")
    script.write_text(failing)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 1 and done.stderr.endswith("RuntimeError: boom\n"), done.stderr


def test_a_workers_exception_is_kept_only_while_a_run_may_still_take_it():
    """A run that another rank's error ends first never takes its worker's
    exception: only the latest few are kept, and one is taken once."""

    failing = types.SimpleNamespace(binding=None, abstract=False, __name__="failing")
    failing.fn = lambda: 1 / 0
    run = _host_worker.body(failing, None, [])
    _host_worker._raised.clear()
    for _ in range(3 * _host_worker._RAISED_KEPT):
        assert run([]) == "ZeroDivisionError: division by zero"
    assert len(_host_worker._raised) == _host_worker._RAISED_KEPT
    error = anyp.RunError(
        "run error: host worker 'failing' failed: ZeroDivisionError: division by zero"
    )
    assert isinstance(_host_worker.raised_for(error), ZeroDivisionError)
    assert len(_host_worker._raised) == _host_worker._RAISED_KEPT - 1
    _host_worker._raised.clear()
    assert _host_worker.raised_for(error) is None
