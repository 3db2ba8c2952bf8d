// bind_trace.cpp — anyp._core's tracer: the handles (Dim, Value, Tile,
// Scalar), function definitions whose bodies are Python callables, calls,
// control flow, scalar and tile arithmetic, load/store, windows and the comm
// context, notify/wait and put/get. anyp/_frontend.py calls them while it
// walks a function's AST.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "anyp/anyp.hpp"
#include "bindings.hpp"
#include "frontend/call_site.hpp"
#include "frontend/function_def.hpp"
#include "frontend/trace.hpp"
#include "ir/type.hpp"
#include "operands.hpp"

namespace py = pybind11;

namespace anyp::python {
namespace {

// The traced type of a handle ("tile [1, 64] FP32"), or "" for a handle of
// another trace than the innermost one.
std::string type_text(const pl::Handle& h) {
  const detail::Trace* t = detail::Trace::active();
  if (t == nullptr || h.var().owner != t || !h.var().valid()) return "";
  return ir::to_string(t->type_of(h.var().id));
}

// ---- definitions -------------------------------------------------------------

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

// A host worker whose body is the Python callable `body(views)`: one
// (memoryview, dtype name, shape) per tensor argument, the memoryview
// writable over the run's copy of it (valid only during the call). `body`
// returns None, or the text of the exception the user's function raised
// (anyp/_frontend.py keeps the exception itself for the caller).
FunctionRef define_host_worker(const std::string& name, const std::vector<pl::Param>& params,
                               const py::function& body) {
  auto keep = std::make_shared<py::function>(body);
  return pl::jit::host_worker(name, params, [keep](std::span<HostTensor> args) {
    py::gil_scoped_acquire gil;
    py::list views;
    for (HostTensor& t : args) {
      views.append(py::make_tuple(
          py::memoryview::from_memory(t.data(), static_cast<py::ssize_t>(t.nbytes())),
          std::string(dtype_name(t.dtype())), py::cast(t.shape())));
    }
    py::object failure = (*keep)(views);
    for (py::handle v : views) v.cast<py::tuple>()[0].attr("release")();
    if (!failure.is_none()) throw std::runtime_error(failure.cast<std::string>());
  });
}

// A parameter of a scope outlined from the innermost traced body (PyPTO's
// `with pl.at(level=pl.Level.CORE_GROUP):`): named `name`, of the type of
// `handle` there; a tensor or window InOut (narrowed to In after the
// scope's trace when it writes none) unless `tensor_intent` is "in", a
// scalar In.
pl::Param param_like(const std::string& name, const py::handle& handle,
                     const std::string& tensor_intent) {
  detail::Trace& t = detail::Trace::current("pl.at");
  const detail::VarRef v = py::isinstance<pl::Scalar>(handle)
                               ? handle.cast<const pl::Scalar&>().var()
                               : handle.cast<const pl::Value&>().var();
  const ir::Type& type = t.type_of(t.id_of(v, "pl.at"));
  pl::Param p;
  p.name = name;
  p.type.dtype = type.dtype;
  for (const ir::Expr& e : type.shape) p.type.shape.emplace_back(e);
  switch (type.kind) {
    case ir::TypeKind::Scalar:
      p.type.kind = pl::TypeSpec::Kind::Scalar;
      return p;
    case ir::TypeKind::DistTensor:
      p.type.kind = pl::TypeSpec::Kind::DistributedTensor;
      p.intent = tensor_intent == "in" ? pl::Intent::In : pl::Intent::InOut;
      return p;
    case ir::TypeKind::Tensor:
      p.type.kind = pl::TypeSpec::Kind::Tensor;
      p.intent = tensor_intent == "in" ? pl::Intent::In : pl::Intent::InOut;
      return p;
    default:
      throw anyp::CompileError("compile error: pl.at: '" + name + "' is " + ir::to_string(type) +
                               ", which a pl.at block cannot take from the enclosing function");
  }
}

// A function of `level` ("incore", "orchestration") outlined from a
// `with pl.at(...)` block: `body` walks the block; its tensor parameters
// are narrowed to what it writes.
FunctionRef define_region(const std::string& name, const std::string& level,
                          const std::vector<pl::Param>& params, const py::function& body) {
  FunctionRef f = define(name, level, params, body);
  f.def()->narrow_intents();
  return f;
}

void call(const FunctionRef& fn, const py::sequence& args, const py::object& device) {
  std::vector<detail::CallArg> out;
  for (const py::handle a : args) out.push_back(call_arg(a));
  if (!device.is_none()) {
    // device=r: a rank loop's index, an int, or a dim expression (NR - 1).
    if (py::isinstance<pl::Scalar>(device)) {
      out.push_back(detail::CallArg(pl::device(device.cast<const pl::Scalar&>())));
    } else if (py::isinstance<pl::Dim>(device)) {
      out.push_back(detail::CallArg(pl::device(device.cast<const pl::Dim&>())));
    } else if (py::isinstance<py::int_>(device) && !py::isinstance<py::bool_>(device)) {
      out.push_back(detail::CallArg(pl::device(int64_or(device, "compile error: device=: "))));
    } else {
      throw anyp::CompileError(
          "compile error: device= must be a rank: an int, a traced scalar (a rank loop's "
          "index) or a pl.dynamic dim expression such as NR - 1, got " +
          std::string(py::str(py::type::of(device).attr("__name__"))));
    }
  }
  detail::record_call(*fn.def(), out);
}

}  // namespace

void bind_trace(py::module_& m) {
  namespace detail = anyp::detail;
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
  m.def("param", &param);
  m.def("define", &define);
  m.def("define_host_worker", &define_host_worker);
  m.def("param_like", &param_like, py::arg("name"), py::arg("handle"),
        py::arg("tensor_intent") = "inout");
  m.def("define_region", &define_region);
  m.def("call", &call);
  m.def("ir_text", [](const FunctionRef& f) { return f.ir_text(); });

  // Writes `dst` (the C++ handle's assignment): a loop-carried or
  // rebound name.
  // A new variable holding the handle's value (C++'s `pl::Tile b = a;`):
  // `b = a` in Python when either name is written again.
  m.def("copy", [](const pl::Tile& h) { return pl::Tile(h); });
  m.def("copy", [](const pl::Scalar& h) { return pl::Scalar(h); });
  m.def("copy", [](const pl::Value& h) { return pl::Value(h); });
  m.def("assign", [](pl::Value& dst, const pl::Value& src) { dst = src; });
  m.def("assign", [](pl::Tile& dst, const pl::Tile& src) { dst = src; });
  m.def("assign", [](pl::Scalar& dst, const pl::Scalar& src) { dst = src; });

  // Source locations: the walker pins each statement's file, line and
  // column before it evaluates it; every op recorded carries it.
  m.def("set_location", [](const std::string& file, std::uint32_t line, std::uint32_t column) {
    detail::pin_call_site(file, line, column);
  });
  m.def("clear_location", [] { detail::unpin_call_site(); });

  // Control flow: the bodies are Python callables.
  m.def("range", [](const py::handle& start, const py::handle& stop, const py::handle& step,
                    const std::function<void(pl::Scalar)>& body) {
    pl::range(scalar_arg(start), scalar_arg(stop), scalar_arg(step), body);
  });
  m.def("if_", [](const pl::Scalar& cond, const std::function<void()>& then_body,
                  const std::function<void()>& else_body) { pl::if_(cond, then_body, else_body); });

  // Scalars: Python's operators. // and % floor, as Python's do, in a host
  // function; "trunc//" and "trunc%" truncate, as C does, for the kernel and
  // orchestration levels (PyPTO generates those as C++ and PTO code).
  m.def("scalar_binary", [](const std::string& op, const py::handle& a, const py::handle& b) {
    const pl::ScalarArg x = scalar_arg(a), y = scalar_arg(b);
    if (op == "+") return x + y;
    if (op == "-") return x - y;
    if (op == "*") return x * y;
    if (op == "//") return pl::floor_div(x, y);
    if (op == "%") return pl::floor_mod(x, y);
    if (op == "trunc//") return x / y;
    if (op == "trunc%") return x % y;
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
  // With `valid` (not None): a partial tile, only its top-left `valid`
  // corner moved (the rest of a loaded tile is 0).
  m.def("load", [](const pl::Value& t, const py::sequence& offsets, const py::sequence& s,
                   const py::object& valid) {
    if (valid.is_none()) return pl::load(t, index(offsets), shape(s));
    return pl::load(t, index(offsets), shape(s), index(valid.cast<py::sequence>()));
  });
  m.def("store", [](const pl::Tile& tile, const py::sequence& offsets, const pl::Value& t,
                    const py::object& valid) {
    if (valid.is_none()) return pl::store(tile, index(offsets), t);
    return pl::store(tile, index(offsets), t, index(valid.cast<py::sequence>()));
  });
  m.def("index", [](const pl::Value& v, const py::handle& i) { return v[scalar_arg(i)]; });

  // Windows, the comm context, signals and one-sided transfers.
  m.def("alloc_window_buffer", [](const std::string& name, const py::sequence& s, anyp::DType d) {
    return pld::alloc_window_buffer(name, shape(s), d);
  });
  // A byte-sized buffer: typed by the views taken of it (pld.window with an
  // offset in elements of the view's dtype).
  m.def("alloc_window_buffer_bytes", [](const std::string& name, const py::handle& bytes) {
    return pld::alloc_window_buffer(name, dim(bytes));
  });
  m.def("window", [](const pl::Value& buffer, const py::sequence& s, anyp::DType d) {
    return pld::window(buffer, shape(s), d);
  });
  m.def("window_at", [](const pl::Value& buffer, const py::sequence& s, anyp::DType d,
                        const py::handle& offset) {
    return pld::window(buffer, shape(s), d, scalar_arg(offset));
  });
  m.def("world_size", [] { return pld::world_size(); });
  m.def("get_comm_ctx", [](const pl::Value& window) { return pld::get_comm_ctx(window); });
  m.def("rank", [](const pld::CommCtx& ctx) { return pld::rank(ctx); });
  m.def("nranks", [](const pld::CommCtx& ctx) { return pld::nranks(ctx); });
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

}  // namespace anyp::python
