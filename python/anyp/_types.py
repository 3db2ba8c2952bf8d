"""anyp._types — the parameter annotations: pl.Tensor[[shape], dtype],
pl.Out[...], pl.InOut[...], pld.DistributedTensor[[shape], dtype] and
pl.Scalar[dtype]. Python evaluates them when the function is defined; the
front-end turns them into the C++ core's parameter declarations.
pl.Tile[[shape], dtype] exists for PyPTO's return annotations (`-> pl.Tile[...]`)
and local annotations; a tile is not a parameter on anyp."""

from . import _core

# Each dtype's name in torch and numpy (torch.<name>, numpy.<name>); numpy
# has no bfloat16. One table for the example command line's inputs and the
# outputs a return-style call allocates.
ARRAY_DTYPE_NAMES = {
    _core.DType.FP32: "float32",
    _core.DType.FP16: "float16",
    _core.DType.BF16: "bfloat16",
    _core.DType.INT8: "int8",
    _core.DType.INT16: "int16",
    _core.DType.INT32: "int32",
    _core.DType.INT64: "int64",
}


class ParamType:
    """A declared parameter type: kind 'tensor', 'dist' or 'scalar'."""

    def __init__(self, kind, shape, dtype, intent="in"):
        self.kind, self.shape, self.dtype, self.intent = kind, list(shape), dtype, intent

    def with_intent(self, intent):
        if self.kind == "scalar":
            raise TypeError("pl.Out / pl.InOut take a tensor type, not a scalar")
        return ParamType(self.kind, self.shape, self.dtype, intent)

    def __repr__(self):
        return f"{self.kind}{self.shape} {self.dtype.name} ({self.intent})"


def _shape_and_dtype(args, what):
    if not isinstance(args, tuple) or len(args) != 2:
        raise TypeError(f"{what}[[shape], dtype]: give a shape list and a dtype")
    shape, dtype = args
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"{what}[[shape], dtype]: the shape must be a list, got {shape!r}")
    if not isinstance(dtype, _core.DType):
        raise TypeError(f"{what}[[shape], dtype]: the dtype must be a pl dtype, got {dtype!r}")
    return shape, dtype


class _TensorAnnotation:
    def __init__(self, kind, what):
        self._kind, self._what = kind, what

    def __getitem__(self, args):
        shape, dtype = _shape_and_dtype(args, self._what)
        return ParamType(self._kind, shape, dtype)


class _IntentAnnotation:
    def __init__(self, intent, what):
        self._intent, self._what = intent, what

    def __getitem__(self, inner):
        if not isinstance(inner, ParamType):
            raise TypeError(
                f"{self._what}[...] takes a tensor type such as pl.Tensor[[1, 64], pl.FP32]"
            )
        return inner.with_intent(self._intent)


class _ScalarAnnotation:
    def __getitem__(self, dtype):
        if not isinstance(dtype, _core.DType):
            raise TypeError(f"pl.Scalar[dtype]: the dtype must be a pl dtype, got {dtype!r}")
        return ParamType("scalar", [], dtype)


Tensor = _TensorAnnotation("tensor", "pl.Tensor")
Tile = _TensorAnnotation("tile", "pl.Tile")
DistributedTensor = _TensorAnnotation("dist", "pld.DistributedTensor")
Out = _IntentAnnotation("out", "pl.Out")
InOut = _IntentAnnotation("inout", "pl.InOut")
Scalar = _ScalarAnnotation()
