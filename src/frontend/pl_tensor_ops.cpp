// pl_tensor_ops.cpp — recording of the tensor-level ops (pl::create_tensor,
// pl::tensor::slice, copy, assemble, cast and the elementwise binary ops on
// tensors and window views, in place and value-returning). Kinds, dtypes
// and ranks are checked here; extents once dims are bound
// (compiler/check_functions.cpp).
#include "anyp/pl.hpp"
#include "frontend/call_site.hpp"
#include "frontend/op_recording.hpp"
#include "frontend/tile_recording.hpp"
#include "frontend/trace.hpp"
#include "ir/tile_rules.hpp"

namespace pl::tensor {

using anyp::detail::expect_kind;
using anyp::detail::Trace;
namespace ir = anyp::ir;

namespace {

const auto kMemory = {ir::TypeKind::Tensor, ir::TypeKind::DistTensor};

std::string binary_name(ir::BinaryOp kind) {
  return "pl.tensor." + std::string(ir::tile_binary_name(kind)).substr(3);
}

// Records dst = a <kind> b (b a view variable, or a scalar operand).
void record_binary(ir::BinaryOp kind, const Value& dst, const Value& a, const ir::Operand& b,
                   Trace& t) {
  const std::string name = binary_name(kind);
  const ir::VarId d = expect_kind(t, dst, name, "the destination", kMemory);
  const ir::VarId av = expect_kind(t, a, name, "the first operand", kMemory);
  const ir::Type& dt = t.type_of(d);
  const ir::Type& at = t.type_of(av);
  const ir::Type bt = t.operand_type(b);
  const bool b_view = b.is_var() && ir::is_memory(bt.kind);
  if (at.dtype != dt.dtype || (b.is_var() && bt.dtype != at.dtype)) {
    t.fail(name + ": dtype mismatch: destination " + ir::to_string(dt) + ", operands " +
           ir::to_string(at) + " and " + ir::to_string(bt) +
           "; convert with pl::tensor::copy into a tensor of the other dtype");
  }
  if (b.is_float_imm && !anyp::dtype_is_float(at.dtype)) {
    t.fail(name + ": a floating constant with " + anyp::detail::dtype_with_article(at.dtype) +
           " tensor; use an integer constant");
  }
  if (at.shape.size() != dt.shape.size() || (b_view && bt.shape.size() != at.shape.size())) {
    t.fail(name + ": rank mismatch: destination " + ir::to_string(dt.shape) + ", operands " +
           ir::to_string(at.shape) + (b_view ? " and " + ir::to_string(bt.shape) : ""));
  }
  if (b.is_var() && !b_view && bt.kind != ir::TypeKind::Scalar)
    t.fail(name + ": the second operand must be a tensor, a window view or a scalar");
  if (const ir::ExprNode* c = anyp::detail::constant_int(b)) {
    const std::string error = ir::binary_constant_error(kind, at.dtype, c->value);
    if (!error.empty()) t.fail(error);
  }
  ir::Op op;
  op.kind = ir::OpKind::TensorBinary;
  op.attr = kind;
  op.args = {ir::Operand::of_var(d), ir::Operand::of_var(av), b};
  t.emit(std::move(op));
}

void view_view(ir::BinaryOp kind, const Value& dst, const Value& a, const Value& b) {
  Trace& t = Trace::current(binary_name(kind));
  const ir::VarId bv = expect_kind(t, b, binary_name(kind), "the second operand", kMemory);
  record_binary(kind, dst, a, ir::Operand::of_var(bv), t);
}

void view_scalar(ir::BinaryOp kind, const Value& dst, const Value& a, const ScalarArg& b) {
  Trace& t = Trace::current(binary_name(kind));
  record_binary(kind, dst, a, t.operand(b, binary_name(kind)), t);
}

// A new tensor of a's shape and dtype holding a <kind> b.
Value binary_value(ir::BinaryOp kind, const Value& a, const ir::Operand& b, Trace& t) {
  const ir::VarId av = expect_kind(t, a, binary_name(kind), "the first operand", kMemory);
  Value result(t.ref(anyp::detail::record_created_tensor(t, t.type_of(av))));
  record_binary(kind, result, a, b, t);
  return result;
}

}  // namespace

Value slice(const Value& src, Index offsets, Shape shape, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  const char* name = "pl.tensor.slice";
  Trace& t = Trace::current(name);
  const ir::VarId s = expect_kind(t, src, name, "the tensor", kMemory);
  const ir::Type st = t.type_of(s);
  if (shape.size() != st.shape.size()) {
    t.fail(std::string(name) + ": the slice shape has " +
           anyp::detail::counted(shape.size(), "dim", "dims") + "; the tensor " +
           ir::to_string(st) + " has " + std::to_string(st.shape.size()));
  }
  ir::Op op;
  op.kind = ir::OpKind::TensorSlice;
  op.args = {ir::Operand::of_var(s)};
  for (auto& o : anyp::detail::index_operands(t, offsets, st.shape.size(), name, "offsets"))
    op.args.push_back(o);
  op.shape = anyp::detail::shape_exprs(shape);
  op.result = t.new_var(ir::shaped_type(st.kind, op.shape, st.dtype));
  const ir::VarId res = op.result;
  t.emit(std::move(op));
  return Value(t.ref(res));
}

void copy(const Value& dst, const Value& src, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  const char* name = "pl.tensor.copy";
  Trace& t = Trace::current(name);
  const ir::VarId d = expect_kind(t, dst, name, "the destination", kMemory);
  const ir::VarId s = expect_kind(t, src, name, "the source", kMemory);
  if (t.type_of(d).shape.size() != t.type_of(s).shape.size()) {
    t.fail(std::string(name) + ": the destination " + ir::to_string(t.type_of(d)) +
           " and the source " + ir::to_string(t.type_of(s)) + " differ in rank");
  }
  anyp::detail::record_tensor_copy(t, d, s);
}

void assemble(const Value& target, const Value& src, Index offsets, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pl.tensor.assemble");
  const ir::VarId s = expect_kind(t, src, "pl.tensor.assemble", "the source", kMemory);
  Shape shape;
  for (const ir::Expr& e : t.type_of(s).shape) shape.push_back(Dim(e));
  copy(slice(target, std::move(offsets), std::move(shape)), src);
}

#define ANYP_TENSOR_BINARY(fn, kind)                                                              \
  void fn(const Value& dst, const Value& a, const Value& b, pl::Here where) {                     \
    const anyp::detail::CallSite call_site(where);                                                \
    view_view(ir::BinaryOp::kind, dst, a, b);                                                     \
  }                                                                                               \
  void fn(const Value& dst, const Value& a, const ScalarArg& b, pl::Here where) {                 \
    const anyp::detail::CallSite call_site(where);                                                \
    view_scalar(ir::BinaryOp::kind, dst, a, b);                                                   \
  }                                                                                               \
  Value fn(const Value& a, const Value& b, pl::Here where) {                                      \
    const anyp::detail::CallSite call_site(where);                                                \
    Trace& t = Trace::current(binary_name(ir::BinaryOp::kind));                                   \
    const ir::VarId bv =                                                                          \
        expect_kind(t, b, binary_name(ir::BinaryOp::kind), "the second operand", kMemory);        \
    return binary_value(ir::BinaryOp::kind, a, ir::Operand::of_var(bv), t);                       \
  }                                                                                               \
  Value fn(const Value& a, const ScalarArg& b, pl::Here where) {                                  \
    const anyp::detail::CallSite call_site(where);                                                \
    Trace& t = Trace::current(binary_name(ir::BinaryOp::kind));                                   \
    return binary_value(ir::BinaryOp::kind, a, t.operand(b, binary_name(ir::BinaryOp::kind)), t); \
  }
ANYP_TENSOR_BINARY(add, Add)
ANYP_TENSOR_BINARY(sub, Sub)
ANYP_TENSOR_BINARY(mul, Mul)
ANYP_TENSOR_BINARY(div, Div)
ANYP_TENSOR_BINARY(maximum, Max)
ANYP_TENSOR_BINARY(minimum, Min)
#undef ANYP_TENSOR_BINARY

Value cast(const Value& src, DType dtype, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pl.tensor.cast");
  const ir::VarId s = expect_kind(t, src, "pl.tensor.cast", "the tensor", kMemory);
  const ir::VarId result = anyp::detail::record_created_tensor(
      t, ir::shaped_type(ir::TypeKind::Tensor, t.type_of(s).shape, dtype));
  anyp::detail::record_tensor_copy(t, result, s);
  return Value(t.ref(result));
}

}  // namespace pl::tensor

namespace pl {

Value create_tensor(Shape shape, DType dtype, Here where) {
  using anyp::detail::Trace;
  namespace ir = anyp::ir;
  const anyp::detail::CallSite call_site(where);
  const char* name = "pl.create_tensor";
  Trace& t = Trace::current(name);
  if (t.function().level == ir::Level::Host) {
    t.fail(std::string(name) +
           " in the host function: a host function allocates window buffers "
           "(pld::alloc_window_buffer) or takes tensors as parameters; create the tensor in the "
           "orchestration function or kernel that uses it");
  }
  if (shape.empty()) t.fail(std::string(name) + ": the shape has no dims");
  const ir::Type type =
      ir::shaped_type(ir::TypeKind::Tensor, anyp::detail::shape_exprs(shape), dtype);
  return Value(t.ref(anyp::detail::record_created_tensor(t, type)));
}

}  // namespace pl
