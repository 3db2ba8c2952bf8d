// tile_op_errors_test.cpp — every compile error of the tile compute ops
// (pl.div and the bitwise ops, the unary functions, row/col reductions and
// broadcasts, cmp/sel, the matmul family, transpose, slice, concat, arange),
// each with its exact text and a realistic misuse: the trace-time checks of
// kinds, dtypes, ranks and constant operands (frontend/pl_tile_*.cpp,
// frontend/tile_recording.cpp), and the extent checks once dims are bound
// (compiler/check_tile_ops.cpp), including the tile row rule for the column
// vectors these ops compute and an extent that depends on NR.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "support/kernel_errors.hpp"

namespace {

constexpr std::int64_t N = anyp_test::kProbeWidth;  // the probe kernel's y is [1, N]
const pl::Dim NR = pl::dynamic("NR");

// ---- helpers ------------------------------------------------------------------------------------

using anyp_test::compile_error;
using anyp_test::kernel_of;
using anyp_test::trace_error;

// The trace error of a kernel 'k' with `body`.
std::string trace_k(const std::function<void(pl::Value)>& body) {
  return trace_error(kernel_of("k", body));
}

// The compile error of a kernel 'k' with `body` at P = 2 (its extents are
// constants unless the body mentions NR).
std::string compile_k(const std::function<void(pl::Value)>& body, std::int64_t P = 2) {
  return compile_error(kernel_of("k", body), P);
}

// ---- elementwise binary ops: div and the bitwise ops --------------------------------------------

TEST(TileOpErrors, DivDtypeMismatch) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 16}, pl::FP32);
              pl::Tile h = pl::zeros({4, 16}, pl::FP16);
              pl::div(x, h);
            }),
            "compile error: function 'k' (incore): pl.div: dtype mismatch: FP32 and FP16; convert "
            "one side with pl::cast");
  // A runtime scalar keeps its dtype: an INT32 loop index does not divide an FP32 tile.
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 8}, pl::FP32);
              pl::range(1, 4, [&](pl::Scalar i) { x = x / i; });
            }),
            "compile error: function 'k' (incore): pl.div: dtype mismatch: FP32 and INT32; "
            "convert one side with pl::cast");
}

TEST(TileOpErrors, DivFloatingConstantOfAnIntegerTile) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile n = pl::zeros({4, 8}, pl::INT32);
              pl::div(n, 0.5);
            }),
            "compile error: function 'k' (incore): pl.div: a floating constant with an INT32 "
            "tile; tiles are typed: use an integer constant, or pl::cast the tile");
}

TEST(TileOpErrors, DivRankMismatch) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile a = pl::zeros({1, 8}, pl::FP32);
              pl::Tile b = pl::zeros({8}, pl::FP32);
              pl::div(a, b);
            }),
            "compile error: function 'k' (incore): pl.div: shape mismatch: [1, 8] and [8]");
}

TEST(TileOpErrors, DivOfANonTile) {
  EXPECT_EQ(trace_k([](pl::Value y) {
              pl::Tile a = pl::zeros({1, N}, pl::FP32);
              pl::div(a, pl::Tile(y.var()));
            }),
            "compile error: function 'k' (incore): pl.div: the second operand must be a Tile, got "
            "Tensor[1, 32] FP32");
  EXPECT_EQ(trace_k([](pl::Value y) { pl::div(pl::Tile(y.var()), 2); }),
            "compile error: function 'k' (incore): pl.div: the first operand must be a Tile, got "
            "Tensor[1, 32] FP32");
}

TEST(TileOpErrors, DivisionOfAnIntegerTileByConstantZero) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile n = pl::zeros({4, 8}, pl::INT32);
              pl::div(n, 0);
            }),
            "compile error: function 'k' (incore): pl.div: division of an INT32 tile by the "
            "constant 0");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile n = pl::zeros({4, 32}, pl::INT8);
              n = n / 0;
            }),
            "compile error: function 'k' (incore): pl.div: division of an INT8 tile by the "
            "constant 0");
  // A floating tile divides by 0 (IEEE: inf / nan).
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 8}, pl::FP32);
              pl::div(x, 0);
            }),
            "traced without error");
}

TEST(TileOpErrors, BitwiseOpsTakeIntegerTiles) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 8}, pl::FP32);
              pl::and_(x, x);
            }),
            "compile error: function 'k' (incore): pl.and_: the first operand is an FP32 tile; "
            "pl.and_ takes integer tiles (INT8, INT16, INT32 or INT64)");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile h = pl::zeros({4, 16}, pl::BF16);
              pl::or_(h, 1);
            }),
            "compile error: function 'k' (incore): pl.or_: the first operand is a BF16 tile; "
            "pl.or_ takes integer tiles (INT8, INT16, INT32 or INT64)");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile n = pl::zeros({4, 8}, pl::INT32);
              pl::Tile m = pl::zeros({4, 16}, pl::INT16);
              pl::xor_(n, m);
            }),
            "compile error: function 'k' (incore): pl.xor_: dtype mismatch: INT32 and INT16; "
            "convert one side with pl::cast");
}

TEST(TileOpErrors, ShiftCountConstantOutOfRange) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile n = pl::zeros({4, 8}, pl::INT32);
              pl::shl(n, 32);
            }),
            "compile error: function 'k' (incore): pl.shl: shift count 32 is outside [0, 32) for "
            "an INT32 tile");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile n = pl::zeros({4, 32}, pl::INT8);
              pl::shr(n, -1);
            }),
            "compile error: function 'k' (incore): pl.shr: shift count -1 is outside [0, 8) for "
            "an INT8 tile");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile n = pl::zeros({4, 4}, pl::INT64);
              pl::shl(n, 63);
              pl::shr(n, 0);
            }),
            "traced without error");
}

// ---- unary functions ----------------------------------------------------------------------------

TEST(TileOpErrors, FloatingFunctionsOfAnIntegerTile) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile n = pl::zeros({4, 8}, pl::INT32);
              pl::exp(n);
            }),
            "compile error: function 'k' (incore): pl.exp: the operand is an INT32 tile; pl.exp "
            "takes FP32, FP16 or BF16 tiles (pl::cast it first)");
  struct Case {
    pl::Tile (*fn)(const pl::Tile&, pl::Here);
    const char* name;
  };
  for (const Case& c : {Case{pl::log, "pl.log"}, Case{pl::sqrt, "pl.sqrt"},
                        Case{pl::rsqrt, "pl.rsqrt"}, Case{pl::recip, "pl.recip"}}) {
    EXPECT_EQ(trace_k([&](pl::Value) {
                c.fn(pl::zeros({4, 16}, pl::INT16), pl::Here::current());
              }),
              std::string("compile error: function 'k' (incore): ") + c.name +
                  ": the operand is an INT16 tile; " + c.name +
                  " takes FP32, FP16 or BF16 tiles (pl::cast it first)");
  }
}

TEST(TileOpErrors, NotOfAFloatingTile) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 8}, pl::FP32);
              pl::not_(x);
            }),
            "compile error: function 'k' (incore): pl.not_: the operand is an FP32 tile; pl.not_ "
            "takes integer tiles (INT8, INT16, INT32 or INT64)");
}

TEST(TileOpErrors, UnaryOfANonTile) {
  EXPECT_EQ(trace_k([](pl::Value y) { pl::sqrt(pl::Tile(y.var())); }),
            "compile error: function 'k' (incore): pl.sqrt: the operand must be a Tile, got "
            "Tensor[1, 32] FP32");
}

// ---- cmp and sel --------------------------------------------------------------------------------

TEST(TileOpErrors, CmpTypeOutOfRange) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 8}, pl::FP32);
              pl::cmp(x, x, 6);
            }),
            "compile error: function 'k' (incore): pl.cmp: cmp_type 6 is not a comparison; use EQ "
            "(0), NE (1), LT (2), LE (3), GT (4) or GE (5)");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 8}, pl::FP32);
              pl::cmp(x, 0.0, -1);
            }),
            "compile error: function 'k' (incore): pl.cmp: cmp_type -1 is not a comparison; use "
            "EQ (0), NE (1), LT (2), LE (3), GT (4) or GE (5)");
}

TEST(TileOpErrors, CmpOperands) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 16}, pl::FP32);
              pl::Tile h = pl::zeros({4, 16}, pl::FP16);
              pl::cmp(x, h, pl::LT);
            }),
            "compile error: function 'k' (incore): pl.cmp: dtype mismatch: FP32 and FP16; convert "
            "one side with pl::cast");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile n = pl::zeros({4, 8}, pl::INT32);
              pl::cmp(n, 0.5, pl::GT);
            }),
            "compile error: function 'k' (incore): pl.cmp: a floating constant with an INT32 "
            "tile; tiles are typed: use an integer constant, or pl::cast the tile");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile a = pl::zeros({4, 8}, pl::FP32);
              pl::Tile b = pl::zeros({N}, pl::FP32);
              pl::cmp(a, b, pl::EQ);
            }),
            "compile error: function 'k' (incore): pl.cmp: shape mismatch: [4, 8] and [32]");
  EXPECT_EQ(trace_k([](pl::Value y) {
              pl::Tile a = pl::zeros({1, N}, pl::FP32);
              pl::cmp(a, pl::Tile(y.var()), pl::NE);
            }),
            "compile error: function 'k' (incore): pl.cmp: the second operand must be a Tile, got "
            "Tensor[1, 32] FP32");
}

TEST(TileOpErrors, SelMaskDtypeAndShapes) {
  // The mask of an FP32 comparison is INT32, never FP32.
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 8}, pl::FP32);
              pl::sel(x, x, x);
            }),
            "compile error: function 'k' (incore): pl.sel: the mask is an FP32 tile; the mask must "
            "be an integer tile (INT8, INT16, INT32 or INT64), such as pl.cmp's result");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 16}, pl::FP32);
              pl::Tile h = pl::zeros({4, 16}, pl::FP16);
              pl::sel(pl::cmp(x, 0.0, pl::GT), x, h);
            }),
            "compile error: function 'k' (incore): pl.sel: dtype mismatch: a is FP32 and b is "
            "FP16; convert one side with pl::cast");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 8}, pl::FP32);
              pl::Tile m = pl::zeros({N}, pl::INT32);
              pl::sel(m, x, x);
            }),
            "compile error: function 'k' (incore): pl.sel: shape mismatch: the mask [32] and a "
            "[4, 8]");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 8}, pl::FP32);
              pl::Tile flat = pl::zeros({N}, pl::FP32);
              pl::sel(pl::cmp(x, 0.0, pl::GT), x, flat);
            }),
            "compile error: function 'k' (incore): pl.sel: shape mismatch: b [32] and a [4, 8]");
}

// ---- reductions and broadcasts ------------------------------------------------------------------

TEST(TileOpErrors, ReductionOfA1DTile) {
  EXPECT_EQ(trace_k([](pl::Value) { pl::row_sum(pl::zeros({N}, pl::FP32)); }),
            "compile error: function 'k' (incore): pl.row_sum: the operand must be a tile of at "
            "least 2 dims, got Tile[32] FP32");
  EXPECT_EQ(trace_k([](pl::Value) { pl::col_min(pl::zeros({N}, pl::INT32)); }),
            "compile error: function 'k' (incore): pl.col_min: the operand must be a tile of at "
            "least 2 dims, got Tile[32] INT32");
}

TEST(TileOpErrors, ReductionTmpDtypeAndRank) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({8, 16}, pl::FP32);
              pl::Tile tmp = pl::zeros({8, 16}, pl::FP16);
              pl::row_max(x, tmp);
            }),
            "compile error: function 'k' (incore): pl.row_max: dtype mismatch: the operand is FP32 "
            "and tmp is FP16; convert one side with pl::cast");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 8}, pl::FP32);
              pl::Tile tmp = pl::zeros({N}, pl::FP32);
              pl::col_sum(x, tmp);
            }),
            "compile error: function 'k' (incore): pl.col_sum: tmp must be a 2-D tile, got "
            "Tile[32] FP32");
}

TEST(TileOpErrors, ExpandRanksAndDtypes) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile flat = pl::zeros({N}, pl::FP32);
              pl::row_expand(flat, pl::zeros({8, 1}, pl::FP32));
            }),
            "compile error: function 'k' (incore): pl.row_expand: the target must be a tile of at "
            "least 2 dims, got Tile[32] FP32");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 8}, pl::FP32);
              pl::col_expand_mul(x, pl::zeros({8}, pl::FP32));
            }),
            "compile error: function 'k' (incore): pl.col_expand_mul: col_vec must be a 2-D tile, "
            "got Tile[8] FP32");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({16, 16}, pl::FP32);
              pl::Tile h = pl::zeros({16, 16}, pl::FP16);
              pl::row_expand_div(x, pl::row_sum(h));
            }),
            "compile error: function 'k' (incore): pl.row_expand_div: dtype mismatch: t is FP32 "
            "and row_vec is FP16; convert one side with pl::cast");
}

// ---- operands that are not tiles ----------------------------------------------------------------

// A tensor passed where a tile is wanted: the error names the op and the
// operand's role.
TEST(TileOpErrors, OperandsThatAreNotTiles) {
  struct Case {
    std::function<void(const pl::Tile& tensor, const pl::Tile& tile, const pl::Tile& col)> use;
    const char* message;
  };
  const Case cases[] = {
      {[](const pl::Tile& y, const pl::Tile&, const pl::Tile&) { pl::row_sum(y); },
       "pl.row_sum: the operand must be a Tile"},
      {[](const pl::Tile& y, const pl::Tile& t, const pl::Tile&) { pl::row_min(t, y); },
       "pl.row_min: tmp must be a Tile"},
      {[](const pl::Tile& y, const pl::Tile& t, const pl::Tile&) { pl::row_expand_add(t, y); },
       "pl.row_expand_add: row_vec must be a Tile"},
      {[](const pl::Tile& y, const pl::Tile& t, const pl::Tile&) { pl::col_expand(y, t); },
       "pl.col_expand: the target must be a Tile"},
      {[](const pl::Tile& y, const pl::Tile& t, const pl::Tile&) { pl::col_expand_sub(y, t); },
       "pl.col_expand_sub: t must be a Tile"},
      {[](const pl::Tile& y, const pl::Tile& t, const pl::Tile&) { pl::cmp(y, t, pl::LE); },
       "pl.cmp: the first operand must be a Tile"},
      {[](const pl::Tile& y, const pl::Tile& t, const pl::Tile& c) { pl::sel(y, t, c); },
       "pl.sel: the mask must be a Tile"},
      {[](const pl::Tile& y, const pl::Tile& t, const pl::Tile&) {
         pl::sel(pl::cmp(t, 0.0), t, y);
       },
       "pl.sel: b must be a Tile"},
      {[](const pl::Tile& y, const pl::Tile& t, const pl::Tile&) { pl::matmul(t, y); },
       "pl.matmul: rhs must be a Tile"},
      {[](const pl::Tile& y, const pl::Tile& t, const pl::Tile&) { pl::matmul_acc(y, t, t); },
       "pl.matmul_acc: acc must be a Tile"},
      {[](const pl::Tile& y, const pl::Tile& t, const pl::Tile&) { pl::matmul_bias(t, t, y); },
       "pl.matmul_bias: bias must be a Tile"},
      {[](const pl::Tile& y, const pl::Tile&, const pl::Tile&) { pl::transpose(y); },
       "pl.transpose: the operand must be a Tile"},
      {[](const pl::Tile& y, const pl::Tile&, const pl::Tile&) {
         pl::slice(y, {1, 8}, {0, 0});
       },
       "pl.slice: the operand must be a Tile"},
      {[](const pl::Tile& y, const pl::Tile& t, const pl::Tile&) { pl::concat(t, y); },
       "pl.concat: src1 must be a Tile"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(trace_k([&](pl::Value y) {
                pl::Tile t = pl::zeros({8, 8}, pl::FP32);
                pl::Tile col = pl::zeros({8, 1}, pl::FP32);
                c.use(pl::Tile(y.var()), t, col);
              }),
              std::string("compile error: function 'k' (incore): ") + c.message +
                  ", got Tensor[1, 32] FP32");
  }
}

// ---- the matmul family --------------------------------------------------------------------------

TEST(TileOpErrors, MatmulRanks) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile a = pl::zeros({2, 8, 8}, pl::FP32);
              pl::Tile b = pl::zeros({8, 8}, pl::FP32);
              pl::matmul(a, b);
            }),
            "compile error: function 'k' (incore): pl.matmul: lhs must be a 2-D tile, got Tile[2, "
            "8, 8] FP32");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile a = pl::zeros({2, 8, 8}, pl::FP32);
              pl::Tile b = pl::zeros({8, 8}, pl::FP32);
              pl::batch_matmul(a, b);
            }),
            "compile error: function 'k' (incore): pl.batch_matmul: rhs must be a 3-D tile, got "
            "Tile[8, 8] FP32");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile a = pl::zeros({8, 8}, pl::FP32);
              pl::batch_matmul(a, a);
            }),
            "compile error: function 'k' (incore): pl.batch_matmul: lhs must be a 3-D tile, got "
            "Tile[8, 8] FP32");
  EXPECT_EQ(trace_k([](pl::Value y) {
              pl::Tile b = pl::zeros({N, 8}, pl::FP32);
              pl::gemv(pl::Tile(y.var()), b);
            }),
            "compile error: function 'k' (incore): pl.gemv: lhs must be a Tile, got Tensor[1, 32] "
            "FP32");
}

TEST(TileOpErrors, MatmulOperandDtypes) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile a = pl::zeros({16, 16}, pl::FP32);
              pl::Tile b = pl::zeros({16, 16}, pl::FP16);
              pl::matmul(a, b);
            }),
            "compile error: function 'k' (incore): pl.matmul: dtype mismatch: lhs is FP32 and rhs "
            "is FP16; convert one side with pl::cast");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile a = pl::zeros({4, 4}, pl::INT64);
              pl::matmul(a, a);
            }),
            "compile error: function 'k' (incore): pl.matmul: the operands are INT64 tiles; the "
            "cube unit multiplies FP32, FP16, BF16, INT8, INT16 or INT32 tiles (the integer "
            "accumulator is INT32)");
}

TEST(TileOpErrors, MatmulAccDtypeAndRank) {
  // FP16 operands accumulate in FP32.
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile a = pl::zeros({16, 16}, pl::FP16);
              pl::Tile acc = pl::zeros({16, 16}, pl::FP16);
              pl::matmul_acc(acc, a, a);
            }),
            "compile error: function 'k' (incore): pl.matmul_acc: acc is an FP16 tile, but the "
            "accumulator of FP16 operands is FP32");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({1, N}, pl::INT8);
              pl::Tile w = pl::zeros({N, N}, pl::INT8);
              pl::Tile acc = pl::zeros({1, N}, pl::FP32);
              pl::gemv_acc(acc, x, w);
            }),
            "compile error: function 'k' (incore): pl.gemv_acc: acc is an FP32 tile, but the "
            "accumulator of INT8 operands is INT32");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile a = pl::zeros({2, 8, 8}, pl::FP32);
              pl::Tile acc = pl::zeros({8, 8}, pl::FP32);
              pl::batch_matmul_acc(acc, a, a);
            }),
            "compile error: function 'k' (incore): pl.batch_matmul_acc: acc must be a 3-D tile, "
            "got Tile[8, 8] FP32");
}

TEST(TileOpErrors, MatmulBiasDtypeAndRank) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile a = pl::zeros({16, 16}, pl::FP16);
              pl::Tile bias = pl::zeros({1, 16}, pl::INT32);
              pl::matmul_bias(a, a, bias);
            }),
            "compile error: function 'k' (incore): pl.matmul_bias: bias is an INT32 tile; it must "
            "be FP16 (the operands') or FP32 (the accumulator's)");
  // With FP32 operands both choices are FP32 (see the report: the message repeats it).
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile x = pl::zeros({1, 16}, pl::FP32);
              pl::Tile w = pl::zeros({16, 16}, pl::FP32);
              pl::Tile bias = pl::zeros({1, 16}, pl::FP16);
              pl::gemv_bias(x, w, bias);
            }),
            "compile error: function 'k' (incore): pl.gemv_bias: bias is an FP16 tile; it must be "
            "FP32 (the operands' and the accumulator's)");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile a = pl::zeros({8, 8}, pl::FP32);
              pl::matmul_bias(a, a, pl::zeros({8}, pl::FP32));
            }),
            "compile error: function 'k' (incore): pl.matmul_bias: bias must be a 2-D tile, got "
            "Tile[8] FP32");
}

// ---- transpose, slice, concat, arange -----------------------------------------------------------

TEST(TileOpErrors, TransposeAxes) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::transpose(pl::zeros({4, 8}, pl::FP32), 0, 2);
            }),
            "compile error: function 'k' (incore): pl.transpose: axis 2 is outside the tile's 2 "
            "dims (Tile[4, 8] FP32; axes run from -2 to 1)");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::transpose(pl::zeros({2, 4, 8}, pl::FP32), -4, 0);
            }),
            "compile error: function 'k' (incore): pl.transpose: axis -4 is outside the tile's 3 "
            "dims (Tile[2, 4, 8] FP32; axes run from -3 to 2)");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::transpose(pl::zeros({8, 8}, pl::FP32), 1, -1);
            }),
            "compile error: function 'k' (incore): pl.transpose: both axes are dim 1; a transpose "
            "swaps two different dims");
  EXPECT_EQ(trace_k([](pl::Value) { pl::transpose(pl::zeros({N}, pl::FP32)); }),
            "compile error: function 'k' (incore): pl.transpose: the operand must be a tile of at "
            "least 2 dims, got Tile[32] FP32");
}

TEST(TileOpErrors, SliceShapeAndOffsets) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::slice(pl::zeros({4, 8}, pl::FP32), {8}, {0});
            }),
            "compile error: function 'k' (incore): pl.slice: the shape has 1 dim, but the tile [4, "
            "8] has 2 dims");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::slice(pl::zeros({4, 16}, pl::FP32), {4, 8}, {8});
            }),
            "compile error: function 'k' (incore): pl.slice: offsets has 1 entry, but the tile [4, "
            "16] has 2 dims");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::slice(pl::zeros({4, 16}, pl::FP32), {4, 8}, {0, 0.5});
            }),
            "compile error: function 'k' (incore): pl.slice: offsets must be integers");
}

TEST(TileOpErrors, ConcatRanksAndDtypes) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile a = pl::zeros({4, 16}, pl::FP32);
              pl::Tile b = pl::zeros({4, 16}, pl::FP16);
              pl::concat(a, b);
            }),
            "compile error: function 'k' (incore): pl.concat: dtype mismatch: src0 is FP32 and "
            "src1 is FP16; convert one side with pl::cast");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile a = pl::zeros({4, 8}, pl::FP32);
              pl::Tile b = pl::zeros({2, 4, 8}, pl::FP32);
              pl::concat(a, b);
            }),
            "compile error: function 'k' (incore): pl.concat: src1 must be a 2-D tile, got "
            "Tile[2, 4, 8] FP32");
}

TEST(TileOpErrors, ArangeWithAFloatingStart) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::arange(0.5, {1, 8}, pl::FP32);
            }),
            "compile error: function 'k' (incore): pl.arange: the start must be an integer (the "
            "tile counts in steps of 1)");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Scalar start = pl::cast(pl::Scalar(3), pl::FP32);
              pl::arange(start, {1, 8});
            }),
            "compile error: function 'k' (incore): pl.arange: the start must be an integer (the "
            "tile counts in steps of 1)");
}

// ---- extents, once dims are bound ---------------------------------------------------------------

TEST(TileOpErrors, MatmulInnerDimsDiffer) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile a = pl::zeros({8, 16}, pl::FP32);
              pl::Tile b = pl::zeros({8, 8}, pl::FP32);
              pl::matmul(a, b);
            }),
            "compile error: function 'k' (incore), op pl.matmul: inner dims differ: lhs [8, 16] "
            "and rhs [8, 8]; lhs's columns (16) must equal rhs's rows (8)");
}

// K = NR * 8 meets the fixed 16 rows of rhs only at P = 2.
TEST(TileOpErrors, MatmulInnerDimFromNR) {
  const pl::Function k = kernel_of("k", [](pl::Value) {
    pl::Tile a = pl::zeros({8, NR * 8}, pl::FP32);
    pl::Tile b = pl::zeros({16, 8}, pl::FP32);
    pl::matmul(a, b);
  });
  EXPECT_EQ(trace_error(k), "traced without error");
  EXPECT_EQ(compile_error(k, 2), "compiled without error");
  EXPECT_EQ(compile_error(k, 3),
            "compile error: function 'k' (incore), op pl.matmul: inner dims differ: lhs [8, 24] "
            "and rhs [16, 8]; lhs's columns (24) must equal rhs's rows (16)");
}

TEST(TileOpErrors, BatchSizesDiffer) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile a = pl::zeros({2, 8, 8}, pl::FP32);
              pl::Tile b = pl::zeros({3, 8, 8}, pl::FP32);
              pl::batch_matmul(a, b);
            }),
            "compile error: function 'k' (incore), op pl.batch_matmul: batch sizes differ: lhs "
            "[2, 8, 8] and rhs [3, 8, 8] (dim 0 is the batch)");
}

TEST(TileOpErrors, GemvLhsWithMoreThanOneRow) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 16}, pl::FP32);
              pl::Tile w = pl::zeros({16, 8}, pl::FP32);
              pl::gemv(x, w);
            }),
            "compile error: function 'k' (incore), op pl.gemv: lhs [4, 16] must be a single row "
            "[1, K]; use pl.matmul for 4 rows");
}

TEST(TileOpErrors, MatmulAccShape) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile a = pl::zeros({8, 8}, pl::FP32);
              pl::Tile acc = pl::zeros({8, 16}, pl::FP32);
              pl::matmul_acc(acc, a, a);
            }),
            "compile error: function 'k' (incore), op pl.matmul_acc: acc [8, 16] must have the "
            "product's shape [8, 8]");
}

TEST(TileOpErrors, MatmulBiasShape) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile a = pl::zeros({8, 8}, pl::FP32);
              pl::Tile bias = pl::zeros({1, 16}, pl::FP32);
              pl::matmul_bias(a, a, bias);
            }),
            "compile error: function 'k' (incore), op pl.matmul_bias: bias [1, 16] must be one "
            "row of the product's width, [1, 8]");
  // A full [M, N] bias is not a row.
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile a = pl::zeros({8, 8}, pl::FP32);
              pl::matmul_bias(a, a, pl::zeros({8, 8}, pl::FP32));
            }),
            "compile error: function 'k' (incore), op pl.matmul_bias: bias [8, 8] must be one row "
            "of the product's width, [1, 8]");
}

TEST(TileOpErrors, RowExpandVectorShape) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile x = pl::zeros({8, 8}, pl::FP32);
              pl::Tile wide = pl::zeros({16, 8}, pl::FP32);
              pl::row_expand_sub(x, pl::row_max(wide));
            }),
            "compile error: function 'k' (incore), op pl.row_expand_sub: row_vec [16, 1] must be "
            "[8, 1], one value per row of the tile [8, 8]");
  // A row (col_sum's [1, N]) where a column is wanted.
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile x = pl::zeros({8, 8}, pl::FP32);
              pl::row_expand(x, pl::col_sum(x));
            }),
            "compile error: function 'k' (incore), op pl.row_expand: row_vec [1, 8] must be [8, "
            "1], one value per row of the target [8, 8]");
}

TEST(TileOpErrors, ColExpandVectorShape) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile x = pl::zeros({4, 8}, pl::FP32);
              pl::Tile wide = pl::zeros({4, 16}, pl::FP32);
              pl::col_expand(x, pl::col_max(wide));
            }),
            "compile error: function 'k' (incore), op pl.col_expand: col_vec [1, 16] must be [1, "
            "8], one value per column of the target [4, 8]");
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile x = pl::zeros({2, 4, 8}, pl::FP32);
              pl::col_expand_add(x, pl::zeros({2, 4, 8}, pl::FP32));
            }),
            "compile error: function 'k' (incore), op pl.col_expand_add: col_vec [2, 4, 8] must "
            "be [2, 1, 8], one value per column of the tile [2, 4, 8]");
}

TEST(TileOpErrors, ReductionTmpTooSmall) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile x = pl::zeros({8, 16}, pl::FP32);
              pl::Tile tmp = pl::zeros({8, 8}, pl::FP32);
              pl::row_sum(x, tmp);
            }),
            "compile error: function 'k' (incore), op pl.row_sum: tmp [8, 8] is smaller than the "
            "operand [8, 16] in dim 1");
  // A larger tmp is fine.
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile x = pl::zeros({8, 16}, pl::FP32);
              pl::row_min(x, pl::zeros({16, 16}, pl::FP32));
            }),
            "compiled without error");
}

TEST(TileOpErrors, ElementwiseShapeMismatch) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile a = pl::zeros({1, 8}, pl::FP32);
              pl::Tile b = pl::zeros({2, 8}, pl::FP32);
              pl::div(a, b);
            }),
            "compile error: function 'k' (incore), op pl.div: shape mismatch: [1, 8] and [2, 8]");
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile a = pl::zeros({4, 8}, pl::INT32);
              pl::Tile b = pl::zeros({4, 16}, pl::INT32);
              pl::shr(a, b);
            }),
            "compile error: function 'k' (incore), op pl.shr: shape mismatch: [4, 8] and [4, 16]");
}

TEST(TileOpErrors, CmpShapeMismatch) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile a = pl::zeros({4, 8}, pl::FP32);
              pl::Tile b = pl::zeros({8, 8}, pl::FP32);
              pl::cmp(a, b, pl::GE);
            }),
            "compile error: function 'k' (incore), op pl.cmp: shape mismatch: [4, 8] and [8, 8]");
}

TEST(TileOpErrors, SelShapeMismatch) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile a = pl::zeros({4, 8}, pl::FP32);
              pl::Tile b = pl::zeros({8, 8}, pl::FP32);
              pl::sel(pl::cmp(a, 0.0, pl::LT), a, b);
            }),
            "compile error: function 'k' (incore), op pl.sel: shape mismatch: the mask [4, 8], a "
            "[4, 8] and b [8, 8] must agree");
}

TEST(TileOpErrors, SliceLargerThanTheTile) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::slice(pl::zeros({4, 8}, pl::FP32), {8, 8}, {0, 0});
            }),
            "compile error: function 'k' (incore), op pl.slice: the slice [8, 8] is larger than "
            "the tile [4, 8] in dim 0");
}

TEST(TileOpErrors, SliceConstantOffsetOutOfBounds) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::slice(pl::zeros({4, 16}, pl::FP32), {4, 8}, {0, 12});
            }),
            "compile error: function 'k' (incore), op pl.slice: the slice is out of bounds in dim "
            "1: offset 12 + extent 8 exceeds the tile [4, 16]");
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::slice(pl::zeros({4, 16}, pl::FP32), {2, 8}, {-1, 0});
            }),
            "compile error: function 'k' (incore), op pl.slice: the slice offset -1 in dim 0 is "
            "negative");
  // An offset of NR * 8 fits at P = 1 and not at P = 2.
  const pl::Function k = kernel_of("k", [](pl::Value) {
    pl::slice(pl::zeros({4, 16}, pl::FP32), {4, 8}, {0, NR * 8});
  });
  EXPECT_EQ(compile_error(k, 1), "compiled without error");
  EXPECT_EQ(compile_error(k, 2),
            "compile error: function 'k' (incore), op pl.slice: the slice is out of bounds in dim "
            "1: offset 16 + extent 8 exceeds the tile [4, 16]");
}

TEST(TileOpErrors, ConcatRowCountsDiffer) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile a = pl::zeros({4, 8}, pl::FP32);
              pl::Tile b = pl::zeros({8, 8}, pl::FP32);
              pl::concat(a, b);
            }),
            "compile error: function 'k' (incore), op pl.concat: row counts differ: src0 [4, 8] "
            "and src1 [8, 8]; concat appends columns to rows of one count");
}

// ---- the tile row rule for computed tiles -------------------------------------------------------

// A computed column vector [M, 1] is one 32-byte unit per M * width bytes:
// 4 x FP32 is not, 8 x FP32 is.
TEST(TileOpErrors, ComputedColumnVectorFollowsTheTileRowRule) {
  EXPECT_EQ(
      compile_k([](pl::Value) {
        pl::row_sum(pl::zeros({4, 8}, pl::FP32));
      }),
      "compile error: function 'k' (incore), op pl.row_sum: a column vector of 4 x FP32 = 16 B is "
      "not a whole number of 32-byte units (tile [4, 1]); use a multiple of 8 FP32 rows");
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::Tile x = pl::zeros({8, 8}, pl::FP32);
              pl::Tile col = pl::zeros({8, 1}, pl::FP32);
              pl::row_expand_mul(x, pl::row_sum(x));
              pl::row_expand_add(x, col);
            }),
            "compiled without error");
}

// A computed tile whose row is not a whole number of 32-byte units.
TEST(TileOpErrors, ComputedTileRowFollowsTheTileRowRule) {
  EXPECT_EQ(
      compile_k([](pl::Value) {
        pl::transpose(pl::zeros({4, 8}, pl::FP32));
      }),
      "compile error: function 'k' (incore), op pl.transpose: a tile row of 4 x FP32 = 16 B is not "
      "a whole number of 32-byte units (tile [8, 4]); use a multiple of 8 FP32 elements per row");
}

// ---- constants that mention dims, checked once they are bound -----------------------------------

TEST(TileOpErrors, DivisorsAndShiftCountsThatMentionNRAreCheckedAfterBinding) {
  const auto divide = [](pl::Value) { pl::div(pl::zeros({1, 8}, pl::INT32), NR - 2); };
  EXPECT_EQ(compile_k(divide, 3), "compiled without error");
  EXPECT_EQ(compile_k(divide, 2),
            "compile error: function 'k' (incore), op pl.div: division of an INT32 tile by the "
            "constant 0");
  const auto shift = [](pl::Value) { pl::shl(pl::zeros({1, 32}, pl::INT8), NR * 4); };
  EXPECT_EQ(compile_k(shift, 1), "compiled without error");
  EXPECT_EQ(compile_k(shift, 2),
            "compile error: function 'k' (incore), op pl.shl: shift count 8 is outside [0, 8) for "
            "an INT8 tile");
}

TEST(TileOpErrors, ArangeWithAConstantStartMustFitItsDtype) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::arange(100, {2, 32}, pl::INT8);
            }),
            "compile error: function 'k' (incore), op pl.arange: the values 100 up to 163 of the "
            "tile [2, 32] do not fit INT8 (range [-128, 127])");
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::arange(-100, {1, 32}, pl::INT8, true);
            }),
            "compile error: function 'k' (incore), op pl.arange: the values -100 down to -131 of "
            "the tile [1, 32] do not fit INT8 (range [-128, 127])");
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::arange(96, {1, 32}, pl::INT8);
            }),
            "compiled without error");
  // With NR in the start: 64 * 2 = 128 does not fit at P = 2.
  EXPECT_EQ(compile_k(
                [](pl::Value) {
                  pl::arange(NR * 64 - 32, {1, 32}, pl::INT8);
                },
                1),
            "compiled without error");
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::arange(NR * 64, {1, 32}, pl::INT8);
            }),
            "compile error: function 'k' (incore), op pl.arange: the values 128 up to 159 of the "
            "tile [1, 32] do not fit INT8 (range [-128, 127])");
}

// A column vector [M, 1] moves as a column (PyPTO's column tiles): into a
// [1, N] row it does not fit, reshaped it does.
TEST(TileOpErrors, AComputedColumnVectorIsReshapedBeforeItIsStoredIntoARow) {
  EXPECT_EQ(compile_k([](pl::Value y) {
              const pl::Tile v = pl::row_sum(pl::zeros({32, 8}, pl::FP32));  // [32, 1]
              y = pl::store(pl::reshape(v, {1, 32}), {0, 0}, y);
            }),
            "compiled without error");
  EXPECT_EQ(compile_k([](pl::Value y) {
              const pl::Tile v = pl::row_sum(pl::zeros({8, 32}, pl::FP32));  // [8, 1]
              y = pl::store(v, {0, 0}, y);
            }),
            "compile error: function 'k' (incore), op pl.store: the region [8, 1] is larger than "
            "the target 'y' [1, 32] in dim 0\n  hint: the tile is a column vector [8, 1]; "
            "pl::reshape it to [1, 8] before storing it as a row");
}

// ---- a variable keeps its shape; constants the dtype cannot hold --------------------------------

TEST(TileOpErrors, AssigningATileOfAnotherShapeIsRefused) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::Tile acc = pl::zeros({8, 32}, pl::FP32);
              acc = pl::concat(acc, acc);
            }),
            "compile error: function 'k' (incore): assignment of Tile[8, 64] FP32 to a variable "
            "of type Tile[8, 32] FP32: a variable keeps its shape; give the new shape a new "
            "variable");
  // With NR in one shape: compared once NR is bound.
  const auto reassign = [](pl::Value) {
    pl::Tile acc = pl::zeros({8, 16}, pl::FP32);
    acc = pl::zeros({8, NR * 8}, pl::FP32);
  };
  EXPECT_EQ(compile_k(reassign, 2), "compiled without error");
  EXPECT_EQ(compile_k(reassign, 3),
            "compile error: function 'k' (incore), op assign: assignment of a [8, 24] value to a "
            "variable of shape [8, 16]: a variable keeps its shape; give the new shape a new "
            "variable");
}

TEST(TileOpErrors, ConstantOperandsMustFitAnIntegerTile) {
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::cmp(pl::zeros({1, 32}, pl::INT8), 200, pl::LT);
            }),
            "compile error: function 'k' (incore): pl.cmp: the constant 200 does not fit an INT8 "
            "tile (range [-128, 127]); tiles are typed: pl::cast the tile to a wider dtype first");
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::cmp(pl::zeros({1, 16}, pl::INT16), NR * 20000);
            }),
            "compile error: function 'k' (incore), op pl.cmp: the constant 40000 does not fit an "
            "INT16 tile (range [-32768, 32767]); tiles are typed: pl::cast the tile to a wider "
            "dtype first");
  EXPECT_EQ(trace_k([](pl::Value) {
              pl::mul(pl::zeros({1, 16}, pl::INT16), -32768);
            }),
            "traced without error");
}

TEST(TileOpErrors, AFloatingArangeMustBeExact) {
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::arange(2040, {1, 16}, pl::FP16);
            }),
            "compile error: function 'k' (incore), op pl.arange: the values 2040 up to 2055 of the "
            "tile [1, 16] are not all exact in FP16 (its integers are exact up to 2048 in "
            "magnitude)");
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::arange(2033, {1, 16}, pl::FP16);
            }),
            "compiled without error");
  EXPECT_EQ(compile_k([](pl::Value) {
              pl::arange(-250, {1, 16}, pl::BF16, true);
            }),
            "compile error: function 'k' (incore), op pl.arange: the values -250 down to -265 of "
            "the tile [1, 16] are not all exact in BF16 (its integers are exact up to 256 in "
            "magnitude)");
}

// ---- regions: overflow-safe bounds, and the tensor named (issue 22) ----------------------------

TEST(TileOpErrors, AnOffsetNearInt64MaxIsOutOfBoundsAtCompileTime) {
  // offset + extent overflows INT64; the check must not wrap to a negative end.
  EXPECT_EQ(compile_k([](pl::Value y) {
              y = pl::store(pl::zeros({1, 8}, pl::FP32), {0, 9223372036854775804}, y);
            }),
            "compile error: function 'k' (incore), op pl.store: region out of bounds in dim 1: "
            "offset 9223372036854775804 + extent 8 exceeds the target 'y' [1, 32]");
  EXPECT_EQ(compile_k([](pl::Value y) {
              y = pl::store(pl::load(y, {0, 9223372036854775807}, {1, 8}), {0, 0}, y);
            }),
            "compile error: function 'k' (incore), op pl.load: region out of bounds in dim 1: "
            "offset 9223372036854775807 + extent 8 exceeds the source 'y' [1, 32]");
}

TEST(TileOpErrors, ASliceOfASliceOutOfBoundsNamesTheTensorItViews) {
  EXPECT_EQ(
      compile_k([](pl::Value y) {
        pl::Value s = pl::tensor::slice(pl::tensor::slice(y, {0, 0}, {1, 16}), {0, 12}, {1, 8});
        s = pl::store(pl::zeros({1, 8}, pl::FP32), {0, 0}, s);
      }),
      "compile error: function 'k' (incore), op pl.tensor.slice: region out of bounds in "
      "dim 1: offset 12 + extent 8 exceeds the tensor (a view of 'y') [1, 16]");
}

}  // namespace
