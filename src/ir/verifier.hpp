// verifier.hpp — structural checks of traced IR that need no dim values:
// variable ids in range, each op used at a level that allows it, and calls
// that respect the three-level model (host dispatches orchestration
// functions with pl::device; orchestration calls incore kernels).
// Throws anyp::CompileError naming the function, its level and the op.
#pragma once

#include "ir/function.hpp"

namespace anyp::ir {

void verify_function(const Function& fn);
// Does `block`, or a function it calls, contain an op of `kind`?
bool contains_op(const Block& block, OpKind kind);
void verify_program(const Program& program);

}  // namespace anyp::ir
