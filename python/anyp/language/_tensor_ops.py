"""anyp.language._tensor_ops — pl's tensor-level ops: pl.create_tensor,
pl.assemble, the pl.tensor namespace (value-returning elementwise ops and
casts, slice, assemble, read, write) and the subscript forms the statement
walker lowers `x[a:b, c:d]` and `x[a:b, c:d] = v` to (anyp/_walker.py).
Re-exported by anyp.language.

A tensor made here (by pl.create_tensor, or by pl.add & co. on tensors) is
this rank's own memory, zeroed when made, and a value: rebinding a name that
holds one writes into it. docs/python.md, "Tensors as values", has the
rules."""

from .. import _core, _walker
from . import _tile_ops

__all__ = ["create_tensor", "assemble", "tensor"]


def create_tensor(shape, dtype):
    """A new zeroed tensor of `shape` and `dtype`, this rank's own (an
    orchestration function's or a kernel's; one per block in a multi-block
    kernel). PyPTO leaves it uninitialised; anyp zeroes it each time the
    statement runs."""
    return _core.create_tensor(list(shape), dtype)


def assemble(target, source, offset):
    """Writes tensor `source` into `target` at `offset` (converted to
    target's dtype) and returns `target` (re-bind it, as PyPTO does)."""
    if not isinstance(target, _core.Value) or not isinstance(source, _core.Value):
        raise TypeError(
            "pl.assemble: target and source must be tensors, got "
            f"{type(target).__name__} and {type(source).__name__}"
        )
    _core.tensor_assemble(target, source, list(offset))
    return target


def subscript(value, offsets, extents):
    """`value[a:b, ...]` (every dim a slice): the view of a tensor, or the
    sub-tile of a tile, of `extents` at `offsets`."""
    if isinstance(value, _core.Value):
        return _core.tensor_slice(value, list(extents), list(offsets))
    if isinstance(value, _core.Tile):
        return _core.tile_slice(value, list(extents), list(offsets))
    raise TypeError(f"slicing a {type(value).__name__} (slice a tensor or a tile)")


def assign_subscript(target, offsets, extents, value):
    """`target[a:b, ...] = value`: a tensor is copied into the slice (PyPTO's
    assemble), a tile stored into it; the slice's extents must be value's."""
    if not isinstance(target, _core.Value):
        raise TypeError(
            f"assigning to a slice of a {type(target).__name__} (assign to a slice of a tensor)"
        )
    view = _core.tensor_slice(target, list(extents), list(offsets))
    if isinstance(value, _core.Value):
        _core.tensor_copy(view, value)  # checks the shapes agree
    elif isinstance(value, _core.Tile):
        # Stored whole into a view of the slice's extents: a larger tile is
        # out of bounds, a smaller one larger than its valid shape.
        _core.store(value, [0] * len(extents), view, list(extents))
    else:
        raise TypeError(
            f"assigning a {type(value).__name__} to a slice of a tensor (assign a tensor or a tile)"
        )


class _TensorNamespace:
    """pl.tensor: PyPTO's tensor-level forms."""

    add = staticmethod(lambda lhs, rhs: _tile_ops._elementwise("tensor.add", "add", lhs, rhs))
    sub = staticmethod(lambda lhs, rhs: _tile_ops._elementwise("tensor.sub", "sub", lhs, rhs))
    mul = staticmethod(lambda lhs, rhs: _tile_ops._elementwise("tensor.mul", "mul", lhs, rhs))
    div = staticmethod(lambda lhs, rhs: _tile_ops._elementwise("tensor.div", "div", lhs, rhs))
    maximum = staticmethod(
        lambda lhs, rhs: _tile_ops._elementwise("tensor.maximum", "maximum", lhs, rhs)
    )
    minimum = staticmethod(
        lambda lhs, rhs: _tile_ops._elementwise("tensor.minimum", "minimum", lhs, rhs)
    )
    create = staticmethod(create_tensor)
    assemble = staticmethod(assemble)
    cast = staticmethod(_tile_ops.cast)
    slice = staticmethod(_tile_ops.slice)
    read = staticmethod(_tile_ops.read)
    write = staticmethod(_tile_ops.write)

    def __getattr__(self, name):
        raise AttributeError(f"not supported by anyp: pl.tensor.{name} (docs/python.md)")


tensor = _TensorNamespace()


_walker.install_operators(_core.Value, _core.tensor_binary)
