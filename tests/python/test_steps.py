"""The tutorial ladder in Python (examples/distributed/NN_*.py, steps 01-06
and 08-16): every step at P = 2, 3, 4, 5, 8 in every mode (and every op),
its own golden check passing and its outputs exact against a float32 torch
golden that adds in the program's order; once per step under the race
checker with a short PCT exploration (`--check-races --explore 3`); the P
a step refuses; and one exact-text error per new op family (pld.tile,
pld.tensor put/get regions, the collectives, the comm domains)."""

import importlib.util
import os
import types

import pytest
import torch

from conftest import ROOT
import anyp
import anyp.language as pl
import anyp.language.distributed as pld
from anyp.ir.distributed_compiled_program import DistributedConfig
from anyp.runtime import RunConfig, cli

EXAMPLES = os.path.join(ROOT, "examples", "distributed")
RANKS = [2, 3, 4, 5, 8]
OPS = ["sum", "max", "min", "prod"]

# step -> (file, modes, ops); None: the step has no --mode / --op.
STEPS = {
    1: ("01_hello_rank", [None], [None]),
    2: ("02_programming_model", [None], [None]),
    3: ("03_window_buffer", [None], [None]),
    4: ("04_barrier", ["hand", "builtin"], [None]),
    5: ("05_remote_load_store", ["load", "store"], [None]),
    6: ("06_put_get", ["put", "get"], [None]),
    8: ("08_allreduce_mesh", [None], [None]),
    9: ("09_allreduce_two_phase", [None], [None]),
    10: ("10_allreduce_ring", [None], [None]),
    11: ("11_allreduce_reveal", ["mesh", "ring"], OPS),
    12: ("12_broadcast", ["hand", "builtin"], [None]),
    13: ("13_allgather", ["hand", "builtin"], [None]),
    14: ("14_reduce_scatter", ["hand", "builtin"], OPS),
    15: ("15_all_to_all", ["hand", "builtin"], [None]),
    16: ("16_putting_it_together", ["shared", "separate"], [None]),
}


def _load(name):
    spec = importlib.util.spec_from_file_location(
        f"step_{name}", os.path.join(EXAMPLES, name + ".py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MODULES = {step: _load(file) for step, (file, _, _) in STEPS.items()}


def config(P, **kwargs):
    return RunConfig(distributed_config=DistributedConfig(device_ids=list(range(P))), **kwargs)


class Recorder:
    """The example's `cli`, recording the inputs it generates and the
    outputs it checks (everything else is anyp.runtime.cli's)."""

    def __init__(self):
        self.inputs, self.outputs = [], {}

    def __getattr__(self, name):
        return getattr(cli, name)

    def InputGenerator(self, seed):  # noqa: N802  (cli's name)
        gen, inputs = cli.InputGenerator(seed), self.inputs

        class Recording:
            def uniform(self, shape, dtype=pl.FP32):
                t = gen.uniform(shape, dtype)
                inputs.append(t)
                return t

        return Recording()

    def check_exact(self, name, out, golden, P):
        self.outputs[name] = out
        return cli.check_exact(name, out, golden, P)

    def check_close(self, name, out, golden, P):
        self.outputs[name] = out
        return cli.check_close(name, out, golden, P)


def run_step(monkeypatch, step, P, mode=None, op=None, **config_kwargs):
    """Runs step `step` through its run(args, config); returns the recorder."""
    module = MODULES[step]
    recorder = Recorder()
    monkeypatch.setattr(module, "cli", recorder)
    args = types.SimpleNamespace(seed=step, compile_only=False, mode=mode, op=op)
    assert module.run(args, config(P, **config_kwargs)) == 0
    return recorder


# ---- float32 goldens in each program's own order of operations --------------------


def fold(rows, op):
    acc = rows[0]
    for row in rows[1:]:
        acc = {
            "sum": torch.add,
            "max": torch.maximum,
            "min": torch.minimum,
            "prod": torch.mul,
        }[
            op
        ](acc, row)
    return acc


def golden_hello(x, P):
    return x + torch.arange(P, dtype=torch.float32).view(P, 1, 1)


def golden_programming_model(x, b, P):
    r = torch.arange(P, dtype=torch.float32).view(P, 1, 1)
    return x * r + x + b


def golden_mesh(x, P):
    """Rank r: its own row, then every other row in rank order."""
    return torch.stack([fold([x[r]] + [x[p] for p in range(P) if p != r], "sum") for r in range(P)])


def golden_two_phase(x, P):
    """Chunk c is reduced by its owner c (own first, then rank order)."""
    C = x.shape[-1] // P
    chunks = [
        fold(
            [x[c][..., c * C : (c + 1) * C]]
            + [x[p][..., c * C : (c + 1) * C] for p in range(P) if p != c],
            "sum",
        )
        for c in range(P)
    ]
    return torch.cat(chunks, dim=-1).expand_as(x)


def golden_ring(x, P):
    """Chunk c travels the ring from rank c + 1 to rank c, adding as it goes."""
    C = x.shape[-1] // P
    chunks = [
        fold([x[(c + k) % P][..., c * C : (c + 1) * C] for k in range(1, P + 1)], "sum")
        for c in range(P)
    ]
    return torch.cat(chunks, dim=-1).expand_as(x)


def golden_ring_builtin(x, P, op):
    """Segment k = [k*n/P, (k+1)*n/P) is reduced along the ring from rank k
    (docs/collectives.md §3.3), left's partial first."""
    n = x.shape[-1]
    bounds = [(k * n // P, (k + 1) * n // P) for k in range(P)]
    segments = [
        fold([x[(k + j) % P][..., lo:hi] for j in range(P)], op)
        for k, (lo, hi) in enumerate(bounds)
    ]
    return torch.cat(segments, dim=-1).expand_as(x)


def golden_reduce_scatter_hand(x, P, op):
    S = x.shape[-1] // P
    rows = []
    for r in range(P):
        chunk = [x[k][..., r * S : (r + 1) * S] for k in range(P)]
        rows.append(fold([chunk[r]] + [chunk[p] for p in range(P) if p != r], op))
    return torch.stack(rows)


def golden_reduce_scatter_rank_order(x, P, op):
    S = x.shape[-1] // P
    return torch.stack(
        [fold([x[k][..., r * S : (r + 1) * S] for k in range(P)], op) for r in range(P)]
    )


def exact_golden(step, mode, op, inputs, P):
    """{output: float32 golden} for the steps whose order of operations is
    known; the others are covered by their own golden check only."""
    x = inputs[0] if inputs else None
    if step == 1:
        return {"y": golden_hello(x, P)}
    if step == 2:
        return {"y": golden_programming_model(x, inputs[1], P)}
    if step == 8:
        return {"y": golden_mesh(x, P)}
    if step == 9:
        return {"y": golden_two_phase(x, P)}
    if step == 10:
        return {"y": golden_ring(x, P)}
    if step == 11 and mode == "mesh":
        return {"y": fold(list(x), op).expand_as(x)}  # every chunk reduced in rank order
    if step == 11:
        return {"y": golden_ring_builtin(x, P, op)}
    if step == 14:
        if mode == "hand":
            return {"y": golden_reduce_scatter_hand(x, P, op)}
        return {"y": golden_reduce_scatter_rank_order(x, P, op)}
    if step == 16:
        w = inputs[1]
        gathered = (x * w[0]).reshape(1, 1, -1).expand(P, 1, -1)
        return {"allred": fold(list(x), "sum").expand_as(x), "gathered": gathered}
    return {}


CASES = [
    (step, mode, op, P)
    for step, (_, modes, ops) in STEPS.items()
    for mode in modes
    for op in ops
    for P in RANKS
]


@pytest.mark.parametrize("step,mode,op,P", CASES, ids=lambda v: str(v))
def test_step_is_exact(monkeypatch, step, mode, op, P):
    recorder = run_step(monkeypatch, step, P, mode, op)
    for name, golden in exact_golden(step, mode, op, recorder.inputs, P).items():
        out = recorder.outputs[name]
        assert torch.equal(
            out, golden.contiguous()
        ), f"{name}: max diff {(out - golden).abs().max()}"


# ---- the race checker and PCT schedules, through the command line -------------------------


EXPLORE = [(step, modes[-1], ops[-1]) for step, (_, modes, ops) in STEPS.items()]


@pytest.mark.parametrize("step,mode,op", EXPLORE, ids=lambda v: str(v))
def test_step_under_race_checker_and_explore(capsys, step, mode, op):
    argv = ["-d", "0,1,2", "--check-races", "--explore", "3"]
    if mode is not None:
        argv += ["--mode", mode]
    if op is not None:
        argv += ["--op", op]
    code = MODULES[step].main(argv)
    out, err = capsys.readouterr()
    assert (code, out, err) == (0, "OK\n", "")


@pytest.mark.parametrize("step", [9, 10])
def test_chunked_steps_refuse_a_P_that_does_not_divide_120(capsys, step):
    code = MODULES[step].main(["-d", "0,1,2,3,4,5,6"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == (
        "SIZE=960 cannot be split into 32-byte-aligned chunks for P=7: "
        "need SIZE % (8*P) == 0 (P must divide 120)\n"
    )


# ---- one exact-text error per new op family ----------------------------------------------
#
# Errors raised while a statement is traced name the Python line; the checks of
# the compile passes and the run name the function and the op (the core's ops
# carry no source location yet: docs/python.md, "Not yet located").

SIZE = 64
NR = pl.dynamic("NR")
HERE = os.path.basename(__file__)


def program(kernel):
    """A host and orchestration around `kernel(y, data, signal)`."""

    @pl.jit
    def orch(
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        kernel(y, data, signal)

    @pl.jit.host
    def host(y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        data = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            orch(
                y[r],
                pld.window(data, [1, SIZE], dtype=pl.FP32),
                pld.window(signal, [NR, 1], dtype=pl.INT32),
                device=r,
            )

    return host


def error_of(kernel, P=2):
    """The text of the anyp error that compiling (and running) `kernel` raises."""
    y = torch.zeros((P, 1, SIZE))
    with pytest.raises(anyp.Error) as info:
        program(kernel).compile(y, config=config(P))(y)
    return str(info.value)


def line_of(fn, text):
    """The file line of `fn`'s first source line that contains `text`, and that line."""
    import inspect

    lines, first = inspect.getsourcelines(fn.fn)
    for i, line in enumerate(lines):
        if text in line:
            return first + i, line.rstrip("\n")
    raise AssertionError(text)


def located(fn, text, message):
    """`message` as the front-end locates it: file:line, the line and a caret."""
    line, source = line_of(fn, text)
    code = source.strip()
    indent = len(source) - len(code)
    return f"{HERE}:{line}: {message}\n    {source}\n    {' ' * indent}{'^' * len(code)}"


def at(fn, text):
    """How the core names the place of the op on `fn`'s line holding `text`."""
    return f" at {HERE}:{line_of(fn, text)[0]}"


def source_line(fn, text):
    """What the Python layer appends to an error found after the trace: that
    line, with a caret under its code."""
    line, source = line_of(fn, text)
    code = source.strip()
    indent = len(source) - len(code)
    return f"\n  {HERE}:{line}\n    {source}\n    {' ' * indent}{'^' * len(code)}"


@pl.jit.incore
def remote_load_of_a_tensor(
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    y = pl.store(pld.tile.remote_load(y, 0, [0, 0], [1, SIZE]), [0, 0], y)


@pl.jit.incore
def remote_load_out_of_bounds(
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    y = pl.store(pld.tile.remote_load(data, 0, [0, 8], [1, SIZE]), [0, 0], y)


@pl.jit.incore
def remote_store_to_a_missing_peer(
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    pld.tile.remote_store(pl.load(data, [0, 0], [1, SIZE]), data, peer=5, offsets=[0, 0])


def test_remote_load_of_a_plain_tensor_names_the_op_and_the_line():
    assert error_of(remote_load_of_a_tensor) == located(
        remote_load_of_a_tensor,
        "remote_load(y",
        "compile error: function 'remote_load_of_a_tensor' (incore): pld.tile.remote_load: "
        "the source must be a DistributedTensor (window view), got Tensor[1, 64] FP32",
    )


def test_remote_load_out_of_bounds_names_the_op_and_the_region():
    fn, line = remote_load_out_of_bounds, "remote_load("
    assert error_of(fn) == (
        "compile error: function 'remote_load_out_of_bounds' (incore), op pld.tile.remote_load"
        + at(fn, line)
        + ": region out of bounds in dim 1: offset 8 + extent 64 exceeds the source 'data' "
        "[1, 64]" + source_line(fn, line)
    )


def test_remote_store_to_a_peer_out_of_range_is_a_run_error():
    fn, line = remote_store_to_a_missing_peer, "remote_store("
    assert error_of(fn) == (
        "run error: rank 0 (device 0), function 'remote_store_to_a_missing_peer', "
        "op pld.tile.remote_store"
        + at(fn, line)
        + ": peer 5 is out of range [0, 2)"
        + source_line(fn, line)
    )


@pl.jit.incore
def put_with_half_a_region(
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    pld.tensor.put(data, peer=0, src=data, dst_offsets=[0, 0])


def test_a_put_region_needs_all_three_parts():
    assert error_of(put_with_half_a_region) == located(
        put_with_half_a_region,
        "pld.tensor.put(",
        "ValueError: pld.tensor.put dst_offsets, src_offsets, and shape must be provided together",
    )


@pl.jit.incore
def allreduce_in_an_unknown_mode(
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    data = pld.tensor.allreduce(data, signal, mode="butterfly")


@pl.jit.incore
def ring_allreduce_on_a_transposed_signal(
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    signal: pl.InOut[pld.DistributedTensor[[NR, 2 * (NR - 1)], pl.INT32]],
):
    data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Max, mode="ring")


def test_allreduce_refuses_an_unknown_mode_at_its_line():
    assert error_of(allreduce_in_an_unknown_mode) == located(
        allreduce_in_an_unknown_mode,
        "mode=",
        'ValueError: pld.tensor.allreduce mode must be "mesh", "ring", "recursive_doubling", '
        '"rabenseifner", "tree" or "auto", got \'butterfly\'',
    )


def test_ring_allreduce_names_the_signal_shape_it_needs():
    transposed = [NR, 2 * (NR - 1)]  # one column per round

    @pl.jit
    def orch(
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 2 * (NR - 1)], pl.INT32]],
    ):
        ring_allreduce_on_a_transposed_signal(y, data, signal)

    @pl.jit.host
    def host(y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
        data = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        signal = pld.alloc_window_buffer(transposed, dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            orch(
                y[r],
                pld.window(data, [1, SIZE], dtype=pl.FP32),
                pld.window(signal, transposed, dtype=pl.INT32),
                device=r,
            )

    y = torch.zeros((3, 1, SIZE))
    with pytest.raises(anyp.Error) as info:
        host.compile(y, config=config(3))(y)
    fn, line = ring_allreduce_on_a_transposed_signal, "allreduce("
    assert str(info.value) == (
        "compile error: function 'ring_allreduce_on_a_transposed_signal' (incore), op "
        "pld.tensor.allreduce" + at(fn, line) + ": the Ring signal must be [2 * (P - 1), P] (or "
        "PyPTO's [2 * (P - 1) + 1, P], or [P, 1]) INT32, which is [4, 3] at P = 3, got [3, 4]"
        + source_line(fn, line)
    )


@pl.jit.host
def overlapping_groups(y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
    pairs = pld.comm_domain("pairs")
    pld.comm_group(pairs, 0, 2)
    pld.comm_group(pairs, 1, 2)
    data = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32, domain=pairs)
    for r in pl.range(pld.world_size()):
        store_row(y[r], pld.window(data, [1, SIZE], dtype=pl.FP32), device=r)


@pl.jit.host
def two_pairs(y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]]):
    pairs = pld.comm_domain("pairs")
    pld.comm_group(pairs, [0, 1])
    pld.comm_group(pairs, [2, 3])
    data = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32, domain=pairs)
    for r in pl.range(pld.world_size()):
        store_row(y[r], pld.window(data, [1, SIZE], dtype=pl.FP32), device=r)


@pl.jit.incore
def rank_in_group(
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
):
    ctx = pld.get_comm_ctx(data)
    me = pl.cast(pld.rank(ctx) * 10 + pld.nranks(ctx), pl.FP32)
    y = pl.store(pl.add(pl.zeros([1, SIZE], pl.FP32), me), [0, 0], y)


@pl.jit
def store_row(
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
):
    rank_in_group(y, data)


def test_comm_groups_of_a_domain_must_be_disjoint():
    y = torch.zeros((4, 1, SIZE))
    with pytest.raises(anyp.Error) as info:
        overlapping_groups.compile(y, config=config(4))
    line = "pld.comm_group(pairs, 1, 2)"
    assert str(info.value) == (
        "compile error: function 'overlapping_groups' (host)"
        + at(overlapping_groups, line)
        + ": pld.comm_group of domain 'pairs': rank 1 of the group {1, 2} is already in its "
        "group {0, 1}; the groups of one domain are disjoint (declare another domain for an "
        "overlapping group)" + source_line(overlapping_groups, line)
    )


def test_a_domain_view_sees_its_group():
    y = torch.zeros((4, 1, SIZE))
    two_pairs.compile(y, config=config(4))(y)
    assert y[:, 0, 0].tolist() == [2.0, 12.0, 2.0, 12.0]  # rank * 10 + nranks in each pair


# ---- the forms no step uses: host-level collectives, PyPTO's short forms ----


@pl.jit.incore
def stage_row(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
):
    data = pl.store(pl.load(x, [0, 0], [1, SIZE]), [0, 0], data)


@pl.jit.incore
def read_row(
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
):
    y = pl.store(pl.load(data, [0, 0], [1, SIZE]), [0, 0], y)


@pl.jit
def stage_orch(
    x: pl.Tensor[[1, SIZE], pl.FP32],
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
):
    stage_row(x, data)


@pl.jit
def read_orch(
    data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
):
    read_row(data, y)


@pl.jit.host
def host_all_reduce(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        stage_orch(x[r], data, device=r)
    data = pld.all_reduce(data, op=pld.ReduceOp.Max)  # PyPTO's short form: no signal
    pld.tensor.barrier()  # anyp's host barrier with a synthesized signal
    for r in pl.range(pld.world_size()):
        read_orch(data, y[r], device=r)


@pytest.mark.parametrize("P", [2, 3, 5])
def test_host_level_short_form_all_reduce(P):
    x = torch.arange(P * SIZE, dtype=torch.float32).view(P, 1, SIZE)
    y = torch.zeros_like(x)
    host_all_reduce.compile(x, y, config=config(P, check_races=True))(x, y)
    assert torch.equal(y, x[P - 1 : P].expand_as(x))


def host_all_reduce_in(mode):
    """host_all_reduce with a Sum allreduce of `mode`, its signal made for it."""

    @pl.jit.host
    def host(
        x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            stage_orch(x[r], data, device=r)
        data = pld.all_reduce(data, op=pld.ReduceOp.Sum, mode=mode)
        pld.tensor.barrier()
        for r in pl.range(pld.world_size()):
            read_orch(data, y[r], device=r)

    return host


@pl.jit.host
def host_rabenseifner(
    x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
    y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
):
    data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
    signal_buf = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
    signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        stage_orch(x[r], data, device=r)
    data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, mode="rabenseifner")
    pld.tensor.barrier()
    for r in pl.range(pld.world_size()):
        read_orch(data, y[r], device=r)


host_recursive_doubling = host_all_reduce_in("recursive_doubling")
host_tree = host_all_reduce_in("tree")
host_auto = host_all_reduce_in("auto")


@pytest.mark.parametrize("P", [2, 3, 4, 5, 8])
def test_auto_allreduce_names_its_choice(P):
    x = torch.arange(P * SIZE, dtype=torch.float32).view(P, 1, SIZE) / 4
    y = torch.zeros_like(x)
    compiled = host_auto.compile(x, y, config=config(P, check_races=True))
    compiled(x, y)
    assert torch.equal(y, x.sum(dim=0, keepdim=True).expand_as(x))
    (line,) = compiled.collective_choices().splitlines()
    assert line.startswith("host_allreduce_0: pld.tensor.allreduce (Sum, ")  # the host call's code
    assert "Auto chose " in line and line.count(" us") == 5  # five candidates


@pytest.mark.parametrize("P", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("host", [host_recursive_doubling, host_rabenseifner, host_tree])
def test_logarithmic_allreduce_modes(host, P):
    x = torch.arange(P * SIZE, dtype=torch.float32).view(P, 1, SIZE) / 4  # exact sums
    y = torch.zeros_like(x)
    host.compile(x, y, config=config(P, check_races=True))(x, y)
    assert torch.equal(y, x.sum(dim=0, keepdim=True).expand_as(x))


def host_broadcast_in(mode, root):
    """Every rank stages its row, then the short-form host broadcast of
    `mode` from `root` (its signal made for it)."""

    @pl.jit.host
    def host(
        x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            stage_orch(x[r], data, device=r)
        data = pld.broadcast(data, root=root, mode=mode)
        pld.tensor.barrier()
        for r in pl.range(pld.world_size()):
            read_orch(data, y[r], device=r)

    return host


@pytest.mark.parametrize("P", [2, 3, 5, 8])
@pytest.mark.parametrize("mode", ["mesh", "tree", "scatter_allgather", "auto"])
def test_broadcast_modes(mode, P):
    x = torch.arange(P * SIZE, dtype=torch.float32).view(P, 1, SIZE) / 4
    y = torch.zeros_like(x)
    root = P - 1
    compiled = host_broadcast_in(mode, root).compile(x, y, config=config(P, check_races=True))
    compiled(x, y)
    assert torch.equal(y, x[root : root + 1].expand_as(x))
    table = compiled.collective_table()
    assert "pld.tensor.broadcast (root %d" % root in table
    assert table.count(" us  ") == 3  # Mesh, Tree, ScatterAllgather


def test_broadcast_mode_is_checked():
    with pytest.raises(anyp.CompileError) as e:
        host_broadcast_in("ring", 0).compile(
            torch.zeros(2, 1, SIZE), torch.zeros(2, 1, SIZE), config=config(2)
        )
    first = str(e.value).splitlines()[0]
    assert first.startswith("test_steps.py:")
    assert first.endswith(
        ': ValueError: pld.tensor.broadcast mode must be "mesh", "tree", "scatter_allgather" '
        "or \"auto\", got 'ring'"
    )


def gather_program(mode):
    """Rank r's row x[r] gathered into every rank's [NR, SIZE] window by
    the kernel-level allgather of `mode`; y[r] = the window."""

    @pl.jit.incore
    def gather(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        data = pld.tensor.allgather(x, data, signal, mode=mode)
        for p in pl.range(pld.nranks(pld.get_comm_ctx(data))):
            y = pl.store(pl.load(data, [p, 0], [1, SIZE]), [p, 0], y)
        return y

    @pl.jit
    def per_rank(
        x: pl.Tensor[[1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        gather(x, y, data, signal)

    @pl.jit.host
    def host(
        x: pl.Tensor[[NR, 1, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, NR, SIZE], pl.FP32]],
    ):
        data = pld.alloc_window_buffer([NR, SIZE], dtype=pl.FP32)
        signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            per_rank(
                x[r],
                y[r],
                pld.window(data, [NR, SIZE], dtype=pl.FP32),
                pld.window(signal, [NR, 1], dtype=pl.INT32),
                device=r,
            )

    return host


@pytest.mark.parametrize("P", [2, 3, 5, 8])
@pytest.mark.parametrize("mode", ["mesh", "bruck", "recursive_doubling", "auto"])
def test_allgather_modes(mode, P):
    x = torch.arange(P * SIZE, dtype=torch.float32).view(P, 1, SIZE) / 4
    y = torch.zeros((P, P, SIZE), dtype=torch.float32)
    compiled = gather_program(mode).compile(x, y, config=config(P, check_races=True))
    compiled(x, y)
    assert torch.equal(y, x.view(1, P, SIZE).expand(P, P, SIZE))
    assert compiled.collective_table().count(" us  ") == 3  # Mesh, Bruck, RecursiveDoubling


def scatter_program(mode):
    """Rank r stages x[r] ([NR, SIZE]) in its window; the kernel-level
    reduce_scatter of `mode` (Sum); y[r] = the window's row r."""

    @pl.jit.incore
    def scatter(
        x: pl.Tensor[[NR, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        ctx = pld.get_comm_ctx(data)
        for p in pl.range(pld.nranks(ctx)):
            data = pl.store(pl.load(x, [p, 0], [1, SIZE]), [p, 0], data)
        data = pld.tensor.reduce_scatter(data, signal, mode=mode)
        y = pl.store(pl.load(data, [pld.rank(ctx), 0], [1, SIZE]), [0, 0], y)
        return y

    @pl.jit
    def per_rank(
        x: pl.Tensor[[NR, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
        data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        scatter(x, y, data, signal)

    @pl.jit.host
    def host(
        x: pl.Tensor[[NR, NR, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data = pld.alloc_window_buffer([NR, SIZE], dtype=pl.FP32)
        signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            per_rank(
                x[r],
                y[r],
                pld.window(data, [NR, SIZE], dtype=pl.FP32),
                pld.window(signal, [NR, 1], dtype=pl.INT32),
                device=r,
            )

    return host


@pytest.mark.parametrize("P", [2, 3, 5, 8])
@pytest.mark.parametrize("mode", ["mesh", "recursive_halving", "pairwise", "auto"])
def test_reduce_scatter_modes(mode, P):
    # Small integers: every reduction order gives the same sum.
    x = (torch.arange(P * P * SIZE, dtype=torch.float32) % 17).view(P, P, SIZE)
    y = torch.zeros((P, 1, SIZE), dtype=torch.float32)
    compiled = scatter_program(mode).compile(x, y, config=config(P, check_races=True))
    compiled(x, y)
    assert torch.equal(y, x.sum(dim=0).view(P, 1, SIZE))
    table = compiled.collective_table()
    assert "pld.tensor.reduce_scatter (Sum" in table
    assert table.count(" us  ") == 3  # Mesh, RecursiveHalving, Pairwise


def test_reduce_scatter_mode_is_checked():
    with pytest.raises(anyp.CompileError) as e:
        scatter_program("ring").compile(
            torch.zeros(2, 2, SIZE), torch.zeros(2, 1, SIZE), config=config(2)
        )
    first = str(e.value).splitlines()[0]
    assert first.startswith("test_steps.py:")
    assert first.endswith(
        ': ValueError: pld.tensor.reduce_scatter mode must be "mesh", "recursive_halving", '
        '"pairwise" or "auto", got \'ring\''
    )


def all_to_all_program(mode):
    """Rank r sends x[r] ([NR, SIZE], row d to rank d) by the kernel-level
    all_to_all of `mode`; y[r] = its window (row s from rank s)."""

    @pl.jit.incore
    def exchange(
        x: pl.Tensor[[NR, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
        dst: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        dst = pld.tensor.all_to_all(x, dst, signal, mode=mode)
        for p in pl.range(pld.nranks(pld.get_comm_ctx(dst))):
            y = pl.store(pl.load(dst, [p, 0], [1, SIZE]), [p, 0], y)
        return y

    @pl.jit
    def per_rank(
        x: pl.Tensor[[NR, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, SIZE], pl.FP32]],
        dst: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
        signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        exchange(x, y, dst, signal)

    @pl.jit.host
    def host(
        x: pl.Tensor[[NR, NR, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, NR, SIZE], pl.FP32]],
    ):
        dst = pld.alloc_window_buffer([NR, SIZE], dtype=pl.FP32)
        signal = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            per_rank(
                x[r],
                y[r],
                pld.window(dst, [NR, SIZE], dtype=pl.FP32),
                pld.window(signal, [NR, 1], dtype=pl.INT32),
                device=r,
            )

    return host


@pytest.mark.parametrize("P", [2, 3, 5, 8])
@pytest.mark.parametrize("mode", ["mesh", "pairwise", "bruck", "auto"])
def test_all_to_all_modes(mode, P):
    x = torch.arange(P * P * SIZE, dtype=torch.float32).view(P, P, SIZE)
    y = torch.zeros((P, P, SIZE), dtype=torch.float32)
    compiled = all_to_all_program(mode).compile(x, y, config=config(P, check_races=True))
    compiled(x, y)
    assert torch.equal(y, x.transpose(0, 1))  # y[d][s] = x[s][d]
    table = compiled.collective_table()
    assert "pld.tensor.all_to_all" in table
    assert table.count(" us  ") == 3  # Mesh, Pairwise, Bruck


def test_all_to_all_mode_is_checked():
    with pytest.raises(anyp.CompileError) as e:
        all_to_all_program("ring").compile(
            torch.zeros(2, 2, SIZE), torch.zeros(2, 2, SIZE), config=config(2)
        )
    first = str(e.value).splitlines()[0]
    assert first.startswith("test_steps.py:")
    assert first.endswith(
        ': ValueError: pld.tensor.all_to_all mode must be "mesh", "pairwise", "bruck" or '
        "\"auto\", got 'ring'"
    )


@pl.jit.incore
def stage_rows(
    x: pl.Tensor[[NR, SIZE], pl.FP32],
    data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
):
    for p in pl.range(pld.nranks(pld.get_comm_ctx(data))):
        data = pl.store(pl.load(x, [p, 0], [1, SIZE]), [p, 0], data)
    return data


@pl.jit.incore
def read_own_row(
    data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
):
    me = pld.rank(pld.get_comm_ctx(data))
    y = pl.store(pl.load(data, [me, 0], [1, SIZE]), [0, 0], y)
    return y


@pl.jit
def stage_rows_orch(
    x: pl.Tensor[[NR, SIZE], pl.FP32],
    data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
):
    stage_rows(x, data)


@pl.jit
def read_own_row_orch(
    data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]],
    y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],
):
    read_own_row(data, y)


def host_reduce_scatter_in(mode):
    """The host-level short form of reduce_scatter with `mode`, between
    a staging and a reading dispatch loop."""

    @pl.jit.host
    def host(
        x: pl.Tensor[[NR, NR, SIZE], pl.FP32],
        y: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],
    ):
        data_buf = pld.alloc_window_buffer([NR, SIZE], dtype=pl.FP32)
        data = pld.window(data_buf, [NR, SIZE], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            stage_rows_orch(x[r], data, device=r)
        data = pld.reduce_scatter(data, mode=mode)
        for r in pl.range(pld.world_size()):
            read_own_row_orch(data, y[r], device=r)

    return host


@pytest.mark.parametrize("P", [3, 4, 7])
@pytest.mark.parametrize(
    "mode, runs",
    [
        ("mesh", "Mesh (pinned)"),
        ("recursive_halving", "RecursiveHalving (pinned)"),
        ("pairwise", "Pairwise (pinned)"),
    ],
)
def test_host_level_reduce_scatter_modes(mode, runs, P):
    x = (torch.arange(P * P * SIZE, dtype=torch.float32) % 13).view(P, P, SIZE)
    y = torch.zeros((P, 1, SIZE), dtype=torch.float32)
    compiled = host_reduce_scatter_in(mode).compile(x, y, config=config(P, check_races=True))
    compiled(x, y)
    assert torch.equal(y, x.sum(dim=0).view(P, 1, SIZE))
    assert "runs " + runs in compiled.collective_table()
