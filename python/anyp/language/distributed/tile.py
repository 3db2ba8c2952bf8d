"""anyp.language.distributed.tile — pld.tile: tile-level RMA, PyPTO's
remote_load and remote_store (incore)."""

from ... import _core


def remote_load(target, peer, offsets, shape, valid_shape=None):
    """The tile of `shape` at `offsets` of `peer`'s copy of window `target`
    (a local read when peer is this rank). With `valid_shape`, a partial
    tile: only its top-left `valid_shape` corner is read, the rest is 0."""
    valid = None if valid_shape is None else list(valid_shape)
    return _core.remote_load(target, peer, list(offsets), list(shape), valid)


def remote_store(src_tile, target, peer, offsets, *, atomic=_core.AtomicType.None_):
    """Writes `src_tile` into `peer`'s copy of window `target` at `offsets`
    (AtomicType.Add accumulates instead). Returns nothing."""
    _core.remote_store(src_tile, target, peer, list(offsets), atomic)


def __getattr__(name):
    raise AttributeError(f"not supported by anyp: pld.tile.{name} (docs/python.md)")
