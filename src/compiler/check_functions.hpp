// check_functions.hpp — pass 3: with dims bound, check every orchestration
// and incore function: each extent is a positive exact integer, each tile
// row is a whole number of 32-byte units, elementwise operands agree in
// shape, call arguments match their parameters, constant regions are in
// bounds, and builtin signals have the shape their protocol needs.
// Throws CompileError naming function, op (or parameter), dim and values.
#pragma once

#include "ir/function.hpp"

namespace anyp::compiler {

void check_functions(const ir::Program& program, const ir::DimBindings& bindings);
// One function (used for the functions the compiler synthesizes).
void check_function(const ir::Function& fn, const ir::DimBindings& bindings);

}  // namespace anyp::compiler
