"""anyp.language.distributed.tensor — pld.tensor: one-sided put and get."""

from ... import _core


def put(dst, peer, src, atomic=_core.AtomicType.None_):
    """Pushes local `src` into `peer`'s window `dst`, whole."""
    _core.put(dst, peer, src, atomic)


def get(dst, peer, src, atomic=_core.AtomicType.None_):
    """Pulls `peer`'s window `src` into local `dst`, whole."""
    _core.get(dst, peer, src, atomic)


def __getattr__(name):
    raise AttributeError(f"not supported by anyp: pld.tensor.{name} (docs/python.md)")
