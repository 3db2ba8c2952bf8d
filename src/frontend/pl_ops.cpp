// pl_ops.cpp — recording of the single-device ops: load/store/read/write,
// scalar casts, loops and branches (tile compute: pl_tile_elementwise.cpp
// and pl_tile_structured.cpp).
#include <cstdint>

#include "anyp/pl.hpp"
#include "frontend/call_site.hpp"
#include "frontend/op_recording.hpp"
#include "frontend/trace.hpp"

namespace pl {

using anyp::detail::expect_kind;
using anyp::detail::index_operands;
using anyp::detail::Trace;
namespace ir = anyp::ir;

namespace {
const auto kMemory = {ir::TypeKind::Tensor, ir::TypeKind::DistTensor};
}

namespace {

Tile load_tile(const Value& tensor, Index offsets, Shape shape, const Index* valid) {
  Trace& t = Trace::current("pl.load");
  ir::VarId src = expect_kind(t, tensor, "pl.load", "the source", kMemory);
  const ir::Type& st = t.type_of(src);
  if (shape.size() != st.shape.size()) {
    t.fail("pl.load: the tile shape has " + anyp::detail::counted(shape.size(), "dim", "dims") +
           ", but the tensor has " + std::to_string(st.shape.size()));
  }
  ir::Op op;
  op.kind = ir::OpKind::Load;
  op.args.push_back(ir::Operand::of_var(src));
  for (auto& o : index_operands(t, offsets, st.shape.size(), "pl.load", "offsets"))
    op.args.push_back(o);
  op.shape = anyp::detail::shape_exprs(shape);
  if (valid) anyp::detail::record_valid(t, "pl.load", *valid, shape.size(), op);
  op.result = t.new_var(ir::shaped_type(ir::TypeKind::Tile, op.shape, st.dtype));
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return Tile(t.ref(res));
}

Value store_tile(const Tile& tile, Index offsets, const Value& tensor, const Index* valid) {
  Trace& t = Trace::current("pl.store");
  ir::VarId tv = expect_kind(t, tile, "pl.store", "the stored value", {ir::TypeKind::Tile});
  ir::VarId dst = expect_kind(t, tensor, "pl.store", "the target", kMemory);
  const ir::Type& tt = t.type_of(tv);
  const ir::Type& dt = t.type_of(dst);
  if (tt.dtype != dt.dtype) {
    t.fail("pl.store: dtype mismatch: " + anyp::detail::dtype_with_article(tt.dtype) +
           " tile stored into " + anyp::detail::dtype_with_article(dt.dtype) +
           " tensor; convert it with pl::cast");
  }
  if (tt.shape.size() != dt.shape.size()) {
    t.fail("pl.store: the tile has " + anyp::detail::counted(tt.shape.size(), "dim", "dims") +
           ", but the tensor has " + std::to_string(dt.shape.size()));
  }
  ir::Op op;
  op.kind = ir::OpKind::Store;
  op.args = {ir::Operand::of_var(tv), ir::Operand::of_var(dst)};
  for (auto& o : index_operands(t, offsets, dt.shape.size(), "pl.store", "offsets"))
    op.args.push_back(o);
  if (valid) anyp::detail::record_valid(t, "pl.store", *valid, tt.shape.size(), op);
  op.result = dst;
  t.emit(std::move(op));
  return Value(t.ref(dst));
}

}  // namespace

Tile load(const Value& tensor, Index offsets, Shape shape, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return load_tile(tensor, std::move(offsets), std::move(shape), nullptr);
}
Tile load(const Value& tensor, Index offsets, Shape shape, Index valid_shape, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return load_tile(tensor, std::move(offsets), std::move(shape), &valid_shape);
}
Value store(const Tile& tile, Index offsets, const Value& tensor, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return store_tile(tile, std::move(offsets), tensor, nullptr);
}
Value store(const Tile& tile, Index offsets, const Value& tensor, Index valid_shape,
            pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return store_tile(tile, std::move(offsets), tensor, &valid_shape);
}

Scalar read(const Value& tensor, Index indices, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
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

void write(const Value& tensor, Index indices, const ScalarArg& value, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pl.write");
  ir::VarId dst = expect_kind(t, tensor, "pl.write", "the target", kMemory);
  const ir::Type& dt = t.type_of(dst);
  ir::Op op;
  op.kind = ir::OpKind::Write;
  op.args = {ir::Operand::of_var(dst), t.operand(value, "pl.write")};
  for (auto& o : index_operands(t, indices, dt.shape.size(), "pl.write", "indices"))
    op.args.push_back(o);
  t.emit(std::move(op));
}

Scalar cast(const ScalarArg& s, DType dtype, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
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

void range(const ScalarArg& stop, const std::function<void(Scalar)>& body, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  range(0, stop, body);
}

void range(const ScalarArg& start, const ScalarArg& stop, const std::function<void(Scalar)>& body,
           pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  range(start, stop, 1, body);
}

void range(const ScalarArg& start, const ScalarArg& stop, const ScalarArg& step,
           const std::function<void(Scalar)>& body, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
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
  // The loop variable takes the bounds' type: INT64 when a bound or the step
  // is INT64 (an INT64 scalar, or a constant outside INT32), else INT32. Its
  // values lie between start and stop, so they always fit; the counter
  // behind it counts in INT64 and never wraps (lower.cpp).
  const bool wide = t.operand_type(f.start).dtype == DType::INT64 ||
                    t.operand_type(f.stop).dtype == DType::INT64 ||
                    t.operand_type(f.step).dtype == DType::INT64;
  f.iv = t.new_var(ir::scalar_type(wide ? DType::INT64 : DType::INT32));
  f.loc = anyp::detail::current_call_site();
  t.push_block();
  t.enter_loop();
  {
    const anyp::detail::CallSiteSuspension user_body;
    body(Scalar(t.ref(f.iv)));
  }
  t.exit_loop();
  f.body = t.pop_block();
  t.emit_stmt(ir::Stmt{std::move(f)});
}

void if_(const ScalarArg& cond, const std::function<void()>& then_body,
         const std::function<void()>& else_body) {
  Trace& t = Trace::current("pl.if_");
  ir::IfStmt s;
  s.cond = t.operand(cond, "pl.if_");
  s.loc = anyp::detail::current_call_site();
  {
    const anyp::detail::CallSiteSuspension user_bodies;
    t.push_block();
    if (then_body) then_body();
    s.then_body = t.pop_block();
    t.push_block();
    if (else_body) else_body();
    s.else_body = t.pop_block();
  }
  t.emit_stmt(ir::Stmt{std::move(s)});
}

namespace {
Scalar block_query(ir::OpKind kind) {
  Trace& t = Trace::current(ir::op_kind_name(kind));
  ir::Op op;
  op.kind = kind;
  op.result = t.new_var(ir::scalar_type(pl::INT32));
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return Scalar(t.ref(res));
}
}  // namespace

Scalar get_block_idx(pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return block_query(ir::OpKind::BlockIdx);
}
Scalar get_block_num(pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return block_query(ir::OpKind::BlockNum);
}

}  // namespace pl
