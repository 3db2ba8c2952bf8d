// module.cpp — anyp._core, the native half of the Python package: anyp's
// errors as Python exceptions, then the element types, the tracer, the communication ops, tile
// math and compile/run (bindings.hpp: one file each). Everything after
// tracing is the C++ core.
#include <pybind11/pybind11.h>

#include "anyp/anyp.hpp"
#include "bindings.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  using namespace anyp::python;
  m.doc() = "anyp's native core: the tracer, the compiler and the engines (anyp/_frontend.py)";

  // Errors: anyp.Error and its kinds (base classes first: pybind11 tries
  // the translators newest first).
  py::register_exception<anyp::Error>(m, "Error", PyExc_RuntimeError);
  const py::object error = m.attr("Error");
  py::register_exception<anyp::ConfigError>(m, "ConfigError", error);
  py::register_exception<anyp::CompileError>(m, "CompileError", error);
  py::register_exception<anyp::RunError>(m, "RunError", error);
  py::register_exception<anyp::InternalError>(m, "InternalError", error);
  py::register_exception<anyp::DeadlockError>(m, "DeadlockError", m.attr("RunError"));
  py::register_exception<anyp::RaceError>(m, "RaceError", m.attr("RunError"));

  bind_dtype(m);
  bind_trace(m);
  bind_comm(m);
  bind_tile_math(m);
  bind_tensor_ops(m);
  bind_run(m);
}
