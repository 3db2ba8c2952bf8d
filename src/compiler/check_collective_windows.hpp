// check_collective_windows.hpp — pass 8 (after lowering): a builtin
// collective's window operands must be distinct buffers, checked at compile
// time for every dispatch.
//
// Requires: lowered code and dispatch lists. Guarantees: no dispatch binds
// two window operands of one collective call (data and signal, src and dst,
// counts and signal, ...) to overlapping bytes of one window buffer
// (disjoint sub-windows of one buffer are fine), where the operands'
// view registers come from the code's parameters (directly or through
// mov.view copies); otherwise a CompileError naming the function, the op,
// both roles and the buffer, in the wording the host level and the run-time
// check use (runtime::shared_window_message). Views whose origin differs by
// path are left to the run-time check of the collective instruction.
#pragma once

#include "ir/function.hpp"
#include "runtime/executable.hpp"

namespace anyp::compiler {

void check_collective_windows(const ir::Program& program, const runtime::Executable& exec);

}  // namespace anyp::compiler
