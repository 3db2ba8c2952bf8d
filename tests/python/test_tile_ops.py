"""pl's tile compute ops from Python (anyp/language/_tile_ops.py over
python/src/bind_tile_math.cpp): each op once in a one-rank kernel against
torch (exact for the exact ops: inputs are chosen so that every product and
sum is exact in FP32), pl.read / pl.write, the block queries, the dispatch
errors, and the located text of shape errors (op and Python line)."""

import inspect

import numpy as np
import pytest
import torch

import anyp
import anyp.language as pl
import anyp.language.distributed as pld
from anyp.ir.distributed_compiled_program import DistributedConfig
from anyp.runtime import RunConfig

FP32, INT32 = pl.FP32, pl.INT32
CONFIG = RunConfig(distributed_config=DistributedConfig(device_ids=[0]))


def program(shapes, dtypes, out_shape, out_dtype, f):
    """A one-rank program: y = store(f(load(a), load(b), load(c)))."""
    (sa, sb, sc), (da, db, dc) = shapes, dtypes

    @pl.jit.incore
    def kernel(
        a: pl.Tensor[sa, da],
        b: pl.Tensor[sb, db],
        c: pl.Tensor[sc, dc],
        y: pl.Out[pl.Tensor[out_shape, out_dtype]],
    ):
        ta = pl.load(a, [0] * len(sa), sa)
        tb = pl.load(b, [0] * len(sb), sb)
        tc = pl.load(c, [0] * len(sc), sc)
        y = pl.store(f(ta, tb, tc), [0] * len(out_shape), y)

    @pl.jit
    def orch(
        a: pl.Tensor[sa, da],
        b: pl.Tensor[sb, db],
        c: pl.Tensor[sc, dc],
        y: pl.Out[pl.Tensor[out_shape, out_dtype]],
    ):
        kernel(a, b, c, y)

    @pl.jit.host
    def host(
        a: pl.Tensor[[1, *sa], da],
        b: pl.Tensor[[1, *sb], db],
        c: pl.Tensor[[1, *sc], dc],
        y: pl.Out[pl.Tensor[[1, *out_shape], out_dtype]],
    ):
        for r in pl.range(pld.world_size()):
            orch(a[r], b[r], c[r], y[r], device=r)

    return host


TORCH = {FP32: torch.float32, INT32: torch.int32, pl.FP16: torch.float16}


def run(f, a, b=None, c=None, out_shape=None, out_dtype=FP32):
    """Runs f on tensors a, b, c (b and c default to a) and returns y."""
    b = a if b is None else b
    c = a if c is None else c
    args = [a, b, c]
    dtypes = [next(k for k, v in TORCH.items() if v == t.dtype) for t in args]
    prog = program([list(t.shape) for t in args], dtypes, out_shape, out_dtype, f)
    batched = [t.unsqueeze(0).contiguous() for t in args]
    y = torch.zeros([1, *out_shape], dtype=TORCH[out_dtype])
    prog.compile(*batched, y, config=CONFIG)(*batched, y)
    return y[0]


def ints(shape, lo=-4, hi=5, seed=0):
    """Small integers as FP32: every product and sum of a few is exact."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(lo, hi, shape, generator=g).to(torch.float32)


def halves(shape, seed=0):
    """Values in [0.5, 1.5) on a 1/64 grid."""
    g = torch.Generator().manual_seed(seed)
    return 0.5 + torch.randint(0, 64, shape, generator=g).to(torch.float32) / 64


A, B = halves([8, 8], 1), halves([8, 8], 2)
IA, IB = torch.randint(-50, 50, [8, 8], generator=torch.Generator().manual_seed(3)).to(
    torch.int32
), torch.randint(0, 7, [8, 8], generator=torch.Generator().manual_seed(4)).to(torch.int32)


def seq(values, op):
    """Left-to-right reduction in float32, as anyp reduces a row."""
    out = np.float32(values[0])
    for v in values[1:]:
        out = np.float32(op(out, np.float32(v)))
    return out


# ---- elementwise, unary --------------------------------------------------------------

ELEMENTWISE = [
    ("maximum", lambda a, b, c: pl.maximum(a, b), torch.maximum(A, B)),
    ("minimum", lambda a, b, c: pl.minimum(a, b), torch.minimum(A, B)),
    ("maximum scalar", lambda a, b, c: pl.maximum(a, 1.0), torch.clamp(A, min=1.0)),
    ("maxs", lambda a, b, c: pl.maxs(a, 1.0), torch.clamp(A, min=1.0)),
    ("mins", lambda a, b, c: pl.mins(a, 1.0), torch.clamp(A, max=1.0)),
    ("neg", lambda a, b, c: pl.neg(a), -A),
    ("abs", lambda a, b, c: pl.abs(pl.sub(a, 1.0)), (A - 1).abs()),
    ("relu", lambda a, b, c: pl.relu(pl.sub(a, 1.0)), torch.relu(A - 1)),
    ("sqrt", lambda a, b, c: pl.sqrt(a), torch.sqrt(A)),
    ("div", lambda a, b, c: pl.div(a, b), A / B),
    ("div scalar", lambda a, b, c: pl.div(a, 4.0, high_precision=True), A / 4),
    ("true-divide operator", lambda a, b, c: a / 4.0, A / 4),
    ("add scalar", lambda a, b, c: pl.add(a, 2.0), A + 2),
    ("mul tiles", lambda a, b, c: pl.mul(a, b), A * B),
    ("reversed subtraction", lambda a, b, c: 1.0 - a, 1 - A),
]


@pytest.mark.parametrize("name,f,want", ELEMENTWISE, ids=[e[0] for e in ELEMENTWISE])
def test_exact_elementwise_ops(name, f, want):
    assert torch.equal(run(f, A, B, out_shape=[8, 8]), want)


APPROX = [
    ("exp", lambda a, b, c: pl.exp(a), torch.exp(A)),
    ("log", lambda a, b, c: pl.log(a, high_precision=True), torch.log(A)),
    ("rsqrt", lambda a, b, c: pl.rsqrt(a), torch.rsqrt(A)),
    ("recip", lambda a, b, c: pl.recip(a), torch.reciprocal(A)),
]


@pytest.mark.parametrize("name,f,want", APPROX, ids=[e[0] for e in APPROX])
def test_math_ops_within_an_ulp(name, f, want):
    assert torch.allclose(run(f, A, B, out_shape=[8, 8]), want, rtol=2.5e-7, atol=0)


BITWISE = [
    ("and_", lambda a, b, c: pl.and_(a, b), IA & IB),
    ("or_", lambda a, b, c: pl.or_(a, b), IA | IB),
    ("xor", lambda a, b, c: pl.xor(a, b), IA ^ IB),
    ("shl", lambda a, b, c: pl.shl(a, b), IA << IB),
    ("shr", lambda a, b, c: pl.shr(a, b), IA >> IB),
    ("ands", lambda a, b, c: pl.ands(a, 6), IA & 6),
    ("ors", lambda a, b, c: pl.ors(a, 6), IA | 6),
    ("xors", lambda a, b, c: pl.xors(a, 6), IA ^ 6),
    ("shls", lambda a, b, c: pl.shls(a, 2), IA << 2),
    ("shrs", lambda a, b, c: pl.shrs(a, 2), IA >> 2),
    ("not_", lambda a, b, c: pl.not_(a), ~IA),
    ("neg int", lambda a, b, c: pl.neg(a), -IA),
    ("minimum int", lambda a, b, c: pl.minimum(a, 3), torch.clamp(IA, max=3)),
]


@pytest.mark.parametrize("name,f,want", BITWISE, ids=[e[0] for e in BITWISE])
def test_integer_ops(name, f, want):
    assert torch.equal(run(f, IA, IB, out_shape=[8, 8], out_dtype=INT32), want)


# ---- reductions and expansions ------------------------------------------------------------


def row_golden(x, op):
    return torch.tensor([[seq(r.tolist(), op) for r in x]], dtype=torch.float32)


REDUCTIONS = [
    ("row_sum", lambda a, b, c: pl.reshape(pl.row_sum(a), [1, 8]), row_golden(A, np.add)),
    ("row_max", lambda a, b, c: pl.reshape(pl.row_max(a, a), [1, 8]), A.amax(1)[None]),
    ("row_min", lambda a, b, c: pl.reshape(pl.row_min(a), [1, 8]), A.amin(1)[None]),
    ("col_sum", lambda a, b, c: pl.col_sum(a), row_golden(A.T, np.add)),
    ("col_sum tmp", lambda a, b, c: pl.col_sum(a, tmp_tile=b), row_golden(A.T, np.add)),
    ("col_max", lambda a, b, c: pl.col_max(a), A.amax(0)[None]),
    ("col_min", lambda a, b, c: pl.col_min(a), A.amin(0)[None]),
]


@pytest.mark.parametrize("name,f,want", REDUCTIONS, ids=[e[0] for e in REDUCTIONS])
def test_reductions(name, f, want):
    assert torch.equal(run(f, A, B, out_shape=[1, 8]), want)


RM, CM = B.amax(1, keepdim=True), B.amax(0, keepdim=True)
EXPANSIONS = [
    ("row_expand", lambda a, b, c: pl.row_expand(a, pl.row_max(b)), RM.expand(8, 8)),
    ("row_expand_add", lambda a, b, c: pl.row_expand_add(a, pl.row_max(b)), A + RM),
    ("row_expand_sub", lambda a, b, c: pl.row_expand_sub(a, pl.row_max(b)), A - RM),
    ("row_expand_mul", lambda a, b, c: pl.row_expand_mul(a, pl.row_max(b)), A * RM),
    ("row_expand_div", lambda a, b, c: pl.row_expand_div(a, pl.row_max(b)), A / RM),
    ("col_expand", lambda a, b, c: pl.col_expand(a, pl.col_max(b)), CM.expand(8, 8)),
    ("col_expand_add", lambda a, b, c: pl.col_expand_add(a, pl.col_max(b)), A + CM),
    ("col_expand_sub", lambda a, b, c: pl.col_expand_sub(a, pl.col_max(b)), A - CM),
    ("col_expand_mul", lambda a, b, c: pl.col_expand_mul(a, pl.col_max(b)), A * CM),
    ("col_expand_div", lambda a, b, c: pl.col_expand_div(a, pl.col_max(b)), A / CM),
]


@pytest.mark.parametrize("name,f,want", EXPANSIONS, ids=[e[0] for e in EXPANSIONS])
def test_expansions(name, f, want):
    assert torch.equal(run(f, A, B, out_shape=[8, 8]), want)


# ---- comparison and selection -----------------------------------------------------------------


def test_cmp_gives_an_int32_mask():
    mask = run(
        lambda a, b, c: pl.cmp(a, b, cmp_type=pl.GT), A, B, out_shape=[8, 8], out_dtype=INT32
    )
    assert torch.equal(mask, (A > B).to(torch.int32))


def test_cmps_with_a_scalar():
    mask = run(lambda a, b, c: pl.cmps(a, 1.0, pl.LE), A, out_shape=[8, 8], out_dtype=INT32)
    assert torch.equal(mask, (A <= 1.0).to(torch.int32))


def test_sel_picks_by_the_mask():
    out = run(lambda a, b, c: pl.sel(pl.cmp(a, b, pl.LT), a, b), A, B, out_shape=[8, 8])
    assert torch.equal(out, torch.where(A < B, A, B))


# ---- products ------------------------------------------------------------------------------------

MA, MB, MC = ints([8, 16], seed=5), ints([16, 8], seed=6), ints([8, 8], seed=7)
BIAS = ints([1, 8], seed=8)


def test_matmul():
    out = run(lambda a, b, c: pl.matmul(a, b, out_dtype=pl.FP32), MA, MB, out_shape=[8, 8])
    assert torch.equal(out, MA @ MB)


def test_matmul_acc():
    out = run(lambda a, b, c: pl.matmul_acc(c, a, b), MA, MB, MC, out_shape=[8, 8])
    assert torch.equal(out, MC + MA @ MB)


def test_matmul_bias():
    out = run(lambda a, b, c: pl.matmul_bias(a, b, c), MA, MB, BIAS, out_shape=[8, 8])
    assert torch.equal(out, MA @ MB + BIAS)


def test_batch_matmul_and_acc():
    x, w, acc = ints([2, 8, 8], seed=9), ints([2, 8, 8], seed=10), ints([2, 8, 8], seed=11)
    out = run(lambda a, b, c: pl.batch_matmul(a, b), x, w, acc, out_shape=[2, 8, 8])
    assert torch.equal(out, x @ w)
    out = run(lambda a, b, c: pl.batch_matmul_acc(c, a, b), x, w, acc, out_shape=[2, 8, 8])
    assert torch.equal(out, acc + x @ w)


def test_gemv_and_its_forms():
    row, w = ints([1, 16], seed=12), MB
    assert torch.equal(run(lambda a, b, c: pl.gemv(a, b), row, w, out_shape=[1, 8]), row @ w)
    got = run(lambda a, b, c: pl.gemv_acc(c, a, b), row, w, BIAS, out_shape=[1, 8])
    assert torch.equal(got, BIAS + row @ w)
    got = run(lambda a, b, c: pl.gemv_bias(a, b, c), row, w, BIAS, out_shape=[1, 8])
    assert torch.equal(got, row @ w + BIAS)


# ---- conversions, fills and shapes ----------------------------------------------------------------


def test_cast_truncates_into_int32_and_back():
    x = A * 3 - 2
    got = run(lambda a, b, c: pl.cast(a, pl.INT32), x, out_shape=[8, 8], out_dtype=INT32)
    assert torch.equal(got, x.to(torch.int32))
    got = run(lambda a, b, c: pl.cast(a, target_type=pl.FP32), IA, out_shape=[8, 8])
    assert torch.equal(got, IA.to(torch.float32))


def test_full_and_zeros():
    got = run(lambda a, b, c: pl.full([8, 8], dtype=pl.FP32, value=2.5), A, out_shape=[8, 8])
    assert torch.equal(got, torch.full([8, 8], 2.5))
    got = run(lambda a, b, c: pl.add(pl.zeros([8, 8], pl.FP32), a), A, out_shape=[8, 8])
    assert torch.equal(got, A)


def test_reshape_transpose_slice_concat():
    assert torch.equal(
        run(lambda a, b, c: pl.reshape(a, [2, 32]), A, out_shape=[2, 32]), A.reshape(2, 32)
    )
    assert torch.equal(run(lambda a, b, c: pl.transpose(a, 0, 1), A, out_shape=[8, 8]), A.T)
    assert torch.equal(run(lambda a, b, c: pl.transpose(a, -1, -2), A, out_shape=[8, 8]), A.T)
    wide = halves([8, 16], 13)
    got = run(lambda a, b, c: pl.slice(a, [8, 8], [0, 8]), wide, out_shape=[8, 8])
    assert torch.equal(got, wide[:, 8:])
    got = run(lambda a, b, c: pl.concat(a, b), A, B, out_shape=[8, 16])
    assert torch.equal(got, torch.cat([A, B], dim=1))


def test_arange():
    got = run(lambda a, b, c: pl.arange(3, [1, 8]), IA, out_shape=[1, 8], out_dtype=INT32)
    assert torch.equal(got, torch.arange(3, 11, dtype=torch.int32)[None])
    got = run(
        lambda a, b, c: pl.arange(3, [1, 8], dtype=pl.INT32, descending=True),
        IA,
        out_shape=[1, 8],
        out_dtype=INT32,
    )
    assert torch.equal(got, torch.arange(3, -5, -1, dtype=torch.int32)[None])


def test_pl_tile_namespace_has_the_tile_forms():
    assert pl.tile.matmul is pl.matmul and pl.tile.row_sum is pl.row_sum
    assert pl.tile.load is pl.load and pl.tile.get_block_idx is pl.get_block_idx
    with pytest.raises(AttributeError, match=r"not supported by anyp: pl\.tile\.teleport"):
        pl.tile.teleport  # noqa: B018


# ---- memory cells, block queries, tensor slices ----------------------------------------------------


@pl.jit.incore
def cells(
    x: pl.Tensor[[2, 8], pl.INT32],
    y: pl.Out[pl.Tensor[[2, 8], pl.INT32]],
):
    y = pl.store(pl.load(x, [0, 0], [2, 8]), [0, 0], y)
    v = pl.read(x, [1, 2])
    pl.write(y, [0, 0], v + 100)
    pl.write(y, [0, 1], pl.tile.get_block_idx())
    pl.write(y, [0, 2], pl.tile.get_block_num())
    pl.write(y, [0, 3], pl.cast(2.75, pl.INT32))
    row = pl.slice(x, [1, 8], [1, 0])  # a view of the tensor
    y = pl.store(pl.add(pl.load(row, [0, 0], [1, 8]), 1), [1, 0], y)


@pl.jit
def cells_orch(x: pl.Tensor[[2, 8], pl.INT32], y: pl.Out[pl.Tensor[[2, 8], pl.INT32]]):
    cells(x, y)


@pl.jit.host
def cells_host(x: pl.Tensor[[1, 2, 8], pl.INT32], y: pl.Out[pl.Tensor[[1, 2, 8], pl.INT32]]):
    for r in pl.range(pld.world_size()):
        cells_orch(x[r], y[r], device=r)


def test_read_write_block_queries_and_tensor_slice():
    x = torch.arange(16, dtype=torch.int32).reshape(1, 2, 8)
    y = torch.zeros_like(x)
    cells_host.compile(x, y, config=CONFIG)(x, y)
    want = x.clone()
    want[0, 0, :4] = torch.tensor([110, 0, 1, 2], dtype=torch.int32)
    want[0, 1] += 1
    assert torch.equal(y, want)


# ---- refusals and located errors -----------------------------------------------------------------


def test_tile_only_flags_are_refused():
    with pytest.raises(
        anyp.CompileError, match=r"not supported by anyp: pl\.matmul\(\.\.\., b_trans=\.\.\.\)"
    ):
        run(lambda a, b, c: pl.matmul(a, b, b_trans=True), MA, MB, out_shape=[8, 8])
    with pytest.raises(
        anyp.CompileError, match=r"not supported by anyp: pl\.cast\(\.\.\., mode='floor'\)"
    ):
        run(
            lambda a, b, c: pl.cast(a, pl.INT32, mode="floor"), A, out_shape=[8, 8], out_dtype=INT32
        )


def test_a_non_tile_operand_is_a_type_error():
    with pytest.raises(
        anyp.CompileError, match=r"TypeError: pl\.exp: expected Tile operands, got \(int\)"
    ):
        run(lambda a, b, c: pl.exp(3), A, out_shape=[8, 8])


def line_of(marker):
    """The line number of the one line of this file that contains `marker`."""
    lines = inspect.getsource(inspect.getmodule(line_of)).splitlines()
    hits = [i + 1 for i, text in enumerate(lines) if f"# {marker}" in text]
    assert len(hits) == 1, hits
    return hits[0]


@pl.jit.incore
def bad_matmul(a: pl.Tensor[[8, 24], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
    t = pl.reshape(pl.load(a, [0, 0], [8, 24]), [2, 4, 24])
    y = pl.store(pl.matmul(pl.load(a, [0, 0], [8, 8]), t), [0, 0], y)  # MARK-matmul


@pl.jit.incore
def bad_expand(a: pl.Tensor[[8, 24], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
    t = pl.reshape(pl.load(a, [0, 0], [8, 16]), [2, 8, 8])
    v = pl.row_sum(pl.load(a, [0, 0], [8, 8]))
    y = pl.store(pl.row_expand_add(t, v), [0, 0], y)  # MARK-expand


@pl.jit.incore
def bad_reshape(a: pl.Tensor[[8, 24], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
    y = pl.store(pl.reshape(pl.load(a, [0, 0], [1, 32]), [4, 16]), [0, 0], y)  # MARK-reshape


@pl.jit.incore
def bad_transpose(a: pl.Tensor[[8, 24], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
    y = pl.store(pl.transpose(pl.load(a, [0, 0], [8, 8]), 0, 2), [0, 0], y)  # MARK-transpose


@pl.jit.incore
def bad_sel(a: pl.Tensor[[8, 24], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
    t = pl.load(a, [0, 0], [8, 8])
    w = pl.reshape(pl.load(a, [0, 0], [8, 16]), [2, 8, 8])
    y = pl.store(pl.sel(pl.cmp(t, t), t, w), [0, 0], y)  # MARK-sel


def host_for(kernel):
    @pl.jit
    def orch(a: pl.Tensor[[8, 24], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
        kernel(a, y)

    @pl.jit.host
    def host(a: pl.Tensor[[1, 8, 24], pl.FP32], y: pl.Out[pl.Tensor[[1, 8, 8], pl.FP32]]):
        for r in pl.range(pld.world_size()):
            orch(a[r], y[r], device=r)

    return host


# Ranks and constant element counts are checked when an op is traced, so
# the message names the line; extents are checked once dims are bound (a
# compile pass, which names the function and the op but not yet the line).
SHAPE_ERRORS = [
    (
        bad_matmul,
        "MARK-matmul",
        "compile error: function 'bad_matmul' (incore): pl.matmul: rhs must be a 2-D tile, "
        "got Tile[2, 4, 24] FP32",
    ),
    (
        bad_expand,
        "MARK-expand",
        "compile error: function 'bad_expand' (incore): pl.row_expand_add: row_vec must be a "
        "3-D tile, got Tile[8, 1] FP32",
    ),
    (
        bad_reshape,
        "MARK-reshape",
        "compile error: function 'bad_reshape' (incore): pl.reshape: the tile [1, 32] has 32 "
        "elements, but the new shape [4, 16] has 64; a reshape keeps the element count",
    ),
    (
        bad_transpose,
        "MARK-transpose",
        "compile error: function 'bad_transpose' (incore): pl.transpose: axis 2 is outside the "
        "tile's 2 dims (Tile[8, 8] FP32; axes run from -2 to 1)",
    ),
    (
        bad_sel,
        "MARK-sel",
        "compile error: function 'bad_sel' (incore): pl.sel: shape mismatch: b [2, 8, 8] and "
        "a [8, 8]",
    ),
]


@pytest.mark.parametrize(
    "kernel,marker,message",
    SHAPE_ERRORS,
    ids=["matmul", "row_expand_add", "reshape", "transpose", "sel"],
)
def test_shape_errors_name_the_op_and_the_line(kernel, marker, message):
    a = torch.zeros([1, 8, 24])
    y = torch.zeros([1, 8, 8])
    with pytest.raises(anyp.CompileError) as info:
        host_for(kernel).compile(a, y, config=CONFIG)
    line = line_of(marker)
    text = str(info.value)
    source = inspect.getsource(inspect.getmodule(line_of)).splitlines()[line - 1]
    code = source.split("  # MARK")[0]
    indent = len(source) - len(source.lstrip())
    caret = " " * indent + "^" * (len(code) - indent)
    assert text == f"test_tile_ops.py:{line}: {message}\n    {source}\n    {caret}"


# ---- with pl.spmd(n): multi-block launches ------------------------------------------------------


@pl.jit.incore
def lanes(y: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
    pl.write(y, [0, pl.tile.get_block_idx()], pl.tile.get_block_num() * 10 + pl.get_block_idx())


@pl.jit
def lanes_orch(y: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
    with pl.spmd(4, name_hint="lanes", sync_start=True):
        lanes(y)


@pl.jit.host
def lanes_host(y: pl.Out[pl.Tensor[[1, 1, 8], pl.INT32]]):
    for r in pl.range(pld.world_size()):
        lanes_orch(y[r], device=r)


def test_spmd_launches_the_kernel_on_n_blocks():
    y = torch.zeros([1, 1, 8], dtype=torch.int32)
    lanes_host.compile(y, config=CONFIG)(y)
    assert y[0, 0].tolist() == [40, 41, 42, 43, 0, 0, 0, 0]
    assert "call @lanes(%y) blocks=4" in lanes_orch.ir_text()


@pl.jit
def spmd_as(y: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
    with pl.spmd(2) as tid:  # MARK-spmd-as
        lanes(y)


@pl.jit
def other_with(y: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
    with open("x") as f:  # MARK-other-with
        lanes(y)


@pytest.mark.parametrize(
    "fn,marker,what",
    [
        (
            spmd_as,
            "MARK-spmd-as",
            "with pl.spmd(...) as name (read pl.tile.get_block_idx() in the kernel instead)",
        ),
        (
            other_with,
            "MARK-other-with",
            "with blocks in a traced function (use pl.range and if)",
        ),
    ],
    ids=["as", "other"],
)
def test_with_blocks_that_are_not_a_plain_spmd_are_refused(fn, marker, what):
    with pytest.raises(anyp.CompileError) as info:
        fn.ir_text()
    head = str(info.value).splitlines()[0]
    assert head == f"test_tile_ops.py:{line_of(marker)}: not supported by anyp: {what}"


def test_spmd_refuses_what_it_cannot_honour():
    with pytest.raises(
        anyp.CompileError, match=r"not supported by anyp: pl\.spmd\(\.\.\., deps=\.\.\.\)"
    ):
        pl.spmd(4, deps=["x"])
