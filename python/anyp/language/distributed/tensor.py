"""anyp.language.distributed.tensor — pld.tensor: one-sided put and get
(whole or by region), the barrier and the builtin collectives, with PyPTO's
argument orders and keywords. Every collective works in place on its window
and returns it: re-bind the result (`data = pld.tensor.allreduce(data, sig)`).

PyPTO's hardware-only keywords (`chunk_rows`, `chunk_cols`, `pipeline` of
put/get) are checked as PyPTO checks them and otherwise ignored: anyp moves
the data in one piece, with the same result."""

from ... import _core, _scopes
from . import system, windows

ReduceOp = _core.ReduceOp
# Each collective's mode names, from the C++ algorithm table
# (include/anyp/collective_algorithms.hpp): {"allreduce": ["mesh", ...], ...}.
_COLLECTIVE_MODES = _core.collective_modes()


def _check_mode(op, collective, mode):
    """A ValueError naming every mode of `collective` unless `mode` is one."""
    names = _COLLECTIVE_MODES[collective]
    if mode not in names:
        listed = ", ".join(f'"{n}"' for n in names[:-1]) + f' or "{names[-1]}"'
        raise ValueError(f"{op} mode must be {listed}, got {mode!r}")


def _check_chunking(op, chunk_rows, chunk_cols, pipeline):
    """PyPTO's checks of the staging-tile keywords (which change nothing here)."""
    for name, value in (("chunk_rows", chunk_rows), ("chunk_cols", chunk_cols)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{op} {name} must be an int (static), got {type(value).__name__}")
        if value < 0:
            raise ValueError(f"{op} {name} must be non-negative (0 = full), got {value}")
    if pipeline and not (chunk_rows > 0 and chunk_cols > 0):
        raise ValueError(
            f"{op} pipeline=True requires both chunk_rows>0 and chunk_cols>0 "
            f"(got chunk_rows={chunk_rows}, chunk_cols={chunk_cols})"
        )


def _region(op, dst_offsets, src_offsets, shape):
    """None (whole) or the three region lists; all three or none."""
    given = [v is not None for v in (dst_offsets, src_offsets, shape)]
    if not any(given):
        return None
    if not all(given):
        raise ValueError(f"{op} dst_offsets, src_offsets, and shape must be provided together")
    return list(dst_offsets), list(src_offsets), list(shape)


def remote_store(src, target, peer, offsets, *, atomic=_core.AtomicType.None_):
    """Writes the whole local tensor `src` (a parameter, a window view, a
    slice or a pl.create_tensor) into `peer`'s copy of window `target` at
    `offsets` (AtomicType.Add accumulates instead). Recorded as the region
    put it is, so its diagnostics name pld.tensor.put. Returns nothing."""
    if not isinstance(src, _core.Value):
        raise TypeError(
            f"pld.tensor.remote_store: src must be a tensor, got {type(src).__name__} "
            "(a tile goes to pld.tile.remote_store)"
        )
    _core.tensor_remote_store(src, target, peer, list(offsets), atomic)


def put(
    dst,
    peer,
    src,
    dst_offsets=None,
    src_offsets=None,
    shape=None,
    *,
    atomic=_core.AtomicType.None_,
    chunk_rows=0,
    chunk_cols=0,
    pipeline=False,
):
    """Pushes local `src` into `peer`'s window `dst`: whole, or `shape`
    elements from `src_offsets` to `dst_offsets`. AtomicType.Add accumulates."""
    _check_chunking("pld.tensor.put", chunk_rows, chunk_cols, pipeline)
    region = _region("pld.tensor.put", dst_offsets, src_offsets, shape)
    if region is None:
        _core.put(dst, peer, src, atomic)
    else:
        _core.put_region(dst, peer, src, *region, atomic)


def put_async(dst, peer, src, session=None, dst_offsets=None, src_offsets=None, shape=None):
    """Starts pushing local `src` into `peer`'s window `dst` (whole, or a
    region as put's) and returns at once with the transfer's event: work
    until pld.system.wait_async_event(event, session) overlaps it, and
    until then `src` must not be written. `session` is
    pld.system.async_session()'s (PyPTO's SDMA session; checked, else unused)."""
    system._check_session("pld.tensor.put_async", session)
    region = _region("pld.tensor.put_async", dst_offsets, src_offsets, shape)
    if region is None:
        return _core.put_async(dst, peer, src)
    return _core.put_async_region(dst, peer, src, *region)


def get(
    dst,
    peer,
    src,
    dst_offsets=None,
    src_offsets=None,
    shape=None,
    *,
    atomic=_core.AtomicType.None_,
    chunk_rows=0,
    chunk_cols=0,
    pipeline=False,
):
    """Pulls `peer`'s window `src` into local `dst`: whole, or by region.
    (`atomic` is anyp's: PyPTO's get has none; Add accumulates.)"""
    _check_chunking("pld.tensor.get", chunk_rows, chunk_cols, pipeline)
    region = _region("pld.tensor.get", dst_offsets, src_offsets, shape)
    if region is None:
        _core.get(dst, peer, src, atomic)
    else:
        _core.get_region(dst, peer, src, *region, atomic)


def barrier(signal=None):
    """A full barrier on an [NR, 1] (or [NR]) INT32 signal; self-clearing, so
    one signal serves back-to-back calls. Returns the signal. Without a
    signal (anyp's host form, between dispatch loops) the compiler makes one."""
    if signal is None:
        _core.host_barrier()
        return None
    return _core.barrier(signal)


def _core_num(op, core_num):
    if core_num is None or core_num == 1:
        return None
    if not isinstance(core_num, int) or isinstance(core_num, bool):
        raise TypeError(
            f"{op} core_num must be a positive compile-time int, got {type(core_num).__name__}"
        )
    if core_num <= 0:
        raise ValueError(f"{op} core_num must be positive, got {core_num}")
    return core_num


def allreduce(target, signal=None, *, op=ReduceOp.Sum, mode="mesh", core_num=1):
    """In place on window `target`: every rank ends with `op` over all ranks.
    mode="mesh" takes an [NR, 1] signal, mode="ring" a [2 * (NR - 1), NR]
    one or the [NR, 1] one; anyp's mode="recursive_doubling",
    mode="rabenseifner" and mode="tree" take the [NR, 1] one
    (docs/collectives.md). In the host, between dispatch loops, the mesh form may omit the
    signal (the compiler makes one); core_num > 1 runs it on that many
    blocks per rank over an [NR, S >= core_num] signal (host only)."""
    _check_mode("pld.tensor.allreduce", "allreduce", mode)
    if not isinstance(op, ReduceOp):
        raise TypeError(f"pld.tensor.allreduce op must be a pld.ReduceOp, got {op!r}")
    cores = _core_num("pld.tensor.allreduce", core_num)
    return _core.allreduce(target, signal, op, mode, cores)


def broadcast(target, signal, *, root, mode="mesh"):
    """Every rank's window `target` becomes the root's. `root` is a
    compile-time integer in [0, P). Signal [NR, 1]. anyp's mode="tree" (a
    binomial tree of whole-vector pulls), mode="scatter_allgather" (van de
    Geijn: a binomial scatter, then a ring allgather) and mode="auto" (the
    one of least modeled time) end with read-done handshakes
    (docs/collectives.md §3.4)."""
    _check_mode("pld.tensor.broadcast", "broadcast", mode)
    return _core.broadcast(target, signal, root, mode)


def allgather(local_data, target, signal, *, mode="mesh", defer=False):
    """Rank r's `local_data` (a plain tensor in a kernel) lands in row r of
    every rank's window `target` ([NR, ...]). Signal [NR, 1]. Returns target.
    anyp's mode="bruck" (ceil(log2 P) rounds, with read-done handshakes),
    mode="recursive_doubling" (floor(log2 P) pairwise exchanges of doubling
    blocks, the ranks past a power of two folded in) and mode="auto" (the
    one of least modeled time; docs/collectives.md §3.5). PyPTO's
    defer=True (split phase: its wait runs before the tasks that list this
    one's pl.at task in deps=) completes where it stands on anyp, and in a
    pl.manual_scope the tasks that read `target` must list its task
    (anyp/_scopes.py)."""
    _check_mode("pld.tensor.allgather", "allgather", mode)
    if defer:
        _scopes.deferred(target, signal)
    return _core.allgather(local_data, target, signal, mode)


def reduce_scatter(target, signal, *, op=ReduceOp.Sum, mode="mesh"):
    """Window `target` is [NR, ...]: rank r's row r becomes `op` over every
    rank's row r. Signal [NR, 1]. Returns target. anyp's
    mode="recursive_halving" (Rabenseifner's halving over the rows; the other
    rows keep partial reductions), mode="pairwise" (P - 1 steps, row r
    reduced in the order r, r + 1, .., r - 1) and mode="auto"
    (docs/collectives.md §3.6)."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"pld.tensor.reduce_scatter op must be a pld.ReduceOp, got {op!r}")
    _check_mode("pld.tensor.reduce_scatter", "reduce_scatter", mode)
    return _core.reduce_scatter(target, signal, op, mode)


def all_to_all(input, target, signal, *, mode="mesh"):  # noqa: A002  (PyPTO's name)
    """Block d of rank r's `input` ([NR * B, ...], B rows per rank; a plain
    tensor in a kernel) lands in block r of rank d's window `target`.
    Signal [NR, 1]. anyp's
    mode="pairwise" (P - 1 steps, one peer in and one out per step),
    mode="bruck" (ceil(log2 P) packed puts, through a scratch window the
    compiler adds) and mode="auto" (the one of least modeled time;
    docs/collectives.md §3.7)."""
    _check_mode("pld.tensor.all_to_all", "all_to_all", mode)
    return _core.all_to_all(input, target, signal, mode)


def all_to_all_v(  # noqa: A002  (PyPTO's names)
    input, target, signal, send_counts=None, recv_counts=None, *, core_num=1
):
    """PyPTO's variable all-to-all over a flat [NR * MAX_RECV, C] block:
    rank r sends the first send_counts[d, 0] rows of its block d (clamped
    to [0, MAX_RECV]) into block r of rank d's window `target`, and rank d
    finds that clamped count in cell {r, 0} of its window `recv_counts`.
    Without counts every row goes (PyPTO's three-argument form: an
    all_to_all of MAX_RECV-row blocks). anyp's C++ form counts elements
    (pld::Counts::Elements; docs/collectives.md §3.8)."""
    if (send_counts is None) != (recv_counts is None):
        raise TypeError(
            "pld.tensor.all_to_all_v takes send_counts and recv_counts together (or neither: "
            "every row of every block goes)"
        )
    if send_counts is None:
        if core_num != 1:
            raise TypeError("pld.tensor.all_to_all_v: core_num= needs send_counts and recv_counts")
        return _core.all_to_all(input, target, signal, "mesh")
    cores = _core_num("pld.tensor.all_to_all_v", core_num)
    return _core.all_to_all_v(input, send_counts, target, recv_counts, signal, cores, True)


# pld.alloc_window_buffer and pld.window under PyPTO's three-segment names.
alloc_window_buffer = windows.alloc_window_buffer
window = windows.window


def __getattr__(name):
    raise AttributeError(f"not supported by anyp: pld.tensor.{name} (docs/python.md)")
