// operands.hpp — Python objects as the C++ tracer's operands: scalars
// (int, float, bool, Dim, traced Scalar), index lists, shapes and call
// arguments. Shared by every bind_*.cpp; each conversion names what it got
// when the object is of the wrong kind.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "anyp/anyp.hpp"
#include "frontend/trace.hpp"

namespace anyp::python {

// The Python type name of `o` ("int", "Tile", ...), for error messages.
std::string type_name(const pybind11::handle& o);

pl::ScalarArg scalar_arg(const pybind11::handle& o);
std::vector<pl::ScalarArg> index(const pybind11::sequence& items);
pl::Dim dim(const pybind11::handle& o);
pl::Shape shape(const pybind11::sequence& items);
detail::CallArg call_arg(const pybind11::handle& o);

}  // namespace anyp::python
