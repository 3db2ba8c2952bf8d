// operands.cpp — Python objects as the tracer's operands (operands.hpp).
#include "operands.hpp"

#include <cstdint>

namespace py = pybind11;

namespace anyp::python {

std::string type_name(const py::handle& o) {
  return std::string(py::str(py::type::handle_of(o).attr("__name__")));
}

pl::ScalarArg scalar_arg(const py::handle& o) {
  if (py::isinstance<pl::Scalar>(o)) return pl::ScalarArg(o.cast<const pl::Scalar&>());
  if (py::isinstance<pl::Dim>(o)) return pl::ScalarArg(o.cast<const pl::Dim&>());
  if (py::isinstance<py::bool_>(o)) return pl::ScalarArg(std::int64_t{o.cast<bool>()});
  if (py::isinstance<py::int_>(o)) return pl::ScalarArg(int64_or(o, "compile error: "));
  if (py::isinstance<py::float_>(o)) return pl::ScalarArg(o.cast<double>());
  throw CompileError(
      "compile error: expected a scalar (an int, a float, a Dim or a traced "
      "scalar), got " +
      type_name(o));
}

std::vector<pl::ScalarArg> index(const py::sequence& items) {
  std::vector<pl::ScalarArg> out;
  for (const py::handle item : items) out.push_back(scalar_arg(item));
  return out;
}

pl::Dim dim(const py::handle& o) {
  if (py::isinstance<pl::Dim>(o)) return o.cast<pl::Dim>();
  if (py::isinstance<py::int_>(o)) return pl::Dim(int64_or(o, "compile error: "));
  throw CompileError("compile error: a shape extent must be an int or a pl.dynamic dim, got " +
                     type_name(o));
}

pl::Shape shape(const py::sequence& items) {
  pl::Shape out;
  for (const py::handle item : items) out.push_back(dim(item));
  return out;
}

detail::CallArg call_arg(const py::handle& o) {
  if (py::isinstance<pl::Value>(o)) return detail::CallArg(o.cast<const pl::Value&>());
  if (py::isinstance<pl::Tile>(o)) return detail::CallArg(o.cast<const pl::Tile&>());
  if (py::isinstance<pl::Scalar>(o)) return detail::CallArg(o.cast<const pl::Scalar&>());
  if (py::isinstance<pl::Dim>(o)) return detail::CallArg(o.cast<const pl::Dim&>());
  if (py::isinstance<py::int_>(o)) return detail::CallArg(int64_or(o, "compile error: "));
  if (py::isinstance<py::float_>(o)) return detail::CallArg(o.cast<double>());
  throw CompileError(
      "compile error: a call argument must be a tensor, tile, scalar, Dim or "
      "number, got " +
      type_name(o));
}

}  // namespace anyp::python
