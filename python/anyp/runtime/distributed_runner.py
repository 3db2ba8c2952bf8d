"""anyp.runtime.distributed_runner — PyPTO's L3 runner module. A callback
bound with compiled.prepare(callbacks={...}) reads its tensors with
`_tensor_from_continuous(args.tensor(i))`; on anyp args.tensor(i) already
is the tensor (a torch tensor, or a numpy array without torch), so this
returns it. Every other name of PyPTO's runner (its process forking and
shared-memory plumbing) is refused with the reason (docs/python.md)."""

from .._errors import refusing_getattr


def _tensor_from_continuous(tensor):
    """The tensor a bound host-worker callback was given (PyPTO's view of
    a task argument's memory): on anyp, the tensor itself."""
    if not hasattr(tensor, "shape"):
        raise TypeError(
            "_tensor_from_continuous: expected a host worker's tensor (args.tensor(i)), got "
            f"{type(tensor).__name__}"
        )
    return tensor


__getattr__ = refusing_getattr(
    "anyp.runtime.distributed_runner",
    "PyPTO's L3 runner, which forks host processes; anyp runs a program itself: "
    "compiled(*tensors), or compiled.prepare(...) for many dispatches",
)
