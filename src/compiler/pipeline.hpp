// pipeline.hpp — the compile pipeline and its cache:
//   trace -> verify -> bind_dims -> check_functions -> specialize_host
//         -> layout_windows -> lower -> mark_signal_buffers  => Plan
// The RunConfig is validated by the caller (api/compile.cpp).
// Plans are cached per (host function, argument shapes/dtypes and scalar
// values, device list, platform).
#pragma once

#include <memory>
#include <vector>

#include "anyp/compiled_program.hpp"
#include "anyp/run_config.hpp"
#include "compiler/plan.hpp"
#include "frontend/function_def.hpp"

namespace anyp::compiler {

std::shared_ptr<const detail::Plan> compile_plan(const detail::FunctionDef& host,
                                                 const std::vector<ArgRef>& args,
                                                 const RunConfig& config);

void clear_plan_cache();
// Number of plans in the cache (for tests of caching).
std::size_t plan_cache_size();

}  // namespace anyp::compiler
