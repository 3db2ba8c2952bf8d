"""PyPTO's device-resident tensors on a prepared worker: rt.alloc_tensor
(one card) and rt.alloc_stacked_tensor (shard i on card worker_ids[i]) are
copied once and passed in place of host tensors; dispatches read and write
them in place run after run (the upload source can change meanwhile), and
the host reads them back with copy_stacked_from or copy_from. Misplacement
is refused before the run: a shard dispatched to another card, a single
card's tensor taken by another rank, a freed tensor, another worker's
tensor, a host worker reading one, and raw copies outside a tensor. Exact
values at P = 1 ... 5."""

import re

import numpy
import pytest
import torch

import anyp
import anyp.language as pl
import anyp.language.distributed as pld
from anyp import ir
from anyp.ir import DistributedConfig
from anyp.runtime import DeviceTensor, StackedDeviceTensor

NR = pl.dynamic("NR")
W = 16


@pl.jit.incore
def accumulate(
    a: pl.Tensor[[1, W], pl.FP32],
    acc: pl.InOut[pl.Tensor[[1, W], pl.FP32]],
    f: pl.Out[pl.Tensor[[1, W], pl.FP32]],
):
    total = pl.add(pl.load(a, [0, 0], [1, W]), pl.load(acc, [0, 0], [1, W]))
    pl.store(total, [0, 0], acc)
    pl.store(total, [0, 0], f)


@pl.jit
def accumulate_orch(
    a: pl.Tensor[[1, W], pl.FP32],
    acc: pl.InOut[pl.Tensor[[1, W], pl.FP32]],
    f: pl.Out[pl.Tensor[[1, W], pl.FP32]],
):
    accumulate(a, acc, f)


def _program(placement):
    """acc[i] += a[i], f[i] = acc[i], the dispatch of row i on card placement[i]."""

    @pl.jit.host
    def rows(
        a: pl.Tensor[[NR, 1, W], pl.FP32],
        acc: pl.InOut[pl.Tensor[[NR, 1, W], pl.FP32]],
        f: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]],
    ):
        for i in pl.range(pld.world_size()):
            accumulate_orch(a[i], acc[i], f[i], device=placement(i))

    return rows


def _compiled(host, P):
    x = torch.zeros(P, 1, W)
    return host.compile(x, x, x, distributed_config=DistributedConfig(list(range(P))))


@pytest.mark.parametrize("P", [1, 2, 3, 5])
def test_a_stacked_tensor_stays_resident_and_keeps_what_runs_write(P):
    compiled = _compiled(_program(lambda i: i), P)
    start = torch.arange(P * W, dtype=torch.float32).reshape(P, 1, W)
    a, f = torch.ones(P, 1, W), torch.zeros(P, 1, W)
    with compiled.prepare() as rt:
        acc = rt.alloc_stacked_tensor(start)
        assert isinstance(acc, StackedDeviceTensor) and acc.worker_ids == tuple(range(P))
        start.zero_()  # the upload was a copy
        for run in range(1, 4):
            rt(a, acc, f)
            assert torch.equal(f, torch.arange(P * W).reshape(P, 1, W) + float(run))
        back = torch.zeros(P, 1, W)
        rt.copy_stacked_from(acc, back)
        assert torch.equal(back, torch.arange(P * W).reshape(P, 1, W) + 3.0)
        rt.free_stacked_tensor(acc)
        with pytest.raises(ValueError) as caught:
            rt(a, acc, f)
        assert str(caught.value) == "argument 1 ('acc') is a device tensor that was freed"


@pytest.mark.parametrize("P", [2, 3, 4])
def test_permuted_cards_need_the_matching_worker_ids(P):
    compiled = _compiled(_program(lambda i: (i + 1) % pld.world_size()), P)
    a, f = torch.ones(P, 1, W), torch.zeros(P, 1, W)
    with compiled.prepare() as rt:
        matching = rt.alloc_stacked_tensor(
            torch.zeros(P, 1, W), worker_ids=[(i + 1) % P for i in range(P)]
        )
        rt(a, matching, f)
        assert torch.equal(f, torch.ones(P, 1, W))
        identity = rt.alloc_stacked_tensor(torch.zeros(P, 1, W))
        with pytest.raises(ValueError) as caught:
            rt(a, identity, f)
    assert str(caught.value) == (
        f"argument 1 ('acc'): shard {P - 1} of the device tensor resides on card {P - 1}, but the "
        "dispatch of 'accumulate_orch' that takes it runs on rank 0 (pass worker_ids= that match "
        f"each shard's device=) (and {P - 1} more)"
    )


@pl.jit.host
def one_card(
    a: pl.Tensor[[1, W], pl.FP32],
    acc: pl.InOut[pl.Tensor[[1, W], pl.FP32]],
    f: pl.Out[pl.Tensor[[1, W], pl.FP32]],
):
    accumulate_orch(a, acc, f)


def test_a_tensor_on_one_card_and_raw_copies():
    x = torch.zeros(1, W)
    compiled = one_card.compile(x, x, x, distributed_config=DistributedConfig([0]))
    a, f = torch.full((1, W), 2.0), torch.zeros(1, W)
    with compiled.prepare() as rt:
        acc = rt.alloc_tensor((1, W), torch.float32, init=torch.full((1, W), 5.0))
        assert isinstance(acc, DeviceTensor) and acc.nbytes == 4 * W
        rt(a, acc, f)
        rt(a, acc, f)
        assert torch.equal(f, torch.full((1, W), 9.0))
        back = torch.zeros(1, W)
        rt.copy_from(back.data_ptr(), acc.data_ptr, acc.nbytes)
        assert torch.equal(back, torch.full((1, W), 9.0))
        zeros = torch.zeros(1, W)  # alive across the raw copy
        rt.copy_to(acc.data_ptr, zeros.data_ptr(), acc.nbytes)
        rt(a, acc, f)
        assert torch.equal(f, torch.full((1, W), 2.0))
        with pytest.raises(ValueError) as caught:
            rt.copy_from(back.data_ptr(), acc.data_ptr + 4, acc.nbytes)
        assert re.sub(r"0x[0-9a-f]+", "ADDR", str(caught.value)) == (
            "copy_from: [ADDR, ADDR) is not inside a live device tensor of this worker "
            "(alloc_tensor makes one; data_ptr and nbytes name its memory)"
        )
        with pytest.raises(ValueError) as caught:
            compiled(a, acc, f)
        assert str(caught.value) == (
            f"DeviceTensor([1, {W}], torch.float32, worker 0) is resident in the prepared "
            "worker that made it: dispatch with that worker (rt(...)), or pass host tensors"
        )
        with compiled.prepare() as other:
            with pytest.raises(ValueError) as caught:
                other(a, acc, f)
        assert str(caught.value) == (
            "argument 1 ('acc') is a device tensor of another prepared worker"
        )
    assert acc.freed  # closing the worker frees its tensors


@pytest.mark.parametrize("P", [2, 3])
def test_one_cards_tensor_taken_by_another_rank_is_refused(P):
    compiled = _compiled(_program(lambda i: i), P)
    with compiled.prepare() as rt:
        acc = rt.alloc_tensor((P, 1, W), torch.float32, worker_id=0)
        with pytest.raises(ValueError) as caught:
            rt(torch.ones(P, 1, W), acc, torch.zeros(P, 1, W))
    assert str(caught.value) == (
        "argument 1 ('acc'): the device tensor resides on card 0, but the dispatch of "
        "'accumulate_orch' that takes it runs on rank 1 (upload it there: "
        f"alloc_tensor(..., worker_id=...))" + (f" (and {P - 2} more)" if P > 2 else "")
    )


def test_numpy_device_tensors_and_bad_requests(tmp_path):
    compiled = _compiled(_program(lambda i: i), 2)
    with compiled.prepare() as rt:
        acc = rt.alloc_stacked_tensor(numpy.ones((2, 1, W), dtype=numpy.float32))
        with pytest.raises(ValueError) as caught:
            rt.alloc_stacked_tensor(torch.zeros(2, 1, W), worker_ids=[0, 0])
        assert str(caught.value) == "worker_ids must be distinct (one shard per worker), got [0, 0]"
        with pytest.raises(ValueError) as caught:
            rt.alloc_tensor((1, W), torch.float32, worker_id=2)
        assert str(caught.value) == "alloc_tensor: worker id 2 out of range [0, 2)"
        with pytest.raises(ValueError) as caught:
            rt.alloc_tensor((1, W), torch.float32, init=torch.zeros(1, W, dtype=torch.float16))
        assert str(caught.value) == (
            "alloc_tensor(init=...): dtype torch.float16 does not match torch.float32"
        )
        with pytest.raises(anyp.CompileError) as caught:
            rt.malloc(64)
        assert str(caught.value) == (
            "not supported by anyp: DistributedWorker.malloc (raw device memory): "
            "alloc_tensor(shape, dtype, worker_id=...) makes a device tensor"
        )
        rt(torch.ones(2, 1, W), acc, torch.zeros(2, 1, W))  # numpy storage, torch arguments
        back = numpy.zeros((2, 1, W), dtype=numpy.float32)
        rt.copy_stacked_from(acc, back)
        assert (back == 2.0).all()


@pl.program
class Inspecting:
    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def inspect(acc: pl.Tensor[[NR, 1, W], pl.FP32]):
        pass

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(
        self,
        a: pl.Tensor[[NR, 1, W], pl.FP32],
        acc: pl.InOut[pl.Tensor[[NR, 1, W], pl.FP32]],
        f: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]],
    ):
        for i in pl.range(pld.world_size()):
            accumulate_orch(a[i], acc[i], f[i], device=i)
        self.inspect(acc)


def test_a_host_worker_cannot_read_a_device_tensor():
    x = torch.zeros(2, 1, W)
    compiled = ir.compile(
        Inspecting, platform="a2a3sim", distributed_config=DistributedConfig([0, 1])
    )
    with compiled.prepare() as rt:
        acc = rt.alloc_stacked_tensor(x)
        with pytest.raises(ValueError) as caught:
            rt(x, acc, x.clone())
    assert str(caught.value) == (
        "argument 1 ('acc') is device-resident, and host worker 'inspect' takes it: a host "
        "worker reads host memory (read the tensor back with copy_from first)"
    )
