// timeline_test.cpp — the modeled timeline of a run (RunConfig::timeline,
// anyp/timeline.hpp): step 07's ops placed exactly by a2a3sim's simple
// twin (models/simple/); the same timeline under 20 seeded schedules, PCT schedules and
// both worker counts; the rounds of steps 07-11; the critical path as a
// chain that ends at the makespan (shipped model and simple twin); busy plus wait time filling
// every rank's clock; the same figures and path without every op kept; the platforms
// differing; a model file that cannot be read.
#include <gtest/gtest.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "anyp/errors.hpp"
#include "runtime/timeline/cost_model.hpp"
#include "support/allreduce_programs.hpp"
#include "support/build_paths.hpp"
#include "support/step07_program.hpp"

namespace {

using anyp::Timeline;
using anyp::TimelineOp;
using anyp_test::Allreduce;
using anyp_test::allreduce_name;
using anyp_test::run_allreduce;
using Kind = anyp::TimelineOp::Kind;

anyp::RunConfig timeline_config(std::int64_t P) {
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.timeline = true;
  return config;
}

// Step 07 (put mode) at P ranks; its timeline.
Timeline step07_timeline(std::int64_t P, anyp::RunConfig config) {
  auto x = anyp::HostTensor::zeros({P, 1, anyp_test::kStep07Size}, pl::FP32);
  auto y = anyp::HostTensor::zeros({P, 1, anyp_test::kStep07Size}, pl::FP32);
  const anyp::RunStats stats = anyp_test::ring_put().compile({x, y}, config)(x, y);
  EXPECT_TRUE(stats.timeline);
  return stats.timeline ? *stats.timeline : Timeline{};
}

std::string op_text(const Timeline& t, const TimelineOp& op) {
  return std::string(anyp::timeline_op_kind_name(op.kind)) + " " + t.name(op.memory) + " (" +
         t.name(op.function) + ": " + t.name(op.op) + ")";
}

std::string simple_twin(const std::string& platform) {
  return anyp_test::source_dir() + "/models/simple/" + platform + ".model";
}

// Step 07 on a2a3sim's simple twin (models/simple/a2a3sim.model: every
// transfer on its issuer's clock, as -p a2a3sim priced it before DMA
// engines and links; the shipped model's placement of the same ring is in
// timeline_transfers_test.cpp): rank r stages x into src_buf, puts it into
// its right neighbour's dst_buf, notifies it, waits for its left
// neighbour's notify and copies dst_buf to y. Every op's start and end
// from the model's constants: 256-byte accesses, the notify reaching its
// cell notify_ns after its issue.
TEST(Timeline, Step07OpsArePlacedByTheModel) {
  const auto m = anyp::runtime::load_cost_model(simple_twin("a2a3sim"));
  const double local = m.local_ns(256), remote = m.remote_ns(256);
  for (const std::int64_t P : {2, 3, 4, 7}) {
    anyp::RunConfig config = timeline_config(P);
    config.model_file = simple_twin("a2a3sim");
    const Timeline t = step07_timeline(P, config);
    EXPECT_EQ(t.model, "a2a3sim-simple");
    ASSERT_EQ(t.ops.size(), static_cast<std::size_t>(8 * P));
    for (std::int64_t r = 0; r < P; ++r) {
      const std::int64_t right = (r + 1) % P;
      const std::string own = "rank " + std::to_string(r) + "'s window ";
      const std::vector<std::string> want = {
          "local read host tensor 'x' (put_step: pl.load)",
          "local write " + own + "'src_buf' (put_step: pl.store)",
          "local read " + own + "'src_buf' (put_step: pld.tensor.put)",
          "remote write rank " + std::to_string(right) +
              "'s window 'dst_buf' (put_step: pld.tensor.put)",
          "notify signal 'signal_buf' cell [0, 0] of rank " + std::to_string(right) +
              " (put_step: pld.system.notify)",
          "wait signal 'signal_buf' cell [0, 0] of rank " + std::to_string(r) +
              " (put_step: pld.system.wait)",
          "local read " + own + "'dst_buf' (put_step: pl.load)",
          "local write host tensor 'y' (put_step: pl.store)"};
      const double issued = 3 * local + remote + m.notify_issue_ns;
      const std::vector<double> ends = {local,
                                        2 * local,
                                        3 * local,
                                        3 * local + remote,
                                        issued,
                                        issued + m.notify_ns + m.wait_ns,
                                        issued + m.notify_ns + m.wait_ns + local,
                                        issued + m.notify_ns + m.wait_ns + 2 * local};
      for (std::size_t i = 0; i < 8; ++i) {
        const TimelineOp& op = t.ops[static_cast<std::size_t>(8 * r) + i];
        EXPECT_EQ(op.rank, r);
        EXPECT_EQ(op_text(t, op), want[i]) << "rank " << r << " op " << i;
        EXPECT_DOUBLE_EQ(op.end_ns, ends[i]) << "rank " << r << " op " << i;
        EXPECT_DOUBLE_EQ(op.start_ns, i == 0 ? 0 : ends[i - 1]);
        if (op.kind == Kind::RemoteWrite || op.kind == Kind::Notify) {
          EXPECT_EQ(op.peer, right);
        }
        if (op.kind != Kind::Notify && op.kind != Kind::Wait) {
          EXPECT_EQ(op.bytes, 256);
        }
      }
      EXPECT_DOUBLE_EQ(t.ops[static_cast<std::size_t>(8 * r) + 5].blocked_ns, m.notify_ns);
      EXPECT_DOUBLE_EQ(t.ranks[static_cast<std::size_t>(r)].finish_ns, ends[7]);
      EXPECT_DOUBLE_EQ(t.ranks[static_cast<std::size_t>(r)].wait_ns, m.notify_ns);
      EXPECT_EQ(t.ranks[static_cast<std::size_t>(r)].rounds, 1);
    }
    EXPECT_DOUBLE_EQ(t.makespan_ns,
                     3 * local + remote + m.notify_issue_ns + m.notify_ns + m.wait_ns + 2 * local);
    EXPECT_EQ(t.rounds, 1);
    // One flow per rank: the left neighbour's notify into its wait.
    ASSERT_EQ(t.flows.size(), static_cast<std::size_t>(P));
    for (const anyp::TimelineFlow& f : t.flows) {
      const std::int64_t waiter = t.ops[f.wait].rank;
      EXPECT_EQ(t.ops[f.notify].kind, Kind::Notify);
      EXPECT_EQ(t.ops[f.wait].kind, Kind::Wait);
      EXPECT_EQ(t.ops[f.notify].rank, (waiter + P - 1) % P);
    }
    EXPECT_EQ(t.note, "");
  }
}

// Everything a timeline says, for comparing two runs' timelines.
void expect_same_timeline(const Timeline& a, const Timeline& b, const std::string& what) {
  EXPECT_EQ(a.makespan_ns, b.makespan_ns) << what;
  EXPECT_EQ(a.rounds, b.rounds) << what;
  ASSERT_EQ(a.ops.size(), b.ops.size()) << what;
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const TimelineOp &x = a.ops[i], &y = b.ops[i];
    ASSERT_TRUE(x.kind == y.kind && x.rank == y.rank && x.start_ns == y.start_ns &&
                x.end_ns == y.end_ns && x.blocked_ns == y.blocked_ns && x.peer == y.peer &&
                x.bytes == y.bytes && x.elements == y.elements &&
                a.name(x.memory) == b.name(y.memory) && a.name(x.op) == b.name(y.op))
        << what << ": op " << i << " differs: " << op_text(a, x) << " [" << x.start_ns << ", "
        << x.end_ns << ") against " << op_text(b, y) << " [" << y.start_ns << ", " << y.end_ns
        << ")";
  }
  ASSERT_EQ(a.flows.size(), b.flows.size()) << what;
  for (std::size_t i = 0; i < a.flows.size(); ++i) {
    EXPECT_EQ(a.flows[i].notify, b.flows[i].notify) << what << ": flow " << i;
    EXPECT_EQ(a.flows[i].wait, b.flows[i].wait) << what << ": flow " << i;
  }
  EXPECT_EQ(a.critical_path, b.critical_path) << what;
  EXPECT_EQ(a.note, b.note) << what;
}

struct ScheduleCase {
  Allreduce algorithm;
  std::int64_t P;
};

class TimelineSchedules : public ::testing::TestWithParam<ScheduleCase> {};

// The timeline depends on the program, P and the model only: 20 seeded
// schedules, 5 PCT schedules and 1 and 2 workers give one timeline.
TEST_P(TimelineSchedules, SameTimelineUnderEverySchedule) {
  const auto [algorithm, P] = GetParam();
  const std::int64_t n = 64 * P;
  anyp::RunConfig one = timeline_config(P);
  one.workers = 1;
  const anyp::RunStats reference = run_allreduce(algorithm, n, P, one);
  ASSERT_TRUE(reference.timeline);
  anyp::RunConfig two = timeline_config(P);
  two.workers = 2;
  expect_same_timeline(*reference.timeline, *run_allreduce(algorithm, n, P, two).timeline,
                       "2 workers");
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    anyp::RunConfig config = timeline_config(P);
    config.deterministic = true;
    config.schedule_seed = seed;
    expect_same_timeline(*reference.timeline, *run_allreduce(algorithm, n, P, config).timeline,
                         "schedule seed " + std::to_string(seed));
  }
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    anyp::RunConfig config = timeline_config(P);
    config.pct.enabled = true;
    config.pct.seed = seed;
    config.pct.steps = reference.schedule_steps > 0 ? reference.schedule_steps : 1000;
    expect_same_timeline(*reference.timeline, *run_allreduce(algorithm, n, P, config).timeline,
                         "PCT seed " + std::to_string(seed));
  }
}

INSTANTIATE_TEST_SUITE_P(Steps08To11, TimelineSchedules,
                         ::testing::Values(ScheduleCase{Allreduce::Mesh, 4},
                                           ScheduleCase{Allreduce::TwoPhase, 5},
                                           ScheduleCase{Allreduce::Ring, 3},
                                           ScheduleCase{Allreduce::Ring, 8},
                                           ScheduleCase{Allreduce::BuiltinMesh, 6},
                                           ScheduleCase{Allreduce::BuiltinRing, 7}),
                         [](const auto& info) {
                           return std::string(allreduce_name(info.param.algorithm)) + "_P" +
                                  std::to_string(info.param.P);
                         });

TEST(Timeline, Step07SameUnderEverySchedule) {
  const Timeline reference = step07_timeline(5, timeline_config(5));
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    anyp::RunConfig config = timeline_config(5);
    config.deterministic = true;
    config.schedule_seed = seed;
    expect_same_timeline(reference, step07_timeline(5, config),
                         "schedule seed " + std::to_string(seed));
  }
}

// Rounds: the longest chain of notify -> wait edges between ranks. One
// barrier for the mesh, two for the two-phase, a handshake per hop for the
// ring; the builtin mesh's two barriers (staged, read-done) at one chunk,
// the builtin ring's 2(P - 1) credits and its read-done.
TEST(Timeline, RoundsOfEachAlgorithm) {
  for (const std::int64_t P : {2, 3, 4, 7, 16}) {
    const std::int64_t n = 64 * P;
    auto rounds = [&](Allreduce a) {
      return run_allreduce(a, n, P, timeline_config(P)).timeline->rounds;
    };
    EXPECT_EQ(step07_timeline(P, timeline_config(P)).rounds, 1) << "P=" << P;
    EXPECT_EQ(rounds(Allreduce::Mesh), 1) << "P=" << P;
    EXPECT_EQ(rounds(Allreduce::TwoPhase), 2) << "P=" << P;
    EXPECT_EQ(rounds(Allreduce::Ring), 2 * (P - 1)) << "P=" << P;
    EXPECT_EQ(rounds(Allreduce::BuiltinMesh), 2) << "P=" << P;
    EXPECT_EQ(rounds(Allreduce::BuiltinRing), 2 * P - 1) << "P=" << P;
  }
}

// The critical path is a chain: it starts at a rank's first op at time 0
// (or the first transfer it issued, d later), each op follows the one
// before on its rank's clock (an issue of d between them for each transfer
// the rank issued in between), or on a DMA engine of its rank (a transfer
// the op was held for, or that freed the engine it queued for), or is a
// blocked wait released by the notify before it (a flow) or by the
// transfer that notify was delivered after; and it ends at the makespan.
// Every rank's ops fill its clock: busy + wait = finish. On the shipped
// model (asynchronous transfers, shared links) and its simple twin.
// Issues of rank `rank` in [from, to): transfers it issued then, d each.
double issues_between(const Timeline& t, std::int64_t rank, double from, double to) {
  double n = 0;
  for (const TimelineOp& op : t.ops)
    n += op.rank == rank && op.engine >= 0 && !op.continues_transfer &&
         op.issued_ns >= from - 1e-6 && op.issued_ns < to - 1e-6;
  return n * t.dma_issue_ns;
}

// Every algorithm of steps 08-11 at P = 2, 5, 8, on the shipped a2a3sim
// (DMA engines, shared links) and on its simple twin:
// body(what, algorithm, P, a timeline config for that model).
template <typename Body>
void for_each_allreduce_run(Body body) {
  for (const bool shipped : {true, false}) {
    for (const Allreduce a : {Allreduce::Mesh, Allreduce::TwoPhase, Allreduce::Ring,
                              Allreduce::BuiltinMesh, Allreduce::BuiltinRing}) {
      for (const std::int64_t P : {2, 5, 8}) {
        anyp::RunConfig config = timeline_config(P);
        if (!shipped) config.model_file = simple_twin("a2a3sim");
        body(std::string(allreduce_name(a)) + " P=" + std::to_string(P) +
                 (shipped ? " a2a3sim" : " simple"),
             a, P, config);
      }
    }
  }
}

TEST(Timeline, CriticalPathIsAChainToTheMakespan) {
  for_each_allreduce_run([&](const std::string& what, Allreduce a, std::int64_t P,
                             anyp::RunConfig config) {
    const Timeline t = *run_allreduce(a, 64 * P, P, config).timeline;
    ASSERT_FALSE(t.critical_path.empty()) << what;
    const TimelineOp& first = t.ops[t.critical_path.front()];
    EXPECT_NEAR(first.start_ns, issues_between(t, first.rank, 0, first.start_ns), 1e-6) << what;
    for (std::size_t i = 0; i < t.critical_path.front(); ++i)
      EXPECT_TRUE(t.ops[i].rank != first.rank || t.ops[i].engine >= 0)
          << what << ": the path does not start at a rank's first op";
    EXPECT_DOUBLE_EQ(t.ops[t.critical_path.back()].end_ns, t.makespan_ns) << what;
    for (std::size_t k = 1; k < t.critical_path.size(); ++k) {
      const std::size_t prev = t.critical_path[k - 1], cur = t.critical_path[k];
      const TimelineOp &p = t.ops[prev], &c = t.ops[cur];
      const std::string step = what + ": step " + std::to_string(k);
      bool flow = false;
      for (const anyp::TimelineFlow& f : t.flows)
        flow |= f.wait == cur && (f.notify == prev || t.ops[f.notify].rank == p.rank);
      if (c.kind == Kind::Wait && c.blocked_ns > 0 && flow) {
        // Released by the notify, or by the transfer it was delivered after.
        EXPECT_TRUE(p.kind == Kind::Notify || p.engine >= 0) << step;
        EXPECT_GE(c.start_ns + c.blocked_ns, p.end_ns - 1e-6) << step;
      } else if (c.engine < 0 && c.blocked_ns > 0 && p.engine >= 0) {
        // Held by its own rank's transfer until it ended (a remote read
        // that queued for an engine: until d before, its issue).
        EXPECT_EQ(p.rank, c.rank) << step;
        const double released = c.start_ns + c.blocked_ns;
        EXPECT_LT(
            std::min(std::abs(released - p.end_ns), std::abs(released + t.dma_issue_ns - p.end_ns)),
            1e-6)
            << step;
      } else {
        EXPECT_EQ(p.rank, c.rank) << step;
        EXPECT_NEAR(c.start_ns - p.end_ns, issues_between(t, c.rank, p.end_ns, c.start_ns), 1e-6)
            << step << " (" << p.start_ns << ".." << p.end_ns << " then " << c.start_ns << ")";
      }
    }
    double latest = 0;
    for (const anyp::RankTimeline& r : t.ranks) {
      EXPECT_NEAR(r.busy_ns + r.wait_ns, r.finish_ns, 1e-6 * r.finish_ns) << what;
      latest = std::max(latest, r.finish_ns);
    }
    EXPECT_EQ(latest, t.makespan_ns) << what;
  });
}

// RunConfig::timeline_detail "path" (the examples' --timeline) and
// "figures" (--cost): the same figures, links, rounds and note as with
// every op kept ("ops"), and no flows; "path" the same critical path, its
// ops in path order (names included), "figures" no op or path. And each
// rank's transfers and engine time as its engine ops add up. On the
// shipped model (DMA engines, shared links) and its simple twin.
TEST(Timeline, WithoutEveryOpTheFiguresAndThePathAreTheSame) {
  std::int64_t engine_transfers = 0;  // on the shipped model
  for_each_allreduce_run([&](const std::string& what, Allreduce a, std::int64_t P,
                             anyp::RunConfig config) {
    const Timeline all = *run_allreduce(a, 64 * P, P, config).timeline;
    // Each rank's transfers and engine time as its engine ops add up.
    for (std::size_t r = 0; r < all.ranks.size(); ++r) {
      std::int64_t transfers = 0;
      double engine_ns = 0;
      for (const TimelineOp& op : all.ops) {
        if (op.rank != static_cast<std::int64_t>(r) || op.engine < 0) continue;
        transfers += !op.continues_transfer;
        engine_ns += op.end_ns - op.start_ns;
      }
      EXPECT_EQ(all.ranks[r].transfers, transfers) << what << ": rank " << r;
      EXPECT_NEAR(all.ranks[r].engine_busy_ns, engine_ns, 1e-9 * (1 + engine_ns)) << what;
      engine_transfers += transfers;
    }
    // The figures of a lesser detail, exactly those of every op's.
    auto expect_same_figures = [&](const Timeline& t, const std::string& detail) {
      const std::string at = what + " (" + detail + ")";
      EXPECT_EQ(t.makespan_ns, all.makespan_ns) << at;
      EXPECT_EQ(t.rounds, all.rounds) << at;
      EXPECT_EQ(t.note, all.note) << at;
      EXPECT_TRUE(t.flows.empty()) << at;
      ASSERT_EQ(t.ranks.size(), all.ranks.size()) << at;
      for (std::size_t r = 0; r < all.ranks.size(); ++r) {
        const anyp::RankTimeline &x = t.ranks[r], &y = all.ranks[r];
        EXPECT_TRUE(x.finish_ns == y.finish_ns && x.busy_ns == y.busy_ns &&
                    x.wait_ns == y.wait_ns && x.rounds == y.rounds && x.transfers == y.transfers &&
                    x.engine_busy_ns == y.engine_busy_ns)
            << at << ": rank " << r;
      }
      ASSERT_EQ(t.links.size(), all.links.size()) << at;
      for (std::size_t l = 0; l < all.links.size(); ++l)
        EXPECT_TRUE(t.links[l].rank == all.links[l].rank && t.links[l].port == all.links[l].port &&
                    t.links[l].bytes == all.links[l].bytes &&
                    t.links[l].busy_ns == all.links[l].busy_ns)
            << at << ": link " << l;
    };
    config.timeline_detail = "figures";
    const Timeline figures = *run_allreduce(a, 64 * P, P, config).timeline;
    expect_same_figures(figures, "figures");
    EXPECT_TRUE(figures.ops.empty() && figures.critical_path.empty()) << what;
    config.timeline_detail = "path";
    const Timeline path = *run_allreduce(a, 64 * P, P, config).timeline;
    expect_same_figures(path, "path");
    ASSERT_EQ(path.ops.size(), all.critical_path.size()) << what;
    ASSERT_EQ(path.critical_path.size(), all.critical_path.size()) << what;
    for (std::size_t k = 0; k < path.critical_path.size(); ++k) {
      EXPECT_EQ(path.critical_path[k], k) << what;
      const TimelineOp &x = path.ops[k], &y = all.ops[all.critical_path[k]];
      EXPECT_TRUE(
          x.kind == y.kind && x.rank == y.rank && x.block == y.block && x.start_ns == y.start_ns &&
          x.end_ns == y.end_ns && x.blocked_ns == y.blocked_ns && x.engine == y.engine &&
          x.issued_ns == y.issued_ns && x.continues_transfer == y.continues_transfer &&
          x.peer == y.peer && x.bytes == y.bytes && x.elements == y.elements &&
          path.name(x.memory) == all.name(y.memory) &&
          path.name(x.function) == all.name(y.function) && path.name(x.op) == all.name(y.op))
          << what << ": path op " << k << ": " << op_text(path, x) << " against "
          << op_text(all, y);
    }
  });
  EXPECT_GT(engine_transfers, 0);  // the comparison saw transfers on DMA engines
}

// a5sim's faster links and vector units show in the makespan; the same
// run without RunConfig::timeline has no timeline.
TEST(Timeline, PlatformsDiffer) {
  anyp::RunConfig a5 = timeline_config(8);
  a5.platform = "a5sim";
  const auto on_a2a3 = run_allreduce(Allreduce::Ring, 8 * 512, 8, timeline_config(8));
  const auto on_a5 = run_allreduce(Allreduce::Ring, 8 * 512, 8, a5);
  EXPECT_EQ(on_a2a3.timeline->model, "a2a3sim");
  EXPECT_EQ(on_a5.timeline->model, "a5sim");
  EXPECT_LT(on_a5.timeline->makespan_ns, on_a2a3.timeline->makespan_ns);
  EXPECT_FALSE(run_allreduce(Allreduce::Ring, 8 * 512, 8, anyp::RunConfig{}).timeline);
}

TEST(Timeline, UnreadableModelFileIsAConfigError) {
  anyp::RunConfig config = timeline_config(3);
  config.model_file = "/nonexistent/dir/my.model";
  try {
    step07_timeline(3, config);
    FAIL() << "no error";
  } catch (const anyp::ConfigError& e) {
    EXPECT_STREQ(e.what(), "cost model '/nonexistent/dir/my.model': cannot be read: no such file");
  }
}

}  // namespace
