// lower_log_broadcast.hpp — the logarithmic builtin broadcasts
// (Algorithm::Tree, ::ScatterAllgather) as VM code, on the mesh's [P, 1]
// signal (docs/collectives.md §3.4a-b).
#pragma once

#include "compiler/collective_emitter.hpp"

namespace anyp::compiler::collective {

void lower_tree_broadcast(CollectiveEmitter& ce, const CollectiveCall& call);
void lower_scatter_allgather_broadcast(CollectiveEmitter& ce, const CollectiveCall& call);

}  // namespace anyp::compiler::collective
