"""anyp._frontend — the entry points of the Python front-end: decorated
functions (@pl.jit, @pl.function) and @pl.program classes, their compiles
and calls. A function's body is read by the walker (anyp/_walker.py) when
the C++ tracer calls it, lazily, as for C++ programs; an error leaves with
the user's lines (anyp/_errors.py)."""

import ast
import copy
import inspect
import pathlib

from . import _core, _host_worker
from ._errors import UnsupportedError, _Source, _user_facing, tracing
from ._errors import walkers as _walkers
from ._types import ARRAY_DTYPE_NAMES, ParamType
from ._walker import _Walker, _build_result, _launch_blocks
from .ir.distributed_compiled_program import CompiledProgram, DistributedConfig, _returned
from .ir.distributed_worker import DistributedWorker
from .runtime import RunConfig


# ---- decorated functions ------------------------------------------------------------


class JitFunction:
    """A @pl.jit.incore / @pl.jit / @pl.jit.host function, or a @pl.function
    (in a @pl.program class, a method: its `self` is the program)."""

    def __init__(self, fn, level):
        self.fn, self.level = fn, level
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.program = None
        self.source = _Source(fn)
        self.tree_def = self.source.tree.body[0]
        parameters = list(inspect.signature(fn).parameters.values())
        self.is_method = bool(parameters) and parameters[0].name == "self"
        self.is_method = self.is_method and parameters[0].annotation is inspect.Parameter.empty
        self.param_names, self.params, self.param_types = [], [], []
        self.returns = inspect.signature(fn).return_annotation is not inspect.Signature.empty
        for p in parameters[1:] if self.is_method else parameters:
            t = p.annotation
            if not isinstance(t, ParamType) or t.kind == "tile":
                self._refuse_annotation(p.name, t)
            self.param_names.append(p.name)
            self.param_types.append(t)
            self.params.append(_core.param(p.name, t.kind, t.shape, t.dtype, t.intent))
        self._definition = None
        self._result = ("none",)
        # A host worker: a body of `...` is bound at run time (prepare(callbacks=)).
        self.abstract = level == "subworker" and _host_worker.is_abstract(self.tree_def)
        self.binding = self.bound_by = None

    @property
    def requires_runtime_binding(self):
        """PyPTO's flag: a host worker whose body is `...`."""
        return self.abstract

    def _refuse_annotation(self, name, annotation):
        where, snippet = self.source.where(self.tree_def)
        if isinstance(annotation, ParamType):  # a tile
            what = "not supported by anyp: a pl.Tile parameter (pass a tensor and pl.load it)"
        else:
            what = (
                "annotate it with pl.Tensor[[shape], dtype], pl.Out[...], pl.InOut[...], "
                "pld.DistributedTensor[[shape], dtype] or pl.Scalar[dtype]"
            )
        error = _core.CompileError(
            f"{where}: function '{self.__name__}', parameter '{name}': {what}\n{snippet}"
        )
        error._anyp_frames = [(self.source, self.tree_def, self.__name__)]
        raise error

    def definition(self):
        if self._definition is None:
            if self.is_method and self.program is None:
                raise UnsupportedError(
                    f"not supported by anyp: '{self.__name__}' takes self but is not in a "
                    "@pl.program class"
                )

            def body(handles):
                walker = _Walker(self, handles)
                _walkers.append(walker)
                try:
                    walker.run()
                finally:
                    _walkers.pop()
                self._result = walker.result_map(list(handles))

            if self.level == "subworker":
                self._definition = _core.define_host_worker(
                    self.fn.__name__,
                    self.params,
                    _host_worker.body(
                        self,
                        self.program if self.is_method else None,
                        [t.intent != "in" for t in self.param_types],
                    ),
                )
                return self._definition
            self._definition = _core.define(self.fn.__name__, self.level, self.params, body)
        return self._definition

    def with_returned_outputs(self, args, kwargs, world_size):
        """PyPTO's return-style call, `y = compiled(x)`: a host function that
        returns, called with every parameter but its outputs (pl.Out). The
        outputs are allocated (zeroed, shaped from the dims the inputs bind,
        in the inputs' array type) and passed on; returns (args, kwargs,
        outputs), outputs None for an ordinary call."""
        outs = [n for n, t in zip(self.param_names, self.param_types) if t.intent == "out"]
        if not self.returns or not outs or any(n in kwargs for n in outs):
            return args, kwargs, None
        if len(args) + len(kwargs) != len(self.param_names) - len(outs):
            return args, kwargs, None
        inputs = [n for n in self.param_names if n not in outs]
        bound = dict(zip(inputs, args))
        bound.update(kwargs)
        ordered = [bound.get(n) for n in self.param_names]
        shapes = _core.parameter_shapes(self.definition(), ordered, self.param_names, world_size)
        like = next((a for a in ordered if hasattr(a, "shape")), None)
        outputs = []
        for name, t, shape in zip(self.param_names, self.param_types, shapes):
            if name not in outs:
                continue
            if shape is None:
                raise TypeError(
                    f"{self.__name__}() returns its output '{name}', but the inputs bind no "
                    f"shape for it ({t}): pass '{name}'"
                )
            bound[name] = _zeros_like_kind(like, shape, t.dtype)
            outputs.append(bound[name])
        return [bound[n] for n in self.param_names], {}, outputs

    def _ordered(self, args, kwargs):
        """The call's arguments in parameter order (keywords by name)."""
        name = self.fn.__name__
        if len(args) > len(self.param_names):
            raise TypeError(f"{name}() takes {len(self.param_names)} arguments, got {len(args)}")
        bound = dict(zip(self.param_names, args))
        for k, v in kwargs.items():
            if k not in self.param_names:
                raise TypeError(f"{name}() has no parameter '{k}'")
            if k in bound:
                raise TypeError(f"{name}() got parameter '{k}' twice")
            bound[k] = v
        missing = [p for p in self.param_names if p not in bound]
        if missing:
            raise TypeError(f"{name}() is missing parameter '{missing[0]}'")
        return [bound[p] for p in self.param_names]

    def __call__(self, *args, device=None, config=None, **kwargs):
        if tracing():
            return self._record_call(args, kwargs, device)
        return self._run(*args, config=config, **kwargs)

    def _record_call(self, args, kwargs, device):
        ordered = self._ordered(args, kwargs)
        if device is None and _launch_blocks:
            _core.call_blocks(self.definition(), ordered, _launch_blocks[-1])
        else:
            _core.call(self.definition(), ordered, device)
        return _build_result(self._result, ordered)

    @_user_facing
    def _run(self, *args, config=None, **kwargs):
        if self.level != "host":
            raise UnsupportedError(
                f"'{self.fn.__name__}' is {'an' if self.level[0] in 'aeiou' else 'a'} "
                f"{self.level} function: call it from a traced "
                "function, or run a @pl.jit.host function"
            )
        # Compile on first call (per shapes and config), then run.
        run_config = _run_config(config, kwargs)
        args, kwargs, outputs = self.with_returned_outputs(
            args, kwargs, len(run_config.device_ids())
        )
        compiled = self.compile(*args, config=run_config, **kwargs)
        compiled(*args, **_tensor_kwargs(kwargs))
        return compiled if outputs is None else _returned(outputs)

    @_user_facing
    def compile(self, *args, config=None, **kwargs):
        if self.level != "host":
            raise UnsupportedError(
                f"only a @pl.jit.host function compiles; '{self.fn.__name__}' " f"is {self.level}"
            )
        config = _run_config(config, kwargs)
        if not args and not kwargs and self.param_names:
            return LazyCompiled(self, config)  # PyPTO's ir.compile(program, platform=...)
        ordered = self._ordered(args, kwargs)
        native = _core.compile(self.definition(), ordered, self.param_names, config.to_dict())
        return CompiledProgram(self, native, config)

    def ir_text(self):
        return _core.ir_text(self.definition())


def _zeros_like_kind(like, shape, dtype):
    """A zeroed array of `shape` and anyp `dtype`, a torch tensor when the
    call passes torch tensors (else numpy)."""
    name = ARRAY_DTYPE_NAMES[dtype]
    if type(like).__module__.startswith("torch"):
        import torch

        return torch.zeros(shape, dtype=getattr(torch, name))
    import numpy

    if not hasattr(numpy, name):
        raise TypeError(
            f"a returned {dtype.name} output needs torch tensors (numpy has no {dtype.name})"
        )
    return numpy.zeros(shape, dtype=name)


# PyPTO's compile keywords (ir.compile(program, platform=..., ...)): those
# that change nothing on anyp are accepted and ignored.
_COMPILE_KEYWORDS = ("platform", "distributed_config", "output_dir")
_IGNORED_COMPILE_KEYWORDS = (
    "strategy",
    "dump_passes",
    "backend_type",
    "skip_ptoas",
    "save_kernels",
    "pipeline",
    "chunk_rows",
    "runtime_profiling",
    "device_id",
)


def _run_config(config, kwargs):
    """The RunConfig of a compile: `config=`, or PyPTO's ir.compile keywords
    (taken out of `kwargs`, which keeps the tensors)."""
    given = {k: kwargs.pop(k) for k in _COMPILE_KEYWORDS if k in kwargs}
    for k in _IGNORED_COMPILE_KEYWORDS:
        kwargs.pop(k, None)
    if config is not None and given:
        raise TypeError(f"compile: give config= or {', '.join(given)}, not both")
    if config is not None and not isinstance(config, RunConfig):
        raise TypeError(f"compile: config must be an anyp.runtime.RunConfig, got {config!r}")
    return config or RunConfig(**given)


def _tensor_kwargs(kwargs):
    return {k: v for k, v in kwargs.items() if k not in _COMPILE_KEYWORDS}


class LazyCompiled:
    """PyPTO's `ir.compile(program, platform=..., distributed_config=...)`
    without tensors: the program compiles on its first call, for the shapes
    of that call's tensors (and again for other shapes; the plan cache keeps
    each)."""

    def __init__(self, function, config):
        self._function, self.config = function, config
        self._compiled = None
        self.last_run_timing = None  # a RunTiming after each run

    @property
    def output_dir(self):
        return self._compiled.output_dir if self._compiled else self.config.output_dir

    def prepare(self, config=None, **kwargs):
        """A DistributedWorker (compiled.prepare()) that compiles the program
        at its first dispatch, for that dispatch's shapes."""
        return DistributedWorker(self, config, **kwargs)

    @_user_facing
    def __call__(self, *args, config=None, **kwargs):
        args, kwargs, outputs = self._function.with_returned_outputs(
            args, kwargs, len(self.config.device_ids())
        )
        self._compiled = self._function.compile(*args, config=self.config, **kwargs)
        stats = self._compiled(*args, config=config, **kwargs)
        self.last_run_timing = self._compiled.last_run_timing
        return stats if outputs is None else _returned(outputs)


# ---- @pl.program classes ------------------------------------------------------------

_INCORE_TYPES = ("InCore", "AIC", "AIV")


def function_level(type=None, level=None, role=None):
    """A @pl.function's anyp level from PyPTO's type / level / role."""
    level_name = getattr(level, "name", level)
    role_name = getattr(role, "name", role)
    type_name = getattr(type, "name", type) or "Opaque"
    if level_name == "HOST":
        return "subworker" if role_name in ("SubWorker", "Worker") else "host"
    if level_name in ("AIV", "AIC", "CORE_GROUP"):
        return "incore"
    if level_name not in (None, "CHIP"):
        raise UnsupportedError(f"not supported by anyp: @pl.function(level=pl.Level.{level_name})")
    if type_name in _INCORE_TYPES:
        return "incore"
    if type_name in ("Orchestration", "Opaque"):
        return "orchestration"
    raise UnsupportedError(f"not supported by anyp: @pl.function(type=pl.FunctionType.{type_name})")


class Program:
    """A @pl.program class: its @pl.function methods, called as self.f(...).
    The entry is its host orchestrator (@pl.function(level=pl.Level.HOST,
    role=pl.Role.Orchestrator)); it compiles and runs as a @pl.jit.host
    function does."""

    def __init__(self, cls):
        self.__name__ = cls.__name__
        self.__qualname__ = cls.__qualname__
        self.__doc__ = cls.__doc__
        self.functions = {}
        self._host = None
        for name, member in vars(cls).items():
            if isinstance(member, JitFunction):
                member.program = self
                self.functions[name] = member

    def __getattr__(self, name):
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"@pl.program '{self.__name__}' has no @pl.function '{name}'")

    def entry(self):
        """The host orchestrator; without one, a one-device program (PyPTO's
        L2 form) whose orchestration function no other one calls runs it on
        device 0."""
        hosts = [f for f in self.functions.values() if f.level == "host"]
        if len(hosts) == 1:
            return hosts[0]
        roots = [f for f in self._uncalled() if f.level == "orchestration"]
        if not hosts and len(roots) == 1:
            if self._host is None:
                self._host = _DeviceZeroHost(self.__name__, roots[0])
            return self._host
        found = ", ".join(f.__name__ for f in hosts) or "none"
        raise UnsupportedError(
            f"not supported by anyp: @pl.program '{self.__name__}' needs exactly one "
            "@pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator) entry (found "
            f"{found}), or one orchestration function that no other one calls"
        )

    def _uncalled(self):
        called = set()
        for f in self.functions.values():
            for node in ast.walk(f.tree_def):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "self"
                ):
                    called.add(node.attr)
        return [f for name, f in self.functions.items() if name not in called]

    def _orchestration_roots(self):
        """Without a host entry: the orchestration functions no other one
        calls (PyPTO's L2 orchestrations), in definition order."""
        if any(f.level == "host" for f in self.functions.values()):
            return []
        return [f for f in self._uncalled() if f.level == "orchestration"]

    @_user_facing
    def compile(self, *args, config=None, **kwargs):
        roots = self._orchestration_roots()
        if len(roots) > 1:
            config = _run_config(config, kwargs)
            if args or kwargs:
                raise TypeError(_MultiOrchCompiled.ambiguous(self.__name__, roots))
            return _MultiOrchCompiled(self.__name__, roots, config)
        return self.entry().compile(*args, config=config, **kwargs)

    def __call__(self, *args, config=None, **kwargs):
        return self.entry()(*args, config=config, **kwargs)

    def ir_text(self):
        return self.entry().ir_text()


class _MultiOrchCompiled:
    """PyPTO's compile of a program of several orchestration functions and
    no host (its L2 form): each runs on device 0 alone, selected by name
    (compiled["name"] or compiled.name); its artifact goes to
    <output_dir>/next_levels/<name>/."""

    def __init__(self, program_name, roots, config):
        self._program_name, self.config = program_name, config
        self._roots = {f.__name__: f for f in roots}
        self._selected = {}

    @staticmethod
    def ambiguous(program_name, roots):
        names = ", ".join(f.__name__ for f in roots)
        return (
            f"@pl.program '{program_name}' has {len(roots)} orchestration functions ({names}) "
            f"and no host: select one explicitly, compiled['{roots[0].__name__}'](...)"
        )

    @property
    def orchestration_names(self):
        return list(self._roots)

    @property
    def output_dir(self):
        return self.config.output_dir

    def __getitem__(self, name):
        if name not in self._roots:
            raise KeyError(
                f"no orchestration function '{name}' in @pl.program '{self._program_name}'; "
                f"it has {', '.join(self._roots)}"
            )
        if name not in self._selected:
            config = copy.copy(self.config)
            if config.output_dir:  # none given: no artifact (never the working folder)
                config.output_dir = str(pathlib.Path(config.output_dir) / "next_levels" / name)
            host = _DeviceZeroHost(name, self._roots[name])
            self._selected[name] = _SelectedOrchestration(name, host, config)
        return self._selected[name]

    def __getattr__(self, name):
        if name.startswith("_") or name not in self.__dict__.get("_roots", {}):
            raise AttributeError(f"'CompiledProgram' object has no attribute '{name}'")
        return self[name]

    def __call__(self, *args, **kwargs):
        raise TypeError(
            _MultiOrchCompiled.ambiguous(self._program_name, list(self._roots.values()))
        )


class _SelectedOrchestration(LazyCompiled):
    """One orchestration function of a program without a host, on device 0:
    compiled for the shapes of its first call's tensors."""

    def __init__(self, name, host, config):
        config = copy.copy(config)
        config.timeline = True  # PyPTO's L2 call reports its task's device time
        super().__init__(host, config)
        self.name, self.param_names = name, list(host.param_names)

    @property
    def output_dir(self):
        directory = super().output_dir
        return None if directory is None else pathlib.Path(directory)

    def __call__(self, *args, config=None, **kwargs):
        if config is not None:  # a dispatch's own RunConfig: still timed on the model
            config = copy.copy(config)
            config.timeline = True
        return super().__call__(*args, config=config, **kwargs)


class _DeviceZeroHost(JitFunction):
    """The host of a one-device program: calls its orchestration function
    `orch` with the host's tensors on device 0 (P = 1)."""

    def __init__(self, name, orch):  # noqa: super().__init__ reads a source; this has none
        self.fn, self.level, self.program, self.orch = orch.fn, "host", orch.program, orch
        self.__name__, self.__doc__ = name, orch.__doc__
        self.source, self.tree_def, self.is_method = orch.source, orch.tree_def, False
        self.param_names, self.params = list(orch.param_names), list(orch.params)
        self.param_types, self.returns = list(orch.param_types), orch.returns
        self._definition, self._result = None, ("none",)
        self.abstract, self.binding = False, None

    def definition(self):
        if self._definition is None:

            def body(handles):
                _core.call(self.orch.definition(), list(handles), 0)

            self._definition = _core.define(self.__name__, "host", self.params, body)
        return self._definition

    def compile(self, *args, config=None, **kwargs):
        """As a host function's; without device_ids, on device 0 alone."""
        config = copy.copy(_run_config(config, kwargs))
        if config.distributed_config.device_ids is None:
            config.distributed_config = DistributedConfig(device_ids=[0])
        return JitFunction.compile(self, *args, config=config, **kwargs)
