// intent_check.hpp — the pl::In rule: a tensor parameter declared In is
// read-only through every alias (a copy of its handle, a slice, a store's
// result, a host x[r]) and at every level: no op may write it, and no call
// may pass it to a callee's Out or InOut parameter. The check is a forward
// may-alias analysis over the function's structured body (loops to a fixed
// point, branches joined), so a variable that once held an In tensor and was
// re-bound to a writable one is not refused. P-independent: it runs with the
// verifier, when a function is traced. Throws anyp::CompileError naming the
// function, the op, the parameter and that it is declared pl::In.
#pragma once

#include <vector>

#include "ir/function.hpp"

namespace anyp::ir {

void check_intents(const Function& fn);
// Per parameter: whether the function may write it (a tensor parameter
// written through any alias, or passed to a callee's Out or InOut).
std::vector<bool> written_tensor_parameters(const Function& fn);

}  // namespace anyp::ir
