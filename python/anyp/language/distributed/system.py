"""anyp.language.distributed.system — pld.system: notify and wait."""

from ... import _core


def notify(target, peer, offsets, value, op):
    """Updates cell `offsets` of `peer`'s copy of the signal `target`
    (AtomicAdd or Set); PyPTO's programs pass it as `target=`."""
    _core.notify(target, peer, list(offsets), value, op)


def wait(signal, offsets, expected, cmp):
    """Waits until this rank's cell `offsets` compares true against `expected`."""
    _core.wait(signal, list(offsets), expected, cmp)


def __getattr__(name):
    raise AttributeError(f"not supported by anyp: pld.system.{name} (docs/python.md)")
