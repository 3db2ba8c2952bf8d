// passes.hpp — the compile's passes, in order, each named, with the text of
// what it leaves (RunConfig::dump_ir, --dump-ir, prints it after each):
//   verify                    the program collected from the host function, verified
//   bind-dims                 P and the dims the host's arguments bind
//   specialize-host           the host run for this P: every rank's dispatches
//   check-functions           the dispatched functions checked (nothing changes)
//   lower                     each dispatched function's VM code
//   order-dispatches          the dispatch list with its cross-rank order
//   place-scratch             created tensors' storage and the engine's cells as buffers
//   layout-windows            the symmetric window: each buffer's offset and slot
//   mark-signal-buffers       which buffers are signals (credits only)
//   check-collective-windows  each collective's windows checked (nothing changes)
// compile_plan (pipeline.cpp) runs them on a PassState.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "anyp/arg_ref.hpp"
#include "anyp/run_config.hpp"
#include "compiler/check_functions.hpp"
#include "compiler/order_dispatches.hpp"
#include "compiler/plan.hpp"
#include "compiler/specialize_host.hpp"
#include "runtime/timeline/cost_model.hpp"

namespace anyp::compiler {

// What the passes build: the plan, and what a later pass takes from an
// earlier one.
struct PassState {
  const std::vector<ArgRef>* args = nullptr;
  const RunConfig* config = nullptr;
  std::shared_ptr<detail::Plan> plan;
  HostSpecialization spec;
  // Each dispatched function once per distinct list of window domains, in
  // first-dispatch order, and its code's index.
  std::vector<DispatchedFunction> dispatched;
  std::map<DispatchedFunction, std::int32_t> code_of;
  std::optional<runtime::CostModel> model;  // read once, if a collective asks
  DispatchOrder order;
};

struct Pass {
  std::string_view name;
  void (*run)(PassState&);
  std::string (*after)(const PassState&);  // the text of what it leaves
};

// The passes, in the order they run.
const std::vector<Pass>& compile_passes();

// "; ---- after <pass> ----" and the pass's text: what --dump-ir prints.
std::string pass_dump(const Pass& pass, const PassState& state);

}  // namespace anyp::compiler
