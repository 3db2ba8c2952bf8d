"""anyp.language — PyPTO's `pl`: dtypes, parameter annotations, dynamic
dims, the jit decorators, @pl.program / @pl.function, pl.range with
pl.yield_, the tile ops and the tensor-level ops anyp's Python front-end has
(docs/python.md lists them; any other name is refused with "not supported
by anyp")."""

import builtins as _builtins

from .. import _core
from .. import _frontend, _walker
from .._errors import UnsupportedError
from .._frontend import JitFunction, Program
from .._scopes import TaskId, at, manual_scope  # noqa: F401  (PyPTO's task scopes)
from .._types import InOut, Out, Scalar, Tensor, Tile  # noqa: F401
from .._arrays import TASK_ID, Array, array, system  # noqa: F401  (PyPTO's on-core arrays)
from ._tile_ops import *  # noqa: F401,F403  (pl's tile compute ops)
from . import _tile_ops
from ._tile_ops import __all__ as _tile_op_names
from . import _tensor_ops
from ._tensor_ops import assemble, create_tensor, tensor  # noqa: F401

FP32 = _core.DType.FP32
FP16 = _core.DType.FP16
BF16 = _core.DType.BF16
INT8 = _core.DType.INT8
INT16 = _core.DType.INT16
INT32 = _core.DType.INT32
INT64 = _core.DType.INT64
# PyPTO's index dtype (offsets, loop counters, sizes): a 64-bit integer.
INDEX = _core.DType.INT64


def dynamic(name):
    """A named runtime dimension: every pl.dynamic("NR") is the same dim."""
    return _core.dynamic(name)


class _Jit:
    """@pl.jit (orchestration), @pl.jit.incore (kernels), @pl.jit.host."""

    def __call__(self, fn):
        return JitFunction(fn, "orchestration")

    @staticmethod
    def incore(fn):
        return JitFunction(fn, "incore")

    @staticmethod
    def host(fn):
        return JitFunction(fn, "host")


jit = _Jit()


class _Range:
    """pl.range(stop), pl.range(start, stop[, step][, init_values=...]): only
    as a for loop's iterable in a traced function (the loop is recorded, not
    unrolled). pl.parallel, pl.pipeline and pl.unroll are the same loop on
    anyp: their iterations run in order, which gives the results any order
    (or an unrolled copy) would, and the pipelining keywords (`stage`, ...)
    are hardware schedules, ignored."""

    def __init__(self, name, ignored=()):
        self.name, self.ignored = name, ignored

    def __call__(self, *args, **kwargs):
        raise UnsupportedError(
            f"pl.{self.name}(...) is the iterable of a for loop in a traced function"
        )

    def bounds(self, *args, **kwargs):
        unknown = sorted(set(kwargs) - set(self.ignored))
        if unknown:
            raise TypeError(f"pl.{self.name}() got an unexpected keyword argument '{unknown[0]}'")
        if len(args) == 1:
            return 0, args[0], 1
        if len(args) == 2:
            return args[0], args[1], 1
        if len(args) == 3:
            return args
        raise TypeError(f"pl.{self.name} takes 1 to 3 arguments, got {len(args)}")


range = _Range("range")  # noqa: A001  (PyPTO's name)
parallel = _Range("parallel")
pipeline = _Range("pipeline", ignored=("stage",))
unroll = _Range("unroll")
_walker.use_language(_Range, _tensor_ops.subscript, _tensor_ops.assign_subscript)


def yield_(*values):
    """In a `for i, (a, b) in pl.range(n, init_values=(x, y))` body: the
    values a and b take in the next iteration; after the loop, the names it
    is assigned to hold the last ones. In an if on a traced scalar: the
    if's result."""
    return _walker.current_walker("pl.yield_").yield_values(list(values))


# ---- @pl.program / @pl.function (PyPTO's program form) -------------------------


class _Enum:
    """A PyPTO enum's members as named constants (pl.FunctionType.InCore)."""

    def __init__(self, enum_name, names):
        self._enum_name = enum_name
        for name in names:
            setattr(self, name, _Member(enum_name, name))

    def __getattr__(self, name):
        raise AttributeError(f"not supported by anyp: pl.{self._enum_name}.{name}")


class _Member:
    def __init__(self, enum_name, name):
        self.enum_name, self.name = enum_name, name

    def __repr__(self):
        return f"pl.{self.enum_name}.{self.name}"


FunctionType = _Enum(
    "FunctionType",
    ["Opaque", "Orchestration", "InCore", "AIC", "AIV", "Group", "Spmd", "Inline", "Graph"],
)
Level = _Enum(
    "Level",
    [
        "AIV",
        "AIC",
        "CORE_GROUP",
        "CHIP_DIE",
        "CHIP",
        "HOST",
        "CLUSTER_0",
        "CLUSTER_1",
        "CLUSTER_2",
        "GLOBAL",
    ],
)
Role = _Enum("Role", ["Orchestrator", "SubWorker", "Worker"])
# Where a tile lives on the device (pl.load(..., target_memory=pl.MemorySpace.Vec)):
# placement, which changes no result on anyp; checked to be a member, then ignored.
MemorySpace = _Enum("MemorySpace", ["DDR", "Vec", "Mat", "Left", "Right", "Acc", "Bias"])


def _placement(target_memory):
    """Checks a target_memory keyword: None or a pl.MemorySpace member."""
    if target_memory is not None and not (
        isinstance(target_memory, _Member) and target_memory.enum_name == "MemorySpace"
    ):
        raise TypeError(f"target_memory must be a pl.MemorySpace member, got {target_memory!r}")


# @pl.function keywords that change nothing on anyp: accepted, ignored.
_IGNORED_FUNCTION_KEYWORDS = ("strict_ssa", "attrs", "auto_scope")


def function(fn=None, *, type=None, level=None, role=None, **kwargs):  # noqa: A002
    """@pl.function / @pl.function(type=pl.FunctionType.InCore) /
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator): InCore,
    AIC and AIV are kernels, Orchestration and Opaque (no type) are
    orchestration, the HOST orchestrator is the host (a @pl.program's
    entry)."""
    unknown = sorted(set(kwargs) - set(_IGNORED_FUNCTION_KEYWORDS))
    if unknown:
        raise UnsupportedError(f"not supported by anyp: @pl.function({unknown[0]}=...)")
    lvl = _frontend.function_level(type, level, role)

    def decorate(f):
        return JitFunction(f, lvl)

    return decorate(fn) if fn is not None else decorate


def program(cls):
    """@pl.program: a class of @pl.function methods calling each other as
    self.f(...); compile it (or its host entry) as a @pl.jit.host function."""
    return Program(cls)


def _static_extents(what, extents):
    for extent in extents:
        if isinstance(extent, _core.Scalar):
            raise UnsupportedError(
                f"not supported by anyp: {what} from a traced scalar (pl.load's shapes are ints "
                "or pl.dynamic dims: a tile has a static shape; its valid_shapes may be traced)"
            )
    return list(extents)


def _valid(valid_shapes, valid_shape):
    """The valid extents: ints, dims or traced scalars (known at run time)."""
    if valid_shapes is not None and valid_shape is not None:
        raise TypeError("give valid_shapes or valid_shape, not both")
    valid = valid_shapes if valid_shapes is not None else valid_shape
    return None if valid is None else list(valid)


def load(tensor, offsets, shapes, valid_shapes=None, *, valid_shape=None, target_memory=None):
    """The tile of `shapes` at `offsets` of `tensor` (offsets may be traced
    scalars; the shape is static). With `valid_shapes` (or `valid_shape`),
    a partial tile: only its top-left corner of that shape is read, the rest
    is 0; its extents may be traced scalars (PyPTO's
    `pl.min(TILE, n - p0)`), checked to be in [1, the tile's] when it runs.
    `target_memory` (a pl.MemorySpace) is placement: checked, no effect."""
    _placement(target_memory)
    shape = _static_extents("a tile shape", shapes)
    return _core.load(tensor, list(offsets), shape, _valid(valid_shapes, valid_shape))


def store(tile, offsets, output_tensor, valid_shapes=None, *, valid_shape=None):
    """Writes `tile` into `output_tensor` at `offsets` (with `valid_shapes`,
    only the tile's top-left corner of that shape); returns the tensor (the
    same object, so a function returning it returns its parameter)."""
    _core.store(tile, list(offsets), output_tensor, _valid(valid_shapes, valid_shape))
    return output_tensor


def add(lhs, rhs):
    """Elementwise sum of a tile and a tile or a scalar."""
    return _tile_ops._elementwise("add", "add", lhs, rhs)


def sub(lhs, rhs):
    """Elementwise difference of a tile and a tile or a scalar."""
    return _tile_ops._elementwise("sub", "sub", lhs, rhs)


def mul(lhs, rhs):
    """Elementwise product of a tile and a tile or a scalar."""
    return _tile_ops._elementwise("mul", "mul", lhs, rhs)


def div(lhs, rhs, high_precision=False):
    """Elementwise quotient of a tile and a tile or a scalar. PyPTO's
    high_precision selects a hardware lowering; anyp divides exactly as
    IEEE does either way, so it is ignored."""
    return _tile_ops._elementwise("div", "div", lhs, rhs)


def _scalar_extreme(name, a, b):
    if isinstance(a, _core.Tile) or isinstance(b, _core.Tile):
        raise UnsupportedError(
            f"not supported by anyp: pl.{name} of a tile (PyPTO's reduction with an axis): use "
            f"pl.row_{name} / pl.col_{name}, or pl.{name}imum for the elementwise {name}imum"
        )
    if isinstance(a, _core.Scalar) or isinstance(b, _core.Scalar):
        return _core.scalar_binary(name, a, b)
    return getattr(_builtins, name)(a, b)


def min(a, b):  # noqa: A001
    """The smaller of two scalars (traced or Python numbers)."""
    return _scalar_extreme("min", a, b)


def max(a, b):  # noqa: A001
    """The larger of two scalars (traced or Python numbers)."""
    return _scalar_extreme("max", a, b)


# pl.tile's forms of pl's own memory and arithmetic ops (defined above, after
# _tile_ops, which makes the namespace).
for _name in ("load", "store", "add", "sub", "mul", "div"):
    setattr(tile, _name, globals()[_name])


def __getattr__(name):
    raise AttributeError(
        f"not supported by anyp: pl.{name} (docs/python.md lists what the Python front-end has)"
    )
