// pl_ops.cpp — recording of the single-device ops: load/store/read/write,
// elementwise tile math, casts, loops and branches.
#include <cstdint>
#include <optional>

#include "anyp/pl.hpp"
#include "frontend/op_recording.hpp"
#include "frontend/trace.hpp"
#include "ir/tile_rules.hpp"

namespace pl {

using anyp::detail::expect_kind;
using anyp::detail::index_operands;
using anyp::detail::Trace;
namespace ir = anyp::ir;

namespace {
const auto kMemory = {ir::TypeKind::Tensor, ir::TypeKind::DistTensor};
}

Tile load(const Value& tensor, Index offsets, Shape shape) {
  Trace& t = Trace::current("pl.load");
  ir::VarId src = expect_kind(t, tensor, "pl.load", "the source", kMemory);
  const ir::Type& st = t.type_of(src);
  if (shape.size() != st.shape.size()) {
    t.fail("pl.load: the tile shape has " + std::to_string(shape.size()) +
           " dims, but the tensor has " + std::to_string(st.shape.size()));
  }
  ir::Op op;
  op.kind = ir::OpKind::Load;
  op.args.push_back(ir::Operand::of_var(src));
  for (auto& o : index_operands(t, offsets, st.shape.size(), "pl.load", "offsets"))
    op.args.push_back(o);
  op.shape = anyp::detail::shape_exprs(shape);
  op.result = t.new_var(ir::shaped_type(ir::TypeKind::Tile, op.shape, st.dtype));
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return Tile(t.ref(res));
}

Value store(const Tile& tile, Index offsets, const Value& tensor) {
  Trace& t = Trace::current("pl.store");
  ir::VarId tv = expect_kind(t, tile, "pl.store", "the stored value", {ir::TypeKind::Tile});
  ir::VarId dst = expect_kind(t, tensor, "pl.store", "the target", kMemory);
  anyp::detail::expect_writable(t, dst, "pl.store");
  const ir::Type& tt = t.type_of(tv);
  const ir::Type& dt = t.type_of(dst);
  if (tt.dtype != dt.dtype) {
    t.fail("pl.store: dtype mismatch: " + anyp::detail::dtype_with_article(tt.dtype) +
           " tile stored into " + anyp::detail::dtype_with_article(dt.dtype) +
           " tensor; convert it with pl::cast");
  }
  if (tt.shape.size() != dt.shape.size()) {
    t.fail("pl.store: the tile has " + std::to_string(tt.shape.size()) +
           " dims, but the tensor has " + std::to_string(dt.shape.size()));
  }
  ir::Op op;
  op.kind = ir::OpKind::Store;
  op.args = {ir::Operand::of_var(tv), ir::Operand::of_var(dst)};
  for (auto& o : index_operands(t, offsets, dt.shape.size(), "pl.store", "offsets"))
    op.args.push_back(o);
  op.result = dst;
  t.emit(std::move(op));
  return Value(t.ref(dst));
}

Scalar read(const Value& tensor, Index indices) {
  Trace& t = Trace::current("pl.read");
  ir::VarId src = expect_kind(t, tensor, "pl.read", "the source", kMemory);
  const ir::Type& st = t.type_of(src);
  ir::Op op;
  op.kind = ir::OpKind::Read;
  op.args.push_back(ir::Operand::of_var(src));
  for (auto& o : index_operands(t, indices, st.shape.size(), "pl.read", "indices"))
    op.args.push_back(o);
  op.result = t.new_var(ir::scalar_type(st.dtype));
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return Scalar(t.ref(res));
}

void write(const Value& tensor, Index indices, const ScalarArg& value) {
  Trace& t = Trace::current("pl.write");
  ir::VarId dst = expect_kind(t, tensor, "pl.write", "the target", kMemory);
  anyp::detail::expect_writable(t, dst, "pl.write");
  const ir::Type& dt = t.type_of(dst);
  ir::Op op;
  op.kind = ir::OpKind::Write;
  op.args = {ir::Operand::of_var(dst), t.operand(value, "pl.write")};
  for (auto& o : index_operands(t, indices, dt.shape.size(), "pl.write", "indices"))
    op.args.push_back(o);
  t.emit(std::move(op));
}

namespace {

Tile tile_binary(ir::BinaryOp kind, const Tile& a, const ir::Operand& b_operand, Trace& t) {
  const std::string name = ir::tile_binary_name(kind);
  ir::VarId av = expect_kind(t, a, name, "the first operand", {ir::TypeKind::Tile});
  const ir::Type& at = t.type_of(av);
  const ir::Type bt = t.operand_type(b_operand);
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
  ir::Op op;
  op.kind = ir::OpKind::TileBinary;
  op.attr = static_cast<int>(kind);
  op.args = {ir::Operand::of_var(av), b_operand};
  op.result = t.new_var(at);
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return Tile(t.ref(res));
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

}  // namespace

Tile add(const Tile& a, const Tile& b) { return tile_tile(ir::BinaryOp::Add, a, b); }
Tile sub(const Tile& a, const Tile& b) { return tile_tile(ir::BinaryOp::Sub, a, b); }
Tile mul(const Tile& a, const Tile& b) { return tile_tile(ir::BinaryOp::Mul, a, b); }
Tile maximum(const Tile& a, const Tile& b) { return tile_tile(ir::BinaryOp::Max, a, b); }
Tile minimum(const Tile& a, const Tile& b) { return tile_tile(ir::BinaryOp::Min, a, b); }
Tile add(const Tile& a, const ScalarArg& b) { return tile_scalar(ir::BinaryOp::Add, a, b); }
Tile sub(const Tile& a, const ScalarArg& b) { return tile_scalar(ir::BinaryOp::Sub, a, b); }
Tile mul(const Tile& a, const ScalarArg& b) { return tile_scalar(ir::BinaryOp::Mul, a, b); }
Tile maximum(const Tile& a, const ScalarArg& b) { return tile_scalar(ir::BinaryOp::Max, a, b); }
Tile minimum(const Tile& a, const ScalarArg& b) { return tile_scalar(ir::BinaryOp::Min, a, b); }

Tile cast(const Tile& tile, DType dtype) {
  Trace& t = Trace::current("pl.cast");
  ir::VarId v = expect_kind(t, tile, "pl.cast", "the operand", {ir::TypeKind::Tile});
  ir::Type rt = t.type_of(v);
  rt.dtype = dtype;
  ir::Op op;
  op.kind = ir::OpKind::TileCast;
  op.dtype = dtype;
  op.args = {ir::Operand::of_var(v)};
  op.result = t.new_var(rt);
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return Tile(t.ref(res));
}

Tile operator+(const Tile& a, const Tile& b) { return add(a, b); }
Tile operator-(const Tile& a, const Tile& b) { return sub(a, b); }
Tile operator*(const Tile& a, const Tile& b) { return mul(a, b); }
Tile operator+(const Tile& a, const ScalarArg& b) { return add(a, b); }
Tile operator-(const Tile& a, const ScalarArg& b) { return sub(a, b); }
Tile operator*(const Tile& a, const ScalarArg& b) { return mul(a, b); }
Tile operator+(const ScalarArg& a, const Tile& b) { return add(b, a); }
Tile operator*(const ScalarArg& a, const Tile& b) { return mul(b, a); }
Tile operator-(const Tile& a) { return mul(a, -1); }

namespace {

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

Tile full(Shape shape, const ScalarArg& value, DType dtype) {
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
  if (!v.is_var() && !v.is_float_imm && ir::is_const(v.int_imm)) {
    const std::string error = ir::full_value_error(dtype, v.int_imm->value);
    if (!error.empty()) t.fail(error);
  }
  ir::Op op;
  op.kind = ir::OpKind::Full;
  op.dtype = dtype;
  op.args = {v};
  op.shape = anyp::detail::shape_exprs(shape);
  op.result = t.new_var(ir::shaped_type(ir::TypeKind::Tile, op.shape, dtype));
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return Tile(t.ref(res));
}

Tile zeros(Shape shape, DType dtype) { return full(std::move(shape), 0, dtype); }

Tile reshape(const Tile& tile, Shape shape) {
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
  op.result = t.new_var(ir::shaped_type(ir::TypeKind::Tile, op.shape, vt.dtype));
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return Tile(t.ref(res));
}

Scalar cast(const ScalarArg& s, DType dtype) {
  Trace& t = Trace::current("pl.cast");
  ir::Op op;
  op.kind = ir::OpKind::ScalarCast;
  op.dtype = dtype;
  op.args = {t.operand(s, "pl.cast")};
  op.result = t.new_var(ir::scalar_type(dtype));
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return Scalar(t.ref(res));
}

void range(const ScalarArg& stop, const std::function<void(Scalar)>& body) { range(0, stop, body); }

void range(const ScalarArg& start, const ScalarArg& stop, const std::function<void(Scalar)>& body) {
  range(start, stop, 1, body);
}

void range(const ScalarArg& start, const ScalarArg& stop, const ScalarArg& step,
           const std::function<void(Scalar)>& body) {
  Trace& t = Trace::current("pl.range");
  ir::ForStmt f;
  f.start = t.operand(start, "pl.range");
  f.stop = t.operand(stop, "pl.range");
  for (const auto* o : {&f.start, &f.stop}) {
    if (anyp::dtype_is_float(t.operand_type(*o).dtype)) t.fail("pl.range: bounds must be integers");
  }
  f.step = t.operand(step, "pl.range");
  if (anyp::dtype_is_float(t.operand_type(f.step).dtype)) {
    t.fail("pl.range: the step must be an integer");
  }
  if (!f.step.is_var() && ir::is_const(f.step.int_imm) && f.step.int_imm->value == 0) {
    t.fail(
        "pl.range: the step is 0; use a positive step to count up or a negative one to count "
        "down");
  }
  f.iv = t.new_var(ir::scalar_type(DType::INT32));
  t.push_block();
  t.enter_loop();
  body(Scalar(t.ref(f.iv)));
  t.exit_loop();
  f.body = t.pop_block();
  t.emit_stmt(ir::Stmt{std::move(f)});
}

void if_(const ScalarArg& cond, const std::function<void()>& then_body,
         const std::function<void()>& else_body) {
  Trace& t = Trace::current("pl.if_");
  ir::IfStmt s;
  s.cond = t.operand(cond, "pl.if_");
  t.push_block();
  if (then_body) then_body();
  s.then_body = t.pop_block();
  t.push_block();
  if (else_body) else_body();
  s.else_body = t.pop_block();
  t.emit_stmt(ir::Stmt{std::move(s)});
}

}  // namespace pl
