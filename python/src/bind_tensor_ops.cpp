// bind_tensor_ops.cpp — anyp._core's tensor-level ops: pl.create_tensor, the
// value-returning elementwise ops and casts on tensors, copy, assemble, and
// pld.tensor.remote_store (pl / pld in the Python package,
// anyp/language/_tensor_ops.py), and the shape of a traced tensor or tile
// (value_dims, for slices to the end of a dim). Each op calls its pl:: /
// pld:: twin.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <map>
#include <string>

#include "anyp/anyp.hpp"
#include "bindings.hpp"
#include "frontend/trace.hpp"
#include "operands.hpp"

namespace py = pybind11;

namespace anyp::python {
namespace {

namespace ir = anyp::ir;
using pl::Value;
using ViewOp = std::function<Value(const Value&, const Value&)>;
using ScalarOp = std::function<Value(const Value&, const pl::ScalarArg&)>;

#define ANYP_TENSOR_OPS(X) X(add) X(sub) X(mul) X(div) X(maximum) X(minimum)

const std::map<std::string, ViewOp>& view_ops() {
  static const std::map<std::string, ViewOp> ops = {
#define ANYP_X(name) {#name, [](const Value& a, const Value& b) { return pl::tensor::name(a, b); }},
      ANYP_TENSOR_OPS(ANYP_X)
#undef ANYP_X
  };
  return ops;
}

const std::map<std::string, ScalarOp>& scalar_ops() {
  static const std::map<std::string, ScalarOp> ops = {
#define ANYP_X(name) \
  {#name, [](const Value& a, const pl::ScalarArg& b) { return pl::tensor::name(a, b); }},
      ANYP_TENSOR_OPS(ANYP_X)
#undef ANYP_X
  };
  return ops;
}
#undef ANYP_TENSOR_OPS

// a <op> b, b a tensor or a scalar: a new tensor.
Value binary(const std::string& op, const Value& a, const py::handle& b) {
  if (py::isinstance<Value>(b)) {
    const auto it = view_ops().find(op);
    if (it == view_ops().end()) throw InternalError("internal error: no tensor op '" + op + "'");
    return it->second(a, b.cast<const Value&>());
  }
  const auto it = scalar_ops().find(op);
  if (it == scalar_ops().end()) throw InternalError("internal error: no tensor op '" + op + "'");
  return it->second(a, scalar_arg(b));
}

bool created(const Value& v) {
  detail::Trace* t = detail::Trace::active();
  if (t == nullptr || v.var().owner != t) return false;
  return t->created(v.var().id);
}

// The shape of a traced tensor or tile: ints where constant, dims where
// they mention a pl.dynamic dim.
py::list value_dims(const pl::Handle& h) {
  detail::Trace& t = detail::Trace::current("a slice");
  const ir::VarId id = t.id_of(h.var(), "a slice");
  py::list dims;
  for (const ir::Expr& e : t.type_of(id).shape) {
    if (ir::is_const(e)) {
      dims.append(py::int_(e->value));
    } else {
      dims.append(py::cast(pl::Dim(e)));
    }
  }
  return dims;
}

}  // namespace

void bind_tensor_ops(py::module_& m) {
  m.def("create_tensor",
        [](const py::sequence& s, DType d) { return pl::create_tensor(shape(s), d); });
  m.def("tensor_binary", &binary);
  m.def("tensor_cast", [](const Value& t, DType d) { return pl::tensor::cast(t, d); });
  m.def("tensor_copy", [](const Value& dst, const Value& src) { pl::tensor::copy(dst, src); });
  m.def("tensor_assemble", [](const Value& target, const Value& src, const py::sequence& offsets) {
    pl::tensor::assemble(target, src, index(offsets));
  });
  m.def("tensor_created", &created);
  m.def("name_created", [](const Value& v, const std::string& name) {
    if (created(v)) detail::Trace::active()->name_if_unnamed(v.var().id, name);
  });
  m.def("value_dims", [](const Value& v) { return value_dims(v); });
  m.def("value_dims", [](const pl::Tile& t) { return value_dims(t); });
  m.def("tensor_remote_store", [](const Value& src, const Value& target, const py::handle& peer,
                                  const py::sequence& offsets, pld::AtomicType atomic) {
    pld::tensor::remote_store(src, target, scalar_arg(peer), index(offsets), atomic);
  });
}

}  // namespace anyp::python
