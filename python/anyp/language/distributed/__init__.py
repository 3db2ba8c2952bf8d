"""anyp.language.distributed — PyPTO's `pld`: window buffers and views, the
comm context, and (in pld.system / pld.tensor) signals and one-sided
transfers."""

from ... import _core, _frontend
from ..._types import DistributedTensor  # noqa: F401
from . import system, tensor  # noqa: F401

NotifyOp = _core.NotifyOp
WaitCmp = _core.WaitCmp
AtomicType = _core.AtomicType


def alloc_window_buffer(shape, dtype, name=None):
    """A symmetric window buffer (host level). Unnamed, it takes the name of
    the variable it is assigned to (PyPTO's programs name none)."""
    name = name or _frontend.current_target() or "buf"
    return _core.alloc_window_buffer(name, list(shape), dtype)


def window(buffer, shape, dtype):
    return _core.window(buffer, list(shape), dtype)


def world_size():
    return _core.world_size()


def get_comm_ctx(window_view):
    return _core.get_comm_ctx(window_view)


def rank(ctx):
    return _core.rank(ctx)


def nranks(ctx):
    return _core.nranks(ctx)


def __getattr__(name):
    raise AttributeError(f"not supported by anyp: pld.{name} (docs/python.md)")
