"""anyp.runtime.DeviceTensor and StackedDeviceTensor — PyPTO's
device-resident tensors, made by a prepared worker (compiled.prepare()):
`rt.alloc_tensor(shape, dtype, init=..., worker_id=w)` uploads a tensor to
card w once, and `rt.alloc_stacked_tensor(host, worker_ids=...)` uploads
shard i (host[i]) to card worker_ids[i]. Passed in place of a host tensor,
the dispatches read and write them in place, run after run; the host reads
them back with copy_from / copy_stacked_from.

On anyp a card's memory is memory of this process the worker owns. What
hardware would make of a misplaced tensor, anyp refuses before the run:
every dispatch that takes a device tensor (or a shard of a stacked one)
must run on the card it resides on, a host worker cannot read one, a freed
one cannot be passed, and one belongs to the worker that made it
(placement_errors). docs/python.md, "Device-resident tensors"."""

import sys

from .. import _core
from .._types import ARRAY_DTYPE_NAMES

_NAMES = {name: dtype for dtype, name in ARRAY_DTYPE_NAMES.items()}


def array_dtype_name(dtype):
    """The torch/numpy name ("float32") of a torch or numpy dtype, an anyp
    dtype (pl.FP32) or a name; TypeError for anything else."""
    if isinstance(dtype, _core.DType):
        return ARRAY_DTYPE_NAMES[dtype]
    name = str(dtype).removeprefix("torch.")
    if name in _NAMES:
        return name
    raise TypeError(f"not a tensor dtype anyp has: {dtype!r} (the dtypes: {', '.join(_NAMES)})")


def new_array(shape, dtype_name):
    """A zeroed array of `shape` (torch when torch is imported, else numpy)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        return torch.zeros(tuple(shape), dtype=getattr(torch, dtype_name))
    import numpy

    if not hasattr(numpy, dtype_name):
        raise TypeError(f"a {dtype_name} device tensor needs torch (numpy has no {dtype_name})")
    return numpy.zeros(tuple(shape), dtype=dtype_name)


def _address(array):
    return array.data_ptr() if hasattr(array, "data_ptr") else array.ctypes.data


def _nbytes(array):
    return array.numel() * array.element_size() if hasattr(array, "numel") else array.nbytes


class DeviceTensor:
    """A tensor resident on card `worker_id` of the prepared worker that
    made it: pass it in place of a host tensor. `data_ptr` and `nbytes`
    name its memory for copy_to / copy_from."""

    def __init__(self, array, worker_id, owner):
        self._array, self.worker_id, self._owner = array, worker_id, owner
        self.shape = tuple(int(e) for e in array.shape)
        self.dtype = array.dtype
        self.data_ptr = _address(array)
        self.nbytes = _nbytes(array)
        self.freed = False

    def __repr__(self):
        state = ", freed" if self.freed else ""
        return f"DeviceTensor({list(self.shape)}, {self.dtype}, worker {self.worker_id}{state})"


class StackedDeviceTensor:
    """A [B, ...] tensor whose shard i (host[i]) resides on card
    worker_ids[i]: pass it in place of a host tensor the orchestrator
    slices by rank (x[i] on card worker_ids[i])."""

    def __init__(self, array, worker_ids, owner):
        self._array, self._owner = array, owner
        self.worker_ids = tuple(worker_ids)
        self.full_shape = tuple(int(e) for e in array.shape)
        self.dtype = array.dtype
        self.shards = [DeviceTensor(array[i], w, owner) for i, w in enumerate(worker_ids)]

    @property
    def freed(self):
        return all(s.freed for s in self.shards)

    def __repr__(self):
        return f"StackedDeviceTensor({list(self.full_shape)}, {self.dtype}, on {list(self.worker_ids)})"


def placement_errors(compiled, owner, args, names):
    """The misplacements of the device tensors among `args` (the dispatch's
    arguments in parameter order, `names` theirs), as messages; and the
    arguments with each device tensor replaced by its memory."""
    errors, plain = [], list(args)
    uses = None
    for i, a in enumerate(args):
        if not isinstance(a, (DeviceTensor, StackedDeviceTensor)):
            continue
        what = f"argument {i} ('{names[i]}')"
        if a._owner is not owner:
            errors.append(f"{what} is a device tensor of another prepared worker")
            continue
        if a.freed:
            errors.append(f"{what} is a device tensor that was freed")
            continue
        plain[i] = a._array
        if uses is None:
            uses = compiled._native.host_tensor_uses()
        for rank, arg, offset, nbytes, function, host_worker in uses:
            if arg != i:
                continue
            if isinstance(a, DeviceTensor):
                homes, shard_bytes = [a.worker_id], a.nbytes
            else:
                homes, shard_bytes = a.worker_ids, a.shards[0].nbytes
            first, last = offset // shard_bytes, (offset + nbytes - 1) // shard_bytes
            if host_worker:
                errors.append(
                    f"{what} is device-resident, and host worker '{function}' takes it: a host "
                    "worker reads host memory (read the tensor back with copy_from first)"
                )
            elif first != last and not isinstance(a, DeviceTensor):
                errors.append(
                    f"{what}: the dispatch of '{function}' on rank {rank} takes shards "
                    f"{first} to {last} of a stacked device tensor, which live on cards "
                    f"{list(homes[first:last + 1])}; a dispatch takes one shard"
                )
            elif homes[first] != rank:
                shard = "" if isinstance(a, DeviceTensor) else f"shard {first} of "
                errors.append(
                    f"{what}: {shard}the device tensor resides on card {homes[first]}, but the "
                    f"dispatch of '{function}' that takes it runs on rank {rank}"
                    + (
                        " (upload it there: alloc_tensor(..., worker_id=...))"
                        if isinstance(a, DeviceTensor)
                        else " (pass worker_ids= that match each shard's device=)"
                    )
                )
    return errors, plain
