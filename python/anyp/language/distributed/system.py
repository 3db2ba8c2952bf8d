"""anyp.language.distributed.system — pld.system: notify and wait, and the
wait for an asynchronous put (async_session, wait_async_event)."""

from ... import _core


def notify(target, peer, offsets, value, op):
    """Updates cell `offsets` of `peer`'s copy of the signal `target`
    (AtomicAdd or Set); PyPTO's programs pass it as `target=`."""
    _core.notify(target, peer, list(offsets), value, op)


def wait(signal, offsets, expected, cmp):
    """Waits until this rank's cell `offsets` compares true against `expected`."""
    _core.wait(signal, list(offsets), expected, cmp)


class AsyncSession:
    """PyPTO's SDMA session (pld.system.async_session()): the asynchronous
    puts and their waits name it. anyp's transfers need no session set up;
    it is checked to be passed where PyPTO requires it."""

    def __repr__(self):
        return "pld.system.async_session()"


def async_session():
    """The session pld.tensor.put_async and wait_async_event take."""
    return AsyncSession()


def _check_session(op, session):
    if session is not None and not isinstance(session, AsyncSession):
        raise TypeError(
            f"{op}: session must be pld.system.async_session()'s, got {type(session).__name__}"
        )


def wait_async_event(event, session=None):
    """Blocks until the pld.tensor.put_async of `event` has completed: its
    data is in the peer's window and its source may be written again.
    Notify the peer after this, not before."""
    _check_session("pld.system.wait_async_event", session)
    if not isinstance(event, _core.AsyncEvent):
        raise TypeError(
            "pld.system.wait_async_event: event must be pld.tensor.put_async's, got "
            f"{type(event).__name__}"
        )
    _core.wait_async(event)


def __getattr__(name):
    raise AttributeError(f"not supported by anyp: pld.system.{name} (docs/python.md)")
