"""anyp.language — PyPTO's `pl`: dtypes, parameter annotations, dynamic
dims, the jit decorators, pl.range and the tile ops anyp's Python front-end
has so far (docs/python.md lists them; any other name is refused with
"not supported by anyp")."""

import builtins as _builtins

from .. import _core
from .._frontend import JitFunction, UnsupportedError
from .._types import InOut, Out, Scalar, Tensor  # noqa: F401
from ._tile_ops import *  # noqa: F401,F403  (pl's tile compute ops)
from ._tile_ops import __all__ as _tile_op_names

FP32 = _core.DType.FP32
FP16 = _core.DType.FP16
BF16 = _core.DType.BF16
INT8 = _core.DType.INT8
INT16 = _core.DType.INT16
INT32 = _core.DType.INT32
INT64 = _core.DType.INT64


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
    """pl.range(stop), pl.range(start, stop[, step]): only as a for loop's
    iterable in a traced function (the loop is recorded, not unrolled)."""

    def __call__(self, *args, **kwargs):
        raise UnsupportedError("pl.range(...) is the iterable of a for loop in a traced function")

    @staticmethod
    def bounds(*args, init_values=None):
        if init_values is not None:
            raise UnsupportedError("pl.range(..., init_values=...) (use loop-carried rebinding)")
        if len(args) == 1:
            return 0, args[0], 1
        if len(args) == 2:
            return args[0], args[1], 1
        if len(args) == 3:
            return args
        raise TypeError(f"pl.range takes 1 to 3 arguments, got {len(args)}")


range = _Range()  # noqa: A001  (PyPTO's name)


def load(tensor, offsets, shapes):
    """The tile of `shapes` at `offsets` of `tensor`."""
    return _core.load(tensor, list(offsets), list(shapes))


def store(tile, offsets, output_tensor):
    """Writes `tile` into `output_tensor` at `offsets`; returns the tensor."""
    return _core.store(tile, list(offsets), output_tensor)


def add(lhs, rhs):
    return _core.tile_binary("add", lhs, rhs)


def sub(lhs, rhs):
    return _core.tile_binary("sub", lhs, rhs)


def mul(lhs, rhs):
    return _core.tile_binary("mul", lhs, rhs)


def div(lhs, rhs):
    return _core.tile_binary("div", lhs, rhs)


def min(a, b):  # noqa: A001
    if isinstance(a, _core.Scalar) or isinstance(b, _core.Scalar):
        return _core.scalar_binary("min", a, b)
    return _builtins.min(a, b)


def max(a, b):  # noqa: A001
    if isinstance(a, _core.Scalar) or isinstance(b, _core.Scalar):
        return _core.scalar_binary("max", a, b)
    return _builtins.max(a, b)


def __getattr__(name):
    raise AttributeError(
        f"not supported by anyp: pl.{name} (docs/python.md lists what the Python "
        "front-end has)"
    )
