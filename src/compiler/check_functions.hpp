// check_functions.hpp — pass 4 (after specialize_host): with dims bound, check every orchestration
// and incore function: each extent is a positive exact integer, each tile
// row is a whole number of 32-byte units, elementwise operands agree in
// shape, call arguments match their parameters, constant regions are in
// bounds, and builtin signals have the shape their protocol needs.
// Throws CompileError naming function, op (or parameter), dim and values.
#pragma once

#include <utility>
#include <vector>

#include "compiler/comm_scope.hpp"
#include "ir/function.hpp"

namespace anyp::compiler {

// A collective's counts (signal cells, rows, copies, root) are checked
// against the size of the domain its windows are in (P in the world), so a
// function is checked once per distinct ParamDomains it is dispatched with
// (`dispatched`), and a kernel with the domains of its call's arguments.
// Functions no dispatch reaches are checked in the world.
// Before specialize_host: every parameter extent of every orchestration and
// incore function is a positive exact integer (the error names the function
// and parameter that declares it, ahead of the host's views of it). With
// `skip_unbound`, an extent that names a dim not bound yet is left for the
// check after specialize_host (a dim that only a dispatch argument's shape
// binds).
void check_parameter_shapes(const ir::Program& program, const ir::DimBindings& bindings,
                            bool skip_unbound = false);
using DispatchedFunction = std::pair<const ir::Function*, ParamDomains>;
void check_functions(const ir::Program& program, const ir::DimBindings& bindings,
                     const CommScope& scope, const std::vector<DispatchedFunction>& dispatched);

}  // namespace anyp::compiler
