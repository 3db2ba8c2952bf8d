// op_recording.cpp — shared checks used while recording pl/pld ops.
#include "frontend/op_recording.hpp"

namespace anyp::detail {

ir::VarId expect_kind(Trace& t, const pl::Handle& h, std::string_view op, std::string_view role,
                      std::initializer_list<ir::TypeKind> kinds) {
  ir::VarId v = t.id_of(h.var(), op);
  const ir::Type& ty = t.type_of(v);
  for (ir::TypeKind k : kinds) {
    if (ty.kind == k) return v;
  }
  std::string want;
  for (ir::TypeKind k : kinds) {
    if (!want.empty()) want += " or ";
    want += k == ir::TypeKind::DistTensor ? "a DistributedTensor (window view)"
                                          : std::string("a ") + ir::type_kind_name(k);
  }
  t.fail(std::string(op) + ": " + std::string(role) + " must be " + want + ", got " +
         ir::to_string(ty));
}

std::string counted(std::size_t n, std::string_view singular, std::string_view plural) {
  return std::to_string(n) + " " + std::string(n == 1 ? singular : plural);
}

std::vector<ir::Operand> index_operands(Trace& t, const pl::Index& index, std::size_t rank,
                                        std::string_view op, std::string_view role) {
  if (index.size() != rank) {
    t.fail(std::string(op) + ": " + std::string(role) + " has " +
           counted(index.size(), "entry", "entries") + ", but the tensor has " +
           counted(rank, "dim", "dims"));
  }
  std::vector<ir::Operand> out;
  for (const pl::ScalarArg& a : index) {
    ir::Operand o = t.operand(a, op);
    if (anyp::dtype_is_float(t.operand_type(o).dtype)) {
      t.fail(std::string(op) + ": " + std::string(role) + " must be integers");
    }
    out.push_back(o);
  }
  return out;
}

std::vector<ir::Expr> shape_exprs(const pl::Shape& shape) {
  std::vector<ir::Expr> out;
  for (const pl::Dim& d : shape) out.push_back(d.node());
  return out;
}

void record_valid(Trace& t, std::string_view op, const pl::Index& valid, std::size_t rank,
                  ir::Op& out) {
  if (valid.size() != rank) {
    t.fail(std::string(op) + ": valid_shape has " + counted(valid.size(), "extent", "extents") +
           ", but the tile has " + counted(rank, "dim", "dims"));
  }
  bool run_time = false;
  for (const pl::ScalarArg& e : valid) {
    if (e.kind() == pl::ScalarArg::Kind::Float)
      t.fail(std::string(op) + ": valid_shape extents are integers, got a floating constant");
    run_time = run_time || e.kind() == pl::ScalarArg::Kind::Var;
  }
  if (!run_time) {
    for (const pl::ScalarArg& e : valid) out.valid.push_back(e.int_expr());
    return;
  }
  for (const pl::ScalarArg& e : valid) {
    ir::Operand o = t.operand(e, op);
    if (anyp::dtype_is_float(t.operand_type(o).dtype)) {
      t.fail(std::string(op) + ": a valid_shape extent is " + ir::to_string(t.operand_type(o)) +
             "; extents are integers (pl::cast it)");
    }
    out.args.push_back(std::move(o));
  }
  out.count = static_cast<int>(rank);
}

ir::VarId record_created_tensor(Trace& t, const ir::Type& type) {
  ir::Op op;
  op.kind = ir::OpKind::CreateTensor;
  op.dtype = type.dtype;
  op.shape = type.shape;
  op.result = t.new_var(type);
  const ir::VarId created = op.result;
  t.emit(std::move(op));
  t.mark_created(created);
  return created;
}

void record_tensor_copy(Trace& t, ir::VarId dst, ir::VarId src) {
  ir::Op op;
  op.kind = ir::OpKind::TensorCopy;
  op.args = {ir::Operand::of_var(dst), ir::Operand::of_var(src)};
  t.emit(std::move(op));
}

std::string dtype_with_article(DType dtype) {
  const std::string name(anyp::dtype_name(dtype));
  return (dtype == DType::BF16 ? "a " : "an ") + name;  // "eff-", "int-" read with "an"
}

ir::VarId expect_signal(Trace& t, const pl::Value& signal, std::string_view op) {
  ir::VarId v = expect_kind(t, signal, op, "the signal", {ir::TypeKind::DistTensor});
  if (t.type_of(v).dtype != pl::INT32) {
    t.fail(std::string(op) + ": the signal must be INT32, got " + ir::to_string(t.type_of(v)));
  }
  return v;
}

ir::Operand peer_operand(Trace& t, const pl::ScalarArg& peer, std::string_view op) {
  return integer_operand(t, peer, op, "peer");
}

ir::Operand integer_operand(Trace& t, const pl::ScalarArg& value, std::string_view op,
                            std::string_view what) {
  ir::Operand o = t.operand(value, op);
  if (anyp::dtype_is_float(t.operand_type(o).dtype))
    t.fail(std::string(op) + ": " + std::string(what) + " must be an integer");
  return o;
}

}  // namespace anyp::detail
