// collective_algorithms.hpp — the builtin collectives' algorithms, drawn
// once: a list per collective, a row per algorithm,
//
//   X(context, Algorithm, snake_name)
//
// (`context` is what the user of the list passes through; Algorithm one of
// ANYP_ALGORITHMS). Everything that
// names an algorithm comes from these lists: each pld:: mode enum (its rows,
// then Auto: pld.hpp), the front-end's mode -> algorithm mapping, the
// Python mode names ("ring": #snake_name; anyp._core.collective_modes()),
// and the compiler's lowering dispatch, which calls
// lower_<snake_name>_<collective>() for a row (a row without a lowering
// does not compile). docs/collectives.md §3 describes each algorithm.
#pragma once

// Every algorithm's name, once (ir::Algorithm's enumerators and their
// printed names; Auto is the compiler's choice among a list's rows).
#define ANYP_ALGORITHMS(X) \
  X(Mesh)                  \
  X(Ring)                  \
  X(RecursiveDoubling)     \
  X(Rabenseifner)          \
  X(Tree)                  \
  X(Auto)                  \
  X(ScatterAllgather)      \
  X(Bruck)                 \
  X(RecursiveHalving)      \
  X(Pairwise)

#define ANYP_ALLREDUCE_ALGORITHMS(X, context)       \
  X(context, Mesh, mesh)                            \
  X(context, Ring, ring)                            \
  X(context, RecursiveDoubling, recursive_doubling) \
  X(context, Rabenseifner, rabenseifner)            \
  X(context, Tree, tree)

#define ANYP_BROADCAST_ALGORITHMS(X, context) \
  X(context, Mesh, mesh)                      \
  X(context, Tree, tree)                      \
  X(context, ScatterAllgather, scatter_allgather)

#define ANYP_ALLGATHER_ALGORITHMS(X, context) \
  X(context, Mesh, mesh)                      \
  X(context, Bruck, bruck)                    \
  X(context, RecursiveDoubling, recursive_doubling)

#define ANYP_REDUCE_SCATTER_ALGORITHMS(X, context) \
  X(context, Mesh, mesh)                           \
  X(context, RecursiveHalving, recursive_halving)  \
  X(context, Pairwise, pairwise)

#define ANYP_ALL_TO_ALL_ALGORITHMS(X, context) \
  X(context, Mesh, mesh)                       \
  X(context, Pairwise, pairwise)               \
  X(context, Bruck, bruck)

// Every collective with a choice of algorithm:
//   Y(OpKind, its pld:: mode enum, snake_name, its list)
#define ANYP_COLLECTIVES_WITH_MODES(Y)                                                \
  Y(Allreduce, AllreduceMode, allreduce, ANYP_ALLREDUCE_ALGORITHMS)                   \
  Y(Broadcast, BroadcastMode, broadcast, ANYP_BROADCAST_ALGORITHMS)                   \
  Y(Allgather, AllgatherMode, allgather, ANYP_ALLGATHER_ALGORITHMS)                   \
  Y(ReduceScatter, ReduceScatterMode, reduce_scatter, ANYP_REDUCE_SCATTER_ALGORITHMS) \
  Y(AllToAll, AllToAllMode, all_to_all, ANYP_ALL_TO_ALL_ALGORITHMS)

// A mode enumerator per row (pld.hpp's enums).
#define ANYP_MODE_ENUMERATOR(context, algorithm, snake_name) algorithm,
