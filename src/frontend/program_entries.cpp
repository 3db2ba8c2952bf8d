// program_entries.cpp — pl::Program: orchestration functions as entry
// points, each given a host function that dispatches it once to every rank
// (tensors sliced by rank, one window buffer per window parameter).
#include "anyp/errors.hpp"
#include "anyp/pl.hpp"
#include "anyp/pld.hpp"
#include "frontend/function_def.hpp"

namespace pl {
namespace {

using anyp::detail::CallArg;
using anyp::detail::VarRef;

// The host of `entry`: its parameters, tensors with a leading [P] dim.
HostFunction host_for(const std::string& program, const Function& entry) {
  const std::shared_ptr<anyp::detail::FunctionDef> def = entry.def();
  if (def->level() != anyp::ir::Level::Orchestration) {
    throw anyp::CompileError("compile error: program '" + program + "': entry '" + def->name() +
                             "' is an " + anyp::ir::level_name(def->level()) +
                             " function; a program's entries are orchestration functions");
  }
  const std::vector<Param>& params = def->params();
  std::vector<Param> host_params;
  for (const Param& p : params) {
    if (p.type.kind == TypeSpec::Kind::DistributedTensor) continue;  // a window of its own
    Param h = p;
    if (p.type.kind == TypeSpec::Kind::Tensor)
      h.type.shape.insert(h.type.shape.begin(), pld::world_size());
    host_params.push_back(std::move(h));
  }
  const std::size_t arity = host_params.size();
  return HostFunction(anyp::detail::make_function(
      def->name(), anyp::detail::Level::Host, std::move(host_params), arity,
      [def, params](const std::vector<VarRef>& vars) {
        std::vector<Value> buffers;  // one per window parameter, in order
        for (const Param& p : params) {
          if (p.type.kind == TypeSpec::Kind::DistributedTensor)
            buffers.push_back(pld::alloc_window_buffer(p.name, p.type.shape, p.type.dtype));
        }
        range(pld::world_size(), [&](Scalar r) {
          std::vector<Value> held;  // the slices and views, alive until the call is recorded
          held.reserve(params.size());
          std::vector<CallArg> args;
          std::size_t host = 0, window = 0;
          for (const Param& p : params) {
            if (p.type.kind == TypeSpec::Kind::DistributedTensor) {
              const Param& w = p;
              args.emplace_back(
                  held.emplace_back(pld::window(buffers[window++], w.type.shape, w.type.dtype)));
            } else if (p.type.kind == TypeSpec::Kind::Tensor) {
              args.emplace_back(held.emplace_back(Value(vars[host++])[r]));
            } else {
              args.emplace_back(Scalar(vars[host++]));
            }
          }
          args.emplace_back(device(r));
          anyp::detail::record_call(*def, args);
        });
      }));
}

}  // namespace

Program::Program(std::string name, std::vector<Function> entries) : name_(std::move(name)) {
  if (entries.empty())
    throw anyp::CompileError("compile error: program '" + name_ + "' has no entries");
  for (const Function& f : entries) {
    for (const auto& [n, _] : entries_) {
      if (n == f.name())
        throw anyp::CompileError("compile error: program '" + name_ + "': entry '" + n +
                                 "' is given twice");
    }
    entries_.emplace_back(f.name(), host_for(name_, f));
  }
}

std::vector<std::string> Program::entry_names() const {
  std::vector<std::string> names;
  for (const auto& [n, _] : entries_) names.push_back(n);
  return names;
}

const HostFunction& Program::entry(const std::string& entry) const {
  std::string names;
  for (const auto& [n, host] : entries_) {
    if (n == entry) return host;
    names += (names.empty() ? "" : ", ") + n;
  }
  throw anyp::CompileError("compile error: program '" + name_ + "' has no entry '" + entry +
                           "'; its entries: " + names);
}

}  // namespace pl
