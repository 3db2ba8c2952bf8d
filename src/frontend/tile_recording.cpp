// tile_recording.cpp — shared checks of tile compute ops (tile_recording.hpp).
#include "frontend/tile_recording.hpp"

namespace anyp::detail {

ir::VarId tile_operand(Trace& t, const pl::Handle& h, std::string_view op, std::string_view role) {
  return expect_kind(t, h, op, role, {ir::TypeKind::Tile});
}

void expect_dtype_rule(Trace& t, std::string_view op, std::string_view role, DType dtype,
                       ir::DTypeRule rule) {
  const bool is_float = dtype_is_float(dtype);
  if (rule == ir::kNumeric || (rule == ir::kFloatOnly && is_float) ||
      (rule == ir::kIntOnly && !is_float))
    return;
  const char* takes = rule == ir::kFloatOnly ? "FP32, FP16 or BF16 tiles (pl::cast it first)"
                                             : "integer tiles (INT8, INT16, INT32 or INT64)";
  t.fail(std::string(op) + ": " + std::string(role) + " is " + dtype_with_article(dtype) +
         " tile; " + std::string(op) + " takes " + takes);
}

void expect_same_dtype(Trace& t, std::string_view op, std::string_view role_a, DType a,
                       std::string_view role_b, DType b) {
  if (a == b) return;
  t.fail(std::string(op) + ": dtype mismatch: " + std::string(role_a) + " is " +
         std::string(dtype_name(a)) + " and " + std::string(role_b) + " is " +
         std::string(dtype_name(b)) + "; convert one side with pl::cast");
}

void expect_rank(Trace& t, std::string_view op, std::string_view role, const ir::Type& type,
                 std::size_t rank, bool at_least) {
  const std::size_t n = type.shape.size();
  if (n == rank || (at_least && n > rank)) return;
  t.fail(std::string(op) + ": " + std::string(role) + " must be a " +
         (at_least ? "tile of at least " + std::to_string(rank) + " dims"
                   : std::to_string(rank) + "-D tile") +
         ", got " + ir::to_string(type));
}

const ir::ExprNode* constant_int(const ir::Operand& o) {
  if (o.is_var() || o.is_float_imm || !ir::is_const(o.int_imm)) return nullptr;
  return o.int_imm.get();
}

pl::Tile emit_tile(Trace& t, ir::Op op, const ir::Type& type) {
  op.result = t.new_var(type);
  const ir::VarId res = op.result;
  t.emit(std::move(op));
  return pl::Tile(t.ref(res));
}

std::string dims_text(std::size_t n) { return counted(n, "dim", "dims"); }

DType mask_dtype(DType dtype) {
  switch (dtype) {
    case DType::FP32:
      return DType::INT32;
    case DType::FP16:
    case DType::BF16:
      return DType::INT16;
    default:
      return dtype;
  }
}

}  // namespace anyp::detail
