// choose_allreduce.hpp — AllreduceMode::Auto: the modeled time of every
// allreduce algorithm for one call (P ranks, n elements of a dtype, the
// reduce op) on a platform's cost model, and the least of them
// (docs/collectives.md §3.9). The estimates are the algorithms' alpha-beta
// formulas (exact under a model with only alpha and beta, where
// tests/runtime/auto_allreduce_test.cpp checks the choice against the
// simulated makespans) plus their handshakes on the critical path, each
// priced notify issue + notify latency + wait, and their reduction work.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anyp/dtype.hpp"
#include "ir/op_attrs.hpp"
#include "runtime/timeline/cost_model.hpp"

namespace anyp::compiler {

struct AllreduceEstimate {
  ir::AllreduceKind kind = ir::AllreduceKind::Mesh;
  double ns = 0;
};

// One estimate per algorithm that can run the call on a [P, 1] signal
// (the ring from P = 2), in AllreduceKind order.
std::vector<AllreduceEstimate> allreduce_estimates(std::int64_t ranks, std::int64_t elements,
                                                   DType dtype, ir::ReduceKind op,
                                                   const runtime::CostModel& model);

// The binomial-tree allreduce's longest chain of whole-vector pulls at P
// ranks (2 ceil(log2 P) at a power of two; 3 at P = 3).
double binomial_tree_pull_chain(std::int64_t ranks);

// The estimate with the least time (the first of equals).
AllreduceEstimate choose_allreduce(const std::vector<AllreduceEstimate>& estimates);

// "Auto chose RecursiveDoubling: RecursiveDoubling 3.2 us, Mesh 4.1 us, ..."
// (the candidates fastest first).
std::string allreduce_choice_text(const std::vector<AllreduceEstimate>& estimates);

}  // namespace anyp::compiler
