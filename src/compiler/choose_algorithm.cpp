// choose_algorithm.cpp — the allreduce estimates of AllreduceMode::Auto
// (choose_algorithm.hpp). Per algorithm, with N = n·e bytes, p' = 2^L the
// largest power of two <= P, a piece at most 16 KiB (K pieces of the whole
// vector), h = notify issue + latency + wait:
//   Mesh                (P - 1)(K α + N β)          + (1 + K) h     + (P - 1) n ⊕
//   Ring                2 (P - 1)(J α + N/P β)      + (2P - 1) h    + (P - 1) n/P ⊕
//   RecursiveDoubling   L (K α + N β) [+ fold]      + L (1 + K) h   + L n ⊕
//   Rabenseifner        2 Σ_s (J_s α + N m_s/p' β)  + 2 L h         + (p' - 1)/p' n ⊕
//   Tree                (longest pull chain)(K α + N β) + 2⌈log2 P⌉ h + ⌈log2 P⌉ n ⊕
// where the fold (P not a power of two) adds 2 (K α + N β) + 2 h + n ⊕.
// Every message is a pull the rank waits for, so on a model with DMA
// engines α is α + d (its issue); with shared links the mesh's pulls, in
// rank order, queue on the port of the rank pulled from: + (P - 1)(P - 2)/2
// N β (docs/timeline.md §2c; exact when the ranks leave each barrier at
// once, an upper bound when notify costs stagger them). The ring, the
// recursive doubling and Rabenseifner pull from one partner at a time, no
// port carrying two; the tree's children pulling the result from one
// parent do share its port, which the tree's estimate does not price yet.
#include "compiler/choose_algorithm.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

#include "compiler/collective_emitter.hpp"
#include "compiler/lower_bruck_all_to_all.hpp"
#include "compiler/lower_bruck_allgather.hpp"
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

// The makespan of a folded log-level exchange on a platform's notify
// costs (i issue, l latency, w wait), as lower_log_allreduce.cpp runs it
// on p' = `pow2` virtual ranks: `fold_in` before the levels on the rem
// absorbers; level by level (mask `masks[s]`, partner v ^ m) a credit to
// the partner, a wait for its credit, the level's transfer `cost(v, m)`,
// a read-done credit; then each partner's read-done awaited (it lands l
// after the partner's level ends) and given back, in level order; then
// `fold_out` on the absorbers.
template <class Cost>
double folded_levels_time(std::int64_t pow2, std::int64_t rem,
                          const std::vector<std::int64_t>& masks, double fold_in, double fold_out,
                          const runtime::CostModel& model, const Cost& cost) {
  const double i = model.notify_issue_ns, l = model.notify_ns, w = model.wait_ns;
  const auto at = [](std::int64_t v) { return static_cast<std::size_t>(v); };
  std::vector<double> t(at(pow2));
  for (std::int64_t v = 0; v < pow2; ++v) t[at(v)] = v < rem ? fold_in : 0;
  std::vector<std::vector<double>> level_end;
  for (std::int64_t m : masks) {
    std::vector<double> next(t.size());
    for (std::int64_t v = 0; v < pow2; ++v)
      next[at(v)] = std::max(t[at(v)] + i, t[at(v ^ m)] + i + l) + w + cost(v, m) + i;
    t = std::move(next);
    level_end.push_back(t);
  }
  double makespan = 0;
  for (std::int64_t v = 0; v < pow2; ++v) {
    double now = t[at(v)];
    for (std::size_t s = 0; s < masks.size(); ++s)
      now = std::max(now, level_end[s][at(v ^ masks[s])] + l) + w + i;
    makespan = std::max(makespan, now + (v < rem ? fold_out : 0));
  }
  return makespan;
}

// The fold's return: the absorber's final credit, the extra's wait and
// copy (`copy`), its read-done awaited by the absorber, who gives back.
double fold_return(double copy, const runtime::CostModel& m) {
  return 3 * m.notify_issue_ns + 2 * (m.notify_ns + m.wait_ns) + copy;
}

// A pull's latency on `model`: α, and on a model with DMA engines its
// issue before it (docs/timeline.md §2a).
double pull_alpha(const runtime::CostModel& model) {
  return model.alpha_ns + (model.dma_engines > 0 ? model.dma_issue_ns : 0);
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

std::vector<AlgorithmEstimate> allreduce_estimates(std::int64_t ranks, std::int64_t elements,
                                                   DType dtype, ir::ReduceKind op,
                                                   const runtime::CostModel& model) {
  const double e = static_cast<double>(dtype_bytes(dtype)), n = static_cast<double>(elements);
  const double p = static_cast<double>(ranks), N = n * e;
  const double a = pull_alpha(model), b = model.beta_ns_per_byte;
  const double h = model.notify_issue_ns + model.notify_ns + model.wait_ns;
  const double per_element = model.compute_ns(reduce_class(op), dtype, 1);
  const double queued = model.links_shared ? (p - 1) * (p - 2) / 2 * N * b : 0;
  const double K = pieces(N), whole = K * a + N * b;
  std::int64_t pow2 = 1, levels = 0, ceil_levels = 0;
  while (pow2 * 2 <= ranks) pow2 *= 2, ++levels;
  while ((std::int64_t{1} << ceil_levels) < ranks) ++ceil_levels;
  const double L = static_cast<double>(levels), fold_h = pow2 == ranks ? 0 : 2 * h;
  const double fold = pow2 == ranks ? 0 : 2 * whole + n * per_element;

  std::vector<AlgorithmEstimate> out;
  out.push_back(
      {ir::Algorithm::Mesh, (p - 1) * whole + queued + (1 + K) * h + (p - 1) * n * per_element});
  if (ranks >= 2) {
    const double J = pieces(e * std::ceil(n / p));
    out.push_back({ir::Algorithm::Ring, 2 * (p - 1) * (J * a + N / p * b) + (2 * p - 1) * h +
                                            (p - 1) * n / p * per_element});
  }
  out.push_back({ir::Algorithm::RecursiveDoubling,
                 L * whole + L * (1 + K) * h + L * n * per_element + fold + fold_h});
  double halving = 0;
  for (std::int64_t mask = pow2 / 2; mask >= 1; mask /= 2) {
    const double block = std::ceil(static_cast<double>(mask) * n / static_cast<double>(pow2));
    halving += 2 * (pieces(e * block) * a + e * block * b);
  }
  const double pp = static_cast<double>(pow2);
  out.push_back({ir::Algorithm::Rabenseifner,
                 halving + 2 * L * h + (pp - 1) / pp * n * per_element + fold + fold_h});
  const double cl = static_cast<double>(ceil_levels);
  out.push_back({ir::Algorithm::Tree,
                 binomial_tree_pull_chain(ranks) * whole + 2 * cl * h + cl * n * per_element});
  return out;
}

double scatter_allgather_time(std::int64_t P, std::int64_t n, DType dtype, double alpha,
                              double beta, double handshake) {
  const double e = static_cast<double>(dtype_bytes(dtype));
  // Blocks [lo, hi) as the lowering cuts them: pieces near-equal parts,
  // each one message.
  auto pull = [&](std::int64_t lo, std::int64_t hi, std::int64_t pieces) {
    const double elements = static_cast<double>(hi * n / P - lo * n / P);
    return static_cast<double>(pieces) * alpha + elements * e * beta;
  };
  const std::int64_t ceil_block = (n + P - 1) / P;
  std::int64_t top = 1;
  while (top < P) top *= 2;
  std::vector<std::int64_t> subtree(static_cast<std::size_t>(P));
  std::vector<double> t(static_cast<std::size_t>(P));  // scatter done, then round g done
  auto at = [](std::vector<double>& v, std::int64_t i) -> double& {
    return v[static_cast<std::size_t>(i)];
  };
  for (std::int64_t v = 0; v < P; ++v) {
    const std::int64_t low = v == 0 ? top : (v & -v);
    subtree[static_cast<std::size_t>(v)] = std::min(low, P - v);
    if (v > 0) {  // parents come first: v - low < v
      const std::int64_t cnt = subtree[static_cast<std::size_t>(v)];
      at(t, v) = at(t, v - low) + handshake +
                 pull(v, v + cnt, collective::chunks_for(low * ceil_block, dtype));
    }
  }
  const std::int64_t block_pieces = collective::chunks_for(ceil_block, dtype);
  for (std::int64_t g = 0; g + 1 < P; ++g) {
    std::vector<double> next(static_cast<std::size_t>(P));
    for (std::int64_t v = 0; v < P; ++v) {
      const std::int64_t left = (v + P - 1) % P, k = ((v - g - 1) % P + P) % P;
      double start = std::max(at(t, v), at(t, left) + handshake);
      if (g < P - subtree[static_cast<std::size_t>(v)]) start += pull(k, k + 1, block_pieces);
      at(next, v) = start;
    }
    t = std::move(next);
  }
  return *std::max_element(t.begin(), t.end());
}

std::vector<AlgorithmEstimate> broadcast_estimates(std::int64_t ranks, std::int64_t elements,
                                                   DType dtype, const runtime::CostModel& model) {
  const double e = static_cast<double>(dtype_bytes(dtype)), n = static_cast<double>(elements);
  const double p = static_cast<double>(ranks), N = n * e;
  const double a = pull_alpha(model), b = model.beta_ns_per_byte;
  const double h = model.notify_issue_ns + model.notify_ns + model.wait_ns;
  // The mesh's P - 1 pulls of the root's vector at once share its port.
  const double root_port = model.links_shared ? std::max(1.0, p - 1) : 1;
  std::int64_t floor_levels = 0;
  while ((std::int64_t{2} << floor_levels) <= ranks) ++floor_levels;
  const double D = static_cast<double>(floor_levels), K = pieces(N);
  // Scatter + allgather: the longest chain exactly up to 2048 ranks (O(P^2)
  // to compute), van de Geijn's closed form beyond (an upper bound: it
  // counts every ring round's pull on the chain).
  const double J = pieces(e * std::ceil(n / p));
  const double scatter_allgather =
      ranks <= 2048 ? scatter_allgather_time(ranks, elements, dtype, a, b, h)
                    : D * (a + h) + (p - 1) / p * N * b + (p - 1) * (J * a + N / p * b + h);
  return {{ir::Algorithm::Mesh, a + root_port * N * b + h},
          {ir::Algorithm::Tree, D * (K * a + N * b + h)},
          {ir::Algorithm::ScatterAllgather, scatter_allgather}};
}

std::vector<AlgorithmEstimate> reduce_scatter_estimates(std::int64_t ranks, std::int64_t elements,
                                                        DType dtype, ir::ReduceKind op,
                                                        const runtime::CostModel& model) {
  const double e = static_cast<double>(dtype_bytes(dtype)), row = static_cast<double>(elements);
  const double p = static_cast<double>(ranks), S = row * e;
  const double a = model.alpha_ns, b = model.beta_ns_per_byte;
  const double per_element = model.compute_ns(reduce_class(op), dtype, 1);
  const double i = model.notify_issue_ns, l = model.notify_ns, w = model.wait_ns;
  std::int64_t pow2 = 1;
  while (pow2 * 2 <= ranks) pow2 *= 2;
  const std::int64_t rem = ranks - pow2;
  auto first_row = [rem](std::int64_t u) { return u + std::min(u, rem); };
  // Halving: level mask m = p' / 2 .. 1, v keeps (and pulls and reduces)
  // the rows of virtual ranks [(v / m)·m, + m); the fold hands the whole
  // window over and returns one row.
  std::vector<std::int64_t> masks;
  for (std::int64_t m = pow2 / 2; m >= 1; m /= 2) masks.push_back(m);
  const auto kept = [&](std::int64_t v, std::int64_t m) {
    const std::int64_t base = v / m * m;
    const double rows = static_cast<double>(first_row(base + m) - first_row(base));
    return static_cast<double>(collective::chunks_for((m + std::min(m, rem)) * elements, dtype)) *
               a +
           rows * S * b + rows * row * per_element;
  };
  const double fold_in = i + l + w +
                         static_cast<double>(collective::chunks_for(ranks * elements, dtype)) * a +
                         p * S * b + p * row * per_element;
  const double fold_out =
      fold_return(static_cast<double>(collective::chunks_for(elements, dtype)) * a + S * b, model);
  const double halving = folded_levels_time(pow2, rem, masks, fold_in, fold_out, model, kept);
  // Pairwise, every rank alike: step k starts when step k - 1 ends; a
  // credit out, then the wait for the peer's credit: its ready, issued as
  // its step k starts (k <= P / 2), or its read-done of step P - k, which
  // lands l after that step ends. Then the pull of the row reduced and a
  // read-done. At the end every peer's second credit awaited and given
  // back in step order: peer r + k's lands at the later of its ready
  // (step k) and its read-done (end of step P - k).
  const double pull =
      static_cast<double>(collective::chunks_for(elements, dtype)) * a + S * b + row * per_element;
  std::vector<double> start(static_cast<std::size_t>(ranks) + 1, 0.0),
      end(static_cast<std::size_t>(ranks), 0.0);
  for (std::int64_t k = 1; k < ranks; ++k) {
    const auto K = static_cast<std::size_t>(k);
    start[K] = k == 1 ? 0 : end[K - 1];
    const double released =
        2 * k <= ranks ? start[K] + i + l : end[static_cast<std::size_t>(ranks - k)] + l;
    end[K] = std::max(start[K] + i, released) + w + pull + i;
  }
  double pairwise = ranks > 1 ? end[static_cast<std::size_t>(ranks - 1)] : 0;
  for (std::int64_t k = 1; k < ranks; ++k)
    pairwise = std::max({pairwise, start[static_cast<std::size_t>(k)] + i + l,
                         end[static_cast<std::size_t>(ranks - k)] + l}) +
               w + i;
  // Mesh: two barriers and the epilogue, (P - 1)(3i + w) + 2l + w with the
  // P - 1 pulls of a row reduced.
  return {{ir::Algorithm::Mesh, (p - 1) * (a + S * b + row * per_element + 3 * i + w) + 2 * l + w},
          {ir::Algorithm::RecursiveHalving, halving},
          {ir::Algorithm::Pairwise, pairwise}};
}

double bruck_allgather_time(std::int64_t P, std::int64_t n, DType dtype, double alpha, double beta,
                            double handshake) {
  const double row = static_cast<double>(n) * static_cast<double>(dtype_bytes(dtype));
  std::vector<double> t(static_cast<std::size_t>(P), 0.0);
  for (std::int64_t d = 1; d < P; d *= 2) {
    const std::int64_t c = std::min(d, P - d);
    const double pieces = static_cast<double>(collective::chunks_for(c * n, dtype));
    std::vector<double> next(static_cast<std::size_t>(P));
    for (std::int64_t r = 0; r < P; ++r) {
      const std::int64_t first = (r + d) % P;
      const double messages = first + c > P ? 2 * pieces : pieces;
      next[static_cast<std::size_t>(r)] =
          std::max(t[static_cast<std::size_t>(r)], t[static_cast<std::size_t>(first)] + handshake) +
          messages * alpha + static_cast<double>(c) * row * beta;
    }
    t = std::move(next);
  }
  return *std::max_element(t.begin(), t.end());
}

double recursive_doubling_allgather_time(std::int64_t P, std::int64_t n, DType dtype,
                                         const runtime::CostModel& model) {
  const double a = model.alpha_ns, b = model.beta_ns_per_byte;
  const double S = static_cast<double>(n) * static_cast<double>(dtype_bytes(dtype));
  std::int64_t pow2 = 1;
  while (pow2 * 2 <= P) pow2 *= 2;
  const std::int64_t rem = P - pow2;
  auto first_row = [rem](std::int64_t u) { return u + std::min(u, rem); };
  std::vector<std::int64_t> masks;
  for (std::int64_t m = 1; m < pow2; m *= 2) masks.push_back(m);
  // Level m: v pulls the partner's rows, those of virtual ranks
  // [(pv / m)·m, + m).
  const auto pulled = [&](std::int64_t v, std::int64_t m) {
    const std::int64_t base = (v ^ m) / m * m;
    const double rows = static_cast<double>(first_row(base + m) - first_row(base));
    return static_cast<double>(collective::chunks_for((m + std::min(m, rem)) * n, dtype)) * a +
           rows * S * b;
  };
  // The fold: an absorber waits for its extra's credit and pulls its row;
  // at the end the extra copies every row.
  const double fold_in = model.notify_issue_ns + model.notify_ns + model.wait_ns +
                         static_cast<double>(collective::chunks_for(n, dtype)) * a + S * b;
  const double fold_out =
      fold_return(static_cast<double>(collective::chunks_for(P * n, dtype)) * a +
                      static_cast<double>(P) * S * b,
                  model);
  return folded_levels_time(pow2, rem, masks, fold_in, fold_out, model, pulled);
}

std::vector<AlgorithmEstimate> allgather_estimates(std::int64_t ranks, std::int64_t elements,
                                                   DType dtype, const runtime::CostModel& model) {
  const double N = static_cast<double>(elements) * static_cast<double>(dtype_bytes(dtype));
  const double p = static_cast<double>(ranks);
  const double a = model.alpha_ns, b = model.beta_ns_per_byte;
  const double i = model.notify_issue_ns, l = model.notify_ns, w = model.wait_ns;
  const double rounds = static_cast<double>(collective::bruck_rounds(ranks));
  // Mesh: P - 1 puts, the barrier's P - 1 credits and waits, its
  // epilogue's P - 1 give-backs, one latency. Bruck: its rounds, then a
  // read-done to every peer it pulled from, the last read-done's latency
  // and wait, and 2 give-backs per round.
  return {{ir::Algorithm::Mesh, (p - 1) * (a + N * b + 2 * i + w) + l},
          {ir::Algorithm::Bruck,
           bruck_allgather_time(ranks, elements, dtype, a, b, i + l + w) + 3 * rounds * i + l + w},
          {ir::Algorithm::RecursiveDoubling,
           recursive_doubling_allgather_time(ranks, elements, dtype, model)}};
}

double bruck_all_to_all_time(std::int64_t P, std::int64_t n, DType dtype,
                             const runtime::CostModel& model) {
  using collective::BruckRound;
  const double a = model.alpha_ns, b = model.beta_ns_per_byte;
  const double i = model.notify_issue_ns, l = model.notify_ns, w = model.wait_ns;
  const double S = static_cast<double>(n) * static_cast<double>(dtype_bytes(dtype));
  const auto local = [&](double bytes) { return model.local_ns(static_cast<std::int64_t>(bytes)); };
  const auto at = [P](std::int64_t x) { return static_cast<std::size_t>(((x % P) + P) % P); };
  const std::vector<BruckRound> rounds = collective::bruck_all_to_all_rounds(P);
  const std::size_t R = rounds.size();
  // free_at[k % 3][x]: when rank x's Free(k) lands (sent to x - 2^k).
  std::vector<std::vector<double>> free_at(3, std::vector<double>(static_cast<std::size_t>(P)));
  std::vector<double> t(static_cast<std::size_t>(P)), ready_at(t.size());
  for (std::int64_t x = 0; x < P; ++x) {
    double now = 0;
    for (std::size_t k = 0; k < std::min<std::size_t>(2, R); ++k) {
      free_at[k][at(x)] = now + i + l;
      now += i;
    }
    t[at(x)] = now + static_cast<double>(P) * 2 * local(S);  // the copy into Bruck order
  }
  for (std::size_t k = 0; k < R; ++k) {
    const BruckRound& round = rounds[k];
    const std::int64_t d = round.distance;
    const double bytes = static_cast<double>(round.blocks) * S;
    // A run's copy: a local read and a local write, two where it wraps.
    const auto copies = [&](std::int64_t x) {
      const double ranges =
          static_cast<double>(round.runs) + (collective::bruck_run_wraps(x, d, P) ? 1 : 0);
      return 2 * (ranges * model.local_alpha_ns + bytes * model.local_beta_ns_per_byte);
    };
    for (std::int64_t x = 0; x < P; ++x) {
      double now = std::max(t[at(x)], free_at[k % 3][at(x + d)]) + w;
      now += copies(x) + local(bytes) + a + bytes * b;  // pack, then the put
      ready_at[at(x)] = now + i + l;
      t[at(x)] = now + i;
    }
    for (std::int64_t x = 0; x < P; ++x) {
      double now = std::max(t[at(x)], ready_at[at(x - d)]) + w + copies(x);  // the unpack
      if (k + 2 < R) {
        free_at[(k + 2) % 3][at(x)] = now + i + l;
        now += i;
      }
      t[at(x)] = now;
    }
  }
  const double give_backs = static_cast<double>(collective::bruck_all_to_all_credits(P).size());
  return *std::max_element(t.begin(), t.end()) + give_backs * i;
}

std::vector<AlgorithmEstimate> all_to_all_estimates(std::int64_t ranks, std::int64_t elements,
                                                    DType dtype, const runtime::CostModel& model) {
  const double S = static_cast<double>(elements) * static_cast<double>(dtype_bytes(dtype));
  const double p = static_cast<double>(ranks);
  const double a = model.alpha_ns, b = model.beta_ns_per_byte;
  const double i = model.notify_issue_ns, w = model.wait_ns;
  const double h = i + model.notify_ns + w;
  const double L = model.local_ns(static_cast<std::int64_t>(S));
  // Mesh: the barrier's P - 1 credits out and waits, its epilogue's P - 1
  // give-backs, one latency. Pairwise: per step a credit awaited and its
  // give-back. Both: the local read of every put, the local write of the
  // own row.
  return {{ir::Algorithm::Mesh, (p - 1) * (a + S * b + 2 * i + w) + model.notify_ns + (p + 1) * L},
          {ir::Algorithm::Pairwise, (p - 1) * (a + S * b + h + i) + (p + 1) * L},
          {ir::Algorithm::Bruck, bruck_all_to_all_time(ranks, elements, dtype, model)}};
}

AlgorithmEstimate choose_fastest(const std::vector<AlgorithmEstimate>& estimates) {
  AlgorithmEstimate best = estimates.front();
  for (const AlgorithmEstimate& e : estimates)
    if (e.ns < best.ns) best = e;
  return best;
}

}  // namespace anyp::compiler
