// lower_pairwise_all_to_all.hpp — the pairwise-exchange all_to_all as VM
// code (docs/collectives.md §3.7a).
#pragma once

#include "compiler/collective_emitter.hpp"

namespace anyp::compiler::collective {

// P - 1 steps, step k = 1 .. P - 1 putting row r + k of src to rank r + k
// and waiting for rank r - k's row (mod P), on the mesh's [P, 1] signal.
void lower_pairwise_all_to_all(CollectiveEmitter& ce, const CollectiveCall& call);

}  // namespace anyp::compiler::collective
