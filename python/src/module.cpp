// module.cpp — anyp._core, the native half of the Python package: the C++
// tracer's handles and ops as Python callables (the front-end in
// anyp/_frontend.py calls them while it walks a function's AST), function
// definitions whose bodies are Python callables, compile and run with
// torch/numpy arrays as zero-copy views, and anyp's errors as Python
// exceptions. Everything after tracing is the C++ core.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "anyp/anyp.hpp"
#include "frontend/trace.hpp"
#include "ir/type.hpp"
#include "tensor_views.hpp"

namespace py = pybind11;

namespace anyp::python {
namespace {

// ---- operands --------------------------------------------------------------

pl::ScalarArg scalar_arg(const py::handle& o) {
  if (py::isinstance<pl::Scalar>(o)) return pl::ScalarArg(o.cast<const pl::Scalar&>());
  if (py::isinstance<pl::Dim>(o)) return pl::ScalarArg(o.cast<const pl::Dim&>());
  if (py::isinstance<py::bool_>(o)) return pl::ScalarArg(std::int64_t{o.cast<bool>()});
  if (py::isinstance<py::int_>(o)) return pl::ScalarArg(o.cast<std::int64_t>());
  if (py::isinstance<py::float_>(o)) return pl::ScalarArg(o.cast<double>());
  throw CompileError(
      "compile error: expected a scalar (an int, a float, a Dim or a traced "
      "scalar), got " +
      std::string(py::str(py::type::handle_of(o).attr("__name__"))));
}

std::vector<pl::ScalarArg> index(const py::sequence& items) {
  std::vector<pl::ScalarArg> out;
  for (const py::handle item : items) out.push_back(scalar_arg(item));
  return out;
}

pl::Dim dim(const py::handle& o) {
  if (py::isinstance<pl::Dim>(o)) return o.cast<pl::Dim>();
  if (py::isinstance<py::int_>(o)) return pl::Dim(o.cast<std::int64_t>());
  throw CompileError("compile error: a shape extent must be an int or a pl.dynamic dim, got " +
                     std::string(py::str(py::type::handle_of(o).attr("__name__"))));
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
  if (py::isinstance<py::int_>(o)) return detail::CallArg(o.cast<std::int64_t>());
  if (py::isinstance<py::float_>(o)) return detail::CallArg(o.cast<double>());
  throw CompileError(
      "compile error: a call argument must be a tensor, tile, scalar, Dim or "
      "number, got " +
      std::string(py::str(py::type::handle_of(o).attr("__name__"))));
}

// The traced type of a handle ("tile [1, 64] FP32"), or "" for a handle of
// another trace than the innermost one.
std::string type_text(const pl::Handle& h) {
  const detail::Trace* t = detail::Trace::active();
  if (t == nullptr || h.var().owner != t || !h.var().valid()) return "";
  return ir::to_string(t->type_of(h.var().id));
}

// ---- definitions ----------------------------------------------------------

pl::Param param(const std::string& name, const std::string& kind, const py::sequence& dims,
                DType dtype, const std::string& intent) {
  pl::Param p;
  p.name = name;
  if (kind == "scalar") {
    p = pl::In(name, dtype);
  } else {
    p.type = kind == "dist" ? pld::DistributedTensor(shape(dims), dtype)
                            : pl::Tensor(shape(dims), dtype);
  }
  p.intent = intent == "out"     ? pl::Intent::Out
             : intent == "inout" ? pl::Intent::InOut
                                 : pl::Intent::In;
  return p;
}

using FunctionRef = pl::Function;  // a shared FunctionDef

// A function whose body is the Python callable `body(handles)`: one handle
// per parameter (a traced scalar for scalar parameters, else a tensor).
FunctionRef define(const std::string& name, const std::string& level,
                   const std::vector<pl::Param>& params, const py::function& body) {
  const detail::Level l = level == "host"            ? detail::Level::Host
                          : level == "orchestration" ? detail::Level::Orchestration
                                                     : detail::Level::Incore;
  std::vector<bool> scalar;
  for (const pl::Param& p : params) scalar.push_back(p.type.kind == pl::TypeSpec::Kind::Scalar);
  auto keep = std::make_shared<py::function>(body);
  return pl::Function(detail::make_function(
      name, l, params, params.size(), [keep, scalar](const std::vector<detail::VarRef>& vars) {
        py::gil_scoped_acquire gil;
        py::list handles;
        for (std::size_t i = 0; i < vars.size(); ++i) {
          if (scalar[i]) {
            handles.append(py::cast(pl::Scalar(vars[i])));
          } else {
            handles.append(py::cast(pl::Value(vars[i])));
          }
        }
        (*keep)(handles);
      }));
}

void call(const FunctionRef& fn, const py::sequence& args, const py::object& device) {
  std::vector<detail::CallArg> out;
  for (const py::handle a : args) out.push_back(call_arg(a));
  if (!device.is_none()) {
    if (py::isinstance<pl::Scalar>(device)) {
      out.push_back(detail::CallArg(pl::device(device.cast<const pl::Scalar&>())));
    } else {
      out.push_back(detail::CallArg(pl::device(device.cast<std::int64_t>())));
    }
  }
  detail::record_call(*fn.def(), out);
}

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

template <class E>
void exception(py::module_& m, const char* name, const py::object& base) {
  py::register_exception<E>(m, name, base);
}

}  // namespace
}  // namespace anyp::python

PYBIND11_MODULE(_core, m) {
  using namespace anyp::python;
  namespace detail = anyp::detail;
  m.doc() = "anyp's native core: the tracer, the compiler and the engines (anyp/_frontend.py)";

  // Errors: anyp.Error and its kinds (base classes first: pybind11 tries
  // the translators newest first).
  py::register_exception<anyp::Error>(m, "Error", PyExc_RuntimeError);
  const py::object error = m.attr("Error");
  exception<anyp::ConfigError>(m, "ConfigError", error);
  exception<anyp::CompileError>(m, "CompileError", error);
  exception<anyp::RunError>(m, "RunError", error);
  exception<anyp::InternalError>(m, "InternalError", error);
  exception<anyp::DeadlockError>(m, "DeadlockError", m.attr("RunError"));
  exception<anyp::RaceError>(m, "RaceError", m.attr("RunError"));

  py::enum_<anyp::DType>(m, "DType")
      .value("FP32", anyp::DType::FP32)
      .value("FP16", anyp::DType::FP16)
      .value("BF16", anyp::DType::BF16)
      .value("INT8", anyp::DType::INT8)
      .value("INT16", anyp::DType::INT16)
      .value("INT32", anyp::DType::INT32)
      .value("INT64", anyp::DType::INT64);

  py::enum_<pld::NotifyOp>(m, "NotifyOp")
      .value("AtomicAdd", pld::NotifyOp::AtomicAdd)
      .value("Set", pld::NotifyOp::Set);
  py::enum_<pld::WaitCmp>(m, "WaitCmp")
      .value("Eq", pld::WaitCmp::Eq)
      .value("Ne", pld::WaitCmp::Ne)
      .value("Gt", pld::WaitCmp::Gt)
      .value("Ge", pld::WaitCmp::Ge)
      .value("Lt", pld::WaitCmp::Lt)
      .value("Le", pld::WaitCmp::Le);
  py::enum_<pld::AtomicType>(m, "AtomicType")
      .value("None_", pld::AtomicType::None)  // PyPTO's spelling: None is a keyword
      .value("Add", pld::AtomicType::Add);

  py::class_<pl::Dim>(m, "Dim").def("__repr__", &pl::Dim::to_string);
  m.def("dim_binary", [](const std::string& op, const py::handle& a, const py::handle& b) {
    const pl::Dim x = dim(a), y = dim(b);
    if (op == "+") return x + y;
    if (op == "-") return x - y;
    if (op == "*") return x * y;
    if (op == "//") return x / y;
    if (op == "%") return x % y;
    throw anyp::CompileError("compile error: the dim operator " + op + " is not supported by anyp");
  });
  m.def("dynamic", &pl::dynamic);

  py::class_<pl::Value>(m, "Value").def("type", [](const pl::Value& v) { return type_text(v); });
  py::class_<pl::Tile>(m, "Tile").def("type", [](const pl::Tile& t) { return type_text(t); });
  py::class_<pl::Scalar>(m, "Scalar").def("type", [](const pl::Scalar& s) { return type_text(s); });
  py::class_<pld::CommCtx>(m, "CommCtx");
  py::class_<pl::Param>(m, "Param");
  py::class_<pl::Function>(m, "Function").def_property_readonly("name", &pl::Function::name);
  py::class_<Compiled>(m, "Compiled")
      .def_property_readonly("output_dir", [](const Compiled& c) { return c.program.output_dir(); })
      .def("lowered_code", [](const Compiled& c) { return c.program.lowered_code(); });

  m.def("param", &param);
  m.def("define", &define);
  m.def("call", &call);
  m.def("compile", &compile);
  m.def("run", &run);
  m.def("seconds_per_run", &seconds_per_run);
  m.def("ir_text", [](const FunctionRef& f) { return f.ir_text(); });

  // Writes `dst` (the C++ handle's assignment): a loop-carried or
  // rebound name.
  m.def("assign", [](pl::Value& dst, const pl::Value& src) { dst = src; });
  m.def("assign", [](pl::Tile& dst, const pl::Tile& src) { dst = src; });
  m.def("assign", [](pl::Scalar& dst, const pl::Scalar& src) { dst = src; });

  // Control flow: the bodies are Python callables.
  m.def("range", [](const py::handle& start, const py::handle& stop, const py::handle& step,
                    const std::function<void(pl::Scalar)>& body) {
    pl::range(scalar_arg(start), scalar_arg(stop), scalar_arg(step), body);
  });
  m.def("if_", [](const pl::Scalar& cond, const std::function<void()>& then_body,
                  const std::function<void()>& else_body) { pl::if_(cond, then_body, else_body); });

  // Scalars: Python's operators (// and % floor, as Python's do).
  m.def("scalar_binary", [](const std::string& op, const py::handle& a, const py::handle& b) {
    const pl::ScalarArg x = scalar_arg(a), y = scalar_arg(b);
    if (op == "+") return x + y;
    if (op == "-") return x - y;
    if (op == "*") return x * y;
    if (op == "//") return pl::floor_div(x, y);
    if (op == "%") return pl::floor_mod(x, y);
    if (op == "<") return x < y;
    if (op == "<=") return x <= y;
    if (op == ">") return x > y;
    if (op == ">=") return x >= y;
    if (op == "==") return x == y;
    if (op == "!=") return x != y;
    if (op == "min") return pl::min(x, y);
    if (op == "max") return pl::max(x, y);
    throw anyp::CompileError("compile error: the scalar operator " + op +
                             " is not supported by anyp");
  });
  m.def("scalar_neg", [](const pl::Scalar& a) { return -a; });

  // Tiles and memory.
  m.def("load", [](const pl::Value& t, const py::sequence& offsets, const py::sequence& s) {
    return pl::load(t, index(offsets), shape(s));
  });
  m.def("store", [](const pl::Tile& tile, const py::sequence& offsets, const pl::Value& t) {
    return pl::store(tile, index(offsets), t);
  });
  m.def("tile_binary", [](const std::string& op, const pl::Tile& a, const py::handle& b) {
    if (py::isinstance<pl::Tile>(b)) {
      const auto& t = b.cast<const pl::Tile&>();
      if (op == "add") return pl::add(a, t);
      if (op == "sub") return pl::sub(a, t);
      if (op == "mul") return pl::mul(a, t);
      if (op == "div") return pl::div(a, t);
    } else {
      const pl::ScalarArg s = scalar_arg(b);
      if (op == "add") return pl::add(a, s);
      if (op == "sub") return pl::sub(a, s);
      if (op == "mul") return pl::mul(a, s);
    }
    throw anyp::CompileError("compile error: pl." + op + " of a tile and " +
                             std::string(py::str(py::type::handle_of(b).attr("__name__"))) +
                             " is not supported by anyp");
  });
  m.def("index", [](const pl::Value& v, const py::handle& i) { return v[scalar_arg(i)]; });

  // Windows, the comm context, signals and one-sided transfers.
  m.def("alloc_window_buffer", [](const std::string& name, const py::sequence& s, anyp::DType d) {
    return pld::alloc_window_buffer(name, shape(s), d);
  });
  m.def("window", [](const pl::Value& buffer, const py::sequence& s, anyp::DType d) {
    return pld::window(buffer, shape(s), d);
  });
  m.def("world_size", &pld::world_size);
  m.def("get_comm_ctx", &pld::get_comm_ctx);
  m.def("rank", &pld::rank);
  m.def("nranks", &pld::nranks);
  m.def("notify", [](const pl::Value& signal, const py::handle& peer, const py::sequence& offsets,
                     const py::handle& value, pld::NotifyOp op) {
    pld::system::notify(signal, scalar_arg(peer), index(offsets), scalar_arg(value), op);
  });
  m.def("wait", [](const pl::Value& signal, const py::sequence& offsets, const py::handle& expected,
                   pld::WaitCmp cmp) {
    pld::system::wait(signal, index(offsets), scalar_arg(expected), cmp);
  });
  m.def("put",
        [](const pl::Value& dst, const py::handle& peer, const pl::Value& src,
           pld::AtomicType atomic) { pld::tensor::put(dst, scalar_arg(peer), src, atomic); });
  m.def("get",
        [](const pl::Value& dst, const py::handle& peer, const pl::Value& src,
           pld::AtomicType atomic) { pld::tensor::get(dst, scalar_arg(peer), src, atomic); });
}
