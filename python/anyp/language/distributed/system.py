"""anyp.language.distributed.system — pld.system: notify and wait."""

from ... import _core


def notify(signal, peer, offsets, value, op):
    """Updates cell `offsets` of `peer`'s copy of `signal` (AtomicAdd or Set)."""
    _core.notify(signal, peer, list(offsets), value, op)


def wait(signal, offsets, expected, cmp):
    """Waits until this rank's cell `offsets` compares true against `expected`."""
    _core.wait(signal, list(offsets), expected, cmp)


def __getattr__(name):
    raise AttributeError(f"not supported by anyp: pld.system.{name} (docs/python.md)")
