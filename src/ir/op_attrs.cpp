// op_attrs.cpp — names and rules of the op attribute enums (the tables in
// op_attrs.hpp).
#include "ir/op_attrs.hpp"

namespace anyp::ir {
namespace {

struct BinaryRow {
  const char* scalar;
  const char* tile;
  DTypeRule rule;
};
constexpr BinaryRow kBinary[] = {
#define ANYP_X(op, scalar, tile, rule) {scalar, tile, rule},
    ANYP_BINARY_OPS(ANYP_X)
#undef ANYP_X
};

struct UnaryRow {
  const char* name;
  DTypeRule rule;
};
constexpr UnaryRow kUnary[] = {
#define ANYP_X(op, name, rule) {name, rule},
    ANYP_UNARY_OPS(ANYP_X)
#undef ANYP_X
};

constexpr const char* kCmpNames[] = {
#define ANYP_X(kind, name) name,
    ANYP_CMP_KINDS(ANYP_X)
#undef ANYP_X
};

struct MatmulRow {
  const char* name;
  bool batched, single_row;
  MatmulInit init;
};
constexpr MatmulRow kMatmul[] = {
#define ANYP_X(form, name, batched, single_row, init) {name, batched, single_row, MatmulInit::init},
    ANYP_MATMUL_FORMS(ANYP_X)
#undef ANYP_X
};

// "pl.row_expand_add" ...: every (row, kind) name, built from the table.
#define ANYP_X(kind, suffix) "pl.row_expand" suffix,
constexpr const char* kRowExpandNames[] = {ANYP_EXPAND_KINDS(ANYP_X)};
#undef ANYP_X
#define ANYP_X(kind, suffix) "pl.col_expand" suffix,
constexpr const char* kColExpandNames[] = {ANYP_EXPAND_KINDS(ANYP_X)};
#undef ANYP_X

}  // namespace

const char* binary_op_name(BinaryOp op) { return kBinary[static_cast<int>(op)].scalar; }
const char* tile_binary_name(BinaryOp op) { return kBinary[static_cast<int>(op)].tile; }
DTypeRule tile_binary_rule(BinaryOp op) { return kBinary[static_cast<int>(op)].rule; }
const char* unary_op_name(UnaryOp op) { return kUnary[static_cast<int>(op)].name; }
DTypeRule unary_op_rule(UnaryOp op) { return kUnary[static_cast<int>(op)].rule; }
const char* cmp_kind_name(CmpKind k) { return kCmpNames[static_cast<int>(k)]; }

const char* tile_reduce_name(ReduceKind k, bool row) {
  switch (k) {
    case ReduceKind::Sum:
      return row ? "pl.row_sum" : "pl.col_sum";
    case ReduceKind::Max:
      return row ? "pl.row_max" : "pl.col_max";
    case ReduceKind::Min:
      return row ? "pl.row_min" : "pl.col_min";
    case ReduceKind::Prod:
      break;
  }
  return row ? "pl.row_prod" : "pl.col_prod";
}

const char* expand_name(ExpandKind k, bool row) {
  return (row ? kRowExpandNames : kColExpandNames)[static_cast<int>(k)];
}

BinaryOp expand_binary_op(ExpandKind k) {
  switch (k) {
    case ExpandKind::Sub:
      return BinaryOp::Sub;
    case ExpandKind::Mul:
      return BinaryOp::Mul;
    case ExpandKind::Div:
      return BinaryOp::Div;
    default:
      return BinaryOp::Add;
  }
}

const char* matmul_form_name(MatmulForm f) { return kMatmul[static_cast<int>(f)].name; }
bool matmul_form_batched(MatmulForm f) { return kMatmul[static_cast<int>(f)].batched; }
bool matmul_form_single_row(MatmulForm f) { return kMatmul[static_cast<int>(f)].single_row; }
MatmulInit matmul_form_init(MatmulForm f) { return kMatmul[static_cast<int>(f)].init; }

const char* notify_name(NotifyKind k) { return k == NotifyKind::Set ? "Set" : "AtomicAdd"; }

const char* wait_name(WaitKind k) {
  static const char* names[] = {"Eq", "Ne", "Gt", "Ge", "Lt", "Le"};
  return names[static_cast<int>(k)];
}

const char* atomic_name(AtomicKind k) { return k == AtomicKind::Add ? "Add" : "None"; }

const char* reduce_name(ReduceKind k) {
  static const char* names[] = {"Sum", "Max", "Min", "Prod"};
  return names[static_cast<int>(k)];
}

const char* algorithm_name(Algorithm k) {
  static const char* names[] = {
#define ANYP_X(name) #name,
      ANYP_ALGORITHMS(ANYP_X)
#undef ANYP_X
  };
  return names[static_cast<int>(k)];
}

}  // namespace anyp::ir
