// lower_collectives.hpp — expansion of the builtin collectives into VM
// instructions, following the self-clearing credit protocol (ladder.md C):
// barrier k: notify every peer's cell {r,0} +1, then wait own cells {s,0} >= k;
// epilogue: self-notify {s,0} -= B for every s != r.
#pragma once

#include <cstdint>

#include "compiler/emitter.hpp"

namespace anyp::compiler {

struct CollectiveRegs {
  std::int32_t rank = -1;    // this rank (scalar reg)
  std::int32_t nranks = -1;  // P (scalar reg)
};

// One full barrier (B = 1) on the [NR, 1] INT32 signal in view register `signal`.
void lower_barrier(Emitter& e, const CollectiveRegs& regs, std::int32_t signal);

}  // namespace anyp::compiler
