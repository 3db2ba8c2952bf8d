// printer.hpp — the stable text form of IR, used by golden tests and by the
// compile artifact. With bindings, extents print as their bound values (the
// specialised IR); without, as written (NR, SIZE / NR, ...).
#pragma once

#include <string>

#include "ir/function.hpp"

namespace anyp::ir {

std::string print_function(const Function& fn, const DimBindings* bindings = nullptr);
// Every function of the program, host first, in first-call order.
std::string print_program(const Program& program, const DimBindings* bindings = nullptr);

}  // namespace anyp::ir
