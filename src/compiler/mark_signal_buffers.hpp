// mark_signal_buffers.hpp — pass 7 (after lowering): find the window buffers
// used as signals.
//
// Requires: lowered code and dispatch lists. Guarantees: WindowBuffer::signal
// is set for every buffer that some dispatch binds to a view parameter whose
// value reaches the signal operand of a notify or wait (directly, or through
// mov.view copies; builtin collectives lower to notifies and waits on their
// signal). The race checker treats a data write into such a buffer as a Set
// notify of the cells it covers (a wait polls memory, so it can see it).
#pragma once

#include "runtime/executable.hpp"

namespace anyp::compiler {

void mark_signal_buffers(runtime::Executable& exec);

}  // namespace anyp::compiler
