// session_test.cpp — anyp::Session (issue 12, item 4; PyPTO's prepare()):
// windows that persist between runs or are reset (before every run, or
// explicitly), the builtin collectives across persistent runs (they leave
// their signals at zero), a hand-made handshake whose credit outlives its
// run (the race checker reports the second run's read), resident tensors
// (copied once, read and written in place, kept between runs), and
// asynchronous submits (in order, their errors rethrown by wait(), their
// tensors held while queued). P = 2, 3, 5.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <vector>

#include "support/session_programs.hpp"

namespace {

using anyp_test::kSessionRow;

anyp::RunConfig config_for(std::int64_t P, bool races = false) {
  anyp::RunConfig c = anyp::RunConfig::for_world_size(P);
  c.check_races = races;
  return c;
}

struct Rows {
  anyp::HostTensor x, y;
};
Rows rows(std::int64_t P, std::uint32_t seed) {
  anyp::InputGenerator gen(seed);
  return {gen.uniform({P, 1, kSessionRow}), anyp::HostTensor::zeros({P, 1, kSessionRow}, pl::FP32)};
}

// y == x added k times in FP32 (as the accumulating window does), element
// by element.
void expect_multiple(const anyp::HostTensor& y, const anyp::HostTensor& x, int k,
                     const char* what) {
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    float sum = 0;
    for (int j = 0; j < k; ++j) sum += static_cast<float>(x.get(i));
    ASSERT_EQ(y.get(i), static_cast<double>(sum)) << what << " " << i;
  }
}

class Sessions : public testing::TestWithParam<std::int64_t> {};

TEST_P(Sessions, PersistentWindowsKeepWhatTheLastRunLeft) {
  const std::int64_t P = GetParam();
  auto [x, y] = rows(P, 41);
  const anyp::CompiledProgram prog =
      anyp_test::accumulate_program().compile({x, y}, config_for(P, true));
  anyp::Session s = prog.prepare({.persistent_windows = true, .reset_windows = false});
  for (int run = 1; run <= 3; ++run) {
    s(x, y);
    expect_multiple(y, x, run, "accumulated");
  }
  EXPECT_EQ(s.runs_done(), 3);
  s.reset_windows();  // explicit: the next run starts from zero
  s(x, y);
  expect_multiple(y, x, 1, "after reset_windows");
}

TEST_P(Sessions, WindowsAreZeroedBeforeEveryRunUnlessAskedOtherwise) {
  const std::int64_t P = GetParam();
  auto [x, y] = rows(P, 42);
  const anyp::CompiledProgram prog = anyp_test::accumulate_program().compile({x, y}, config_for(P));
  anyp::Session reset = prog.prepare({.persistent_windows = true, .reset_windows = true});
  anyp::Session fresh = prog.prepare();
  for (int run = 1; run <= 3; ++run) {
    reset(x, y);
    expect_multiple(y, x, 1, "persistent, reset");
    fresh(x, y);
    expect_multiple(y, x, 1, "not persistent");
    prog(x, y);  // CompiledProgram::run between session runs touches no session window
    expect_multiple(y, x, 1, "CompiledProgram::run");
  }
  anyp::Session kept = prog.prepare({.persistent_windows = true, .reset_windows = false});
  kept(x, y);
  prog(x, y);  // another program's run (the pooled heap) in between
  kept(x, y);
  expect_multiple(y, x, 2, "a session's windows are its own");
}

TEST_P(Sessions, TheBuiltinCollectivesRunBackToBackOnPersistentWindows) {
  const std::int64_t P = GetParam();
  auto [x, y] = rows(P, 43);
  const anyp::CompiledProgram prog =
      anyp_test::allreduce_program().compile({x, y}, config_for(P, true));
  anyp::HostTensor first = anyp::HostTensor::zeros({P, 1, kSessionRow}, pl::FP32);
  prog(x, first);
  anyp::Session s = prog.prepare({.persistent_windows = true, .reset_windows = false});
  for (int run = 0; run < 4; ++run) {
    s(x, y);  // race-checked: the signal is back at zero after every call
    ASSERT_TRUE(anyp::equal_exact(y, first)) << "run " << run;
  }
}

TEST_P(Sessions, AStaleCreditOnPersistentWindowsIsReportedAsARace) {
  const std::int64_t P = GetParam();
  auto [x, y] = rows(P, 44);
  const anyp::CompiledProgram prog =
      anyp_test::handoff_program().compile({x, y}, config_for(P, true));
  anyp::Session reset = prog.prepare({.persistent_windows = true});
  for (int run = 0; run < 2; ++run) {
    reset(x, y);
    for (std::int64_t r = 0; r < P; ++r)
      EXPECT_EQ(y.at({r, 0, 3}), x.at({(r + P - 1) % P, 0, 3})) << "rank " << r;
  }
  anyp::Session kept = prog.prepare({.persistent_windows = true, .reset_windows = false});
  kept(x, y);
  try {
    kept(x, y);
    ADD_FAILURE() << "the second run's wait passed on the first run's credit unreported";
  } catch (const anyp::RaceError& e) {
    EXPECT_NE(std::string(e.what()).find("op pld.tile.remote_load"), std::string::npos) << e.what();
  }
}

TEST_P(Sessions, AResidentTensorIsCopiedOnceAndKeepsWhatRunsWrite) {
  const std::int64_t P = GetParam();
  auto [x, y] = rows(P, 45);
  anyp::HostTensor w0 = anyp::HostTensor::zeros({P, 1, kSessionRow}, pl::FP32);
  for (std::int64_t i = 0; i < w0.numel(); ++i) w0.set(i, 1.0);
  const anyp::CompiledProgram prog =
      anyp_test::scale_program().compile({x, y, w0}, config_for(P, true));
  anyp::Session s = prog.prepare();
  const anyp::HostTensor w = s.resident(w0);
  EXPECT_NE(w.data(), w0.data());
  ASSERT_EQ(s.resident_tensors().size(), 1u);
  EXPECT_EQ(s.resident_tensors()[0].data(), w.data());
  for (int run = 0; run < 3; ++run) {
    s(x, y, w);
    const double w_now = 1 << run;  // w doubles in place every run: 1, 2, 4 (exact products)
    for (std::int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(y.get(i), x.get(i) * w_now) << i;
  }
  for (std::int64_t i = 0; i < w.numel(); ++i) ASSERT_EQ(w.get(i), 8.0);
  for (std::int64_t i = 0; i < w0.numel(); ++i) ASSERT_EQ(w0.get(i), 1.0) << "init untouched";
}

TEST_P(Sessions, SubmittedRunsEndInOrderAndHandlesGiveTheirStats) {
  const std::int64_t P = GetParam();
  auto [x, y] = rows(P, 46);
  const anyp::CompiledProgram prog = anyp_test::accumulate_program().compile({x, y}, config_for(P));
  anyp::Session s = prog.prepare({.persistent_windows = true, .reset_windows = false});
  std::vector<anyp::HostTensor> outs;
  std::vector<anyp::RunHandle> handles;
  for (int k = 0; k < 6; ++k) {
    // Each run's output is a temporary of this loop: the submit holds it.
    anyp::HostTensor out = anyp::HostTensor::zeros({P, 1, kSessionRow}, pl::FP32);
    outs.push_back(out);
    handles.push_back(s.submit({x, out}));
  }
  for (int k = 0; k < 6; ++k) {
    const anyp::RunStats stats = handles[static_cast<std::size_t>(k)].wait();
    EXPECT_TRUE(handles[static_cast<std::size_t>(k)].ready());
    EXPECT_EQ(stats.cost.size(), static_cast<std::size_t>(P));
    EXPECT_GT(stats.instructions, 0);
    expect_multiple(outs[static_cast<std::size_t>(k)], x, k + 1, "run k of the queue");
  }
  EXPECT_EQ(s.runs_done(), 6);
}

// The bound: when the (k + kMaxInFlight)-th submit returns, run k has
// ended and its handle says so. Many repetitions, free and PCT schedules of
// the ranks inside each run (they move when the worker finishes).
TEST_P(Sessions, ASubmitReturnsOnlyAfterTheOldestRunIsReady) {
  const std::int64_t P = GetParam();
  auto [x, y] = rows(P, 45);
  for (const bool pct : {false, true}) {
    anyp::RunConfig config = config_for(P);
    config.pct.enabled = pct;
    config.pct.seed = 7;
    const anyp::CompiledProgram prog = anyp_test::accumulate_program().compile({x, y}, config);
    anyp::Session s = prog.prepare({.persistent_windows = true, .reset_windows = true});
    constexpr int kRuns = 200;
    std::vector<anyp::RunHandle> handles;
    std::vector<anyp::HostTensor> outs;
    int late = 0;
    for (int k = 0; k < kRuns; ++k) {
      outs.push_back(anyp::HostTensor::zeros({P, 1, kSessionRow}, pl::FP32));
      handles.push_back(s.submit({x, outs.back()}));
      const int oldest = k - static_cast<int>(anyp::Session::kMaxInFlight);
      if (oldest >= 0 && !handles[static_cast<std::size_t>(oldest)].ready()) ++late;
    }
    for (auto& h : handles) h.wait();
    EXPECT_EQ(late, 0) << (pct ? "PCT" : "free") << ": " << late << " of " << kRuns
                       << " submits returned while the run kMaxInFlight before was not ready";
  }
}

TEST_P(Sessions, ASubmittedRunsErrorIsRethrownByWaitAndTheSessionGoesOn) {
  const std::int64_t P = GetParam();
  auto [x, y] = rows(P, 47);
  const anyp::CompiledProgram prog = anyp_test::accumulate_program().compile({x, y}, config_for(P));
  anyp::Session s = prog.prepare();
  const anyp::HostTensor wrong = anyp::HostTensor::zeros({P, 1, 8}, pl::FP32);
  anyp::RunHandle bad = s.submit({x, wrong});
  anyp::RunHandle good = s.submit({x, y});
  try {
    bad.wait();
    ADD_FAILURE() << "a mis-shaped argument ran";
  } catch (const anyp::RunError& e) {
    EXPECT_EQ(std::string(e.what()), "run error: argument 'y' is [" + std::to_string(P) +
                                         ", 1, 8] FP32, but the program was compiled for [" +
                                         std::to_string(P) +
                                         ", 1, 16] FP32; compile again for these arguments");
  }
  good.wait();
  expect_multiple(y, x, 1, "the run after a failed one");
  EXPECT_THROW(anyp::RunHandle().wait(), anyp::Error);
}

INSTANTIATE_TEST_SUITE_P(P, Sessions, testing::Values(2, 3, 5));

}  // namespace
