"""anyp.language.distributed.windows — pld.alloc_window_buffer and
pld.window: symmetric window buffers (host level) and typed views of them
(pld.tensor re-exports both under PyPTO's three-segment names)."""

from ... import _core, _walker


def alloc_window_buffer(shape, dtype=None, name=None, domain=None):
    """A symmetric window buffer (host level): of `shape` and `dtype`, or,
    given a byte count alone (`pld.alloc_window_buffer(nbytes)`, PyPTO's
    common form), untyped until viewed. Unnamed, it takes the name of the
    variable it is assigned to (PyPTO's programs name none). `domain`
    (anyp's): a buffer of a pld.comm_domain, reached through each group."""
    name = name or _walker.current_target() or "buf"
    if not isinstance(shape, (list, tuple)):
        if dtype is not None or domain is not None:
            raise TypeError(
                "pld.alloc_window_buffer(nbytes) takes a byte count alone: give a shape list "
                "with a dtype or a domain"
            )
        return _core.alloc_window_buffer_bytes(name, shape)
    if dtype is None:
        raise TypeError("pld.alloc_window_buffer(shape, dtype): the dtype is missing")
    if domain is not None:
        return _core.alloc_domain_window_buffer(name, list(shape), dtype, domain)
    return _core.alloc_window_buffer(name, list(shape), dtype)


def window(buffer, shape, dtype, offset=None):
    """A typed view of `buffer`; `offset` (in elements of `dtype`) places it
    inside a byte-sized buffer."""
    if offset is None:
        return _core.window(buffer, list(shape), dtype)
    return _core.window_at(buffer, list(shape), dtype, offset)
