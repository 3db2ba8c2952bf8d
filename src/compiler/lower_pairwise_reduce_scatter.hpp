// lower_pairwise_reduce_scatter.hpp — the pairwise-exchange reduce_scatter
// (Algorithm::Pairwise) as VM code, on the mesh's [P, 1] signal
// (docs/collectives.md §3.6c).
#pragma once

#include "compiler/collective_emitter.hpp"

namespace anyp::compiler::collective {

void lower_pairwise_reduce_scatter(CollectiveEmitter& ce, const CollectiveCall& call);

}  // namespace anyp::compiler::collective
