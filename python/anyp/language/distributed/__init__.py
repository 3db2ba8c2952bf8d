"""anyp.language.distributed — PyPTO's `pld`: window buffers and views, the
comm context, (in pld.system / pld.tensor / pld.tile) signals, one-sided
transfers and the builtin collectives, PyPTO's two-segment short forms
(pld.remote_load, pld.barrier, pld.all_reduce, ...) and anyp's comm domains
(pld.comm_domain / pld.comm_group, which PyPTO infers instead)."""

import itertools

from ... import _core
from ..._types import DistributedTensor  # noqa: F401
from . import system, tensor, tile  # noqa: F401
from .windows import alloc_window_buffer, window  # noqa: F401
from .tile import remote_load  # noqa: F401  (PyPTO's short form)

NotifyOp = _core.NotifyOp
WaitCmp = _core.WaitCmp
AtomicType = _core.AtomicType
ReduceOp = _core.ReduceOp
CommDomain = _core.CommDomain


def world_size():
    return _core.world_size()


def get_comm_ctx(window_view):
    return _core.get_comm_ctx(window_view)


def rank(ctx):
    return _core.rank(ctx)


def nranks(ctx):
    return _core.nranks(ctx)


# ---- comm domains (anyp's; host level) ------------------------------------------------


def comm_domain(name):
    """Declares a communication domain: disjoint groups of ranks of one size."""
    return _core.comm_domain(name)


def comm_group(domain, first, count=None, stride=1):
    """Adds a group to `domain`: `count` ranks first, first + stride, ...,
    or (with a list as `first`) the listed ranks, numbered in list order."""
    if isinstance(first, (list, tuple)):
        if count is not None:
            raise TypeError("pld.comm_group(domain, ranks): give a list of ranks or first, count")
        _core.comm_group_ranks(domain, list(first))
    else:
        if count is None:
            raise TypeError("pld.comm_group(domain, first, count, stride=1): count is missing")
        _core.comm_group(domain, first, count, stride)


# ---- PyPTO's short forms (host level, signals made here) ---------------------------------

_signal_counter = itertools.count()


def _fresh_signal(op, shape):
    """A new INT32 signal window of `shape` (PyPTO's auto-managed signals)."""
    buf = _core.alloc_window_buffer(
        f"__auto_{op}_{next(_signal_counter)}", shape, _core.DType.INT32
    )
    return _core.window(buf, shape, _core.DType.INT32)


def remote_store(src, target, peer, offsets, *, atomic=_core.AtomicType.None_):
    """PyPTO's short form: a tile goes to pld.tile.remote_store, a tensor to
    pld.tensor.remote_store."""
    if isinstance(src, _core.Value):
        tensor.remote_store(src, target, peer, offsets, atomic=atomic)
        return
    tile.remote_store(src, target, peer, offsets, atomic=atomic)


def barrier(signal):
    return tensor.barrier(signal)


def all_reduce(target, *, op=ReduceOp.Sum, mode="mesh", nranks=None):
    """Host-level allreduce with its signal managed here: mesh uses the
    compiler's synthesized signal; ring allocates a fresh [2 * (NR - 1), NR]
    one (anyp's ring shape), recursive_doubling, rabenseifner and tree a
    fresh [NR, 1] one. PyPTO's `nranks` sizes the ring's signal; anyp sizes it
    from P itself, so with mode='ring' it is accepted and ignored (it
    changes no result), and refused with the others."""
    tensor._check_mode("pld.all_reduce", "allreduce", mode)
    if mode == "ring":
        ws = _core.world_size()
        signal = _fresh_signal("allreduce_ring", [_core.dim_binary("*", 2, ws - 1), ws])
        return tensor.allreduce(target, signal, op=op, mode="ring")
    if mode == "mesh":
        if nranks is not None:
            raise ValueError(
                "pld.all_reduce nranks is only used with mode='ring'; "
                "omit it for mesh allreduce (or pass mode='ring')"
            )
        return tensor.allreduce(target, op=op)
    if nranks is not None:  # every other algorithm: an [NR, 1] signal
        raise ValueError(f"pld.all_reduce nranks is only used with mode='ring', not {mode!r}")
    signal = _fresh_signal("allreduce_" + mode, [_core.world_size(), 1])
    return tensor.allreduce(target, signal, op=op, mode=mode)


def all_gather(local_data, target, *, mode="mesh"):
    return tensor.allgather(
        local_data, target, _fresh_signal("allgather", [world_size(), 1]), mode=mode
    )


def reduce_scatter(target, *, op=ReduceOp.Sum, mode="mesh"):
    return tensor.reduce_scatter(
        target, _fresh_signal("reduce_scatter", [world_size(), 1]), op=op, mode=mode
    )


def broadcast(target, *, root, mode="mesh"):
    return tensor.broadcast(
        target, _fresh_signal("broadcast", [world_size(), 1]), root=root, mode=mode
    )


def all_to_all(input, target, *, mode="mesh"):  # noqa: A002
    return tensor.all_to_all(
        input, target, _fresh_signal("all_to_all", [world_size(), 1]), mode=mode
    )


def all_to_all_v(input, target, send_counts, recv_counts, *, nranks=None):  # noqa: A002
    signal = _fresh_signal("all_to_all_v", [world_size(), 1])
    return tensor.all_to_all_v(input, target, signal, send_counts, recv_counts)


def __getattr__(name):
    raise AttributeError(f"not supported by anyp: pld.{name} (docs/python.md)")
