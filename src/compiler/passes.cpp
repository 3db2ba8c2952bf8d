// passes.cpp — the compile's passes (passes.hpp), each a function of the
// PassState, and the text each leaves for --dump-ir.
#include "compiler/passes.hpp"

#include <algorithm>

#include "anyp/host_tensor.hpp"
#include "compiler/artifact.hpp"
#include "compiler/bind_dims.hpp"
#include "compiler/check_collective_windows.hpp"
#include "compiler/layout_windows.hpp"
#include "compiler/lower.hpp"
#include "compiler/mark_signal_buffers.hpp"
#include "ir/printer.hpp"
#include "ir/verifier.hpp"
#include "runtime/lowered_code.hpp"

namespace anyp::compiler {
namespace {

// `count` INT32 cells the runtime itself uses: the launch and join cells of
// multi-block launches (Executable::blocks), the dispatch order's cells.
runtime::WindowBuffer engine_cells(const char* name, std::int64_t count) {
  runtime::WindowBuffer b;
  b.name = name;
  b.dtype = DType::INT32;
  b.shape = {count};
  b.used = 4 * count;
  return b;
}

// ---- the passes ------------------------------------------------------------------

void verify(PassState& s) {
  ir::verify_program(s.plan->program);
  s.plan->exec.program = s.plan->program.host->name;
}

void bind_host_dims(PassState& s) {
  detail::Plan& plan = *s.plan;
  const ir::Function& host = *plan.program.host;
  plan.bindings = bind_dims(host, *s.args, plan.exec.world_size);
  plan.host_params = host_param_specs(host, *s.args);
  for (const auto& p : plan.host_params)
    plan.exec.host_args.push_back(runtime::HostArgSpec{p.name, p.is_tensor, p.dtype, p.shape});
  check_parameter_shapes(plan.program, plan.bindings, /*skip_unbound=*/true);
}

void specialize(PassState& s) {
  detail::Plan& plan = *s.plan;
  s.spec = specialize_host(*plan.program.host, plan.bindings, *s.args, plan.exec.world_size);
  check_parameter_shapes(plan.program, plan.bindings);  // with the dims dispatches bound
  plan.synthesized = s.spec.synthesized;
  plan.exec.domains = std::move(s.spec.domains);
  for (const auto& rank : s.spec.ranks) {
    for (const HostDispatch& d : rank) {
      DispatchedFunction key{d.callee, dispatch_domains(d.args, s.spec.buffers)};
      if (s.code_of.emplace(key, static_cast<std::int32_t>(s.dispatched.size())).second)
        s.dispatched.push_back(std::move(key));
    }
  }
}

void check_dispatched(PassState& s) {
  const CommScope scope{s.plan->exec.world_size, &s.plan->exec.domains};
  check_functions(s.plan->program, s.plan->bindings, scope, s.dispatched);
}

void lower_dispatched(PassState& s) {
  detail::Plan& plan = *s.plan;
  const CommScope scope{plan.exec.world_size, &plan.exec.domains};
  // The cost model, read once if a collective asks for it (its candidates'
  // estimates, Auto's choice).
  const ModelSource model_source = [&]() -> const runtime::CostModel& {
    if (!s.model) {
      s.model = s.config->model_file.empty() ? runtime::platform_cost_model(s.config->platform)
                                             : runtime::load_cost_model(s.config->model_file);
    }
    return *s.model;
  };
  for (const auto& [fn, domains] : s.dispatched)
    plan.exec.codes.push_back(
        lower_orchestration(*fn, plan.bindings, scope, domains, model_source));
  if (s.model) plan.model_name = s.model->name;
}

void order(PassState& s) {
  runtime::Executable& exec = s.plan->exec;
  s.order = order_dispatches(s.spec.ranks);
  exec.ranks.resize(s.spec.ranks.size());
  exec.arg_shapes = s.spec.arg_shapes;
  for (std::size_t r = 0; r < s.spec.ranks.size(); ++r) {
    for (std::size_t i = 0; i < s.spec.ranks[r].size(); ++i) {
      HostDispatch& d = s.spec.ranks[r][i];
      const std::int32_t code =
          s.code_of.at(DispatchedFunction{d.callee, dispatch_domains(d.args, s.spec.buffers)});
      runtime::DispatchOrder order{std::move(s.order.waits[r][i]),
                                   std::move(s.order.releases[r][i]),
                                   std::move(s.order.edge_releases[r][i])};
      const bool ordered =
          !order.waits.empty() || !order.releases.empty() || !order.edge_releases.empty();
      exec.ranks[r].push_back(runtime::Dispatch{
          code, std::move(d.args),
          ordered ? std::make_unique<const runtime::DispatchOrder>(std::move(order)) : nullptr});
    }
  }
  exec.order_edges = std::move(s.order.edges);
}

// Created tensors' storage, the block launches' cells and the dispatch
// order's cells become buffers after the program's own.
void place_scratch(PassState& s) {
  runtime::Executable& exec = s.plan->exec;
  std::vector<runtime::WindowBuffer>& buffers = s.spec.buffers;
  for (const runtime::LoweredCode& code : exec.codes)
    for (const runtime::Instr& i : code.instrs)
      if (i.op == runtime::Opcode::BlockLaunch) exec.blocks = std::max(exec.blocks, i.imm);
  const auto next_buffer = [&] { return static_cast<std::int32_t>(buffers.size()); };
  if (exec.blocks > 1) {
    exec.block_buffer = next_buffer();
    buffers.push_back(engine_cells("(block launches)", exec.blocks));
  }
  std::map<std::string, int> scratch_names;        // a repeated name gets " #2", " #3", ...
  for (runtime::LoweredCode& code : exec.codes) {  // pl::create_tensor's storage
    const std::int32_t first = next_buffer();
    for (const runtime::ScratchTensor& t : code.scratch) {
      runtime::WindowBuffer b;
      const int seen = ++scratch_names[t.name];
      b.name = seen == 1 ? t.name : t.name + " #" + std::to_string(seen);
      b.dtype = t.dtype;
      b.shape = t.shape;
      std::int64_t bytes = static_cast<std::int64_t>(dtype_bytes(t.dtype));
      for (std::int64_t e : t.shape) bytes *= e;
      b.used = t.slots * ((bytes + 31) / 32 * 32);
      b.local = !t.shared;
      buffers.push_back(std::move(b));
    }
    for (runtime::Instr& i : code.instrs)
      if (i.op == runtime::Opcode::CreateView) i.imm += first;
  }
  if (s.order.cells > 0) {
    exec.order_buffer = next_buffer();
    buffers.push_back(engine_cells("(dispatch order)", s.order.cells));
  }
}

void layout(PassState& s) {
  runtime::Executable& exec = s.plan->exec;
  exec.window_bytes = layout_windows(s.spec.buffers);
  exec.buffers = std::move(s.spec.buffers);
}

void mark_signals(PassState& s) {
  runtime::Executable& exec = s.plan->exec;
  mark_signal_buffers(exec);
  for (std::int32_t b : {exec.block_buffer, exec.order_buffer}) {
    if (b >= 0) exec.buffers[static_cast<std::size_t>(b)].signal = true;
  }
  // The order cells take AtomicAdd +1 releases and Ge waits only.
  if (exec.order_buffer >= 0)
    exec.buffers[static_cast<std::size_t>(exec.order_buffer)].credit_only = true;
}

void check_windows(PassState& s) { check_collective_windows(s.plan->program, s.plan->exec); }

// ---- what each leaves --------------------------------------------------------------

std::string program_text(const PassState& s) { return ir::print_program(s.plan->program); }

std::string dims_text(const PassState& s) {
  const std::string dims = describe_bindings(s.plan->bindings, s.plan->program);
  return "P = " + std::to_string(s.plan->exec.world_size) + (dims.empty() ? "" : ", " + dims) +
         "\n";
}

std::string host_dispatches_text(const PassState& s) {
  std::string text = specialized_ir_text(*s.plan) + "\nhost dispatches:\n";
  for (std::size_t r = 0; r < s.spec.ranks.size(); ++r) {
    for (const HostDispatch& d : s.spec.ranks[r]) {
      text += "  rank " + std::to_string(r) + ": " + d.callee->name + "(";
      for (std::size_t i = 0; i < d.args.size(); ++i)
        text += (i ? ", " : "") + dispatch_arg_text(d.args[i], *s.plan, s.spec.buffers);
      text += ")\n";
    }
  }
  return text;
}

std::string unchanged_text(const PassState&) { return "(checks only: nothing changes)\n"; }

std::string codes_text(const PassState& s) {
  std::string text;
  for (const auto& code : s.plan->exec.codes) text += lowered_code_text(code) + "\n";
  return text;
}

std::string dispatch_order_text(const PassState& s) {
  return dispatch_list_text(*s.plan, s.spec.buffers);
}

// The buffers before they have a place in the window.
std::string buffers_text(const PassState& s) {
  std::string text = "window buffers (not yet placed):\n";
  for (const auto& b : s.spec.buffers)
    text += "  " + b.name + ": used " + std::to_string(b.used) + " B\n";
  return text;
}

std::string layout_text(const PassState& s) { return window_layout_text(*s.plan); }

}  // namespace

const std::vector<Pass>& compile_passes() {
  static const std::vector<Pass> passes = {
      {"verify", verify, program_text},
      {"bind-dims", bind_host_dims, dims_text},
      {"specialize-host", specialize, host_dispatches_text},
      {"check-functions", check_dispatched, unchanged_text},
      {"lower", lower_dispatched, codes_text},
      {"order-dispatches", order, dispatch_order_text},
      {"place-scratch", place_scratch, buffers_text},
      {"layout-windows", layout, layout_text},
      {"mark-signal-buffers", mark_signals, layout_text},
      {"check-collective-windows", check_windows, unchanged_text},
  };
  return passes;
}

std::string pass_dump(const Pass& pass, const PassState& state) {
  return "; ---- after " + std::string(pass.name) + " ----\n" + pass.after(state);
}

}  // namespace anyp::compiler
