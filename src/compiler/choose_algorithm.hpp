// choose_algorithm.hpp — AllreduceMode::Auto: the modeled time of every
// allreduce algorithm for one call (P ranks, n elements of a dtype, the
// reduce op) on a platform's cost model, and the least of them
// (docs/collectives.md §3.3d). The estimates are the algorithms' alpha-beta
// formulas (exact under a model with only alpha and beta, where
// tests/runtime/timeline_fidelity_test.cpp checks the choice against the
// simulated makespans) plus their handshakes on the critical path, each
// priced notify issue + notify latency + wait, and their reduction work.
// The allreduce's and broadcast's schedules are pulls the rank waits for:
// on a model with DMA engines each pull also pays its issue, and with
// shared links the meshes' pulls that meet on one port share it (the
// Hockney model with contention, docs/timeline.md §2c). The allgather's,
// reduce_scatter's and all_to_all's estimates are still the simple
// model's (docs/timeline.md §6).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anyp/dtype.hpp"
#include "ir/op_attrs.hpp"
#include "runtime/timeline/cost_model.hpp"

namespace anyp::compiler {

struct AlgorithmEstimate {
  ir::Algorithm kind = ir::Algorithm::Mesh;
  double ns = 0;
};

// One estimate per algorithm that can run the call on a [P, 1] signal
// (the ring from P = 2), in Algorithm order.
std::vector<AlgorithmEstimate> allreduce_estimates(std::int64_t ranks, std::int64_t elements,
                                                   DType dtype, ir::ReduceKind op,
                                                   const runtime::CostModel& model);

// The broadcast's: Mesh, Tree, ScatterAllgather (collectives.md §3.4b).
// Mesh: one pull of the whole vector after a barrier, α + Nβ + h. Tree:
// the deepest leaf is floor(log2 P) whole-vector pulls from the root.
std::vector<AlgorithmEstimate> broadcast_estimates(std::int64_t ranks, std::int64_t elements,
                                                   DType dtype, const runtime::CostModel& model);

// The allgather's, with i the notify issue, l its latency, w a wait: Mesh
// (P - 1 puts of the row from each rank, then a barrier and its epilogue:
// (P - 1)(α + Nβ + 2i + w) + l), Bruck (its rounds, each with a credit
// awaited, then R = ⌈log₂ P⌉ read-dones and 2R give-backs: + 3Ri + l + w;
// collectives.md §3.5a), RecursiveDoubling (§3.5c).
std::vector<AlgorithmEstimate> allgather_estimates(std::int64_t ranks, std::int64_t elements,
                                                   DType dtype, const runtime::CostModel& model);

// The reduce_scatter's, rows of `elements`: Mesh (a barrier, P - 1 pulls
// of a row reduced, a read-done barrier and the epilogue:
// (P - 1)(α + Sβ + S⊕ + 3i + w) + 2l + w),
// RecursiveHalving (Rabenseifner's halving half, folded alike; §3.6a) and
// Pairwise (P - 1 steps of a credit, a wait, a pull reduced and a
// read-done; §3.6c).
std::vector<AlgorithmEstimate> reduce_scatter_estimates(std::int64_t ranks, std::int64_t elements,
                                                        DType dtype, ir::ReduceKind op,
                                                        const runtime::CostModel& model);

// The all_to_all's, rows of `elements` (S = their bytes), with i the
// notify issue, l its latency, w a wait, h = i + l + w and L = local α +
// S local β one local access of a row: Mesh (P - 1 puts of a row, then a
// barrier and its epilogue: (P - 1)(α + Sβ + 2i + w) + l + (P + 1) L),
// Pairwise (P - 1 steps of a put, a credit awaited and given back:
// (P - 1)(α + Sβ + h + i) + (P + 1) L; §3.7a) and Bruck (its exact
// chain, bruck_all_to_all_time; §3.7c).
std::vector<AlgorithmEstimate> all_to_all_estimates(std::int64_t ranks, std::int64_t elements,
                                                    DType dtype, const runtime::CostModel& model);

// Bruck's all_to_all's makespan on a platform's model, rows of `elements`:
// its start credits, the copy into Bruck order, then per round the wait for
// the receiver's Free, the pack (a wrapped run in two copies), one put, the
// Ready credit, the wait for the sender's Ready, the unpack and the Free
// two rounds on, rank by rank as the lowering runs them; then the
// give-backs (collectives.md §3.7c). O(P log P).
double bruck_all_to_all_time(std::int64_t ranks, std::int64_t elements, DType dtype,
                             const runtime::CostModel& model);

// The Bruck allgather's makespan under a model of alpha per message, beta
// per byte and `handshake` per credit, rows of `elements`: the longest
// chain of its rounds as the lowering runs them (pieces, wrapped ranges in
// two messages); O(P log P).
double bruck_allgather_time(std::int64_t ranks, std::int64_t elements, DType dtype, double alpha,
                            double beta, double handshake);

// The recursive-doubling allgather's makespan on a platform's model, rows
// of `elements`: the fold's hand-over, the longest chain of its levels as
// the lowering runs them (a folded pair's two rows, pieces), the
// read-dones, and the fold's return of every row (collectives.md §3.5c);
// O(P log P).
double recursive_doubling_allgather_time(std::int64_t ranks, std::int64_t elements, DType dtype,
                                         const runtime::CostModel& model);

// The scatter + ring allgather broadcast's makespan under a model of alpha
// per message, beta per byte and `handshake` per credit: the longest chain
// of its pulls, scatter then ring rounds, computed as the lowering runs
// them (pieces, skipped rounds, uneven blocks); O(P^2).
double scatter_allgather_time(std::int64_t ranks, std::int64_t elements, DType dtype, double alpha,
                              double beta, double handshake);

// The binomial-tree allreduce's longest chain of whole-vector pulls at P
// ranks (2 ceil(log2 P) at a power of two; 3 at P = 3).
double binomial_tree_pull_chain(std::int64_t ranks);

// The estimate with the least time (the first of equals).
AlgorithmEstimate choose_fastest(const std::vector<AlgorithmEstimate>& estimates);

}  // namespace anyp::compiler
