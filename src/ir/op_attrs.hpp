// op_attrs.hpp — the enums an op carries as its attribute and their names,
// each drawn once as a table: BinaryOp, UnaryOp, CmpKind, ExpandKind,
// MatmulForm, NotifyKind, WaitKind, AtomicKind, ReduceKind, Algorithm.
// Shared by the IR, the compiler and the runtime: a VM instruction's `sub`
// field holds these values as is, so the two never need a mapping table.
// Self-contained on purpose (it includes only the vocabulary's algorithm
// names): the runtime includes this header and never the rest of the IR.
#pragma once

#include <cstdint>

#include "anyp/collective_algorithms.hpp"

namespace anyp::ir {

// Which element types a tile op takes.
enum DTypeRule : std::uint8_t {
  kNoTile = 0,  // not a tile op (scalar only)
  kNumeric,     // every dtype
  kFloatOnly,   // FP32, FP16, BF16
  kIntOnly,     // INT8, INT16, INT32, INT64
};

// Binary operators of ScalarBinary and TileBinary: the scalar spelling, the
// tile op's name ("" when tiles do not have it) and its dtype rule.
// And/Or are the scalars' logical && and ||; the tile's bitwise ops are
// BitAnd ... Shr. FloorDiv/FloorMod are Python's // and % on integers
// (rounding toward negative infinity); Div/Mod truncate, as C++ does.
#define ANYP_BINARY_OPS(X)                  \
  X(Add, "add", "pl.add", kNumeric)         \
  X(Sub, "sub", "pl.sub", kNumeric)         \
  X(Mul, "mul", "pl.mul", kNumeric)         \
  X(Div, "div", "pl.div", kNumeric)         \
  X(Mod, "mod", "", kNoTile)                \
  X(Max, "max", "pl.maximum", kNumeric)     \
  X(Min, "min", "pl.minimum", kNumeric)     \
  X(Lt, "lt", "", kNoTile)                  \
  X(Le, "le", "", kNoTile)                  \
  X(Gt, "gt", "", kNoTile)                  \
  X(Ge, "ge", "", kNoTile)                  \
  X(Eq, "eq", "", kNoTile)                  \
  X(Ne, "ne", "", kNoTile)                  \
  X(And, "and", "", kNoTile)                \
  X(Or, "or", "", kNoTile)                  \
  X(BitAnd, "bit_and", "pl.and_", kIntOnly) \
  X(BitOr, "bit_or", "pl.or_", kIntOnly)    \
  X(BitXor, "bit_xor", "pl.xor_", kIntOnly) \
  X(Shl, "shl", "pl.shl", kIntOnly)         \
  X(Shr, "shr", "pl.shr", kIntOnly)         \
  X(FloorDiv, "floordiv", "", kNoTile)      \
  X(FloorMod, "floormod", "", kNoTile)

enum class BinaryOp : std::uint8_t {
#define ANYP_X(op, scalar, tile, rule) op,
  ANYP_BINARY_OPS(ANYP_X)
#undef ANYP_X
};

// Elementwise tile functions of one operand.
#define ANYP_UNARY_OPS(X)          \
  X(Neg, "pl.neg", kNumeric)       \
  X(Abs, "pl.abs", kNumeric)       \
  X(Relu, "pl.relu", kNumeric)     \
  X(Exp, "pl.exp", kFloatOnly)     \
  X(Log, "pl.log", kFloatOnly)     \
  X(Sqrt, "pl.sqrt", kFloatOnly)   \
  X(Rsqrt, "pl.rsqrt", kFloatOnly) \
  X(Recip, "pl.recip", kFloatOnly) \
  X(Not, "pl.not_", kIntOnly)

enum class UnaryOp : std::uint8_t {
#define ANYP_X(op, name, rule) op,
  ANYP_UNARY_OPS(ANYP_X)
#undef ANYP_X
};

// pl::cmp's comparisons, in PyPTO's cmp_type order (EQ = 0 ... GE = 5).
#define ANYP_CMP_KINDS(X) X(Eq, "EQ") X(Ne, "NE") X(Lt, "LT") X(Le, "LE") X(Gt, "GT") X(Ge, "GE")

enum class CmpKind : std::uint8_t {
#define ANYP_X(kind, name) kind,
  ANYP_CMP_KINDS(ANYP_X)
#undef ANYP_X
};

// Row and column broadcasts: pl::row_expand / pl::col_expand (Broadcast)
// and their fused forms (tile <op> the broadcast vector).
#define ANYP_EXPAND_KINDS(X) \
  X(Broadcast, "") X(Add, "_add") X(Sub, "_sub") X(Mul, "_mul") X(Div, "_div")

enum class ExpandKind : std::uint8_t {
#define ANYP_X(kind, suffix) kind,
  ANYP_EXPAND_KINDS(ANYP_X)
#undef ANYP_X
};

// The matmul family: the name, whether operands carry a batch dim in front,
// whether the left operand must be a single row (gemv), and what the
// accumulator starts from (Zero, an Acc tile, or a Bias row).
#define ANYP_MATMUL_FORMS(X)                                 \
  X(Matmul, "pl.matmul", false, false, Zero)                 \
  X(MatmulAcc, "pl.matmul_acc", false, false, Acc)           \
  X(MatmulBias, "pl.matmul_bias", false, false, Bias)        \
  X(BatchMatmul, "pl.batch_matmul", true, false, Zero)       \
  X(BatchMatmulAcc, "pl.batch_matmul_acc", true, false, Acc) \
  X(Gemv, "pl.gemv", false, true, Zero)                      \
  X(GemvAcc, "pl.gemv_acc", false, true, Acc)                \
  X(GemvBias, "pl.gemv_bias", false, true, Bias)

enum class MatmulForm : std::uint8_t {
#define ANYP_X(form, name, batched, single_row, init) form,
  ANYP_MATMUL_FORMS(ANYP_X)
#undef ANYP_X
};
enum class MatmulInit : std::uint8_t { Zero, Acc, Bias };

// Same order as pld::NotifyOp, pld::WaitCmp, pld::AtomicType.
enum class NotifyKind : std::uint8_t { AtomicAdd, Set };
enum class WaitKind : std::uint8_t { Eq, Ne, Gt, Ge, Lt, Le };
enum class AtomicKind : std::uint8_t { None, Add };
// Same order as pld::ReduceOp and pld::AllreduceMode. Tile reductions
// (pl::row_sum ...) use Sum, Max and Min.
enum class ReduceKind : std::uint8_t { Sum, Max, Min, Prod };
// A builtin collective's algorithm: anyp/collective_algorithms.hpp names
// them (ANYP_ALGORITHMS) and lists each collective's (docs/collectives.md §3).
enum class Algorithm : std::uint8_t {
#define ANYP_X(name) name,
  ANYP_ALGORITHMS(ANYP_X)
#undef ANYP_X
};

const char* binary_op_name(BinaryOp op);    // "add", "lt", ...
const char* tile_binary_name(BinaryOp op);  // "pl.add", "pl.maximum"; "" for a scalar-only op
DTypeRule tile_binary_rule(BinaryOp op);
const char* unary_op_name(UnaryOp op);  // "pl.exp"
DTypeRule unary_op_rule(UnaryOp op);
const char* cmp_kind_name(CmpKind k);  // "LT"
inline constexpr int kCmpKinds = 6;
// "pl.row_sum", "pl.col_max": a tile reduction along the row (`row`) or the column.
const char* tile_reduce_name(ReduceKind k, bool row);
// "pl.row_expand_add", "pl.col_expand".
const char* expand_name(ExpandKind k, bool row);
// The elementwise operator of a fused expand (Add ... Div); Broadcast has none.
BinaryOp expand_binary_op(ExpandKind k);
const char* matmul_form_name(MatmulForm f);  // "pl.matmul_bias"
bool matmul_form_batched(MatmulForm f);
bool matmul_form_single_row(MatmulForm f);
MatmulInit matmul_form_init(MatmulForm f);
const char* notify_name(NotifyKind k);    // "AtomicAdd"
const char* wait_name(WaitKind k);        // "Ge"
const char* atomic_name(AtomicKind k);    // "None"
const char* reduce_name(ReduceKind k);    // "Sum"
const char* algorithm_name(Algorithm k);  // "Mesh", "RecursiveDoubling", "ScatterAllgather"

}  // namespace anyp::ir
