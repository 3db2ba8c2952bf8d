"""anyp.runtime.DistributedWorker — PyPTO's prepared worker
(`compiled.prepare()`), on anyp's Session (include/anyp/session.hpp): one
engine kept for every dispatch, windows that may persist between
dispatches (`persistent=True`, zeroed before each unless
`reset_persistent_windows=False`), blocking dispatches (`rt(...)`,
`rt.run(compiled, ...)`) and bounded asynchronous ones
(`rt.submit(compiled, ...)` returns a DistributedRunHandle; at most two in
flight, a third waits for the oldest). Dispatches of one worker run one at a
time, in submission order. Several programs share a worker through
`extra_compiled`; then `rt(...)` is ambiguous and every dispatch names its
program. docs/python.md, "Prepared workers"."""

import math
import time

from .. import _core
from .._frontend import _user_facing

# prepare()'s keywords for PyPTO's forked host processes: anyp has none.
_NO_HOST_PROCESSES = ("callbacks", "sub_worker_overrides")


class DistributedRunHandle:
    """One submitted dispatch: result() waits for it and returns its
    RunStats, or raises what it raised. It keeps the dispatch's arrays alive
    until it has ended (the run reads and writes them in place)."""

    def __init__(self, native, args):
        self._native, self._args = native, args

    @property
    def done(self):
        """True once the dispatch has ended (result() would not wait)."""
        return self._native.ready

    @_user_facing
    def result(self, timeout=None):
        """The dispatch's RunStats, after waiting at most `timeout` seconds
        (None: as long as it takes); TimeoutError when it has not ended."""
        if timeout is not None:
            deadline = time.monotonic() + float(timeout)
            while not self._native.ready:
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"the dispatch did not end within {timeout} s")
                time.sleep(min(0.001, max(0.0, deadline - time.monotonic())))
        stats = self._native.wait()
        self._args = None  # ended: the arrays are the caller's again
        return stats

    wait = result  # PyPTO's alias


class DistributedWorker:
    """compiled.prepare(...): see the module's docstring."""

    def __init__(
        self,
        compiled,
        config=None,
        *,
        extra_compiled=(),
        persistent=False,
        reset_persistent_windows=None,
        startup_timeout_s=None,
        **kwargs,
    ):
        for name in _NO_HOST_PROCESSES:
            if kwargs.pop(name, None) is not None:
                raise TypeError(
                    f"prepare(): not supported by anyp: {name} (host SubWorker callbacks run in "
                    "PyPTO's forked host processes; anyp has none)"
                )
        if kwargs:
            raise TypeError(f"prepare() got an unexpected keyword argument '{sorted(kwargs)[0]}'")
        if config is not None and type(config).__name__ != "RunConfig":
            raise TypeError(f"prepare(): config must be a RunConfig, got {config!r}")
        if startup_timeout_s is not None and not (
            isinstance(startup_timeout_s, (int, float))
            and math.isfinite(startup_timeout_s)
            and startup_timeout_s > 0
        ):
            raise ValueError(
                "prepare(): startup_timeout_s must be a positive finite number of seconds, got "
                f"{startup_timeout_s!r}"
            )
        reset = True if reset_persistent_windows is None else bool(reset_persistent_windows)
        self._programs = [compiled, *extra_compiled]
        self._sessions = {
            id(c): _core.Session(c._native, bool(persistent), reset) for c in self._programs
        }

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _session(self, compiled):
        session = self._sessions.get(id(compiled))
        if session is None or not any(c is compiled for c in self._programs):
            raise ValueError(
                "this program was not prepared on this worker: pass it in "
                "prepare(extra_compiled=[...])"
            )
        return session

    def _args(self, compiled, args, kwargs):
        # PyPTO passes every dispatch its RunConfig (prepare()'s is not kept).
        # A prepared worker runs the program as compiled: a config that asks
        # for another run (race checking, a schedule, ...) is refused by name.
        config = kwargs.pop("config", None)
        if config is not None:
            wanted = compiled.dispatch_config(config).to_dict()
            have = compiled.config.to_dict()
            differ = [k for k in wanted if wanted[k] != have.get(k)]
            if differ:
                raise _core.ConfigError(
                    "config error: a prepared worker runs its program as compiled; this "
                    f"dispatch's RunConfig differs in {', '.join(differ)} "
                    f"({', '.join(f'{k}={wanted[k]!r}' for k in differ)}): compile the program "
                    "with that RunConfig, then prepare it"
                )
        return compiled._function._ordered(args, kwargs)

    @_user_facing
    def __call__(self, *args, **kwargs):
        """One blocking dispatch of the prepared program."""
        if len(self._programs) > 1:
            raise TypeError(
                "rt(...) is ambiguous on a worker of several programs: dispatch with "
                "rt.run(compiled, ...)"
            )
        return self.run(self._programs[0], *args, **kwargs)

    @_user_facing
    def run(self, compiled, *args, **kwargs):
        """One blocking dispatch of `compiled`, after those submitted before."""
        ordered = self._args(compiled, args, kwargs)
        return self._session(compiled).run(ordered)

    @_user_facing
    def submit(self, compiled, *args, **kwargs):
        """A dispatch of `compiled` that returns at once (it waits while two
        are in flight) with its DistributedRunHandle."""
        ordered = self._args(compiled, args, kwargs)
        return DistributedRunHandle(self._session(compiled).submit(ordered), ordered)

    def reset_persistent_windows(self):
        """Zeroes the persistent windows before the next dispatch."""
        for session in self._sessions.values():
            session.reset_windows()

    def close(self):
        """Waits for every dispatch, then releases the worker (also on
        leaving a `with` block). A closed worker refuses dispatches."""
        for session in self._sessions.values():
            session.close()

    def __getattr__(self, name):
        if name in _RESIDENT_TENSOR_METHODS:
            raise AttributeError(
                f"not supported by anyp yet: DistributedWorker.{name} (device-resident tensors; "
                "pass host tensors: on anyp every dispatch reads and writes them in place)"
            )
        raise AttributeError(f"'DistributedWorker' object has no attribute '{name}'")


# PyPTO's device-resident tensor API, not on anyp yet (docs/python.md).
_RESIDENT_TENSOR_METHODS = (
    "alloc_tensor",
    "free_tensor",
    "copy_to",
    "copy_from",
    "alloc_stacked_tensor",
    "free_stacked_tensor",
    "copy_stacked_from",
)
