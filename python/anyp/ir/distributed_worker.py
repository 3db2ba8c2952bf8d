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

import atexit
import ctypes
import math
import time
import weakref

from .. import _core, _host_worker
from . import device_tensors
from .._run_timing import RunTiming
from .._errors import UnsupportedError, _user_facing


# The prepared workers not closed yet: closed at interpreter exit, before
# Python stops threads from taking the GIL (their queued runs' host workers
# need it), so that a script that ends, or fails, with runs in flight ends
# after them, cleanly.
_open_workers = weakref.WeakSet()


@atexit.register
def _close_open_workers():
    for worker in list(_open_workers):
        worker.close()


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
        self._device_tensors, self._closed = [], False
        _open_workers.add(self)
        self.last_run_timing = None  # a RunTiming after each blocking dispatch
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
        session, compiled = self._session(
            program, [_memory_of(a) for a in args], {k: _memory_of(v) for k, v in kwargs.items()}
        )
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
        ordered = compiled._function._ordered(args, kwargs)
        errors, ordered = device_tensors.placement_errors(
            compiled, self, ordered, compiled._function.param_names
        )
        if errors:
            raise ValueError(errors[0] + (f" (and {len(errors) - 1} more)" if errors[1:] else ""))
        return session, ordered

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
        start = time.perf_counter_ns()
        stats = session.run(ordered)
        self.last_run_timing = RunTiming.of(time.perf_counter_ns() - start, stats)
        return stats

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
        for t in self._device_tensors:  # a closed worker's cards are gone
            for shard in t.shards if isinstance(t, device_tensors.StackedDeviceTensor) else [t]:
                shard.freed = True
        self._closed = True
        _open_workers.discard(self)

    # -- device-resident tensors (anyp/ir/device_tensors.py) ------------------

    def _world(self):
        return len(self._programs[0].config.device_ids())

    def _card(self, worker_id, what):
        world = self._world()
        if isinstance(worker_id, bool) or not isinstance(worker_id, int):
            raise TypeError(f"{what}: worker_id must be an int, got {worker_id!r}")
        if not 0 <= worker_id < world:
            raise ValueError(f"{what}: worker id {worker_id} out of range [0, {world})")
        return worker_id

    def _require_open(self, what):
        if getattr(self, "_closed", False):
            raise _core.ConfigError(f"config error: {what} on a closed prepared worker")

    def alloc_tensor(self, shape, dtype, *, init=None, worker_id=0):
        """A tensor resident on card `worker_id`: zeroed, or a copy of `init`
        (same shape and dtype) made now."""
        self._require_open("alloc_tensor")
        self._card(worker_id, "alloc_tensor")
        shape = tuple(int(e) for e in shape)
        if not shape or any(e <= 0 for e in shape):
            raise ValueError(f"alloc_tensor: shape must be positive extents, got {list(shape)}")
        array = device_tensors.new_array(shape, device_tensors.array_dtype_name(dtype))
        if init is not None:
            _check_like("alloc_tensor(init=...)", init, shape, array.dtype)
            _copy_into(array, init)
        t = device_tensors.DeviceTensor(array, worker_id, self)
        self._device_tensors.append(t)
        return t

    def free_tensor(self, tensor, *, worker_id=None):
        """Releases a device tensor (again: nothing); a dispatch that passes
        a freed one is refused."""
        if not isinstance(tensor, device_tensors.DeviceTensor):
            raise TypeError(f"free_tensor expects a DeviceTensor, got {type(tensor).__name__}")
        if worker_id is not None and worker_id != tensor.worker_id:
            raise ValueError(
                f"free_tensor: the tensor resides on card {tensor.worker_id}, not {worker_id}"
            )
        tensor.freed = True

    def alloc_stacked_tensor(self, host, *, worker_ids=None):
        """Shard i (host[i]) resident on card worker_ids[i] (default: i),
        copied now."""
        self._require_open("alloc_stacked_tensor")
        shape = tuple(int(e) for e in getattr(host, "shape", ()))
        if len(shape) < 2 or shape[0] < 1:
            raise ValueError(
                f"alloc_stacked_tensor needs a [B, *tail] tensor (rank >= 2), got shape {list(shape)}"
            )
        ids = list(range(shape[0])) if worker_ids is None else [int(w) for w in worker_ids]
        if len(ids) != shape[0]:
            raise ValueError(f"worker_ids has {len(ids)} entries; host leading dim is {shape[0]}")
        if len(set(ids)) != len(ids):
            raise ValueError(f"worker_ids must be distinct (one shard per worker), got {ids}")
        for w in ids:
            self._card(w, "alloc_stacked_tensor")
        array = device_tensors.new_array(shape, device_tensors.array_dtype_name(host.dtype))
        _copy_into(array, host)
        t = device_tensors.StackedDeviceTensor(array, ids, self)
        self._device_tensors.append(t)
        return t

    def free_stacked_tensor(self, stacked):
        """Releases every shard of a stacked device tensor (again: nothing)."""
        if not isinstance(stacked, device_tensors.StackedDeviceTensor):
            raise TypeError(
                f"free_stacked_tensor expects a StackedDeviceTensor, got {type(stacked).__name__}"
            )
        for shard in stacked.shards:
            shard.freed = True

    def copy_stacked_from(self, stacked, host):
        """Reads every shard back: host[i] = shard i (shapes and dtypes match)."""
        self._require_open("copy_stacked_from")
        if not isinstance(stacked, device_tensors.StackedDeviceTensor):
            raise TypeError(
                f"copy_stacked_from(stacked=...) expects a StackedDeviceTensor, got "
                f"{type(stacked).__name__}"
            )
        if stacked.freed:
            raise ValueError("copy_stacked_from: the stacked device tensor was freed")
        _check_like("copy_stacked_from(host=...)", host, stacked.full_shape, stacked.dtype)
        _copy_into(host, stacked._array)

    def copy_to(self, dst_dev_ptr, src_host_ptr, nbytes, *, worker_id=0):
        """H2D: `nbytes` from host address `src_host_ptr` into a device
        tensor's memory at `dst_dev_ptr` (inside one tensor of card
        `worker_id`, checked; the host address is the caller's)."""
        self._require_open("copy_to")
        dst = self._device_range(dst_dev_ptr, nbytes, worker_id, "copy_to")
        ctypes.memmove(dst, int(src_host_ptr), int(nbytes))

    def copy_from(self, dst_host_ptr, src_dev_ptr, nbytes, *, worker_id=0):
        """D2H: `nbytes` from a device tensor's memory at `src_dev_ptr`
        (checked as for copy_to) to host address `dst_host_ptr`."""
        self._require_open("copy_from")
        src = self._device_range(src_dev_ptr, nbytes, worker_id, "copy_from")
        ctypes.memmove(int(dst_host_ptr), src, int(nbytes))

    def _device_range(self, ptr, nbytes, worker_id, what):
        """`ptr`, checked to start `nbytes` inside one live device tensor of card `worker_id`."""
        self._card(worker_id, what)
        ptr, nbytes = int(ptr), int(nbytes)
        for t in self._device_tensors:
            for tensor in t.shards if isinstance(t, device_tensors.StackedDeviceTensor) else [t]:
                start, end = tensor.data_ptr, tensor.data_ptr + tensor.nbytes
                if not tensor.freed and start <= ptr and ptr + nbytes <= end and nbytes >= 0:
                    if tensor.worker_id != worker_id:
                        raise ValueError(
                            f"{what}: the device memory at {ptr:#x} is on card "
                            f"{tensor.worker_id}, not {worker_id}"
                        )
                    return ptr
        raise ValueError(
            f"{what}: [{ptr:#x}, {ptr + nbytes:#x}) is not inside a live device tensor of this "
            "worker (alloc_tensor makes one; data_ptr and nbytes name its memory)"
        )

    def malloc(self, nbytes, *, worker_id=0):
        raise UnsupportedError(
            "not supported by anyp: DistributedWorker.malloc (raw device memory): "
            "alloc_tensor(shape, dtype, worker_id=...) makes a device tensor"
        )

    def free(self, ptr, *, worker_id=0):
        raise UnsupportedError(
            "not supported by anyp: DistributedWorker.free (raw device memory): free_tensor "
            "releases what alloc_tensor made"
        )


def _memory_of(value):
    """A device tensor's memory (what a compile binds shapes from); else the value."""
    if isinstance(value, (device_tensors.DeviceTensor, device_tensors.StackedDeviceTensor)):
        return value._array
    return value


def _check_like(what, array, shape, dtype):
    got = tuple(int(e) for e in getattr(array, "shape", ()))
    if got != tuple(shape):
        raise ValueError(f"{what}: shape {list(got)} does not match {list(shape)}")
    if str(getattr(array, "dtype", None)).removeprefix("torch.") != str(dtype).removeprefix(
        "torch."
    ):
        raise ValueError(f"{what}: dtype {array.dtype} does not match {dtype}")


def _copy_into(dst, src):
    if hasattr(dst, "copy_"):
        import torch

        dst.copy_(src if hasattr(src, "copy_") else torch.from_numpy(src))
    else:
        dst[...] = src.numpy() if hasattr(src, "numpy") else src
