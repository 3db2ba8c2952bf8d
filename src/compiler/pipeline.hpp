// pipeline.hpp — the compile pipeline and its cache: from a host function's
// IR (traced by a front-end: the API traces a pl::jit::host), the passes of
// docs/design.md §4 in order => Plan. The RunConfig is validated by the
// caller (api/compile.cpp). Plans are cached per (function id, argument
// shapes/dtypes and scalar values, device list, platform): the id names
// the front-end's function for the life of the process, never reused.
#pragma once

#include <memory>
#include <vector>

#include "anyp/arg_ref.hpp"
#include "anyp/run_config.hpp"
#include "compiler/plan.hpp"
#include "ir/function.hpp"

namespace anyp::compiler {

std::shared_ptr<const detail::Plan> compile_plan(std::uint64_t function_id,
                                                 std::shared_ptr<const ir::Function> host,
                                                 const std::vector<ArgRef>& args,
                                                 const RunConfig& config);

void clear_plan_cache();
// Number of plans in the cache (for tests of caching).
std::size_t plan_cache_size();

}  // namespace anyp::compiler
