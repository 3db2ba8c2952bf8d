// lower_log_allreduce.hpp — the logarithmic builtin allreduces
// (Algorithm::RecursiveDoubling, ::Rabenseifner, ::Tree) and their halves,
// the recursive-halving reduce_scatter and the recursive-doubling
// allgather, as VM code, on the mesh's [P, 1] signal (docs/collectives.md
// §3.3a-c, §3.5c, §3.6a).
#pragma once

#include "compiler/collective_emitter.hpp"

namespace anyp::compiler::collective {

void lower_recursive_doubling_allreduce(CollectiveEmitter& ce, const CollectiveCall& call);
void lower_rabenseifner_allreduce(CollectiveEmitter& ce, const CollectiveCall& call);
void lower_tree_allreduce(CollectiveEmitter& ce, const CollectiveCall& call);
// reduce_scatter by recursive halving (Algorithm::RecursiveHalving), the
// reduce-scatter half of Rabenseifner's over the P rows, folded alike
// (docs/collectives.md §3.6a).
void lower_recursive_halving_reduce_scatter(CollectiveEmitter& ce, const CollectiveCall& call);
// allgather by recursive doubling (Algorithm::RecursiveDoubling) over the P
// rows of dst, folded alike (docs/collectives.md §3.5c).
void lower_recursive_doubling_allgather(CollectiveEmitter& ce, const CollectiveCall& call);

}  // namespace anyp::compiler::collective
