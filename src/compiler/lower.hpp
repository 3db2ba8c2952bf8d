// lower.hpp — pass 5: lower an orchestration function, with its incore
// kernels inlined, to flat resumable code for the rank VM. Loops and
// branches become jumps; builtin collectives expand into notify/wait
// sequences (lower_collectives.hpp). Shared by every rank that runs it with
// the same window domains.
//
// Requires: checked functions (check_functions) and bound dims.
#pragma once

#include <functional>

#include "compiler/comm_scope.hpp"
#include "ir/function.hpp"
#include "runtime/lowered_code.hpp"
#include "runtime/timeline/cost_model.hpp"

namespace anyp::compiler {

// `domains`: the comm domain of each window parameter, as dispatched (a
// collective on a domain's view spans its group; its rank and size come
// from the view at run time). `model` gives the platform's cost model, for
// AllreduceMode::Auto (called only when a call needs it).
using ModelSource = std::function<const runtime::CostModel&()>;
runtime::LoweredCode lower_orchestration(const ir::Function& orchestration,
                                         const ir::DimBindings& bindings, const CommScope& scope,
                                         const ParamDomains& domains, const ModelSource& model);
// A readable listing of lowered code, one instruction per line.
std::string lowered_code_text(const runtime::LoweredCode& code);

}  // namespace anyp::compiler
