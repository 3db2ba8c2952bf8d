// lower_bruck_allgather.hpp — the Bruck allgather (Algorithm::Bruck) as VM
// code, on the mesh's [P, 1] signal (docs/collectives.md §3.5a).
#pragma once

#include <cstdint>

#include "compiler/collective_emitter.hpp"

namespace anyp::compiler::collective {

// ceil(log2 P): the rounds of a Bruck allgather at P ranks.
std::int64_t bruck_rounds(std::int64_t ranks);

void lower_bruck_allgather(CollectiveEmitter& ce, const CollectiveCall& call);

}  // namespace anyp::compiler::collective
