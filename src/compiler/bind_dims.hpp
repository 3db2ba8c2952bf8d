// bind_dims.hpp — pass 1: bind every dynamic dim of the host signature from
// the actual arguments, and world_size from the device list.
//
// Requires: a verified host function and its arguments.
// Guarantees: every host parameter's declared shape evaluates to exactly the
// argument's shape, or a CompileError names the function, parameter, dim
// index, declared expression and actual value (with the pl::dynamic hint
// when a constant pinned a dim).
#pragma once

#include <optional>
#include <vector>

#include "anyp/arg_ref.hpp"
#include "compiler/plan.hpp"
#include "ir/function.hpp"

namespace anyp::compiler {

ir::DimBindings bind_dims(const ir::Function& host, const std::vector<ArgRef>& args,
                          std::int64_t world_size);
std::vector<detail::HostParamSpec> host_param_specs(const ir::Function& host,
                                                    const std::vector<ArgRef>& args);
// Each parameter's declared shape, evaluated with the dims the present
// tensor arguments bind (bare dims, then solvable extents); nullopt for a
// scalar parameter or a shape that names a dim nothing bound. No checks:
// compile() checks the full call.
std::vector<std::optional<std::vector<std::int64_t>>> parameter_shapes(
    const ir::Function& host, const std::vector<std::optional<ArgRef>>& args,
    std::int64_t world_size);
// "NR = 3, M = 8" for the dims used in `bindings` (world_size omitted).
std::string describe_bindings(const ir::DimBindings& bindings, const ir::Program& program);

}  // namespace anyp::compiler
