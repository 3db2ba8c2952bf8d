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

from .. import _core, _host_worker
from .._frontend import _user_facing


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
        callbacks = kwargs.pop("callbacks", None)
        overrides = kwargs.pop("sub_worker_overrides", None)  # PyPTO's older name
        if callbacks is not None and overrides is not None:
            raise TypeError("prepare(): give callbacks= or sub_worker_overrides=, not both")
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
        self._bound = _host_worker.bind(
            [c._function for c in self._programs],
            callbacks if callbacks is not None else overrides,
            self,
        )
        self._persistent, self._reset = bool(persistent), reset
        # A program compiled without tensors (ir.compile(program, platform=...))
        # compiles at its first dispatch, for that dispatch's shapes.
        self._resolved = {id(c): c for c in self._programs if hasattr(c, "_native")}
        self._sessions = {}
        try:
            for c in self._resolved.values():
                self._sessions[id(c)] = _core.Session(c._native, self._persistent, reset)
        except BaseException:
            _host_worker.unbind(self._bound)
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _session(self, program, args, kwargs):
        """The session of `program` (as given to prepare) and its compiled
        program, compiled and opened at its first dispatch if need be."""
        if not any(c is program for c in self._programs):
            raise ValueError(
                "this program was not prepared on this worker: pass it in "
                "prepare(extra_compiled=[...])"
            )
        compiled = self._resolved.get(id(program))
        if compiled is None:
            compiled = program._function.compile(*args, config=program.config, **kwargs)
            self._resolved[id(program)] = compiled
        if id(compiled) not in self._sessions:
            self._sessions[id(compiled)] = _core.Session(
                compiled._native, self._persistent, self._reset
            )
        return self._sessions[id(compiled)], compiled

    def _args(self, program, args, kwargs):
        # PyPTO passes every dispatch its RunConfig (prepare()'s is not kept).
        # A prepared worker runs the program as compiled: a config that asks
        # for another run (race checking, a schedule, ...) is refused by name.
        config = kwargs.pop("config", None)
        session, compiled = self._session(program, args, kwargs)
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
        return session, compiled._function._ordered(args, kwargs)

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
        session, ordered = self._args(compiled, args, kwargs)
        return session.run(ordered)

    @_user_facing
    def submit(self, compiled, *args, **kwargs):
        """A dispatch of `compiled` that returns at once (it waits while two
        are in flight) with its DistributedRunHandle."""
        session, ordered = self._args(compiled, args, kwargs)
        return DistributedRunHandle(session.submit(ordered), ordered)

    def reset_persistent_windows(self):
        """Zeroes the persistent windows before the next dispatch."""
        for session in self._sessions.values():
            session.reset_windows()

    def close(self):
        """Waits for every dispatch, then releases the worker (also on
        leaving a `with` block). A closed worker refuses dispatches."""
        for session in self._sessions.values():
            session.close()
        _host_worker.unbind(self._bound)
        self._bound = []

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
