// pl_tile_elementwise.cpp — recording of the elementwise tile ops: binary
// arithmetic and bitwise ops (tile or scalar right operand), unary
// functions, comparisons and select, casts, fills (full, arange) and
// reshape. Kinds, dtypes and ranks are checked here; extents that mention
// dims once those are bound (compiler/check_tile_ops.cpp).
#include <cstdint>
#include <optional>

#include "anyp/pl.hpp"
#include "frontend/call_site.hpp"
#include "frontend/tile_recording.hpp"
#include "ir/tile_rules.hpp"

namespace pl {

using anyp::detail::constant_int;
using anyp::detail::emit_tile;
using anyp::detail::expect_kind;
using anyp::detail::tile_operand;
using anyp::detail::Trace;
namespace ir = anyp::ir;

namespace {

// The checks every elementwise binary op makes on (tile a, operand b).
void check_binary_operands(Trace& t, const std::string& name, ir::DTypeRule rule,
                           const ir::Type& at, const ir::Operand& b_operand) {
  const ir::Type bt = t.operand_type(b_operand);
  anyp::detail::expect_dtype_rule(t, name, "the first operand", at.dtype, rule);
  if (bt.dtype != at.dtype && !(bt.kind == ir::TypeKind::Scalar && !b_operand.is_var())) {
    t.fail(name + ": dtype mismatch: " + std::string(anyp::dtype_name(at.dtype)) + " and " +
           std::string(anyp::dtype_name(bt.dtype)) + "; convert one side with pl::cast");
  }
  if (!b_operand.is_var() && b_operand.is_float_imm && !anyp::dtype_is_float(at.dtype)) {
    t.fail(name + ": a floating constant with " + anyp::detail::dtype_with_article(at.dtype) +
           " tile; tiles are typed: use an integer constant, or pl::cast the tile");
  }
  if (bt.kind == ir::TypeKind::Tile && bt.shape.size() != at.shape.size()) {
    t.fail(name + ": shape mismatch: " + ir::to_string(at.shape) + " and " +
           ir::to_string(bt.shape));
  }
}

// A constant right operand that the op refuses whatever the data: an
// integer division by 0, a shift by a count outside [0, width).
// (Constants that mention dims are checked once they are bound.)
void check_constant_operand(Trace& t, ir::BinaryOp kind, DType dtype,
                            const ir::Operand& b_operand) {
  const ir::ExprNode* c = constant_int(b_operand);
  if (!c) return;
  const std::string error = ir::binary_constant_error(kind, dtype, c->value);
  if (!error.empty()) t.fail(error);
}

Tile tile_binary(ir::BinaryOp kind, const Tile& a, const ir::Operand& b_operand, Trace& t) {
  const std::string name = ir::tile_binary_name(kind);
  ir::VarId av = expect_kind(t, a, name, "the first operand", {ir::TypeKind::Tile});
  const ir::Type at = t.type_of(av);
  check_binary_operands(t, name, ir::tile_binary_rule(kind), at, b_operand);
  check_constant_operand(t, kind, at.dtype, b_operand);
  ir::Op op;
  op.kind = ir::OpKind::TileBinary;
  op.attr = kind;
  op.args = {ir::Operand::of_var(av), b_operand};
  return emit_tile(t, std::move(op), at);
}

Tile tile_tile(ir::BinaryOp kind, const Tile& a, const Tile& b) {
  Trace& t = Trace::current(ir::tile_binary_name(kind));
  ir::VarId bv =
      expect_kind(t, b, ir::tile_binary_name(kind), "the second operand", {ir::TypeKind::Tile});
  return tile_binary(kind, a, ir::Operand::of_var(bv), t);
}

Tile tile_scalar(ir::BinaryOp kind, const Tile& a, const ScalarArg& b) {
  Trace& t = Trace::current(ir::tile_binary_name(kind));
  return tile_binary(kind, a, t.operand(b, ir::tile_binary_name(kind)), t);
}

Tile tile_unary(ir::UnaryOp kind, const Tile& a) {
  const std::string name = ir::unary_op_name(kind);
  Trace& t = Trace::current(name);
  ir::VarId av = tile_operand(t, a, name, "the operand");
  const ir::Type at = t.type_of(av);
  anyp::detail::expect_dtype_rule(t, name, "the operand", at.dtype, ir::unary_op_rule(kind));
  ir::Op op;
  op.kind = ir::OpKind::TileUnary;
  op.attr = kind;
  op.args = {ir::Operand::of_var(av)};
  return emit_tile(t, std::move(op), at);
}

Tile tile_cmp(const Tile& a, const ir::Operand& b_operand, int cmp_type, Trace& t) {
  const std::string name = "pl.cmp";
  if (cmp_type < 0 || cmp_type >= ir::kCmpKinds) {
    t.fail(name + ": cmp_type " + std::to_string(cmp_type) +
           " is not a comparison; use EQ (0), NE (1), LT (2), LE (3), GT (4) or GE (5)");
  }
  ir::VarId av = expect_kind(t, a, name, "the first operand", {ir::TypeKind::Tile});
  const ir::Type at = t.type_of(av);
  check_binary_operands(t, name, ir::kNumeric, at, b_operand);
  if (const ir::ExprNode* c = constant_int(b_operand)) {
    const std::string error = ir::constant_operand_error(name, at.dtype, c->value);
    if (!error.empty()) t.fail(error);
  }
  ir::Op op;
  op.kind = ir::OpKind::TileCmp;
  op.attr = static_cast<ir::CmpKind>(cmp_type);  // checked above: a CmpKind
  op.args = {ir::Operand::of_var(av), b_operand};
  return emit_tile(
      t, std::move(op),
      ir::shaped_type(ir::TypeKind::Tile, at.shape, anyp::detail::mask_dtype(at.dtype)));
}

// Element count of a shape whose extents are all constants; nullopt otherwise.
std::optional<std::int64_t> const_elements(const std::vector<ir::Expr>& shape) {
  std::int64_t n = 1;
  for (const auto& e : shape) {
    if (!ir::is_const(e)) return std::nullopt;
    n *= e->value;
  }
  return n;
}

}  // namespace

Tile add(const Tile& a, const Tile& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_tile(ir::BinaryOp::Add, a, b);
}
Tile sub(const Tile& a, const Tile& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_tile(ir::BinaryOp::Sub, a, b);
}
Tile mul(const Tile& a, const Tile& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_tile(ir::BinaryOp::Mul, a, b);
}
Tile div(const Tile& a, const Tile& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_tile(ir::BinaryOp::Div, a, b);
}
Tile maximum(const Tile& a, const Tile& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_tile(ir::BinaryOp::Max, a, b);
}
Tile minimum(const Tile& a, const Tile& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_tile(ir::BinaryOp::Min, a, b);
}
Tile and_(const Tile& a, const Tile& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_tile(ir::BinaryOp::BitAnd, a, b);
}
Tile or_(const Tile& a, const Tile& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_tile(ir::BinaryOp::BitOr, a, b);
}
Tile xor_(const Tile& a, const Tile& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_tile(ir::BinaryOp::BitXor, a, b);
}
Tile shl(const Tile& a, const Tile& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_tile(ir::BinaryOp::Shl, a, b);
}
Tile shr(const Tile& a, const Tile& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_tile(ir::BinaryOp::Shr, a, b);
}
Tile add(const Tile& a, const ScalarArg& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_scalar(ir::BinaryOp::Add, a, b);
}
Tile sub(const Tile& a, const ScalarArg& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_scalar(ir::BinaryOp::Sub, a, b);
}
Tile mul(const Tile& a, const ScalarArg& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_scalar(ir::BinaryOp::Mul, a, b);
}
Tile div(const Tile& a, const ScalarArg& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_scalar(ir::BinaryOp::Div, a, b);
}
Tile maximum(const Tile& a, const ScalarArg& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_scalar(ir::BinaryOp::Max, a, b);
}
Tile minimum(const Tile& a, const ScalarArg& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_scalar(ir::BinaryOp::Min, a, b);
}
Tile and_(const Tile& a, const ScalarArg& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_scalar(ir::BinaryOp::BitAnd, a, b);
}
Tile or_(const Tile& a, const ScalarArg& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_scalar(ir::BinaryOp::BitOr, a, b);
}
Tile xor_(const Tile& a, const ScalarArg& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_scalar(ir::BinaryOp::BitXor, a, b);
}
Tile shl(const Tile& a, const ScalarArg& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_scalar(ir::BinaryOp::Shl, a, b);
}
Tile shr(const Tile& a, const ScalarArg& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_scalar(ir::BinaryOp::Shr, a, b);
}

Tile operator+(const Tile& a, const Tile& b) { return add(a, b); }
Tile operator-(const Tile& a, const Tile& b) { return sub(a, b); }
Tile operator*(const Tile& a, const Tile& b) { return mul(a, b); }
Tile operator/(const Tile& a, const Tile& b) { return div(a, b); }
Tile operator+(const Tile& a, const ScalarArg& b) { return add(a, b); }
Tile operator-(const Tile& a, const ScalarArg& b) { return sub(a, b); }
Tile operator*(const Tile& a, const ScalarArg& b) { return mul(a, b); }
Tile operator/(const Tile& a, const ScalarArg& b) { return div(a, b); }
Tile operator+(const ScalarArg& a, const Tile& b) { return add(b, a); }
Tile operator*(const ScalarArg& a, const Tile& b) { return mul(b, a); }
Tile operator-(const Tile& a) { return mul(a, -1); }

Tile neg(const Tile& t, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_unary(ir::UnaryOp::Neg, t);
}
Tile abs(const Tile& t, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_unary(ir::UnaryOp::Abs, t);
}
Tile relu(const Tile& t, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_unary(ir::UnaryOp::Relu, t);
}
Tile exp(const Tile& t, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_unary(ir::UnaryOp::Exp, t);
}
Tile log(const Tile& t, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_unary(ir::UnaryOp::Log, t);
}
Tile sqrt(const Tile& t, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_unary(ir::UnaryOp::Sqrt, t);
}
Tile rsqrt(const Tile& t, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_unary(ir::UnaryOp::Rsqrt, t);
}
Tile recip(const Tile& t, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_unary(ir::UnaryOp::Recip, t);
}
Tile not_(const Tile& t, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return tile_unary(ir::UnaryOp::Not, t);
}

Tile cmp(const Tile& a, const Tile& b, int cmp_type, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pl.cmp");
  return tile_cmp(a, ir::Operand::of_var(tile_operand(t, b, "pl.cmp", "the second operand")),
                  cmp_type, t);
}

Tile cmp(const Tile& a, const ScalarArg& b, int cmp_type, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pl.cmp");
  return tile_cmp(a, t.operand(b, "pl.cmp"), cmp_type, t);
}

Tile sel(const Tile& mask, const Tile& a, const Tile& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pl.sel");
  const ir::VarId mv = tile_operand(t, mask, "pl.sel", "the mask");
  const ir::VarId av = tile_operand(t, a, "pl.sel", "a");
  const ir::VarId bv = tile_operand(t, b, "pl.sel", "b");
  const ir::Type mt = t.type_of(mv), at = t.type_of(av), bt = t.type_of(bv);
  if (anyp::dtype_is_float(mt.dtype)) {
    t.fail("pl.sel: the mask is " + anyp::detail::dtype_with_article(mt.dtype) +
           " tile; the mask must be an integer tile (INT8, INT16, INT32 or INT64), such as "
           "pl.cmp's result");
  }
  anyp::detail::expect_same_dtype(t, "pl.sel", "a", at.dtype, "b", bt.dtype);
  for (const ir::Type* other : {&mt, &bt}) {
    if (other->shape.size() != at.shape.size()) {
      t.fail("pl.sel: shape mismatch: " + std::string(other == &mt ? "the mask " : "b ") +
             ir::to_string(other->shape) + " and a " + ir::to_string(at.shape));
    }
  }
  ir::Op op;
  op.kind = ir::OpKind::Select;
  op.args = {ir::Operand::of_var(mv), ir::Operand::of_var(av), ir::Operand::of_var(bv)};
  return emit_tile(t, std::move(op), at);
}

Tile cast(const Tile& tile, DType dtype, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pl.cast");
  ir::VarId v = expect_kind(t, tile, "pl.cast", "the operand", {ir::TypeKind::Tile});
  ir::Type rt = t.type_of(v);
  rt.dtype = dtype;
  ir::Op op;
  op.kind = ir::OpKind::TileCast;
  op.dtype = dtype;
  op.args = {ir::Operand::of_var(v)};
  return emit_tile(t, std::move(op), rt);
}

Tile full(Shape shape, const ScalarArg& value, DType dtype, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pl.full");
  ir::Operand v = t.operand(value, "pl.full");
  const ir::Type vt = t.operand_type(v);
  const std::string tile = anyp::detail::dtype_with_article(dtype) + " tile";
  if (!anyp::dtype_is_float(dtype) && anyp::dtype_is_float(vt.dtype)) {
    if (v.is_var()) {
      t.fail("pl.full: a floating value (" + ir::to_string(vt) + ") for " + tile +
             "; tiles are typed: pl::cast the value to an integer dtype first");
    }
    t.fail("pl.full: a floating value for " + tile +
           "; tiles are typed: use an integer value, or a floating dtype");
  }
  if (const ir::ExprNode* c = constant_int(v)) {
    const std::string error = ir::full_value_error(dtype, c->value);
    if (!error.empty()) t.fail(error);
  }
  ir::Op op;
  op.kind = ir::OpKind::Full;
  op.dtype = dtype;
  op.args = {v};
  op.shape = anyp::detail::shape_exprs(shape);
  const ir::Type type = ir::shaped_type(ir::TypeKind::Tile, op.shape, dtype);
  return emit_tile(t, std::move(op), type);
}

Tile zeros(Shape shape, DType dtype, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return full(std::move(shape), 0, dtype);
}

Tile arange(const ScalarArg& start, Shape shape, DType dtype, bool descending, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pl.arange");
  ir::Operand v = t.operand(start, "pl.arange");
  if (anyp::dtype_is_float(t.operand_type(v).dtype)) {
    t.fail("pl.arange: the start must be an integer (the tile counts in steps of 1)");
  }
  ir::Op op;
  op.kind = ir::OpKind::Arange;
  op.dtype = dtype;
  op.attr = ir::ArangeDirection{descending};
  op.args = {v};
  op.shape = anyp::detail::shape_exprs(shape);
  const ir::Type type = ir::shaped_type(ir::TypeKind::Tile, op.shape, dtype);
  return emit_tile(t, std::move(op), type);
}

Tile reshape(const Tile& tile, Shape shape, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pl.reshape");
  ir::VarId v = expect_kind(t, tile, "pl.reshape", "the operand", {ir::TypeKind::Tile});
  const ir::Type& vt = t.type_of(v);
  ir::Op op;
  op.kind = ir::OpKind::Reshape;
  op.args = {ir::Operand::of_var(v)};
  op.shape = anyp::detail::shape_exprs(shape);
  op.dtype = vt.dtype;
  const auto from_n = const_elements(vt.shape), to_n = const_elements(op.shape);
  if (from_n && to_n) {  // symbolic extents are checked once dims are bound
    const std::string error =
        ir::reshape_count_error(ir::to_string(vt.shape), *from_n, ir::to_string(op.shape), *to_n);
    if (!error.empty()) t.fail(error);
  }
  const ir::Type type = ir::shaped_type(ir::TypeKind::Tile, op.shape, vt.dtype);
  return emit_tile(t, std::move(op), type);
}

}  // namespace pl
