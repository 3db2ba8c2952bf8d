// bind_comm.cpp — anyp._core's communication ops beyond notify/wait and
// put/get: remote tile load/store, the builtin collectives and comm
// domains (pld.tile, pld.tensor, pld in the Python package).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "anyp/anyp.hpp"
#include "bindings.hpp"
#include "operands.hpp"

namespace py = pybind11;

namespace anyp::python {

void bind_comm(py::module_& m) { (void)m; }

}  // namespace anyp::python
