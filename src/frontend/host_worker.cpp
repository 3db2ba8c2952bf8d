// host_worker.cpp — pl::jit::host_worker: an orchestration-level function
// whose whole body is one pl.host_worker op holding the callable, with the
// function's parameters as its operands. The host calls it like an
// orchestration function, without a device (compiler/specialize_host.cpp
// runs it on rank 0's dispatch list, where the dispatch order places it).
#include <memory>

#include "anyp/pl.hpp"
#include "frontend/trace.hpp"

namespace pl::jit {

Function host_worker(std::string name, std::vector<Param> params, anyp::HostWorkerBody body) {
  namespace detail = anyp::detail;
  auto callable = std::make_shared<const anyp::HostWorkerBody>(std::move(body));
  const std::size_t arity = params.size();
  for (const Param& p : params) {
    if (p.type.kind != TypeSpec::Kind::Tensor) {
      throw anyp::CompileError(
          "compile error: host worker '" + name + "', parameter '" + p.name +
          "': a host worker takes host tensors (pl::Tensor), not " +
          (p.type.kind == TypeSpec::Kind::Scalar ? "a scalar" : "a window view"));
    }
  }
  return Function(detail::make_function(
      std::move(name), detail::Level::Orchestration, std::move(params), arity,
      [callable](const std::vector<detail::VarRef>& vars) {
        detail::Trace& t = detail::Trace::current("pl.host_worker");
        anyp::ir::Op op;
        op.kind = anyp::ir::OpKind::HostWorker;
        op.host_worker = callable;
        for (const detail::VarRef& v : vars)
          op.args.push_back(anyp::ir::Operand::of_var(t.id_of(v, "pl.host_worker")));
        t.emit(std::move(op));
      }));
}

}  // namespace pl::jit
