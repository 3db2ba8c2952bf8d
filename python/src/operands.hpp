// operands.hpp — Python objects as the C++ tracer's operands: scalars
// (int, float, bool, Dim, traced Scalar), index lists, shapes and call
// arguments. Shared by every bind_*.cpp; each conversion names what it got
// when the object is of the wrong kind.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "anyp/anyp.hpp"
#include "frontend/trace.hpp"

namespace anyp::python {

// The Python type name of `o` ("int", "Tile", ...), for error messages.
std::string type_name(const pybind11::handle& o);

// A Python int as an INT64; one beyond 64 bits is an error E whose message
// is `prefix` then "the integer <n> does not fit in 64 bits ..." (pybind11's
// own cast raises a RuntimeError that names nothing).
template <class E = CompileError>
std::int64_t int64_or(const pybind11::handle& o, const std::string& prefix) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(o.ptr(), &overflow);
  if (overflow != 0) {
    throw E(prefix + "the integer " + std::string(pybind11::str(o)) +
            " does not fit in 64 bits (anyp's integers are INT64 at most)");
  }
  if (v == -1 && PyErr_Occurred()) throw pybind11::error_already_set();
  return v;
}

pl::ScalarArg scalar_arg(const pybind11::handle& o);
std::vector<pl::ScalarArg> index(const pybind11::sequence& items);
pl::Dim dim(const pybind11::handle& o);
pl::Shape shape(const pybind11::sequence& items);
detail::CallArg call_arg(const pybind11::handle& o);

}  // namespace anyp::python
