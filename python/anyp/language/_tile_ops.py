"""anyp.language._tile_ops — pl's tile compute ops (matmul and its forms,
reductions, expansions, unary, elementwise and comparison ops, casts,
fills, reshapes, transposes, slices), pl.read / pl.write, the block queries
(pl.tile.get_block_idx / get_block_num) and multi-block launches
(`with pl.spmd(n):`), over anyp._core's bind_tile_math. Re-exported by
anyp.language.

Names, argument order, keywords and defaults are PyPTO's (pypto.language's
unified ops and pl.tile). Keywords that only steer PyPTO's hardware
lowering and cannot change a result here are accepted and ignored (listed
in each docstring); a value anyp cannot honour is refused with
"not supported by anyp: ...". Ops PyPTO does not have keep anyp's C++
name: zeros, arange, batch_matmul_acc, get_block_num at pl level.
"""


from .. import _core
from .._errors import UnsupportedError as _Unsupported

__all__ = [
    # elementwise, tile with tile or scalar
    "maximum",
    "minimum",
    "maxs",
    "mins",
    "and_",
    "ands",
    "or_",
    "ors",
    "xor",
    "xors",
    "shl",
    "shls",
    "shr",
    "shrs",
    # unary
    "neg",
    "abs",
    "relu",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "recip",
    "not_",
    # reductions and expansions
    "row_sum",
    "row_max",
    "row_min",
    "col_sum",
    "col_max",
    "col_min",
    "row_expand",
    "row_expand_add",
    "row_expand_sub",
    "row_expand_mul",
    "row_expand_div",
    "col_expand",
    "col_expand_add",
    "col_expand_sub",
    "col_expand_mul",
    "col_expand_div",
    # comparison and selection
    "cmp",
    "cmps",
    "sel",
    # products
    "matmul",
    "matmul_acc",
    "matmul_bias",
    "batch_matmul",
    "batch_matmul_acc",
    "gemv",
    "gemv_acc",
    "gemv_bias",
    # conversions, fills and shapes
    "cast",
    "full",
    "zeros",
    "reshape",
    "transpose",
    "slice",
    "concat",
    "arange",
    # memory cells
    "read",
    "write",
    # blocks
    "get_block_idx",
    "get_block_num",
    "spmd",
    "tile",
    # comparison codes
    "EQ",
    "NE",
    "LT",
    "LE",
    "GT",
    "GE",
]

EQ, NE, LT, LE, GT, GE = 0, 1, 2, 3, 4, 5  # PyPTO's cmp_type codes

_Tile, _Value, _Scalar = _core.Tile, _core.Value, _core.Scalar


def _is_scalar(v):
    return isinstance(v, (_Scalar, _core.Dim, int, float)) and not isinstance(v, bool)


def _kind(v):
    return type(v).__name__


# The ops that also take tensors (value-returning: a new tensor, as PyPTO's
# tensor-level ops), besides pl.cast.
_TENSOR_OPS = ("add", "sub", "mul", "div", "maximum", "minimum")


def _tiles(op, *args):
    """Checks that every operand of pl.<op> is a tile (PyPTO's dispatch error)."""
    for a in args:
        if isinstance(a, _Value):
            raise _Unsupported(
                f"not supported by anyp: pl.{op} of a tensor (anyp's tensor-level ops are "
                "pl.add, sub, mul, div, maximum, minimum and cast); pl.load a tile and use the "
                "tile form"
            )
        if not isinstance(a, _Tile):
            types = ", ".join(_kind(x) for x in args)
            raise TypeError(f"pl.{op}: expected Tile operands, got ({types})")


def _refuse(op, **flags):
    """Refuses the keywords of pl.<op> that anyp cannot honour when given."""
    for name, (given, why) in flags.items():
        if given:
            raise _Unsupported(f"not supported by anyp: pl.{op}(..., {name}=...): {why}")


# ---- elementwise -----------------------------------------------------------------


def _elementwise(op, core_op, lhs, rhs, scalar_only=False):
    if isinstance(lhs, _Value) and core_op in _TENSOR_OPS:
        if (isinstance(rhs, _Value) and not scalar_only) or _is_scalar(rhs):
            return _core.tensor_binary(core_op, lhs, rhs)
        want = "a scalar" if scalar_only else "a tensor or a scalar"
        raise TypeError(f"pl.{op}: rhs must be {want}, got {_kind(rhs)}")
    _tiles(op, lhs)
    if isinstance(rhs, _Tile) and not scalar_only:
        return _core.tile_elementwise(core_op, lhs, rhs)
    if _is_scalar(rhs):
        return _core.tile_elementwise(core_op, lhs, rhs)
    want = "a scalar" if scalar_only else "a Tile or a scalar"
    raise TypeError(f"pl.{op}: rhs must be {want}, got {_kind(rhs)}")


def maximum(lhs, rhs):
    """Elementwise max of a tile and a tile or a scalar."""
    return _elementwise("maximum", "maximum", lhs, rhs)


def minimum(lhs, rhs):
    """Elementwise min of a tile and a tile or a scalar."""
    return _elementwise("minimum", "minimum", lhs, rhs)


def maxs(lhs, rhs):
    return _elementwise("maxs", "maximum", lhs, rhs, scalar_only=True)


def mins(lhs, rhs):
    return _elementwise("mins", "minimum", lhs, rhs, scalar_only=True)


def and_(lhs, rhs):
    return _elementwise("and_", "and_", lhs, rhs)


def ands(lhs, rhs):
    return _elementwise("ands", "and_", lhs, rhs, scalar_only=True)


def or_(lhs, rhs):
    return _elementwise("or_", "or_", lhs, rhs)


def ors(lhs, rhs):
    return _elementwise("ors", "or_", lhs, rhs, scalar_only=True)


def xor(lhs, rhs, tmp=None):
    """Bitwise xor (anyp's C++ pl::xor_). `tmp`, PyPTO's scratch tile, is
    not needed here and is ignored."""
    return _elementwise("xor", "xor_", lhs, rhs)


def xors(lhs, rhs, tmp=None):
    return _elementwise("xors", "xor_", lhs, rhs, scalar_only=True)


def shl(lhs, rhs):
    return _elementwise("shl", "shl", lhs, rhs)


def shls(lhs, rhs):
    return _elementwise("shls", "shl", lhs, rhs, scalar_only=True)


def shr(lhs, rhs):
    return _elementwise("shr", "shr", lhs, rhs)


def shrs(lhs, rhs):
    return _elementwise("shrs", "shr", lhs, rhs, scalar_only=True)


# ---- unary -------------------------------------------------------------------------


def _unary(op, t):
    _tiles(op, t)
    return _core.tile_unary(op, t)


def neg(input):  # noqa: A002  (PyPTO's parameter name)
    return _unary("neg", input)


def abs(input):  # noqa: A001,A002
    return _unary("abs", input)


def relu(tile):
    return _unary("relu", tile)


def exp(input):  # noqa: A002
    return _unary("exp", input)


def log(input, high_precision=False):  # noqa: A002
    """Natural log; `high_precision` (a hardware mode) is accepted and ignored."""
    return _unary("log", input)


def sqrt(input):  # noqa: A002
    return _unary("sqrt", input)


def rsqrt(input, high_precision=False):  # noqa: A002
    """1 / sqrt(x). As in PyPTO, `high_precision=True` is refused for tiles."""
    if high_precision:
        raise TypeError(
            "pl.rsqrt: 'high_precision' is not supported for Tile operands. The tile form "
            "selects precision by taking a scratch tile: pl.tile.rsqrt(tile, tmp)."
        )
    return _unary("rsqrt", input)


def recip(input, high_precision=False):  # noqa: A002
    """1 / x; `high_precision` (a hardware mode) is accepted and ignored."""
    return _unary("recip", input)


def not_(input):  # noqa: A002
    return _unary("not_", input)


# ---- reductions and expansions -------------------------------------------------------


def _reduce(op, t, tmp_tile):
    _tiles(op, t)
    if tmp_tile is None:
        return _core.tile_unary(op, t)
    _tiles(op, tmp_tile)
    return _core.tile_binary2(op, t, tmp_tile)


def row_sum(input, tmp_tile=None):  # noqa: A002
    """Row sums, [.., M, 1]. PyPTO's tile form needs `tmp_tile`; anyp checks
    it when given and does not need it."""
    return _reduce("row_sum", input, tmp_tile)


def row_max(input, tmp_tile=None):  # noqa: A002
    return _reduce("row_max", input, tmp_tile)


def row_min(input, tmp_tile=None):  # noqa: A002
    return _reduce("row_min", input, tmp_tile)


def col_sum(input, tmp_tile=None):  # noqa: A002
    return _reduce("col_sum", input, tmp_tile)


def col_max(input):  # noqa: A002
    return _reduce("col_max", input, None)


def col_min(input):  # noqa: A002
    return _reduce("col_min", input, None)


def _two(op, a, b):
    _tiles(op, a, b)
    return _core.tile_binary2(op, a, b)


def row_expand(lhs, rhs):
    """Row i of the result is rhs[i, 0] (rhs [.., M, 1]), in lhs's shape."""
    return _two("row_expand", lhs, rhs)


def row_expand_add(lhs, rhs, tmp=None):
    """lhs[i, j] + rhs[i, 0]; `tmp` (PyPTO's scratch) is ignored."""
    return _two("row_expand_add", lhs, rhs)


def row_expand_sub(lhs, rhs):
    return _two("row_expand_sub", lhs, rhs)


def row_expand_mul(lhs, rhs):
    return _two("row_expand_mul", lhs, rhs)


def row_expand_div(lhs, rhs):
    return _two("row_expand_div", lhs, rhs)


def col_expand(lhs, rhs):
    """Column j of the result is rhs[0, j] (rhs [.., 1, N]), in lhs's shape."""
    return _two("col_expand", lhs, rhs)


def col_expand_add(lhs, rhs):
    return _two("col_expand_add", lhs, rhs)


def col_expand_sub(lhs, rhs):
    return _two("col_expand_sub", lhs, rhs)


def col_expand_mul(lhs, rhs):
    return _two("col_expand_mul", lhs, rhs)


def col_expand_div(lhs, rhs):
    return _two("col_expand_div", lhs, rhs)


# ---- comparison and selection ----------------------------------------------------------


def cmp(lhs, rhs, cmp_type=0):
    """A mask: 1 where `lhs <cmp_type> rhs` (pl.EQ 0, NE 1, LT 2, LE 3, GT 4,
    GE 5), else 0; rhs a tile or a scalar."""
    _tiles("cmp", lhs)
    if not (isinstance(rhs, _Tile) or _is_scalar(rhs)):
        raise TypeError(f"pl.cmp: rhs must be a Tile or a scalar, got {_kind(rhs)}")
    return _core.tile_cmp(lhs, rhs, int(cmp_type))


def cmps(lhs, rhs, cmp_type=0):
    _tiles("cmps", lhs)
    if not _is_scalar(rhs):
        raise TypeError(f"pl.cmps: rhs must be a scalar, got {_kind(rhs)}")
    return _core.tile_cmp(lhs, rhs, int(cmp_type))


def sel(mask, lhs, rhs):
    """lhs where mask != 0, else rhs."""
    _tiles("sel", mask, lhs, rhs)
    return _core.tile_ternary("sel", mask, lhs, rhs)


# ---- products ---------------------------------------------------------------------------

_TRANSPOSE_WHY = (
    "at tile level a transposed operand is its own tile; pass pl.transpose(t, 0, 1) "
    "(PyPTO's tile path refuses the flag too)"
)


def _accumulator(t):
    """The dtype matmul gives for operand tile `t`: FP32 or INT32."""
    name = t.type().split()[-1] if t.type() else ""
    return _core.DType.INT32 if name.startswith("INT") else _core.DType.FP32


def matmul(lhs, rhs, out_dtype=None, a_trans=False, b_trans=False, c_matrix_nz=False):
    """[M, K] @ [K, N], accumulated in FP32 (INT32 for integers). As in
    PyPTO's tile path, `out_dtype` must be the accumulator's dtype and the
    transpose / NZ flags are refused."""
    _tiles("matmul", lhs, rhs)
    _refuse(
        "matmul",
        a_trans=(a_trans, _TRANSPOSE_WHY),
        b_trans=(b_trans, _TRANSPOSE_WHY),
        c_matrix_nz=(c_matrix_nz, "the result layout of a tile matmul is fixed"),
    )
    if out_dtype is not None and out_dtype != _accumulator(lhs):
        raise TypeError(
            f"pl.matmul: out_dtype={out_dtype} is not supported for Tile operands — the "
            f"accumulator fixes the result dtype, {_accumulator(lhs)} here; convert the "
            "result with pl.cast(result, <dtype>)"
        )
    return _core.tile_binary2("matmul", lhs, rhs)


def matmul_acc(acc, lhs, rhs, a_trans=False, b_trans=False, init_cond=None):
    """acc + lhs @ rhs (the chains start from acc)."""
    _tiles("matmul_acc", acc, lhs, rhs)
    _refuse(
        "matmul_acc",
        a_trans=(a_trans, _TRANSPOSE_WHY),
        b_trans=(b_trans, _TRANSPOSE_WHY),
        init_cond=(init_cond is not None, "write the k == 0 step as pl.matmul"),
    )
    return _core.tile_ternary("matmul_acc", acc, lhs, rhs)


def matmul_bias(lhs, rhs, bias):
    _tiles("matmul_bias", lhs, rhs, bias)
    return _core.tile_ternary("matmul_bias", lhs, rhs, bias)


def batch_matmul(lhs, rhs):
    """[B, M, K] @ [B, K, N]."""
    return _two("batch_matmul", lhs, rhs)


def batch_matmul_acc(acc, lhs, rhs):
    _tiles("batch_matmul_acc", acc, lhs, rhs)
    return _core.tile_ternary("batch_matmul_acc", acc, lhs, rhs)


def gemv(lhs, rhs):
    """[1, K] @ [K, N]."""
    return _two("gemv", lhs, rhs)


def gemv_acc(acc, lhs, rhs):
    _tiles("gemv_acc", acc, lhs, rhs)
    return _core.tile_ternary("gemv_acc", acc, lhs, rhs)


def gemv_bias(lhs, rhs, bias):
    _tiles("gemv_bias", lhs, rhs, bias)
    return _core.tile_ternary("gemv_bias", lhs, rhs, bias)


# ---- conversions, fills and shapes ----------------------------------------------------------


def cast(input, target_type, mode="round"):  # noqa: A002
    """Converts a tile, a tensor (into a new one) or a scalar: into a float
    dtype rounding to nearest even, into an integer dtype truncating toward
    zero (docs/api.md). Only PyPTO's default `mode` is taken."""
    if mode not in ("round", 2):
        raise _Unsupported(
            f"not supported by anyp: pl.cast(..., mode={mode!r}) (anyp's cast rounds to "
            "nearest even into floats and truncates into integers)"
        )
    if isinstance(input, _Tile):
        return _core.tile_cast(input, target_type)
    if isinstance(input, _Value):
        return _core.tensor_cast(input, target_type)
    if _is_scalar(input):
        return _core.cast_scalar(input, target_type)
    raise TypeError(f"pl.cast: expected a Tile, a Tensor or a Scalar, got {_kind(input)}")


def _pl_dtype(op, dtype):
    """`dtype` if it is a pl dtype, else a TypeError naming `op`."""
    if not isinstance(dtype, _core.DType):
        raise TypeError(f"{op}: dtype must be a pl dtype (pl.FP32, pl.INT32, ...), got {dtype!r}")
    return dtype


def full(shape, dtype, value):
    """A tile of `shape` whose every element is `value` in `dtype`."""
    return _core.tile_full(list(shape), value, _pl_dtype("pl.full", dtype))


def zeros(shape, dtype):
    """pl.full(shape, dtype, 0) (anyp's C++ pl::zeros; PyPTO has no pl.zeros)."""
    return _core.tile_zeros(list(shape), _pl_dtype("pl.zeros", dtype))


def reshape(input, shape):  # noqa: A002
    """The same elements in row-major order, seen with `shape`."""
    _tiles("reshape", input)
    return _core.tile_reshape(input, list(shape))


def transpose(input, axis1, axis2):  # noqa: A002
    """Swaps dims `axis1` and `axis2` (negative counts from the end)."""
    _tiles("transpose", input)
    return _core.tile_transpose(input, int(axis1), int(axis2))


def slice(  # noqa: A001
    input,  # noqa: A002
    shape,
    offset,
    valid_shape=None,
    drop_dims=None,
    pad_value=None,
    clamp=False,
):
    """The sub-tile (or, of a tensor, the view) of `shape` at `offset`."""
    _refuse(
        "slice",
        valid_shape=(valid_shape is not None, "load with valid_shape instead"),
        drop_dims=(bool(drop_dims), "pl.reshape the slice instead"),
        pad_value=(pad_value is not None, "slices here carry no padding mode"),
        clamp=(bool(clamp), "keep offset + shape inside the source"),
    )
    if isinstance(input, _Value):
        return _core.tensor_slice(input, list(shape), list(offset))
    _tiles("slice", input)
    return _core.tile_slice(input, list(shape), list(offset))


def concat(src0, src1):
    """src1's columns after src0's (2-D tiles, equal rows)."""
    return _two("concat", src0, src1)


def arange(start, shape, dtype=_core.DType.INT32, descending=False):
    """Element i (row-major) is start + i, or start - i descending (anyp's
    C++ pl::arange; PyPTO fills one row only)."""
    return _core.tile_arange(start, list(shape), dtype, bool(descending))


# ---- memory cells ----------------------------------------------------------------------------


def _indices(offset):
    return list(offset) if isinstance(offset, (list, tuple)) else [offset]


def read(src, offset):
    """One cell of a tensor or window view, as a scalar."""
    if not isinstance(src, _Value):
        raise _Unsupported(f"not supported by anyp: pl.read of a {_kind(src)} (read a tensor)")
    return _core.cell_read(src, _indices(offset))


def write(dst, offset, value):
    """Writes one cell of a tensor or window view."""
    if not isinstance(dst, _Value):
        raise _Unsupported(f"not supported by anyp: pl.write of a {_kind(dst)} (write a tensor)")
    _core.cell_write(dst, _indices(offset), value)


# ---- blocks ------------------------------------------------------------------------------------


def get_block_idx():
    """This block's index in its launch (0 in a one-block call); incore only."""
    return _core.get_block_idx()


def get_block_num():
    """The launch's block count (1 in a one-block call); incore only."""
    return _core.get_block_num()


class spmd:  # noqa: N801  (PyPTO's name)
    """`with pl.spmd(n):` in an orchestration function: every incore kernel
    called in the block runs on n blocks of the rank at once (C++
    pl::blocks(n)); the kernels tell the blocks apart by
    pl.tile.get_block_idx() / get_block_num(). `name_hint`, `sync_start`
    (anyp's blocks always start together) and `allow_early_resolve` are
    accepted and ignored."""

    _anyp_launches_blocks = True  # the walker's `with` form (anyp/_walker.py)

    def __init__(
        self,
        core_num,
        name_hint=None,
        deps=None,
        optimizations=None,
        allow_early_resolve=False,
        sync_start=False,
    ):
        _refuse(
            "spmd",
            deps=(bool(deps), "a launch's calls are ordered by program order"),
            optimizations=(bool(optimizations), "anyp has no kernel splitting passes"),
        )
        self.core_num = core_num


class _TileNamespace:
    """pl.tile: the tile forms under PyPTO's pl.tile names."""

    def __init__(self, names):
        for name, fn in names.items():
            setattr(self, name, fn)

    def __getattr__(self, name):  # load, store, add, ...: anyp.language sets them
        raise AttributeError(f"not supported by anyp: pl.tile.{name} (docs/python.md)")


_TILE_NAMES = [n for n in __all__ if n not in ("spmd", "tile", "EQ", "NE", "LT", "LE", "GT", "GE")]


def _tile_rsqrt(tile, tmp=None):
    """pl.tile.rsqrt(tile, tmp=None): PyPTO's tmp selects a high-precision
    lowering; anyp's rsqrt is within 1 ulp either way, so tmp is ignored."""
    return rsqrt(tile)


tile = _TileNamespace({**{n: globals()[n] for n in _TILE_NAMES}, "rsqrt": _tile_rsqrt})
