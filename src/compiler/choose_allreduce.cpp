// choose_allreduce.cpp — the allreduce estimates of AllreduceMode::Auto
// (choose_allreduce.hpp). Per algorithm, with N = n·e bytes, p' = 2^L the
// largest power of two <= P, a piece at most 16 KiB (K pieces of the whole
// vector), h = notify issue + latency + wait:
//   Mesh                (P - 1)(K α + N β)          + (1 + K) h     + (P - 1) n ⊕
//   Ring                2 (P - 1)(J α + N/P β)      + (2P - 1) h    + (P - 1) n/P ⊕
//   RecursiveDoubling   L (K α + N β) [+ fold]      + L (1 + K) h   + L n ⊕
//   Rabenseifner        2 Σ_s (J_s α + N m_s/p' β)  + 2 L h         + (p' - 1)/p' n ⊕
//   Tree                (longest pull chain)(K α + N β) + 2⌈log2 P⌉ h + ⌈log2 P⌉ n ⊕
// where the fold (P not a power of two) adds 2 (K α + N β) + 2 h + n ⊕.
#include "compiler/choose_allreduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "compiler/lower_collectives.hpp"
#include "runtime/compute_class.hpp"

namespace anyp::compiler {
namespace {

double pieces(double bytes) {
  return std::max(1.0, std::ceil(bytes / static_cast<double>(kCollectiveChunkBytes)));
}

runtime::ComputeClass reduce_class(ir::ReduceKind op) {
  switch (op) {
    case ir::ReduceKind::Prod:
      return runtime::ComputeClass::Mul;
    case ir::ReduceKind::Max:
    case ir::ReduceKind::Min:
      return runtime::ComputeClass::MinMax;
    case ir::ReduceKind::Sum:
      break;
  }
  return runtime::ComputeClass::Add;
}

}  // namespace

// The binomial tree's longest chain of whole-vector pulls: up to rank 0
// (a parent pulls each child once the child's subtree is in) and down (a
// child pulls the result once its parent has it).
double binomial_tree_pull_chain(std::int64_t P) {
  std::vector<double> reduced(static_cast<std::size_t>(P)), final(static_cast<std::size_t>(P));
  for (std::int64_t r = P - 1; r >= 0; --r) {
    double t = 0;
    for (std::int64_t m = 1; m < P && r % (2 * m) == 0; m *= 2)
      if (r + m < P) t = std::max(t, reduced[static_cast<std::size_t>(r + m)]) + 1;
    reduced[static_cast<std::size_t>(r)] = t;
  }
  double longest = reduced[0];
  final[0] = reduced[0];
  for (std::int64_t r = 1; r < P; ++r) {
    const std::int64_t parent = r - (r & -r);
    final[static_cast<std::size_t>(r)] =
        std::max(reduced[static_cast<std::size_t>(r)], final[static_cast<std::size_t>(parent)]) + 1;
    longest = std::max(longest, final[static_cast<std::size_t>(r)]);
  }
  return longest;
}

std::vector<AllreduceEstimate> allreduce_estimates(std::int64_t ranks, std::int64_t elements,
                                                   DType dtype, ir::ReduceKind op,
                                                   const runtime::CostModel& model) {
  const double e = static_cast<double>(dtype_bytes(dtype)), n = static_cast<double>(elements);
  const double p = static_cast<double>(ranks), N = n * e;
  const double a = model.alpha_ns, b = model.beta_ns_per_byte;
  const double h = model.notify_issue_ns + model.notify_ns + model.wait_ns;
  const double per_element = model.compute_ns(reduce_class(op), dtype, 1);
  const double K = pieces(N), whole = K * a + N * b;
  std::int64_t pow2 = 1, levels = 0, ceil_levels = 0;
  while (pow2 * 2 <= ranks) pow2 *= 2, ++levels;
  while ((std::int64_t{1} << ceil_levels) < ranks) ++ceil_levels;
  const double L = static_cast<double>(levels), fold_h = pow2 == ranks ? 0 : 2 * h;
  const double fold = pow2 == ranks ? 0 : 2 * whole + n * per_element;

  std::vector<AllreduceEstimate> out;
  out.push_back(
      {ir::AllreduceKind::Mesh, (p - 1) * whole + (1 + K) * h + (p - 1) * n * per_element});
  if (ranks >= 2) {
    const double J = pieces(e * std::ceil(n / p));
    out.push_back({ir::AllreduceKind::Ring, 2 * (p - 1) * (J * a + N / p * b) + (2 * p - 1) * h +
                                                (p - 1) * n / p * per_element});
  }
  out.push_back({ir::AllreduceKind::RecursiveDoubling,
                 L * whole + L * (1 + K) * h + L * n * per_element + fold + fold_h});
  double halving = 0;
  for (std::int64_t mask = pow2 / 2; mask >= 1; mask /= 2) {
    const double block = std::ceil(static_cast<double>(mask) * n / static_cast<double>(pow2));
    halving += 2 * (pieces(e * block) * a + e * block * b);
  }
  const double pp = static_cast<double>(pow2);
  out.push_back({ir::AllreduceKind::Rabenseifner,
                 halving + 2 * L * h + (pp - 1) / pp * n * per_element + fold + fold_h});
  const double cl = static_cast<double>(ceil_levels);
  out.push_back({ir::AllreduceKind::Tree,
                 binomial_tree_pull_chain(ranks) * whole + 2 * cl * h + cl * n * per_element});
  return out;
}

AllreduceEstimate choose_allreduce(const std::vector<AllreduceEstimate>& estimates) {
  AllreduceEstimate best = estimates.front();
  for (const AllreduceEstimate& e : estimates)
    if (e.ns < best.ns) best = e;
  return best;
}

std::string allreduce_choice_text(const std::vector<AllreduceEstimate>& estimates) {
  std::vector<AllreduceEstimate> sorted = estimates;
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [](const AllreduceEstimate& x, const AllreduceEstimate& y) { return x.ns < y.ns; });
  std::string s = std::string("Auto chose ") + ir::allreduce_mode_name(sorted.front().kind) + ":";
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.3f us", sorted[i].ns / 1000.0);
    s += std::string(i ? "," : "") + " " + ir::allreduce_mode_name(sorted[i].kind) + buf;
  }
  return s;
}

}  // namespace anyp::compiler
