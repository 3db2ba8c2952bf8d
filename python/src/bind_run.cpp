// bind_run.cpp — anyp._core's compile and run: RunConfig from a dict,
// torch/numpy arrays as zero-copy views (tensor_views.hpp), the compiled
// program, and a C++-side timing loop (the baseline of
// bench/python_bench.py).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "anyp/anyp.hpp"
#include "bindings.hpp"
#include "tensor_views.hpp"

namespace py = pybind11;

namespace anyp::python {
namespace {

using FunctionRef = pl::Function;

// ---- compile and run --------------------------------------------------------

RunConfig run_config(const py::dict& c) {
  RunConfig config;
  for (const auto& [key_object, value] : c) {
    const std::string key = py::str(key_object);
    if (key == "platform") {
      config.platform = value.cast<std::string>();
    } else if (key == "device_ids") {
      config.distributed.device_ids = value.cast<std::vector<std::int64_t>>();
    } else if (key == "engine") {
      config.engine = value.cast<std::string>();
    } else if (key == "check_races") {
      config.check_races = value.cast<bool>();
    } else if (key == "output_dir") {
      config.output_dir = value.cast<std::string>();
    } else if (key == "workers") {
      config.workers = value.cast<int>();
    } else {
      throw ConfigError("config error: RunConfig field '" + key + "' is not known to anyp");
    }
  }
  return config;
}

// The arguments of a compile or a run: views of the arrays, numbers as is.
struct Arguments {
  std::vector<HostTensor> tensors;
  std::vector<ArgRef> refs;
};

Arguments arguments(const py::sequence& args, const std::vector<std::string>& names,
                    const std::string& function) {
  Arguments a;
  a.tensors.reserve(args.size());
  std::size_t i = 0;
  for (const py::handle arg : args) {
    const std::string name = i < names.size() ? names[i] : "#" + std::to_string(i);
    if (py::isinstance<py::int_>(arg)) {
      a.refs.emplace_back(arg.cast<std::int64_t>());
    } else if (py::isinstance<py::float_>(arg)) {
      a.refs.emplace_back(arg.cast<double>());
    } else {
      a.tensors.push_back(tensor_view(arg, function, name));
      a.refs.emplace_back(a.tensors.back());
    }
    ++i;
  }
  return a;
}

struct Compiled {
  CompiledProgram program;
  std::vector<std::string> names;
  std::string function;
};

Compiled compile(const FunctionRef& fn, const py::sequence& args,
                 const std::vector<std::string>& names, const py::dict& config) {
  const pl::HostFunction host(fn.def());
  Arguments a = arguments(args, names, fn.name());
  return Compiled{host.compile(a.refs, run_config(config)), names, fn.name()};
}

void run(const Compiled& c, const py::sequence& args) {
  Arguments a = arguments(args, c.names, c.function);
  py::gil_scoped_release release;  // the run calls no Python
  c.program.run(a.refs);
}

// Seconds per run of `runs` back-to-back runs from C++ (the baseline of
// bench/python_bench.py: the Python call's overhead is the difference).
double seconds_per_run(const Compiled& c, const py::sequence& args, int runs) {
  Arguments a = arguments(args, c.names, c.function);
  py::gil_scoped_release release;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) c.program.run(a.refs);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return took.count() / std::max(1, runs);
}

}  // namespace

void bind_run(py::module_& m) {
  py::class_<Compiled>(m, "Compiled")
      .def_property_readonly("output_dir", [](const Compiled& c) { return c.program.output_dir(); })
      .def("lowered_code", [](const Compiled& c) { return c.program.lowered_code(); });

  m.def("compile", &compile);
  m.def("run", &run);
  m.def("seconds_per_run", &seconds_per_run);
}

}  // namespace anyp::python
