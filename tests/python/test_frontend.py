"""The front-end's PyPTO constructs, in programs written as PyPTO writes
them: @pl.program classes with @pl.function methods called as self.f(...),
ir.compile(program, platform=..., distributed_config=...), loop-carried
values with init_values / pl.yield_ and by rebinding, an early return inside
an if, tuple returns, pl.INDEX scalars as offsets and keyword arguments.
Each runs at P = 2, 3, 4, 5, 8 and is checked exactly."""

import sys

import mpi_support
import pytest
import torch

import anyp

import anyp.language as pl
import anyp.language.distributed as pld
from anyp import ir
from anyp.ir.distributed_compiled_program import DistributedConfig
from anyp.runtime import RunConfig

RANKS = [2, 3, 4, 5, 8]
SIZE = 64
NR = pl.dynamic("NR")


def config(P):
    # PyPTO's launch sizes are accepted and ignored (anyp's blocks are pl.spmd's).
    devices = DistributedConfig(device_ids=list(range(P)), block_dim=24, aicpu_thread_num=4)
    return RunConfig(distributed_config=devices)


def rows(P, dtype=torch.float32):
    """x[r] = r * SIZE + [0, 1, ..., SIZE - 1] (exact in every dtype used)."""
    return torch.arange(P * SIZE, dtype=dtype).reshape(P, 1, SIZE)


# ---- @pl.program: the seed's ring shift in PyPTO's program form ----------------


@pl.program
class RingGet:
    """y[r] = x[(r + 1) % P]: stage, tell the left neighbour, wait, pull."""

    @pl.function(type=pl.FunctionType.InCore)
    def get_step(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        src: pld.DistributedTensor[[1, SIZE], pl.FP32],
        dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
        signal: pld.DistributedTensor[[1, 1], pl.INT32],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        ctx = pld.get_comm_ctx(src)
        my_rank = pld.rank(ctx)
        nranks = pld.nranks(ctx)
        left = (my_rank + nranks - 1) % nranks
        right = (my_rank + 1) % nranks
        src = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)
        pld.system.notify(
            target=signal, peer=left, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd
        )  # PyPTO's keyword for the signal
        pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
        pld.tensor.get(dst, peer=right, src=src)
        out = pl.store(pl.load(dst, [0, 0], [1, SIZE]), [0, 0], y)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        src: pld.DistributedTensor[[1, SIZE], pl.FP32],
        dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
        signal: pld.DistributedTensor[[1, 1], pl.INT32],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        out = self.get_step(x, y, src, dst, signal)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ) -> pl.Tensor[[NR, 1, SIZE], pl.FP32]:
        src_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        dst_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        signal_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            src = pld.window(src_buf, [1, SIZE], dtype=pl.FP32)
            dst = pld.window(dst_buf, [1, SIZE], dtype=pl.FP32)
            signal = pld.window(signal_buf, [1, 1], dtype=pl.INT32)
            self.chip_orch(x[r], y[r], src, dst, signal, device=r)
        return y


@pytest.mark.parametrize("P", RANKS)
def test_a_program_compiles_with_ir_compile_and_runs(P):
    x = rows(P)
    y = torch.zeros_like(x)
    compiled = ir.compile(
        RingGet, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(P)))
    )
    compiled(x, y)
    assert torch.equal(y, torch.roll(x, shifts=-1, dims=0))


@pytest.mark.parametrize("P", RANKS)
def test_a_program_compiles_with_tensors_like_a_host_function(P):
    x = rows(P)
    y = torch.zeros_like(x)
    RingGet.compile(x, y, config=config(P))(x, y)
    assert torch.equal(y, torch.roll(x, shifts=-1, dims=0))


def test_a_program_lists_its_functions():
    assert sorted(RingGet.functions) == ["chip_orch", "get_step", "host_orch"]
    assert RingGet.entry() is RingGet.host_orch
    assert (RingGet.get_step.level, RingGet.chip_orch.level) == ("incore", "orchestration")


# ---- a generic harness: one kernel per rank, its signal window for the comm context ----


def per_rank(kernel, dtype=pl.FP32):
    """A host running `kernel(x[r], y[r], s)` on every rank (s: a [1, 1]
    INT32 window, so the kernel can read its rank)."""

    @pl.jit
    def orch(
        x: pl.Tensor[[1, SIZE], dtype],
        y: pl.Out[pl.Tensor[[1, SIZE], dtype]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        kernel(x=x, y=y, s=s)  # keyword arguments, by parameter name

    @pl.jit.host
    def host(x: pl.Tensor[[NR, 1, SIZE], dtype], y: pl.Out[pl.Tensor[[NR, 1, SIZE], dtype]]):
        buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            s = pld.window(buf, [1, 1], dtype=pl.INT32)
            orch(x[r], y[r], s, device=r)

    return host


def run(host, P, dtype=torch.float32):
    x = rows(P, dtype)
    y = torch.zeros_like(x)
    host.compile(x, y, config=config(P))(x, y)
    return x, y


# ---- init_values / pl.yield_ ------------------------------------------------------


@pl.jit.incore
def five_times(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    s: pld.DistributedTensor[[1, 1], pl.INT32],
):
    t = pl.load(x, [0, 0], [1, SIZE])
    for i, (acc,) in pl.range(4, init_values=(t,)):
        acc_next = pl.add(acc, t)
        acc_out = pl.yield_(acc_next)
    y = pl.store(acc_out, [0, 0], y)  # t + 4 t
    return y


@pytest.mark.parametrize("P", RANKS)
def test_init_values_carry_a_tile_and_the_yield_target_holds_the_last(P):
    x, y = run(per_rank(five_times), P)
    assert torch.equal(y, 5 * x)


@pl.jit.incore
def two_carried(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    s: pld.DistributedTensor[[1, 1], pl.INT32],
):
    t = pl.load(x, [0, 0], [1, SIZE])
    one = pl.mul(t, 0.0)
    for i, (a, b) in pl.range(3, init_values=(t, pl.add(one, 1.0))):
        a_next = pl.add(a, b)  # b is 1, 2, 4: a = t + 7 at the end
        b_next = pl.mul(b, 2.0)
        a_out, b_out = pl.yield_(a_next, b_next)
    # t itself is unchanged by the loop (the carried variable is a copy).
    y = pl.store(pl.sub(pl.add(a_out, t), b_out), [0, 0], y)  # (t + 7) + t - 8


@pytest.mark.parametrize("P", RANKS)
def test_init_values_carry_two_tiles(P):
    x, y = run(per_rank(two_carried), P)
    assert torch.equal(y, 2 * x - 1)


@pl.jit.incore
def alias_then_rebind(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    s: pld.DistributedTensor[[1, 1], pl.INT32],
):
    t = pl.load(x, [0, 0], [1, SIZE])
    acc = t  # a new variable, as in C++: the loop's writes to acc leave t alone
    for i in pl.range(3):
        acc = pl.add(acc, t)
    y = pl.store(pl.sub(acc, t), [0, 0], y)  # 4 t - t


@pytest.mark.parametrize("P", RANKS)
def test_an_alias_that_a_loop_rebinds_is_a_new_variable(P):
    x, y = run(per_rank(alias_then_rebind), P)
    assert torch.equal(y, 3 * x)


@pl.jit.incore
def rank_sum(
    x: pl.Tensor[[1, SIZE], pl.INT32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.INT32]],
    s: pld.DistributedTensor[[1, 1], pl.INT32],
):
    nranks = pld.nranks(pld.get_comm_ctx(s))
    for k, (total,) in pl.range(nranks, init_values=(0,)):
        total = pl.yield_(total + k)
    y = pl.store(pl.add(pl.load(x, [0, 0], [1, SIZE]), total), [0, 0], y)


@pytest.mark.parametrize("P", RANKS)
def test_init_values_carry_a_scalar_from_a_python_number(P):
    x, y = run(per_rank(rank_sum, pl.INT32), P, torch.int32)
    assert torch.equal(y, x + P * (P - 1) // 2)


@pl.jit.incore
def rebound_counter(
    x: pl.Tensor[[1, SIZE], pl.INT32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.INT32]],
    s: pld.DistributedTensor[[1, 1], pl.INT32],
):
    my_rank = pld.rank(pld.get_comm_ctx(s))
    count = 0  # a Python number a traced loop carries: it becomes a traced scalar
    acc = pl.load(x, [0, 0], [1, SIZE])
    for i in pl.range(my_rank + 1):
        count = count + 2
        acc = pl.add(acc, i)
    y = pl.store(pl.add(acc, count), [0, 0], y)


@pytest.mark.parametrize("P", RANKS)
def test_rebinding_carries_a_tile_and_a_python_number(P):
    x, y = run(per_rank(rebound_counter, pl.INT32), P, torch.int32)
    r = torch.arange(P, dtype=torch.int32).reshape(P, 1, 1)
    assert torch.equal(y, x + r * (r + 1) // 2 + 2 * (r + 1))


# ---- if: an early return, names bound in both branches, an if's pl.yield_ ----------


@pl.jit.incore
def early_exit(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    s: pld.DistributedTensor[[1, 1], pl.INT32],
):
    my_rank = pld.rank(pld.get_comm_ctx(s))
    t = pl.load(x, [0, 0], [1, SIZE])
    if my_rank == 0:
        y = pl.store(pl.mul(t, 2.0), [0, 0], y)
        return y
    if my_rank % 2 == 1:
        y = pl.store(pl.add(t, 1.0), [0, 0], y)
        return y
    y = pl.store(t, [0, 0], y)
    return y


@pytest.mark.parametrize("P", RANKS)
def test_a_return_inside_an_if_ends_the_function_there(P):
    x, y = run(per_rank(early_exit), P)
    for r in range(P):
        expected = 2 * x[r] if r == 0 else x[r] + 1 if r % 2 == 1 else x[r]
        assert torch.equal(y[r], expected), f"rank {r}"


@pl.jit.incore
def both_branches(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    s: pld.DistributedTensor[[1, 1], pl.INT32],
):
    my_rank = pld.rank(pld.get_comm_ctx(s))
    t = pl.load(x, [0, 0], [1, SIZE])
    if my_rank % 2 == 0:
        u = pl.mul(t, 3.0)
        v = pl.yield_(pl.add(t, 10.0))
    else:
        u = pl.add(t, 1.0)
        v = pl.yield_(pl.sub(t, 10.0))
    y = pl.store(pl.add(u, v), [0, 0], y)


@pytest.mark.parametrize("P", RANKS)
def test_names_bound_in_both_branches_hold_the_branch_that_ran(P):
    x, y = run(per_rank(both_branches), P)
    for r in range(P):
        expected = 4 * x[r] + 10 if r % 2 == 0 else 2 * x[r] - 9
        assert torch.equal(y[r], expected), f"rank {r}"


# ---- tuple returns and keyword arguments -----------------------------------------------


@pl.program
class Pairs:
    """y[r] = 2 x[r] + (x[r] + 1), through a kernel returning two tensors."""

    @pl.function(type=pl.FunctionType.InCore)
    def split(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP32],
        a: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        b: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    ) -> tuple[pl.Tensor[[1, SIZE], pl.FP32], pl.Tensor[[1, SIZE], pl.FP32]]:
        t = pl.load(tensor=x, offsets=[0, 0], shapes=[1, SIZE])
        a = pl.store(tile=pl.mul(t, 2.0), offsets=[0, 0], output_tensor=a)
        b = pl.store(pl.add(t, 1.0), [0, 0], b)
        return a, b

    @pl.function(type=pl.FunctionType.InCore)
    def join(
        self,
        a: pl.Tensor[[1, SIZE], pl.FP32],
        b: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        return pl.store(
            pl.add(pl.load(a, [0, 0], [1, SIZE]), pl.load(b, [0, 0], [1, SIZE])), [0, 0], y
        )

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        x: pl.Tensor[[1, SIZE], pl.FP32],
        a: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        b: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    ) -> pl.Tensor[[1, SIZE], pl.FP32]:
        a2, b2 = self.split(x, b=b, a=a)
        return self.join(a=a2, b=b2, y=y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(
        self,
        x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        a: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        b: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
        y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        for r in pl.range(pld.world_size()):
            out = self.chip_orch(x=x[r], a=a[r], b=b[r], y=y[r], device=r)


@pytest.mark.parametrize("P", RANKS)
def test_tuple_returns_and_keyword_arguments(P):
    x = rows(P)
    a, b, y = torch.zeros_like(x), torch.zeros_like(x), torch.zeros_like(x)
    Pairs.compile(x, a, b, y, config=config(P))(x, a, b, y)
    assert torch.equal(a, 2 * x) and torch.equal(b, x + 1) and torch.equal(y, 3 * x + 1)


# ---- pl.INDEX scalars as offsets --------------------------------------------------


def test_pl_index_is_a_64_bit_integer():
    assert pl.INDEX == pl.INT64


@pl.jit.incore
def shifted_half(
    x: pl.Tensor[[1, 2 * SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    offset: pl.Scalar[pl.INDEX],
):
    y = pl.store(pl.load(x, [0, offset], [1, SIZE]), [0, 0], y)


@pl.jit
def shifted_orch(
    x: pl.Tensor[[1, 2 * SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    offset: pl.Scalar[pl.INDEX],
):
    shifted_half(x, y, offset=offset)


@pl.jit.host
def shifted_host(
    x: pl.Tensor[[NR, 1, 2 * SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]
):
    for r in pl.range(pld.world_size()):
        shifted_orch(x[r], y[r], (r % 2) * SIZE, device=r)


@pytest.mark.parametrize("P", RANKS)
def test_a_pl_index_scalar_parameter_is_an_offset(P):
    x = torch.arange(P * 2 * SIZE, dtype=torch.float32).reshape(P, 1, 2 * SIZE)
    y = torch.zeros((P, 1, SIZE))
    shifted_host.compile(x, y, config=config(P))(x, y)
    for r in range(P):
        start = (r % 2) * SIZE
        assert torch.equal(y[r], x[r, :, start : start + SIZE]), f"rank {r}"


# ---- a one-device program (PyPTO's L2 form): no host function ------------------------


@pl.program
class L2OnlyAdd:
    """f = a + b on one device: the orchestration function is the entry."""

    @pl.function(type=pl.FunctionType.InCore)
    def tile_add(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        b: pl.Tensor[[16, 16], pl.FP32],
        f: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        tile_a = pl.load(a, [0, 0], [16, 16])
        tile_b = pl.load(b, [0, 0], [16, 16])
        tile_f = pl.add(tile_a, tile_b)
        return pl.store(tile_f, [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        a: pl.Tensor[[16, 16], pl.FP32],
        b: pl.Tensor[[16, 16], pl.FP32],
        f: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        out_f = self.tile_add(a, b, f)
        return out_f


def test_a_program_without_a_host_runs_its_orchestration_on_one_device():
    a = torch.full((16, 16), 2.0)
    b = torch.arange(256, dtype=torch.float32).reshape(16, 16)
    f = torch.zeros((16, 16))
    ir.compile(L2OnlyAdd, platform="a2a3sim")(a, b, f)
    assert torch.equal(f, a + b)


# ---- pl.parallel / pl.pipeline loops, PyPTO's local annotations --------------------


@pl.jit.incore
def annotated(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    s: pld.DistributedTensor[[1, 1], pl.INT32],
) -> pl.Tensor[[1, SIZE], pl.FP32]:
    t: pl.Tile[[1, SIZE], pl.FP32] = pl.load(x, [0, 0], [1, SIZE])
    for i in pl.parallel(2):
        t = pl.add(t, 1.0)
    for j in pl.pipeline(0, 3, 1, stage=2):
        t = pl.mul(t, 2.0)
    out: pl.Tensor[[1, SIZE], pl.FP32] = pl.store(t, [0, 0], y)
    return out


@pytest.mark.parametrize("P", RANKS)
def test_parallel_and_pipeline_loops_run_as_range(P):
    x, y = run(per_rank(annotated), P)
    assert torch.equal(y, (x + 2) * 8)


@pytest.mark.parametrize("P", RANKS)
def test_a_dispatch_to_a_dim_expression_rank(P):
    """`device=NR - 1`: the last rank, named by a dim expression (the C++
    pl::device takes a dim too)."""

    @pl.jit
    def orch(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        annotated(x, y, s)

    @pl.jit.host
    def host(x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        for r in pl.range(NR - 1):
            orch(x[r], y[r], pld.window(buf, [1, 1], dtype=pl.INT32), device=r)
        orch(x[NR - 1], y[NR - 1], pld.window(buf, [1, 1], dtype=pl.INT32), device=NR - 1)

    x, y = run(host, P)
    assert torch.equal(y, (x + 2) * 8)


@pl.jit.incore
def unrolled_with_placement(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    s: pld.DistributedTensor[[1, 1], pl.INT32],
):
    """PyPTO's pl.unroll loop, and a load placed in vector memory."""
    t = pl.load(x, [0, 0], [1, SIZE], target_memory=pl.MemorySpace.Vec)
    for i in pl.unroll(3):
        t = pl.add(t, pl.load(x, [0, 0], [1, SIZE], target_memory=pl.MemorySpace.Vec))
    y = pl.store(t, [0, 0], y)
    return y


@pytest.mark.parametrize("P", RANKS)
def test_unroll_loops_run_as_range_and_placement_changes_nothing(P):
    x, y = run(per_rank(unrolled_with_placement), P)
    assert torch.equal(y, 4 * x)


def test_placement_is_a_memory_space():
    assert repr(pl.MemorySpace.Mat) == "pl.MemorySpace.Mat"
    with pytest.raises(AttributeError) as e:
        pl.MemorySpace.Sram
    assert str(e.value) == "not supported by anyp: pl.MemorySpace.Sram"

    @pl.jit.incore
    def placed_by_name(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        y = pl.store(pl.load(x, [0, 0], [1, SIZE], target_memory="Vec"), [0, 0], y)
        return y

    with pytest.raises(anyp.CompileError) as e:
        run(per_rank(placed_by_name), 2)
    with open(__file__) as source:
        line = next(n for n, text in enumerate(source, 1) if 'target_memory="Vec"' in text)
    assert str(e.value).splitlines()[0] == (
        f"test_frontend.py:{line}: TypeError: target_memory must be a pl.MemorySpace member, "
        "got 'Vec'"
    )


@pl.jit.incore
def index_counter(
    x: pl.Tensor[[1, 2 * SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    s: pld.DistributedTensor[[1, 1], pl.INT32],
):
    """A declared pl.INDEX counter a loop carries: it stays INT64."""
    my_rank = pld.rank(pld.get_comm_ctx(s))
    offset: pl.Scalar[pl.INDEX] = 0
    for i in pl.range(my_rank % 2):
        offset = offset + SIZE
    y = pl.store(pl.load(x, [0, offset], [1, SIZE]), [0, 0], y)


@pytest.mark.parametrize("P", RANKS)
def test_a_declared_index_scalar_carried_by_a_loop_is_an_offset(P):
    @pl.jit
    def orch(
        x: pl.Tensor[[1, 2 * SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        s: pld.DistributedTensor[[1, 1], pl.INT32],
    ):
        index_counter(x, y, s)

    @pl.jit.host
    def host(
        x: pl.Tensor[[NR, 1, 2 * SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]
    ):
        buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            orch(x[r], y[r], pld.window(buf, [1, 1], dtype=pl.INT32), device=r)

    x = torch.arange(P * 2 * SIZE, dtype=torch.float32).reshape(P, 1, 2 * SIZE)
    y = torch.zeros((P, 1, SIZE))
    host.compile(x, y, config=config(P))(x, y)
    for r in range(P):
        start = (r % 2) * SIZE
        assert torch.equal(y[r], x[r, :, start : start + SIZE]), f"rank {r}"
    assert "INT64" in index_counter.ir_text()


# ---- byte-sized window buffers (PyPTO's pld.alloc_window_buffer(nbytes)) --------


@pl.jit.incore
def shift_through_one_buffer(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pld.DistributedTensor[[1, SIZE], pl.FP32],
    dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
    signal: pld.DistributedTensor[[1, 1], pl.INT32],
):
    """y[r] = x[(r - 1) % P]: src and dst are two views of one byte buffer."""
    nranks = pld.nranks(pld.get_comm_ctx(src))
    right = (pld.rank(pld.get_comm_ctx(src)) + 1) % nranks
    src = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], src)
    pld.tensor.put(dst, peer=right, src=src)
    pld.system.notify(signal, peer=right, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(signal, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    y = pl.store(pl.load(dst, [0, 0], [1, SIZE]), [0, 0], y)


@pl.jit
def shift_orch(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    src: pld.DistributedTensor[[1, SIZE], pl.FP32],
    dst: pld.DistributedTensor[[1, SIZE], pl.FP32],
    signal: pld.DistributedTensor[[1, 1], pl.INT32],
):
    shift_through_one_buffer(x, y, src, dst, signal)


@pl.jit.host
def shift_host(x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
    data = pld.alloc_window_buffer(2 * SIZE * 4)  # bytes: src, then dst
    flags = pld.alloc_window_buffer(4)
    for r in pl.range(pld.world_size()):
        src = pld.window(data, [1, SIZE], dtype=pl.FP32)
        dst = pld.window(data, [1, SIZE], dtype=pl.FP32, offset=SIZE)
        signal = pld.window(flags, [1, 1], dtype=pl.INT32)
        shift_orch(x[r], y[r], src, dst, signal, device=r)


@pytest.mark.parametrize("P", RANKS)
def test_views_of_a_byte_sized_buffer_at_element_offsets(P):
    x = rows(P)
    y = torch.zeros_like(x)
    shift_host.compile(x, y, config=config(P))(x, y)
    assert torch.equal(y, torch.roll(x, shifts=1, dims=0))


def test_a_byte_sized_buffer_takes_no_dtype():
    with pytest.raises(TypeError) as e:
        pld.alloc_window_buffer(256, pl.FP32)
    assert str(e.value) == (
        "pld.alloc_window_buffer(nbytes) takes a byte count alone: give a shape list with a dtype "
        "or a domain"
    )


# ---- PyPTO's one-device form: a host call without device= at P = 1 -----------------


@pl.jit.incore
def add_one(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
    y = pl.store(pl.add(pl.load(x, [0, 0], [1, SIZE]), 1.0), [0, 0], y)


@pl.jit
def add_one_orch(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
    add_one(x, y)


@pl.jit.host
def one_device(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
    add_one_orch(x, y)  # no device=: rank 0 of a one-rank run


def test_a_host_call_without_device_runs_on_rank_0_at_P_1():
    x = torch.arange(SIZE, dtype=torch.float32).reshape(1, SIZE)
    y = torch.zeros_like(x)
    one_device(x, y, config=config(1))  # compiled on this first call
    assert torch.equal(y, x + 1)


def test_a_host_call_without_device_is_refused_at_P_2():
    x = torch.zeros((1, SIZE))
    with pytest.raises(anyp.CompileError) as e:
        one_device.compile(x, torch.zeros_like(x), config=config(2))
    line = one_device.fn.__code__.co_firstlineno + 2
    assert str(e.value).startswith(
        f"compile error: function 'one_device' (host): the dispatch of 'add_one_orch' at "
        f"test_frontend.py:{line} has no device=r: the host runs orchestration functions on "
        "a device (only a one-rank run may leave it out, and runs it on rank 0; here P = 2)\n"
        f"  test_frontend.py:{line}\n"
        "        add_one_orch(x, y)  # no device=: rank 0 of a one-rank run\n"
        "        ^^^^^^^^^^^^^^^^^^"
    )


# ---- partial tiles: pl.load / pl.store with valid_shapes ----------------------------

PART = 40  # elements of each row that are moved: not a whole 32-byte row


@pl.jit.incore
def copy_part(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
    t = pl.load(x, [0, 0], [1, SIZE], valid_shapes=[1, PART])  # the rest of t is 0
    y = pl.store(pl.add(t, 1.0), [0, 0], y, valid_shape=[1, PART + 8])


@pl.jit
def copy_part_orch(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
    copy_part(x, y)


@pl.jit.host
def copy_part_host(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]
):
    for r in pl.range(pld.world_size()):
        copy_part_orch(x[r], y[r], device=r)


@pytest.mark.parametrize("P", [2, 3])
def test_partial_loads_read_and_partial_stores_write_only_their_corner(P):
    x = rows(P)
    y = torch.full_like(x, -1.0)
    copy_part_host.compile(x, y, config=config(P))(x, y)
    want = torch.full_like(x, -1.0)
    want[:, :, :PART] = x[:, :, :PART] + 1  # loaded, plus one
    want[:, :, PART : PART + 8] = 1.0  # outside the loaded corner: 0, plus one
    assert torch.equal(y, want)


# ---- a run-time valid_shape: PyPTO's ragged tail, pl.min(TILE, n - p0) ----------------

TILE = 8
N_DYN = pl.dynamic("N")


@pl.jit.incore
def ragged_walk(x: pl.Tensor[[1, N_DYN], pl.FP32], y: pl.Out[pl.Tensor[[1, N_DYN], pl.FP32]]):
    for p0 in pl.range(0, N_DYN, TILE):
        valid = pl.min(TILE, N_DYN - p0)  # the last tile is ragged
        t = pl.load(x, [0, p0], [1, TILE], valid_shapes=[1, valid])
        y = pl.store(pl.mul(t, 3.0), [0, p0], y)  # the tile carries its valid part


@pl.jit
def ragged_orch(x: pl.Tensor[[1, N_DYN], pl.FP32], y: pl.Out[pl.Tensor[[1, N_DYN], pl.FP32]]):
    ragged_walk(x, y)


@pl.jit.host
def ragged_host(
    x: pl.Tensor[[NR, 1, N_DYN], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, N_DYN], pl.FP32]]
):
    for r in pl.range(pld.world_size()):
        ragged_orch(x[r], y[r], device=r)


@pytest.mark.parametrize("P", [2, 3, 5])
@pytest.mark.parametrize("n", [1, 7, 8, 9, 17, 24])
def test_a_run_time_valid_shape_walks_a_ragged_row(P, n):
    x = torch.arange(P * n, dtype=torch.float32).reshape(P, 1, n) - 5
    y = torch.zeros_like(x)
    ragged_host(
        x,
        y,
        config=RunConfig(distributed_config=DistributedConfig(list(range(P))), check_races=True),
    )
    assert torch.equal(y, 3 * x)


# ---- comm domains inferred from the dispatched ranks (PyPTO's sub-communicators) ------


@pl.jit.incore
def subset_sum(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pld.DistributedTensor[[1, SIZE], pl.FP32],
    signal: pld.DistributedTensor[[NR - 1, 1], pl.INT32],
):
    ctx = pld.get_comm_ctx(data)
    data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)
    data = pld.tensor.allreduce(data, signal)  # over the ranks this buffer reaches
    total = pl.load(data, [0, 0], [1, SIZE])
    y = pl.store(pl.add(total, pl.cast(pld.rank(ctx) * 1000, pl.FP32)), [0, 0], y)


@pl.jit
def subset_orch(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pld.DistributedTensor[[1, SIZE], pl.FP32],
    signal: pld.DistributedTensor[[NR - 1, 1], pl.INT32],
):
    subset_sum(x, y, data, signal)


@pl.jit
def idle(x: pl.Tensor[[1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]]):
    y[0:1, 0:SIZE] = x


@pl.jit.host
def subset_host(x: pl.Tensor[[NR, 1, SIZE], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
    data_buf = pld.alloc_window_buffer(SIZE * 4)
    signal_buf = pld.alloc_window_buffer([NR - 1, 1], dtype=pl.INT32)
    idle(x[0], y[0], device=0)
    for r in pl.range(1, pld.world_size()):
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [NR - 1, 1], dtype=pl.INT32)
        subset_orch(x[r], y[r], data, signal, device=r)


def subset_agrees(P, engine="threads"):
    x = rows(P)
    y = torch.zeros_like(x)
    devices = DistributedConfig(device_ids=list(range(P)))
    subset_host(x, y, config=RunConfig(distributed_config=devices, engine=engine))
    want = x.clone()
    total = x[1:].sum(dim=0)
    for r in range(1, P):
        want[r] = total + (r - 1) * 1000  # pld.rank: the index among ranks 1 .. P - 1
    return torch.equal(y, want)


@pytest.mark.parametrize("P", [3, 4, 5, 8])
def test_a_buffer_dispatched_to_some_ranks_is_their_own_communicator(P):
    assert subset_agrees(P)


@pytest.mark.skipif(mpi_support.MPIRUN is None, reason="no mpirun")
def test_an_inferred_communicator_on_the_mpi_engine(tmp_path):
    code, out, err = mpi_support.run_script(__file__, 4, tmp_path)
    assert (code, out) == (0, "OK\n"), err


if __name__ == "__main__":  # under mpirun: every process is one rank and checks its result
    mpi_support.report(subset_agrees(int(sys.argv[1]), engine="mpi"))
