// timeline_topology_test.cpp — the mesh and ring all-reduces on shared
// links (docs/timeline.md §2b) against the Hockney model with contention:
// a message of N bytes costs α + N β alone and α + k N β while k messages
// share a port. The ring only ever talks to its neighbours, so sharing
// adds nothing; the mesh (builtin and step 08's hand-written one) pulls
// every chunk in rank order 0 .. P - 1, so at step j the P - 1 - j ranks
// still behind all read rank j's port at once while the ranks ahead read
// alone: the last rank's pulls take Σ_j (α + (P - 1 - j) N β) against
// (P - 1)(α + N β), (P - 1)(P - 2)/2 · N β more per chunk. Notifies are
// issued in 0 ns and satisfied waits cost 0 here, so that every rank
// leaves each barrier at the same instant and the pulls start in step.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>

#include "support/allreduce_programs.hpp"
#include "support/fidelity_model.hpp"

namespace {

using anyp_test::Allreduce;

anyp_test::Constants topology_constants(bool shared) {
  return anyp_test::Constants{.alpha = 2000,
                              .beta = 0.0625,
                              .local_alpha = 100,
                              .issue = 0,
                              .latency = 700,
                              .wait = 0,
                              .dma_engines = 4,
                              .dma_issue = 50,
                              .links_shared = shared};
}

double makespan(Allreduce algorithm, std::int64_t n, std::int64_t P,
                const anyp_test::ScopedModel& m) {
  anyp::RunConfig config;
  config.timeline = true;
  config.model_file = m.path;
  const anyp::RunStats stats = anyp_test::run_allreduce(algorithm, n, P, config);
  EXPECT_EQ(stats.timeline->note, "");
  return stats.timeline->makespan_ns;
}

// The builtin mesh in K chunks of 16 KiB (n = 4K Ki floats) and step 08's
// one chunk: each chunk's pulls end in a barrier, so the chunks add.
TEST(Topology, MeshPullsShareTheSourcePortAsHockneyWithContentionSays) {
  const anyp_test::ScopedModel unshared(topology_constants(false), "mesh_unshared");
  const anyp_test::ScopedModel shared(topology_constants(true), "mesh_shared");
  const double beta = topology_constants(true).beta;
  for (const auto& [algorithm, n] :
       {std::pair{Allreduce::BuiltinMesh, std::int64_t{16384}}, {Allreduce::Mesh, 4096}}) {
    for (const std::int64_t P : {3, 4, 5, 8}) {
      const double N = 4.0 * static_cast<double>(n), p = static_cast<double>(P);
      const double contention = (p - 1) * (p - 2) / 2 * N * beta;
      const double alone = makespan(algorithm, n, P, unshared);
      const double got = makespan(algorithm, n, P, shared);
      EXPECT_NEAR(got - alone, contention, 0.01 * contention)
          << anyp_test::allreduce_name(algorithm) << " P=" << P;
      EXPECT_NEAR(got - alone, contention, 1e-6 * contention)
          << anyp_test::allreduce_name(algorithm) << " P=" << P;
    }
  }
}

// The rings (builtin, and step 10's by hand): neighbours only, no port
// carries two messages, the same time shared or not.
TEST(Topology, RingPullsNeverShareAPort) {
  const anyp_test::ScopedModel unshared(topology_constants(false), "ring_unshared");
  const anyp_test::ScopedModel shared(topology_constants(true), "ring_shared");
  for (const Allreduce algorithm : {Allreduce::BuiltinRing, Allreduce::Ring}) {
    for (const std::int64_t P : {2, 3, 4, 5, 8}) {
      const std::int64_t n = 2048 * P;  // 8 KiB per ring segment
      const double alone = makespan(algorithm, n, P, unshared);
      EXPECT_NEAR(makespan(algorithm, n, P, shared), alone, 1e-9 * alone)
          << anyp_test::allreduce_name(algorithm) << " P=" << P;
    }
  }
}

// So where the simple model has the mesh ahead, contention can turn the
// order. One 16 KiB chunk at P = 8 (N β = 1024 ns, α = 2 µs): alone the
// mesh's 7 (α + N β) beats the ring's 14 (α + N β / 8); shared, the mesh
// pays 21 N β more and loses.
TEST(Topology, ContentionTurnsTheOrderOfMeshAndRing) {
  const anyp_test::ScopedModel unshared(topology_constants(false), "order_unshared");
  const anyp_test::ScopedModel shared(topology_constants(true), "order_shared");
  const std::int64_t n = 4096, P = 8;
  const double mesh_alone = makespan(Allreduce::BuiltinMesh, n, P, unshared);
  const double ring_alone = makespan(Allreduce::BuiltinRing, n, P, unshared);
  const double mesh_shared = makespan(Allreduce::BuiltinMesh, n, P, shared);
  const double ring_shared = makespan(Allreduce::BuiltinRing, n, P, shared);
  EXPECT_LT(mesh_alone, ring_alone);
  EXPECT_GT(mesh_shared, ring_shared);
}

}  // namespace
