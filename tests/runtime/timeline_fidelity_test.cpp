// timeline_fidelity_test.cpp — the modeled makespan of every all-reduce of
// ladder steps 08-11 against the closed formula of the schedule it runs
// (docs/timeline.md, "Fidelity"), at P = 2..64 and several vector lengths.
//
// Under the alpha-beta model (every cost but alpha and beta zero) a remote
// message of m bytes costs alpha + m beta and the textbook formulas hold
// exactly (Thakur, Rabenseifner & Gropp 2005), with N = 4n bytes:
//   mesh       (P - 1)(alpha + N beta)
//   two-phase  2 (P - 1)(alpha + N/P beta)       (reduce-scatter + all-gather)
//   ring       2 (P - 1)(alpha + N/P beta)
// The builtins run the same schedules cut into messages of at most 16 KiB
// (collectives.md §3.2, §3.3): K = ceil(N / 16 KiB) chunks for the mesh,
// J = ceil(N/P / 16 KiB) sub-chunks per ring segment:
//   builtin mesh  (P - 1)(K alpha + N beta)
//   builtin ring  2 (P - 1)(J alpha + N/P beta)
// and the logarithmic builtins over p' = 2^L <= P (collectives.md §3.3a,
// §3.3b), with 2 (K alpha + N beta) more when P is not a power of two (the
// fold's pull in, and the result's pull out):
//   recursive doubling  L (K alpha + N beta)
//   Rabenseifner        2 sum_s (J_s alpha + N m_s/p' beta), m_s = p'/2^(s+1),
//                       = 2 L alpha + 2 (p' - 1)/p' N beta when every J_s = 1
//   binomial tree       the longest chain of whole-vector pulls (K alpha + N
//                       beta each) through the reduce up to rank 0 and the
//                       broadcast down: 2 ceil(log2 P) of them at a power of
//                       two (compiler::binomial_tree_pull_chain)
// Under a full model (local accesses, compute, notify issue and latency,
// waits all priced) the rings run in lockstep: every round waits the
// notify latency of its left neighbour's credit; their formulas are
// derived in ring_full_model() and builtin_ring_full_model() below.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compiler/choose_algorithm.hpp"
#include "runtime/timeline/cost_model.hpp"
#include "support/allreduce_programs.hpp"
#include "support/fidelity_model.hpp"
#include "support/sweep.hpp"

namespace {

using anyp_test::Allreduce;
using anyp_test::allreduce_name;
using anyp_test::run_allreduce;

using anyp_test::Constants;
using anyp_test::model_file;

double modeled_makespan(Allreduce a, std::int64_t n, std::int64_t P, const std::string& model) {
  anyp::RunConfig config;
  config.timeline = true;
  config.model_file = model;
  const anyp::RunStats stats = run_allreduce(a, n, P, config);
  EXPECT_TRUE(stats.timeline);
  EXPECT_EQ(stats.timeline->model, "fidelity");
  EXPECT_EQ(stats.timeline->note, "");
  return stats.timeline->makespan_ns;
}

constexpr double kChunkBytes = 16 * 1024;
double pieces(double bytes) { return std::max(1.0, std::ceil(bytes / kChunkBytes)); }

// The textbook formula of `a` under the alpha-beta model.
double alpha_beta_formula(Allreduce a, std::int64_t n, std::int64_t P, const Constants& c) {
  const double N = 4.0 * static_cast<double>(n), p = static_cast<double>(P);
  switch (a) {
    case Allreduce::Mesh:
      return (p - 1) * (c.alpha + N * c.beta);
    case Allreduce::TwoPhase:
    case Allreduce::Ring:
      return 2 * (p - 1) * (c.alpha + N / p * c.beta);
    case Allreduce::BuiltinMesh:
      return (p - 1) * (pieces(N) * c.alpha + N * c.beta);
    case Allreduce::BuiltinRing:
      return 2 * (p - 1) * (pieces(4.0 * std::ceil(n / p)) * c.alpha + N / p * c.beta);
    case Allreduce::BuiltinTree:
      return anyp::compiler::binomial_tree_pull_chain(P) * (pieces(N) * c.alpha + N * c.beta);
    case Allreduce::BuiltinAuto:
      break;
    case Allreduce::BuiltinRecursiveDoubling:
    case Allreduce::BuiltinRabenseifner: {
      std::int64_t pow2 = 1, levels = 0;
      while (pow2 * 2 <= P) pow2 *= 2, ++levels;
      const double whole = pieces(N) * c.alpha + N * c.beta;
      const double fold = P == pow2 ? 0 : 2 * whole;
      if (a == Allreduce::BuiltinRecursiveDoubling)
        return static_cast<double>(levels) * whole + fold;
      double phases = 0;
      for (std::int64_t mask = pow2 / 2; mask >= 1; mask /= 2) {
        const double elements =
            std::ceil(static_cast<double>(mask * n) / static_cast<double>(pow2));
        phases += 2 * (pieces(4.0 * elements) * c.alpha + 4.0 * elements * c.beta);
      }
      return phases + fold;
    }
  }
  return 0;
}

// Step 10's ring under a full model. A rank stages (load x, store data:
// 2 local accesses of N bytes), credits its right neighbour, and runs
// 2(P - 1) rounds; every round starts with the issue of the credit that
// releases it (sent by the left neighbour at the same modeled time, by
// symmetry), waits its latency, costs the satisfied wait, and moves a
// segment of S = N/P bytes: reduce-scatter rounds load the own segment,
// pull the left one, add and store (2 local + 1 remote + S/4 adds),
// all-gather rounds pull and store (1 local + 1 remote). The last round
// credits no one. It ends with load data, store y.
double ring_full_model(std::int64_t n, std::int64_t P, const Constants& c) {
  const double N = 4.0 * static_cast<double>(n), p = static_cast<double>(P), S = N / p;
  const double local_n = c.local_alpha + N * c.local_beta;
  const double local_s = c.local_alpha + S * c.local_beta, remote_s = c.alpha + S * c.beta;
  const double handshake = c.issue + c.latency + c.wait;
  const double reduce_round = handshake + 2 * local_s + remote_s + S / 4 / c.add_per_ns;
  const double gather_round = handshake + local_s + remote_s;
  return 2 * local_n + (p - 1) * (reduce_round + gather_round) + 2 * local_n;
}

// The builtin ring (collectives.md §3.3) under a full model: staged as
// step 10, the same 2(P - 1) lockstep rounds with every segment in J
// sub-chunks (one message each), then the read-done handshake (issue,
// latency, wait), an epilogue of 2P - 1 notifies to its own cells, and
// load data, store y.
double builtin_ring_full_model(std::int64_t n, std::int64_t P, const Constants& c) {
  const double N = 4.0 * static_cast<double>(n), p = static_cast<double>(P), S = N / p;
  const double J = pieces(4.0 * std::ceil(n / p));
  const double local_n = c.local_alpha + N * c.local_beta;
  const double local_s = J * c.local_alpha + S * c.local_beta;
  const double remote_s = J * c.alpha + S * c.beta;
  const double handshake = c.issue + c.latency + c.wait;
  const double reduce_round = handshake + 2 * local_s + remote_s + S / 4 / c.add_per_ns;
  const double gather_round = handshake + local_s + remote_s;
  return 2 * local_n + (p - 1) * (reduce_round + gather_round) + handshake + (2 * p - 1) * c.issue +
         2 * local_n;
}

void expect_within_1_percent(double modeled, double formula, const std::string& what) {
  EXPECT_NEAR(modeled, formula, 0.01 * formula)
      << what << ": modeled " << modeled << " ns, formula " << formula << " ns";
}

const std::vector<std::int64_t> kWorldSizes = {2, 3, 4, 5, 6, 7, 8, 11, 16, 17, 31, 32, 47, 64};

// Vector lengths: 32 P and 512 P elements (chunks of 32 B to 2 KiB), so
// the builtin mesh runs K = 1 .. 8 chunks.
std::vector<std::int64_t> lengths(std::int64_t P) { return {32 * P, 512 * P}; }

class AlphaBetaFidelity : public ::testing::TestWithParam<Allreduce> {};

TEST_P(AlphaBetaFidelity, MakespanIsTheTextbookFormula) {
  const Constants c{.alpha = 2000, .beta = 0.005};
  const std::string model = model_file(c, allreduce_name(GetParam()));
  for (const std::int64_t P : kWorldSizes) {
    for (const std::int64_t n : lengths(P)) {
      expect_within_1_percent(modeled_makespan(GetParam(), n, P, model),
                              alpha_beta_formula(GetParam(), n, P, c),
                              std::string(allreduce_name(GetParam())) + " P=" + std::to_string(P) +
                                  " n=" + std::to_string(n));
    }
  }
  std::filesystem::remove(model);
}

INSTANTIATE_TEST_SUITE_P(Steps08To11, AlphaBetaFidelity,
                         ::testing::Values(Allreduce::Mesh, Allreduce::TwoPhase, Allreduce::Ring,
                                           Allreduce::BuiltinMesh, Allreduce::BuiltinRing,
                                           Allreduce::BuiltinRecursiveDoubling,
                                           Allreduce::BuiltinRabenseifner, Allreduce::BuiltinTree),
                         [](const auto& info) { return std::string(allreduce_name(info.param)); });

// The logarithmic builtins with pieces above 16 KiB: K = 3 .. 6 for
// recursive doubling's whole vector, J_s = 1 .. 3 for Rabenseifner's blocks.
TEST(AlphaBetaFidelity, LogarithmicBuiltinsWithSeveralPieces) {
  const Constants c{.alpha = 2000, .beta = 0.005};
  const std::string model = model_file(c, "log_pieces");
  for (const Allreduce a : {Allreduce::BuiltinRecursiveDoubling, Allreduce::BuiltinRabenseifner,
                            Allreduce::BuiltinTree}) {
    for (const std::int64_t P : {2, 3, 8, 12}) {
      for (const std::int64_t n : {12288, 24576}) {
        expect_within_1_percent(
            modeled_makespan(a, n, P, model), alpha_beta_formula(a, n, P, c),
            std::string(allreduce_name(a)) + " P=" + std::to_string(P) + " n=" + std::to_string(n));
      }
    }
  }
  std::filesystem::remove(model);
}

// The compiler's estimates (compiler::allreduce_estimates, what Auto
// chooses by) against the simulated makespan of each builtin under
// alpha-beta models with DMA engines (each pull issued in d) and shared
// links (the mesh's pulls in rank order queue on the pulled rank's port),
// latency-bound and bandwidth-bound, one piece per message. Not priced
// yet (docs/timeline.md §6): the pieces of a larger message that land in
// the window (an all-gather half's pulls) run on several engines at once,
// and the tree's children pull the result from their parent's one port
// together.
TEST(AutoAllreduceFidelity, EstimatesMatchTheSimulationWithEnginesAndSharedLinks) {
  const Allreduce builtins[] = {Allreduce::BuiltinMesh, Allreduce::BuiltinRing,
                                Allreduce::BuiltinRecursiveDoubling,
                                Allreduce::BuiltinRabenseifner};
  const anyp::ir::Algorithm kinds[] = {anyp::ir::Algorithm::Mesh, anyp::ir::Algorithm::Ring,
                                       anyp::ir::Algorithm::RecursiveDoubling,
                                       anyp::ir::Algorithm::Rabenseifner};
  for (const Constants& c :
       {Constants{
            .alpha = 2000, .beta = 0.005, .dma_engines = 4, .dma_issue = 50, .links_shared = true},
        Constants{
            .alpha = 50, .beta = 0.5, .dma_engines = 4, .dma_issue = 50, .links_shared = true}}) {
    const std::string model = model_file(c, "estimates_async");
    const anyp::runtime::CostModel m = anyp::runtime::load_cost_model(model);
    for (const std::int64_t P : {2, 3, 5, 8, 12}) {
      for (const std::int64_t n : {8, 2048}) {
        const auto estimates = anyp::compiler::allreduce_estimates(P, n, anyp::DType::FP32,
                                                                   anyp::ir::ReduceKind::Sum, m);
        for (std::size_t i = 0; i < std::size(builtins); ++i) {
          ASSERT_EQ(estimates[i].kind, kinds[i]);
          expect_within_1_percent(modeled_makespan(builtins[i], n, P, model), estimates[i].ns,
                                  std::string(allreduce_name(builtins[i])) + " alpha " +
                                      std::to_string(c.alpha) + " P=" + std::to_string(P) +
                                      " n=" + std::to_string(n));
        }
      }
    }
    std::filesystem::remove(model);
  }
}

// AllreduceMode::Auto under alpha-beta models, one latency-bound and one
// bandwidth-bound (each also with DMA engines and shared links): the algorithm it runs has the
// least simulated makespan of the five candidates (within the 1 % of the formulas it estimates
// with), at P = 2 .. 17 and 32 B to 256 KiB per rank; and its run is the chosen candidate's run.
TEST(AutoAllreduceFidelity, RunsTheCandidateOfLeastModeledTime) {
  const Allreduce candidates[] = {Allreduce::BuiltinMesh, Allreduce::BuiltinRing,
                                  Allreduce::BuiltinRecursiveDoubling,
                                  Allreduce::BuiltinRabenseifner, Allreduce::BuiltinTree};
  int picked[5] = {};
  for (const Constants& c :
       {Constants{.alpha = 2000, .beta = 0.005}, Constants{.alpha = 50, .beta = 0.5},
        Constants{
            .alpha = 2000, .beta = 0.005, .dma_engines = 4, .dma_issue = 50, .links_shared = true},
        Constants{
            .alpha = 50, .beta = 0.5, .dma_engines = 4, .dma_issue = 50, .links_shared = true}}) {
    const std::string model = model_file(c, "auto");
    // With engines, one piece per message (what the estimates price there).
    const std::vector<std::int64_t> ns = c.dma_engines > 0
                                             ? std::vector<std::int64_t>{8, 2048}
                                             : std::vector<std::int64_t>{8, 2048, 65536};
    for (const std::int64_t P : anyp_test::sweep({2, 3, 5, 8, 12, 16, 17}, {2, 5, 12, 17})) {
      for (const std::int64_t n : ns) {
        double best = INFINITY;
        std::vector<double> times;
        for (const Allreduce a : candidates) {
          times.push_back(modeled_makespan(a, n, P, model));
          best = std::min(best, times.back());
        }
        const double autotime = modeled_makespan(Allreduce::BuiltinAuto, n, P, model);
        const std::string what = "alpha " + std::to_string(c.alpha) + " P=" + std::to_string(P) +
                                 " n=" + std::to_string(n);
        EXPECT_LE(autotime, 1.01 * best) << what;
        bool is_a_candidate = false;
        for (std::size_t i = 0; i < times.size(); ++i) {
          if (std::abs(times[i] - autotime) <= 1e-9 * autotime) {
            is_a_candidate = true;
            if (times[i] <= 1.01 * best) ++picked[i];
          }
        }
        EXPECT_TRUE(is_a_candidate) << what << ": " << autotime << " ns is no candidate's";
      }
    }
    std::filesystem::remove(model);
  }
  // Over this grid the choice is not one algorithm everywhere.
  int used = 0;
  for (int count : picked) used += count > 0;
  EXPECT_GE(used, 3);
}

// The choice and the candidates' estimates, as CompiledProgram names them:
// P = 2, 16 FP32 (64 B): mesh and recursive doubling one pull each, the
// first of equals wins; the others two steps.
TEST(AutoAllreduceFidelity, TheChoiceIsNamedWithEveryEstimate) {
  const Constants c{.alpha = 2000, .beta = 0.005};
  const std::string model = model_file(c, "auto_text");
  anyp::RunConfig config = anyp::RunConfig::for_world_size(2);
  config.model_file = model;
  const anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, 16}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, 16}, pl::FP32);
  const anyp::CompiledProgram compiled =
      anyp_test::allreduce_program(Allreduce::BuiltinAuto, 16).compile({x, y}, config);
  EXPECT_EQ(compiled.collective_choices(),
            "builtin_auto_16_per_rank: pld.tensor.allreduce (Sum, Mesh, data FP32 [1, 16]): "
            "Auto chose Mesh: Mesh 2.000 us, RecursiveDoubling 2.000 us, "
            "Ring 4.000 us, Rabenseifner 4.000 us, Tree 4.001 us\n");
  std::filesystem::remove(model);
}

// The table of every call (--explain-collectives), pinned and Auto, and the
// run's copies of both texts (what --cost, --timeline and the flag print).
TEST(AutoAllreduceFidelity, TheTableNamesWhatEachCallRunsAndWhy) {
  const Constants c{.alpha = 2000, .beta = 0.005};
  const std::string model = model_file(c, "table");
  anyp::RunConfig config = anyp::RunConfig::for_world_size(2);
  config.model_file = model;
  const anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, 16}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, 16}, pl::FP32);
  const std::string candidates =
      "        2.000 us  Mesh{mesh}\n"
      "        2.000 us  RecursiveDoubling\n"
      "        4.000 us  Ring{ring}\n"
      "        4.000 us  Rabenseifner\n"
      "        4.001 us  Tree\n";
  auto with = [&](const std::string& mesh, const std::string& ring) {
    std::string s = candidates;
    s.replace(s.find("{mesh}"), 6, mesh);
    s.replace(s.find("{ring}"), 6, ring);
    return s;
  };
  const std::string header =
      "collectives (model fidelity, P=2): per call, the algorithm it runs and each candidate's "
      "modeled time, fastest first\n";
  const anyp::CompiledProgram ring =
      anyp_test::allreduce_program(Allreduce::BuiltinRing, 16).compile({x, y}, config);
  EXPECT_EQ(ring.collective_table(),
            header +
                "  builtin_ring_16_per_rank: pld.tensor.allreduce (Sum, Ring, data FP32 [1, 16]): "
                "runs Ring (pinned)\n" +
                with("", "  <- runs"));
  EXPECT_EQ(ring.collective_choices(), "");
  const anyp::CompiledProgram automatic =
      anyp_test::allreduce_program(Allreduce::BuiltinAuto, 16).compile({x, y}, config);
  const std::string auto_table =
      header +
      "  builtin_auto_16_per_rank: pld.tensor.allreduce (Sum, Mesh, data FP32 [1, 16]): runs "
      "Mesh (chosen by Auto)\n" +
      with("  <- runs", "");
  EXPECT_EQ(automatic.collective_table(), auto_table);
  const anyp::RunStats stats = automatic.run({x, y});
  EXPECT_EQ(stats.collective_table, auto_table);
  EXPECT_EQ(stats.collective_choices, automatic.collective_choices());
  // A program without collectives has no table.
  EXPECT_EQ(
      anyp_test::allreduce_program(Allreduce::Mesh, 16).compile({x, y}, config).collective_table(),
      "");
  std::filesystem::remove(model);
}

// The builtin ring with segments above 16 KiB: J = 2 and 3 sub-chunks.
TEST(AlphaBetaFidelity, BuiltinRingWithSubChunks) {
  const Constants c{.alpha = 2000, .beta = 0.005};
  const std::string model = model_file(c, "subchunks");
  for (const std::int64_t P : {2, 3, 8}) {
    for (const std::int64_t n : {5000 * P, 10000 * P}) {
      expect_within_1_percent(modeled_makespan(Allreduce::BuiltinRing, n, P, model),
                              alpha_beta_formula(Allreduce::BuiltinRing, n, P, c),
                              "builtin_ring P=" + std::to_string(P) + " n=" + std::to_string(n));
    }
  }
  std::filesystem::remove(model);
}

// Every constant priced, in ratios unlike the shipped models' so that a
// term dropped or counted twice shows.
const Constants kFull{.alpha = 2000,
                      .beta = 0.005,
                      .local_alpha = 90,
                      .local_beta = 0.0007,
                      .issue = 30,
                      .latency = 1300,
                      .wait = 70,
                      .add_per_ns = 300};

TEST(FullModelFidelity, RingIsItsLockstepFormula) {
  const std::string model = model_file(kFull, "ring");
  for (const std::int64_t P : kWorldSizes) {
    for (const std::int64_t n : lengths(P)) {
      expect_within_1_percent(modeled_makespan(Allreduce::Ring, n, P, model),
                              ring_full_model(n, P, kFull),
                              "ring P=" + std::to_string(P) + " n=" + std::to_string(n));
    }
  }
  std::filesystem::remove(model);
}

TEST(FullModelFidelity, BuiltinRingIsItsLockstepFormula) {
  const std::string model = model_file(kFull, "builtin_ring");
  for (const std::int64_t P : kWorldSizes) {
    for (const std::int64_t n : lengths(P)) {
      expect_within_1_percent(modeled_makespan(Allreduce::BuiltinRing, n, P, model),
                              builtin_ring_full_model(n, P, kFull),
                              "builtin_ring P=" + std::to_string(P) + " n=" + std::to_string(n));
    }
  }
  std::filesystem::remove(model);
}

}  // namespace
