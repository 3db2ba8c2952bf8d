"""anyp._host_worker — PyPTO's HOST SubWorker (`@pl.function(level=
pl.Level.HOST, role=pl.Role.SubWorker)`, or role Worker): a plain Python
function the host orchestrator calls between dispatches (`self.verify(y)`).

The C++ core runs it on rank 0's dispatch list, in host order with every
dispatch whose host tensors overlap its own where one of the two writes
(anyp/host_worker.hpp). It gets copies of its tensors (torch tensors when
torch is imported, numpy arrays otherwise); those its parameters declare
pl.Out or pl.InOut are written back when it returns, and a change to any
other is an error. A worker whose body is `...` is bound at run time:
`compiled.prepare(callbacks={"name": fn})` runs fn(args) instead, with
args.tensor(i) its i-th tensor (PyPTO's task arguments). What it returns is
ignored. An exception it raises ends the run, and the call that ran the
program raises that same exception (with the run error as a note)."""

import ast
import collections
import sys
import threading

from ._types import ARRAY_DTYPE_NAMES

_DTYPES = {d.name: d for d in ARRAY_DTYPE_NAMES}

# Exceptions raised by host workers, with the text the run error quotes,
# until the entry point that ran the program takes them (raised_for). A run
# that another rank's error ended first never takes its worker's entry, so
# only the latest few are kept (each holds its exception's frames).
_RAISED_KEPT = 16
_raised = collections.deque(maxlen=_RAISED_KEPT)
_raised_lock = threading.Lock()


def _arrays(views):
    """One array per (memoryview, dtype name, shape): a copy the worker owns."""
    torch = sys.modules.get("torch")
    arrays = []
    for view, dtype_name, shape in views:
        name = ARRAY_DTYPE_NAMES[_DTYPES[dtype_name]]
        if torch is not None:
            arrays.append(
                torch.frombuffer(bytearray(view), dtype=getattr(torch, name)).reshape(shape)
            )
            continue
        import numpy

        if not hasattr(numpy, name):
            raise TypeError(
                f"a host worker's {dtype_name} argument needs torch (numpy has no {dtype_name}): "
                "import torch"
            )
        arrays.append(numpy.frombuffer(bytearray(view), dtype=name).reshape(shape))
    return arrays


def _bytes_of(array):
    if type(array).__module__.startswith("torch"):
        return (
            array.detach().contiguous().view(-1).view(sys.modules["torch"].uint8).numpy().tobytes()
        )
    return array.tobytes()


def is_abstract(tree_def):
    """PyPTO's runtime-bound worker: a body of `...` alone (after an optional
    docstring). A bare `pass` is a worker that does nothing."""
    body = [
        s
        for s in tree_def.body
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        or s.value.value is Ellipsis
    ]
    return (
        len(body) == 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and body[0].value.value is Ellipsis
    )


class WorkerArgs:
    """What a callback bound with prepare(callbacks={...}) gets (PyPTO's
    task arguments): args.tensor(i) is the worker's i-th tensor."""

    def __init__(self, arrays):
        self._arrays = arrays

    def tensor(self, i):
        return self._arrays[i]

    def tensor_count(self):
        return len(self._arrays)

    def __len__(self):
        return len(self._arrays)


class InlineWorker:
    """The worker of a `with pl.at(level=pl.Level.HOST, role=...)` block:
    `fn` takes the block's tensors, `params` their names (anyp/_walker.py
    builds it)."""

    abstract = False
    binding = bound_by = None

    def __init__(self, fn, name, params):
        self.fn, self.__name__, self.params = fn, name, params

    def unseen_write(self, i):
        name = self.params[i]
        return (
            f"host worker '{self.__name__}' changed '{name}', which its block does not write by "
            f"name ({name}[...] = ..., {name} += ..., {name}.copy_(...) or out={name}): anyp "
            "orders the block after and before what it can see it write, so the change would be "
            "lost; write it by name"
        )


def unbound_message(name):
    return (
        f"host worker '{name}' has no body (`...`): bind one with "
        f"compiled.prepare(callbacks={{'{name}': fn}})"
    )


def body(worker, program, writes):
    """The callable the C++ core runs for host worker `worker` (a
    JitFunction; `program`: its `self`, or None for a plain function;
    `writes`: per parameter, whether it is pl.Out or pl.InOut). A callback
    bound by prepare(callbacks=...) runs instead of its body."""

    def run(views):
        try:
            arrays = _arrays(views)
            if worker.binding is not None:
                worker.binding(WorkerArgs(arrays))
            elif worker.abstract:
                raise ValueError(unbound_message(worker.__name__))
            else:
                worker.fn(*([program] if program is not None else []), *arrays)
            for i, ((view, _, _), array, written) in enumerate(zip(views, arrays, writes)):
                if written:
                    view.cast("B")[:] = _bytes_of(array)
                elif _bytes_of(array) != bytes(view):
                    if isinstance(worker, InlineWorker):
                        raise ValueError(worker.unseen_write(i))
                    raise ValueError(
                        f"host worker '{worker.__name__}' changed its argument {i}, which it "
                        "takes as an input: the change would be lost (declare the parameter "
                        "pl.Out or pl.InOut, or change a copy)"
                    )
            return None
        except BaseException as e:  # noqa: B902 - handed to the caller, whatever it is
            text = f"{type(e).__name__}: {e}"
            with _raised_lock:
                _raised.append((f"host worker '{worker.__name__}' failed: {text}", e))
            return text

    return run


def raised_for(run_error):
    """The exception a host worker raised that ended this run (its message
    quotes it), taken from the list; None when no worker's did."""
    message = str(run_error)
    with _raised_lock:
        for i, (text, exc) in enumerate(_raised):
            if text in message:
                del _raised[i]
                return exc
    return None


def workers_of(host):
    """The host workers of a host function's @pl.program (none for a
    @pl.jit.host function: its workers are found when they run)."""
    program = getattr(host, "program", None)
    functions = getattr(program, "functions", {}) if program is not None else {}
    return {name: f for name, f in functions.items() if f.level == "subworker"}


def check_bound(host):
    """A one-shot call: every abstract worker of the program must be bound."""
    for name, worker in workers_of(host).items():
        if worker.abstract and worker.binding is None:
            raise ValueError(unbound_message(name))


def bind(hosts, callbacks, owner):
    """prepare(callbacks=...): binds each named worker of the programs
    `hosts` to its callback for `owner` (a prepared worker); every abstract
    worker must be bound. Returns the bound workers (to unbind)."""
    workers = {}
    for host in hosts:
        workers.update(workers_of(host))
    callbacks = dict(callbacks or {})
    for name, fn in callbacks.items():
        if name not in workers:
            known = ", ".join(sorted(workers)) or "none"
            raise ValueError(
                f"prepare(): callbacks names '{name}', which is not a host worker of the "
                f"program (its host workers: {known})"
            )
        if not callable(fn):
            raise TypeError(f"prepare(): the callback for '{name}' is not callable: {fn!r}")
        if workers[name].binding is not None and workers[name].bound_by is not owner:
            raise ValueError(
                f"prepare(): host worker '{name}' is bound by another prepared worker; close "
                "that one first"
            )
    for name, worker in sorted(workers.items()):
        if worker.abstract and name not in callbacks:
            raise ValueError("prepare(): " + unbound_message(name))
    bound = []
    for name, fn in callbacks.items():
        workers[name].binding, workers[name].bound_by = fn, owner
        bound.append(workers[name])
    return bound


def unbind(bound):
    for worker in bound:
        worker.binding = worker.bound_by = None
