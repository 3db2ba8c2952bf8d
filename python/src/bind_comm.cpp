// bind_comm.cpp — anyp._core's communication ops beyond notify/wait and
// whole-window put/get: tile RMA (remote_load / remote_store), the region
// forms of put/get, the builtin collectives (barrier, allreduce, broadcast,
// allgather, reduce_scatter, all_to_all, all_to_all_v) and comm domains.
// The Python wrappers with PyPTO's names and keywords are in
// anyp/language/distributed/{tile,tensor,__init__}.py.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <string>

#include "anyp/anyp.hpp"
#include "bindings.hpp"
#include "operands.hpp"

namespace py = pybind11;

namespace anyp::python {
namespace {

// A collective's mode strings (PyPTO's "mesh" / "ring", anyp's others) and
// their enum values: one table per collective, the error listing it.
template <typename Mode>
struct ModeName {
  const char* name;
  Mode mode;
};

template <typename Mode, std::size_t N>
Mode mode_named(const char* op, const std::string& mode, const ModeName<Mode> (&names)[N]) {
  for (const ModeName<Mode>& n : names)
    if (mode == n.name) return n.mode;
  std::string list;
  for (std::size_t i = 0; i < N; ++i)
    list += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + "\"" + names[i].name + "\"";
  throw CompileError("compile error: " + std::string(op) + ": mode must be " + list + ", got \"" +
                     mode + "\"");
}

// Each collective's mode names, a row per algorithm of its list
// (anyp/collective_algorithms.hpp), then "auto": allreduce_mode(name), ...
#define ANYP_MODE_NAME(Mode, algorithm, snake_name) {#snake_name, Mode::algorithm},
#define ANYP_MODE_OF(Op, Mode, snake_name, LIST)                                            \
  pld::Mode snake_name##_mode(const std::string& mode) {                                    \
    using pld::Mode;                                                                        \
    static const ModeName<Mode> names[] = {LIST(ANYP_MODE_NAME, Mode){"auto", Mode::Auto}}; \
    return mode_named("pld.tensor." #snake_name, mode, names);                              \
  }
ANYP_COLLECTIVES_WITH_MODES(ANYP_MODE_OF)
#undef ANYP_MODE_OF

// {collective: its mode names} (anyp/language/distributed/tensor.py checks
// a mode= against them).
py::dict collective_modes() {
  py::dict modes;
#define ANYP_NAME(Mode, algorithm, snake_name) names.append(#snake_name);
#define ANYP_MODES_OF(Op, Mode, snake_name, LIST) \
  {                                               \
    py::list names;                               \
    LIST(ANYP_NAME, Mode)                         \
    names.append("auto");                         \
    modes[#snake_name] = names;                   \
  }
  ANYP_COLLECTIVES_WITH_MODES(ANYP_MODES_OF)
#undef ANYP_MODES_OF
#undef ANYP_NAME
  return modes;
}
#undef ANYP_MODE_NAME

// ---- tile RMA ------------------------------------------------------------------

pl::Tile remote_load(const pl::Value& view, const py::handle& peer, const py::sequence& offsets,
                     const py::sequence& tile_shape, const py::object& valid_shape) {
  if (valid_shape.is_none()) {
    return pld::tile::remote_load(view, scalar_arg(peer), index(offsets), shape(tile_shape));
  }
  return pld::tile::remote_load(view, scalar_arg(peer), index(offsets), shape(tile_shape),
                                index(valid_shape.cast<py::sequence>()));
}

void remote_store(const pl::Tile& tile, const pl::Value& view, const py::handle& peer,
                  const py::sequence& offsets, pld::AtomicType atomic) {
  pld::tile::remote_store(tile, view, scalar_arg(peer), index(offsets), atomic);
}

// ---- region put / get --------------------------------------------------------------

void put_region(const pl::Value& dst, const py::handle& peer, const pl::Value& src,
                const py::sequence& dst_offsets, const py::sequence& src_offsets,
                const py::sequence& region, pld::AtomicType atomic) {
  pld::tensor::put(dst, scalar_arg(peer), src, index(dst_offsets), index(src_offsets),
                   shape(region), atomic);
}

// pld.tensor.put_async: the transfer's event (pld.system.wait_async_event).
pld::AsyncEvent put_async_region(const pl::Value& dst, const py::handle& peer, const pl::Value& src,
                                 const py::sequence& dst_offsets, const py::sequence& src_offsets,
                                 const py::sequence& region) {
  return pld::tensor::put_async(dst, scalar_arg(peer), src, index(dst_offsets), index(src_offsets),
                                shape(region));
}

void get_region(const pl::Value& dst, const py::handle& peer, const pl::Value& src,
                const py::sequence& dst_offsets, const py::sequence& src_offsets,
                const py::sequence& region, pld::AtomicType atomic) {
  pld::tensor::get(dst, scalar_arg(peer), src, index(dst_offsets), index(src_offsets),
                   shape(region), atomic);
}

// ---- collectives -------------------------------------------------------------------

// allreduce(data, signal or None, op, mode, core_num or None): without a
// signal, the host form with a synthesized one (mesh only).
pl::Value allreduce(const pl::Value& data, const py::object& signal, pld::ReduceOp op,
                    const std::string& mode, const py::object& core_num) {
  const pld::AllreduceMode m = allreduce_mode(mode);
  if (signal.is_none()) {
    if (m != pld::AllreduceMode::Mesh) {
      throw CompileError("compile error: pld.tensor.allreduce: mode=\"" + mode +
                         "\" needs an explicit signal; only the mesh allreduce synthesizes one");
    }
    if (!core_num.is_none()) {
      throw CompileError(
          "compile error: pld.tensor.allreduce: core_num needs an explicit [NR, S] signal "
          "(S >= core_num) on anyp");
    }
    return pld::tensor::allreduce(data, op);
  }
  const auto& sig = signal.cast<const pl::Value&>();
  if (!core_num.is_none()) {
    if (m != pld::AllreduceMode::Mesh) {
      throw CompileError("compile error: pld.tensor.allreduce: core_num is for mode=\"mesh\" only");
    }
    return pld::tensor::allreduce(data, sig, pld::core_num(scalar_arg(core_num)), op);
  }
  return pld::tensor::allreduce(data, sig, op, m);
}

// `rows`: PyPTO's row counts (pld::Counts::Rows), what Python's
// pld.tensor.all_to_all_v means.
pl::Value all_to_all_v(const pl::Value& src, const pl::Value& send_counts, const pl::Value& dst,
                       const pl::Value& recv_counts, const pl::Value& signal,
                       const py::object& core_num, bool rows) {
  const pld::Counts counts = rows ? pld::Counts::Rows : pld::Counts::Elements;
  if (core_num.is_none()) {
    return pld::tensor::all_to_all_v(src, send_counts, dst, recv_counts, signal, counts);
  }
  return pld::tensor::all_to_all_v(src, send_counts, dst, recv_counts, signal,
                                   pld::core_num(scalar_arg(core_num)), counts);
}

void bind_collectives(py::module_& m) {
  py::enum_<pld::ReduceOp>(m, "ReduceOp")
      .value("Sum", pld::ReduceOp::Sum)
      .value("Max", pld::ReduceOp::Max)
      .value("Min", pld::ReduceOp::Min)
      .value("Prod", pld::ReduceOp::Prod);
  m.def("barrier", [](const pl::Value& signal) { return pld::tensor::barrier(signal); });
  m.def("host_barrier", [] { pld::tensor::barrier(); });
  m.def("allreduce", &allreduce);
  m.def("broadcast", [](const pl::Value& data, const pl::Value& signal, const py::handle& root,
                        const std::string& mode) {
    return pld::tensor::broadcast(data, signal, scalar_arg(root), broadcast_mode(mode));
  });
  m.def("allgather", [](const pl::Value& src, const pl::Value& dst, const pl::Value& signal,
                        const std::string& mode) {
    return pld::tensor::allgather(src, dst, signal, allgather_mode(mode));
  });
  m.def("reduce_scatter", [](const pl::Value& data, const pl::Value& signal, pld::ReduceOp op,
                             const std::string& mode) {
    return pld::tensor::reduce_scatter(data, signal, op, reduce_scatter_mode(mode));
  });
  m.def("all_to_all", [](const pl::Value& src, const pl::Value& dst, const pl::Value& signal,
                         const std::string& mode) {
    return pld::tensor::all_to_all(src, dst, signal, all_to_all_mode(mode));
  });
  m.def("all_to_all_v", &all_to_all_v);
  m.def("collective_modes", &collective_modes);
}

// ---- comm domains (host) --------------------------------------------------------------

void bind_domains(py::module_& m) {
  py::class_<pld::CommDomain>(m, "CommDomain");
  m.def("comm_domain", [](const std::string& name) { return pld::comm_domain(name); });
  m.def("comm_group", [](const pld::CommDomain& d, const py::handle& first, const py::handle& count,
                         const py::handle& stride) {
    pld::comm_group(d, scalar_arg(first), scalar_arg(count), scalar_arg(stride));
  });
  m.def("comm_group_ranks", [](const pld::CommDomain& d, const py::sequence& ranks) {
    pld::comm_group(d, index(ranks));
  });
  m.def("alloc_domain_window_buffer", [](const std::string& name, const py::sequence& s,
                                         anyp::DType dtype, const pld::CommDomain& d) {
    return pld::alloc_window_buffer(name, shape(s), dtype, d);
  });
}

}  // namespace

void bind_comm(py::module_& m) {
  m.def("remote_load", &remote_load);
  m.def("remote_store", &remote_store);
  m.def("put_region", &put_region);
  py::class_<pld::AsyncEvent>(m, "AsyncEvent");
  m.def("put_async", [](const pl::Value& dst, const py::handle& peer, const pl::Value& src) {
    return pld::tensor::put_async(dst, scalar_arg(peer), src);
  });
  m.def("put_async_region", &put_async_region);
  m.def("wait_async", [](const pld::AsyncEvent& event) { pld::system::wait_async(event); });
  m.def("get_region", &get_region);
  bind_collectives(m);
  bind_domains(m);
}

}  // namespace anyp::python
