// pl_values.cpp — dims, parameter declarations, scalar operands and the
// traced handles (copy = new variable, assignment = write the variable).
#include "anyp/pl.hpp"
#include "frontend/call_site.hpp"
#include "frontend/op_recording.hpp"
#include "frontend/trace.hpp"

namespace pl {

using anyp::detail::Trace;
namespace ir = anyp::ir;

// ---- Dim ---------------------------------------------------------------------

Dim::Dim(std::int64_t value) : node_(ir::make_const(value)) {}
Dim::Dim(std::shared_ptr<const ir::ExprNode> node) : node_(std::move(node)) {}
std::string Dim::to_string() const { return ir::to_string(node_); }

Dim operator+(const Dim& a, const Dim& b) {
  return Dim(ir::make_binary(ir::ExprKind::Add, a.node(), b.node()));
}
Dim operator-(const Dim& a, const Dim& b) {
  return Dim(ir::make_binary(ir::ExprKind::Sub, a.node(), b.node()));
}
Dim operator*(const Dim& a, const Dim& b) {
  return Dim(ir::make_binary(ir::ExprKind::Mul, a.node(), b.node()));
}
Dim operator/(const Dim& a, const Dim& b) {
  return Dim(ir::make_binary(ir::ExprKind::Div, a.node(), b.node()));
}
Dim operator%(const Dim& a, const Dim& b) {
  return Dim(ir::make_binary(ir::ExprKind::Mod, a.node(), b.node()));
}

// Same name, same dim: every pl::dynamic("NR") in the program binds to one value.
Dim dynamic(std::string name) { return Dim(ir::make_dim(std::move(name))); }

// ---- declarations ----------------------------------------------------------------

TypeSpec Tensor(Shape shape, DType dtype) {
  return TypeSpec{TypeSpec::Kind::Tensor, std::move(shape), dtype};
}
Param In(std::string name, TypeSpec type) {
  return Param{std::move(name), std::move(type), Intent::In};
}
Param In(std::string name, DType scalar_dtype) {
  return Param{std::move(name), TypeSpec{TypeSpec::Kind::Scalar, {}, scalar_dtype}, Intent::In};
}
Param Out(std::string name, TypeSpec type) {
  return Param{std::move(name), std::move(type), Intent::Out};
}
Param InOut(std::string name, TypeSpec type) {
  return Param{std::move(name), std::move(type), Intent::InOut};
}

// ---- ScalarArg -------------------------------------------------------------------

ScalarArg::ScalarArg(int v) : kind_(Kind::Int), expr_(ir::make_const(v)) {}
ScalarArg::ScalarArg(std::int64_t v) : kind_(Kind::Int), expr_(ir::make_const(v)) {}
ScalarArg::ScalarArg(double v) : kind_(Kind::Float), fvalue_(v) {}
ScalarArg::ScalarArg(const Dim& d) : kind_(Kind::Int), expr_(d.node()) {}
ScalarArg::ScalarArg(const Scalar& s) : kind_(Kind::Var), var_(s.var()) {}

// ---- handles -----------------------------------------------------------------------

namespace {

ir::VarId emit_assign(Trace& t, ir::VarId dst, const ir::Operand& src) {
  ir::Op op;
  op.kind = ir::OpKind::Assign;
  op.result = dst;
  op.args.push_back(src);
  t.emit(std::move(op));
  return dst;
}

// A created tensor's copy: a new created tensor of its type holding its
// elements (pl::create_tensor + pl::tensor::copy).
ir::VarId emit_created_copy(Trace& t, ir::VarId src) {
  const ir::VarId dst = anyp::detail::record_created_tensor(t, t.type_of(src));
  anyp::detail::record_tensor_copy(t, dst, src);
  return dst;
}

anyp::detail::VarRef emit_const(const ScalarArg& value) {
  Trace& t = Trace::current("pl::Scalar");
  ir::Operand o = t.operand(value, "pl::Scalar");
  ir::VarId v = t.new_var(t.operand_type(o));
  ir::Op op;
  op.kind = ir::OpKind::Const;
  op.result = v;
  op.args.push_back(o);
  t.emit(std::move(op));
  return t.ref(v);
}

}  // namespace

Handle::Handle(const Handle& other) {
  if (!other.var_.valid()) return;
  Trace& t = Trace::current("copy of a traced value");
  ir::VarId src = t.id_of(other.var_, "copy of a traced value");
  if (t.created(src)) {  // a created tensor is a value: its copy is a new one
    var_ = t.ref(emit_created_copy(t, src));
    return;
  }
  ir::VarId dst = t.new_var(t.type_of(src));
  var_ = t.ref(emit_assign(t, dst, ir::Operand::of_var(src)));
}

Handle& Handle::operator=(const Handle& other) {
  if (var_.owner == other.var_.owner && var_.id == other.var_.id) return *this;
  Trace& t = Trace::current("assignment of a traced value");
  ir::VarId src = t.id_of(other.var_, "assignment");
  if (!var_.valid() && t.created(src)) {
    var_ = t.ref(emit_created_copy(t, src));
    return *this;
  }
  if (!var_.valid()) {
    var_ = t.ref(t.new_var(t.type_of(src)));
  }
  ir::VarId dst = t.id_of(var_, "assignment");
  const ir::Type& dt = t.type_of(dst);
  const ir::Type& st = t.type_of(src);
  if (dt.kind != st.kind || dt.dtype != st.dtype) {
    t.fail("assignment of " + ir::to_string(st) + " to a variable of type " + ir::to_string(dt));
  }
  // A variable keeps its shape: the ops after it are checked against it.
  // Extents that mention dims are compared once they are bound.
  bool same_shape = dt.shape.size() == st.shape.size();
  for (std::size_t d = 0; same_shape && d < dt.shape.size(); ++d) {
    same_shape = !(ir::is_const(dt.shape[d]) && ir::is_const(st.shape[d]) &&
                   dt.shape[d]->value != st.shape[d]->value);
  }
  if (!same_shape) {
    t.fail("assignment of " + ir::to_string(st) + " to a variable of type " + ir::to_string(dt) +
           ": a variable keeps its shape; give the new shape a new variable");
  }
  if (t.created(dst)) {  // a created tensor is a value: assigning writes its elements
    anyp::detail::record_tensor_copy(t, dst, src);
    return *this;
  }
  if (t.created(src)) {
    t.fail("assignment of a new tensor " + ir::to_string(st) +
           " (made by pl.create_tensor or a value-returning tensor op) to a variable that names "
           "a parameter, a window view or a slice: that would only rename the variable, and "
           "the tensor it names would not change; write into it with pl.tensor.copy / "
           "pl.assemble, or give the new tensor a new variable");
  }
  if (const ir::VarId root = t.created_root(src);
      root >= 0 && t.inside_open_loop_not_enclosing(root, dst)) {
    const std::string& name = t.function().vars[root].name;
    t.fail("assignment of a view of the tensor '" + t.function().name + "." +
           (name.empty() ? "%" + std::to_string(root) : name) +
           "' (pl.create_tensor inside a pl.range loop) to a variable from outside that loop: "
           "the loop makes that tensor again, zeroed and in the same storage, in every "
           "iteration, so the variable would not keep this iteration's elements; create the "
           "tensor above the loop, or copy the view into a tensor created above it "
           "(pl.tensor.copy / pl.assemble)");
  }
  t.add_view_root(dst, t.created_root(src));
  emit_assign(t, dst, ir::Operand::of_var(src));
  return *this;
}

Handle& Handle::operator=(Handle&& other) { return *this = static_cast<const Handle&>(other); }

Scalar::Scalar(int v) : Handle(emit_const(ScalarArg(v))) {}
Scalar::Scalar(std::int64_t v) : Handle(emit_const(ScalarArg(v))) {}
Scalar::Scalar(double v) : Handle(emit_const(ScalarArg(v))) {}
Scalar::Scalar(const Dim& d) : Handle(emit_const(ScalarArg(d))) {}

Value Value::operator[](const ScalarArg& index) const {
  Trace& t = Trace::current("x[r]");
  ir::VarId src = t.id_of(var(), "x[r]");
  const ir::Type& st = t.type_of(src);
  if (st.kind != ir::TypeKind::Tensor || st.shape.empty()) {
    t.fail("x[r] needs a tensor with a leading dim, got " + ir::to_string(st));
  }
  ir::Type rt = st;
  rt.shape.erase(rt.shape.begin());
  ir::VarId res = t.new_var(rt);
  ir::Op op;
  op.kind = ir::OpKind::Index;
  op.result = res;
  op.args = {ir::Operand::of_var(src), t.operand(index, "x[r]")};
  t.emit(std::move(op));
  return Value(t.ref(res));
}

// ---- scalar arithmetic -------------------------------------------------------------

namespace {

DType promote(DType a, DType b) {
  if (anyp::dtype_is_float(a) || anyp::dtype_is_float(b)) {
    return anyp::dtype_is_float(a) ? a : b;
  }
  if (a == DType::INT64 || b == DType::INT64) return DType::INT64;
  return DType::INT32;
}

Scalar binary(ir::BinaryOp kind, const ScalarArg& a, const ScalarArg& b) {
  const std::string name = std::string("scalar ") + ir::binary_op_name(kind);
  Trace& t = Trace::current(name);
  ir::Operand x = t.operand(a, name), y = t.operand(b, name);
  DType dt = promote(t.operand_type(x).dtype, t.operand_type(y).dtype);
  switch (kind) {
    case ir::BinaryOp::Lt:
    case ir::BinaryOp::Le:
    case ir::BinaryOp::Gt:
    case ir::BinaryOp::Ge:
    case ir::BinaryOp::Eq:
    case ir::BinaryOp::Ne:
    case ir::BinaryOp::And:
    case ir::BinaryOp::Or:
      dt = DType::INT32;
      break;
    case ir::BinaryOp::Mod:
    case ir::BinaryOp::FloorMod:
      if (anyp::dtype_is_float(dt)) t.fail("scalar %: operands must be integers");
      break;
    case ir::BinaryOp::FloorDiv:
      if (anyp::dtype_is_float(dt)) t.fail("scalar //: operands must be integers");
      break;
    default:
      break;
  }
  ir::VarId res = t.new_var(ir::scalar_type(dt));
  ir::Op op;
  op.kind = ir::OpKind::ScalarBinary;
  op.result = res;
  op.attr = kind;
  op.args = {x, y};
  t.emit(std::move(op));
  return Scalar(t.ref(res));
}

}  // namespace

Scalar operator+(const ScalarArg& a, const ScalarArg& b) { return binary(ir::BinaryOp::Add, a, b); }
Scalar operator-(const ScalarArg& a, const ScalarArg& b) { return binary(ir::BinaryOp::Sub, a, b); }
Scalar operator*(const ScalarArg& a, const ScalarArg& b) { return binary(ir::BinaryOp::Mul, a, b); }
Scalar operator/(const ScalarArg& a, const ScalarArg& b) { return binary(ir::BinaryOp::Div, a, b); }
Scalar operator%(const ScalarArg& a, const ScalarArg& b) { return binary(ir::BinaryOp::Mod, a, b); }
Scalar operator<(const ScalarArg& a, const ScalarArg& b) { return binary(ir::BinaryOp::Lt, a, b); }
Scalar operator<=(const ScalarArg& a, const ScalarArg& b) { return binary(ir::BinaryOp::Le, a, b); }
Scalar operator>(const ScalarArg& a, const ScalarArg& b) { return binary(ir::BinaryOp::Gt, a, b); }
Scalar operator>=(const ScalarArg& a, const ScalarArg& b) { return binary(ir::BinaryOp::Ge, a, b); }
Scalar operator==(const ScalarArg& a, const ScalarArg& b) { return binary(ir::BinaryOp::Eq, a, b); }
Scalar operator!=(const ScalarArg& a, const ScalarArg& b) { return binary(ir::BinaryOp::Ne, a, b); }
Scalar operator&&(const ScalarArg& a, const ScalarArg& b) {
  return binary(ir::BinaryOp::And, a, b);
}
Scalar operator||(const ScalarArg& a, const ScalarArg& b) { return binary(ir::BinaryOp::Or, a, b); }
Scalar min(const ScalarArg& a, const ScalarArg& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return binary(ir::BinaryOp::Min, a, b);
}
Scalar floor_div(const ScalarArg& a, const ScalarArg& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return binary(ir::BinaryOp::FloorDiv, a, b);
}
Scalar floor_mod(const ScalarArg& a, const ScalarArg& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return binary(ir::BinaryOp::FloorMod, a, b);
}
Scalar max(const ScalarArg& a, const ScalarArg& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return binary(ir::BinaryOp::Max, a, b);
}

Scalar operator-(const Scalar& a) { return binary(ir::BinaryOp::Mul, a, -1); }

Scalar operator+(const Scalar& a) { return Scalar(a); }

namespace {

// s = s <kind> b, converted back to s's dtype when the promoted result differs.
Scalar& compound(Scalar& s, ir::BinaryOp kind, const ScalarArg& b) {
  const std::string name = std::string("scalar ") + ir::binary_op_name(kind) + "=";
  Trace& t = Trace::current(name);
  const DType dtype = t.type_of(t.id_of(s.var(), name)).dtype;
  Scalar r = binary(kind, s, b);
  if (t.type_of(t.id_of(r.var(), name)).dtype != dtype) {
    s = cast(r, dtype);
  } else {
    s = r;
  }
  return s;
}

}  // namespace

Scalar& Scalar::operator+=(const ScalarArg& b) { return compound(*this, ir::BinaryOp::Add, b); }
Scalar& Scalar::operator-=(const ScalarArg& b) { return compound(*this, ir::BinaryOp::Sub, b); }
Scalar& Scalar::operator*=(const ScalarArg& b) { return compound(*this, ir::BinaryOp::Mul, b); }
Scalar& Scalar::operator/=(const ScalarArg& b) { return compound(*this, ir::BinaryOp::Div, b); }
Scalar& Scalar::operator%=(const ScalarArg& b) { return compound(*this, ir::BinaryOp::Mod, b); }

Scalar operator!(const Scalar& a) {
  Trace& t = Trace::current("scalar not");
  ir::Operand x = t.operand(ScalarArg(a), "scalar not");
  ir::VarId res = t.new_var(ir::scalar_type(DType::INT32));
  ir::Op op;
  op.kind = ir::OpKind::ScalarNot;
  op.result = res;
  op.args = {x};
  t.emit(std::move(op));
  return Scalar(t.ref(res));
}

}  // namespace pl
