// bindings.hpp — the parts of anyp._core, one function per file that adds
// its names to the module (module.cpp calls them in this order).
#pragma once

#include <pybind11/pybind11.h>

namespace anyp::python {

// bind_dtype.cpp: the element types (DType) with PyPTO's DataType methods.
void bind_dtype(pybind11::module_& m);
// bind_trace.cpp: handles, definitions, control flow, load/store, scalar
// and tile arithmetic, windows, notify/wait, put/get.
void bind_trace(pybind11::module_& m);
// bind_comm.cpp: remote load/store, builtin collectives, comm domains.
void bind_comm(pybind11::module_& m);
// bind_tile_math.cpp: tile compute (matmul, reductions, unary ops, ...).
void bind_tile_math(pybind11::module_& m);
// bind_tensor_ops.cpp: pl.create_tensor and the tensor-level ops.
void bind_tensor_ops(pybind11::module_& m);
// bind_run.cpp: compile and run with torch/numpy arrays, RunConfig, run
// statistics and the example command line's pieces.
void bind_run(pybind11::module_& m);

}  // namespace anyp::python
