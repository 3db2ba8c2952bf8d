// mark_signal_buffers.hpp — pass 8 (after lowering): find the window buffers
// used as signals, and those used only for credits.
//
// Requires: lowered code and dispatch lists. Guarantees: WindowBuffer::signal
// is set for every buffer that some dispatch binds to a view parameter whose
// value reaches the signal operand of a notify or wait (directly, or through
// mov.view copies; builtin collectives lower to notifies and waits on their
// signal). The race checker treats a data write into such a buffer as a Set
// notify of the cells it covers (a wait polls memory, so it can see it).
// WindowBuffer::credit_only is set for the signal buffers that every
// dispatch uses only with AtomicAdd notifies and Ge waits (no Set, no
// other comparison, no data access): the credit protocols of the builtin
// collectives and of hand-rolled barriers. On them a rise in a cell can
// only make waits true, so an engine may complete a rank's positive
// credits together (the MPI engine does, before the rank blocks).
#pragma once

#include "runtime/executable.hpp"

namespace anyp::compiler {

void mark_signal_buffers(runtime::Executable& exec);

}  // namespace anyp::compiler
