// deadlock_test.cpp — the scheduler never hangs: when no rank can run and
// some are unfinished it throws anyp::DeadlockError with a report listing
// every rank (its wait: function, op, signal, cell, comparison, expected and
// current value, and what each notifier or data writer did to the cell; or
// "finished"), waiting ranks first, ranks in identical states on one line
// with a range list, and no final newline. Also the report's formatters on
// their own (rank ranges, notifier tallies), and a rank that spins for a
// long time is preempted (small preempt_budget) while the others wait on it,
// and the answer is still exact. Every test program is race-free (these
// tests also run under TSan).
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/deadlock_report.hpp"
#include "runtime/diagnostic_text.hpp"
#include "support/source_locations.hpp"

namespace {

using pld::NotifyOp;
using pld::WaitCmp;

// Runs `compiled` with `args`; returns the DeadlockError's what(), or what
// happened instead.
std::string deadlock_report(const anyp::CompiledProgram& compiled,
                            const std::vector<anyp::ArgRef>& args = {}) {
  try {
    compiled.run(args);
  } catch (const anyp::DeadlockError& e) {
    return anyp_test::without_locations(e.what());
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + anyp_test::without_locations(e.what());
  }
  return "ran without error";
}

// ---- every rank waits for a signal nobody sends ------------------------------------------
// The signal is [world_size, 1]; rank r waits on its own cell {r, 0} >= 1.

const auto wait_forever = pl::jit::incore(
    "wait_forever", {pl::InOut("sig", pld::DistributedTensor({pld::world_size(), 1}, pl::INT32))},
    [](pl::Value sig) {
      pl::Scalar r = pld::rank(pld::get_comm_ctx(sig));
      pld::system::wait(sig, {r, 0}, 1, WaitCmp::Ge);
    });

const auto per_rank_wait = pl::jit::orchestration(
    "per_rank_wait", {pl::InOut("sig", pld::DistributedTensor({pld::world_size(), 1}, pl::INT32))},
    [](pl::Value sig) { wait_forever(sig); });

const pl::HostFunction all_wait = pl::jit::host("all_wait", {}, [] {
  auto sig_buf = pld::alloc_window_buffer("sig", {pld::world_size(), 1}, pl::INT32);
  pl::range(pld::world_size(), [&](pl::Scalar r) {
    per_rank_wait(pld::window(sig_buf, {pld::world_size(), 1}, pl::INT32), pl::device(r));
  });
});

std::string all_wait_report(std::int64_t P) {
  // Every rank waits on a different cell: one line per rank.
  std::string s = "deadlock: no rank can make progress (" + std::to_string(P) + " of " +
                  std::to_string(P) + " ranks waiting)";
  for (std::int64_t r = 0; r < P; ++r) {
    s += "\n  rank " + std::to_string(r) +
         ": function 'wait_forever', op pld.system.wait: waits for signal 'sig' cell [" +
         std::to_string(r) + ", 0] Ge 1; current value 0; never notified";
  }
  return s;
}

TEST(Deadlock, EveryRankWaitsForASignalNobodySends) {
  // The report, spelled out once.
  EXPECT_EQ(all_wait_report(3),
            "deadlock: no rank can make progress (3 of 3 ranks waiting)\n"
            "  rank 0: function 'wait_forever', op pld.system.wait: waits for signal 'sig' cell "
            "[0, 0] Ge 1; current value 0; never notified\n"
            "  rank 1: function 'wait_forever', op pld.system.wait: waits for signal 'sig' cell "
            "[1, 0] Ge 1; current value 0; never notified\n"
            "  rank 2: function 'wait_forever', op pld.system.wait: waits for signal 'sig' cell "
            "[2, 0] Ge 1; current value 0; never notified");
  for (std::int64_t P : {2, 3, 8}) {
    const anyp::CompiledProgram compiled = all_wait.compile({}, anyp::RunConfig::for_world_size(P));
    EXPECT_EQ(deadlock_report(compiled), all_wait_report(P)) << "P=" << P;
  }
}

// One rank: the runtime accepts P = 1 and still reports the deadlock.
TEST(Deadlock, OneRankWaitingForItself) {
  const anyp::CompiledProgram compiled = all_wait.compile({}, anyp::RunConfig::for_world_size(1));
  EXPECT_EQ(deadlock_report(compiled), all_wait_report(1));
}

TEST(Deadlock, ReportIsTheSameUnderEverySchedule) {
  for (std::uint64_t seed : {0u, 1u, 99u}) {
    anyp::RunConfig config = anyp::RunConfig::for_world_size(3);
    config.deterministic = true;
    config.schedule_seed = seed;
    config.preempt_budget = 1;
    EXPECT_EQ(deadlock_report(all_wait.compile({}, config)), all_wait_report(3)) << seed;
  }
  for (int workers : {1, 2, 4}) {
    anyp::RunConfig config = anyp::RunConfig::for_world_size(8);
    config.workers = workers;
    EXPECT_EQ(deadlock_report(all_wait.compile({}, config)), all_wait_report(8)) << workers;
  }
}

// A deadlocked run leaves nothing behind: the next run starts from zeroed
// windows and deadlocks the same way.
TEST(Deadlock, RunningAgainReportsTheSameDeadlock) {
  const anyp::CompiledProgram compiled = all_wait.compile({}, anyp::RunConfig::for_world_size(4));
  EXPECT_EQ(deadlock_report(compiled), all_wait_report(4));
  EXPECT_EQ(deadlock_report(compiled), all_wait_report(4));
}

TEST(Deadlock, DeadlockErrorIsARunError) {
  const anyp::CompiledProgram compiled = all_wait.compile({}, anyp::RunConfig::for_world_size(2));
  EXPECT_THROW(compiled(), anyp::RunError);
}

// ---- a partial deadlock ---------------------------------------------------------------------
// Ranks 0..P-2 each add 1 to cell {0, 0} of every rank 0..P-2 (themselves
// included), then wait for it to reach P; the last rank does nothing and
// finishes. Each waiting cell ends at P - 1, notified by ranks 0..P-2.

const auto short_by_one =
    pl::jit::incore("short_by_one", {pl::InOut("sig", pld::DistributedTensor({1, 1}, pl::INT32))},
                    [](pl::Value sig) {
                      auto ctx = pld::get_comm_ctx(sig);
                      pl::Scalar r = pld::rank(ctx);
                      pl::Scalar n = pld::nranks(ctx);
                      pl::Scalar last = n - 1;
                      pl::if_(r < last, [&] {
                        pl::range(0, last, [&](pl::Scalar p) {
                          pld::system::notify(sig, p, {0, 0}, 1, NotifyOp::AtomicAdd);
                        });
                        pld::system::wait(sig, {0, 0}, n, WaitCmp::Ge);
                      });
                    });

const auto per_rank_short = pl::jit::orchestration(
    "per_rank_short", {pl::InOut("sig", pld::DistributedTensor({1, 1}, pl::INT32))},
    [](pl::Value sig) { short_by_one(sig); });

const pl::HostFunction partial = pl::jit::host("partial", {}, [] {
  auto sig_buf = pld::alloc_window_buffer("tally", {1, 1}, pl::INT32);
  pl::range(pld::world_size(), [&](pl::Scalar r) {
    per_rank_short(pld::window(sig_buf, {1, 1}, pl::INT32), pl::device(r));
  });
});

// Ranks 0..P-2 wait in the same state: one line for all of them, before the
// finished rank, and their P - 1 identical notifiers grouped too.
std::string partial_report(std::int64_t P) {
  const std::string waiting =
      P - 1 == 1   ? "rank 0"
      : P - 1 == 2 ? "ranks 0, 1 (2 ranks)"
                   : "ranks 0-" + std::to_string(P - 2) + " (" + std::to_string(P - 1) + " ranks)";
  const std::string notifiers = P - 1 == 1 ? "rank 0 (AtomicAdd +1)"
                                : P - 1 == 2
                                    ? "ranks 0, 1 (2 ranks, each AtomicAdd +1)"
                                    : "ranks 0-" + std::to_string(P - 2) + " (" +
                                          std::to_string(P - 1) + " ranks, each AtomicAdd +1)";
  return "deadlock: no rank can make progress (" + std::to_string(P - 1) + " of " +
         std::to_string(P) + " ranks waiting)\n  " + waiting +
         ": function 'short_by_one', op pld.system.wait: waits for signal 'tally' cell [0, 0] Ge " +
         std::to_string(P) + "; current value " + std::to_string(P - 1) + "; notified by " +
         notifiers + "\n  rank " + std::to_string(P - 1) + ": finished";
}

TEST(Deadlock, PartialDeadlockShowsFinishedRanksAndWriters) {
  EXPECT_EQ(partial_report(2),
            "deadlock: no rank can make progress (1 of 2 ranks waiting)\n"
            "  rank 0: function 'short_by_one', op pld.system.wait: waits for signal 'tally' cell "
            "[0, 0] Ge 2; current value 1; notified by rank 0 (AtomicAdd +1)\n"
            "  rank 1: finished");
  EXPECT_EQ(partial_report(3),
            "deadlock: no rank can make progress (2 of 3 ranks waiting)\n"
            "  ranks 0, 1 (2 ranks): function 'short_by_one', op pld.system.wait: waits for "
            "signal 'tally' cell [0, 0] Ge 3; current value 2; notified by ranks 0, 1 (2 ranks, "
            "each AtomicAdd +1)\n"
            "  rank 2: finished");
  for (std::int64_t P : {2, 3, 8}) {
    EXPECT_EQ(deadlock_report(partial.compile({}, anyp::RunConfig::for_world_size(P))),
              partial_report(P))
        << "P=" << P;
  }
}

// Many ranks that notified alike are one range.
TEST(Deadlock, ManyIdenticalNotifiersAreOneRange) {
  EXPECT_EQ(deadlock_report(partial.compile({}, anyp::RunConfig::for_world_size(12))),
            "deadlock: no rank can make progress (11 of 12 ranks waiting)\n"
            "  ranks 0-10 (11 ranks): function 'short_by_one', op pld.system.wait: waits for "
            "signal 'tally' cell [0, 0] Ge 12; current value 11; notified by ranks 0-10 (11 "
            "ranks, each AtomicAdd +1)\n"
            "  rank 11: finished");
}

// ---- large P: the one waiting rank comes first --------------------------------------------
// Every rank but the last adds 1 to the last rank's cell {0, 0} and finishes;
// the last rank waits for P, one more than it gets.

const auto last_waits = pl::jit::incore(
    "last_waits", {pl::InOut("sig", pld::DistributedTensor({1, 1}, pl::INT32))}, [](pl::Value sig) {
      auto ctx = pld::get_comm_ctx(sig);
      pl::Scalar r = pld::rank(ctx);
      pl::Scalar n = pld::nranks(ctx);
      pl::if_(
          r == n - 1,
          [&] {
            pld::system::wait(sig, {0, 0}, n, WaitCmp::Ge);
          },
          [&] {
            pld::system::notify(sig, n - 1, {0, 0}, 1, NotifyOp::AtomicAdd);
          });
    });

const auto per_rank_last = pl::jit::orchestration(
    "per_rank_last", {pl::InOut("sig", pld::DistributedTensor({1, 1}, pl::INT32))},
    [](pl::Value sig) { last_waits(sig); });

const pl::HostFunction last_rank_waits = pl::jit::host("last_rank_waits", {}, [] {
  auto sig_buf = pld::alloc_window_buffer("sig", {1, 1}, pl::INT32);
  pl::range(pld::world_size(), [&](pl::Scalar r) {
    per_rank_last(pld::window(sig_buf, {1, 1}, pl::INT32), pl::device(r));
  });
});

TEST(Deadlock, LargePReportIsThreeLinesWithTheWaitingRankFirst) {
  EXPECT_EQ(deadlock_report(last_rank_waits.compile({}, anyp::RunConfig::for_world_size(2000))),
            "deadlock: no rank can make progress (1 of 2000 ranks waiting)\n"
            "  rank 1999: function 'last_waits', op pld.system.wait: waits for signal 'sig' cell "
            "[0, 0] Ge 2000; current value 1999; notified by ranks 0-1998 (1999 ranks, each "
            "AtomicAdd +1)\n"
            "  ranks 0-1998 (1999 ranks): finished");
}

// ---- two different waiting states at P = 7 ------------------------------------------------
// Rank 0 adds 2 to cell {0, 0} of ranks 4 and 6 and finishes; ranks 4 and 6
// wait for it to be Eq 1 (past it: the hint, once for both), ranks 1, 2, 3
// and 5 wait for a notify nobody sends.

const auto mixed_waits = pl::jit::incore(
    "mixed_waits", {pl::InOut("sig", pld::DistributedTensor({1, 1}, pl::INT32))},
    [](pl::Value sig) {
      pl::Scalar r = pld::rank(pld::get_comm_ctx(sig));
      pl::Scalar counted = r == 4 || r == 6;
      pl::if_(r == 0, [&] {
        pld::system::notify(sig, 4, {0, 0}, 2, NotifyOp::AtomicAdd);
        pld::system::notify(sig, 6, {0, 0}, 2, NotifyOp::AtomicAdd);
      });
      pl::if_(counted, [&] { pld::system::wait(sig, {0, 0}, 1, WaitCmp::Eq); });
      pl::if_(r != 0 && !counted, [&] { pld::system::wait(sig, {0, 0}, 1, WaitCmp::Ge); });
    });

const auto per_rank_mixed = pl::jit::orchestration(
    "per_rank_mixed", {pl::InOut("sig", pld::DistributedTensor({1, 1}, pl::INT32))},
    [](pl::Value sig) { mixed_waits(sig); });

const pl::HostFunction mixed = pl::jit::host("mixed", {}, [] {
  auto sig_buf = pld::alloc_window_buffer("sig", {1, 1}, pl::INT32);
  pl::range(pld::world_size(), [&](pl::Scalar r) {
    per_rank_mixed(pld::window(sig_buf, {1, 1}, pl::INT32), pl::device(r));
  });
});

TEST(Deadlock, RanksInTheSameStateShareALine) {
  EXPECT_EQ(
      deadlock_report(mixed.compile({}, anyp::RunConfig::for_world_size(7))),
      "deadlock: no rank can make progress (6 of 7 ranks waiting)\n"
      "  ranks 1-3, 5 (4 ranks): function 'mixed_waits', op pld.system.wait: waits for signal "
      "'sig' cell [0, 0] Ge 1; current value 0; never notified\n"
      "  ranks 4, 6 (2 ranks): function 'mixed_waits', op pld.system.wait: waits for signal "
      "'sig' cell [0, 0] Eq 1; current value 2; notified by rank 0 (AtomicAdd +2)\n"
      "    hint: the cell is already past 1; if it counts AtomicAdd credits it only grows, so Eq "
      "can never hold again: wait with Ge, or use a fresh cell (row) per round\n"
      "  rank 0: finished");
}

// ---- a collective called by one rank only ------------------------------------------------
// Step 16's fatal mistake (docs/ladder-steps.md §8): a builtin barrier inside `if (r == 0)`.

const auto root_only_barrier =
    pl::jit::incore("root_only_barrier",
                    {pl::InOut("sig", pld::DistributedTensor({pld::world_size(), 1}, pl::INT32))},
                    [](pl::Value sig) {
                      pl::Scalar r = pld::rank(pld::get_comm_ctx(sig));
                      pl::if_(r == 0, [&] { sig = pld::tensor::barrier(sig); });
                    });

const auto per_rank_root = pl::jit::orchestration(
    "per_rank_root", {pl::InOut("sig", pld::DistributedTensor({pld::world_size(), 1}, pl::INT32))},
    [](pl::Value sig) { root_only_barrier(sig); });

const pl::HostFunction root_only = pl::jit::host("root_only", {}, [] {
  auto sig_buf = pld::alloc_window_buffer("sig", {pld::world_size(), 1}, pl::INT32);
  pl::range(pld::world_size(), [&](pl::Scalar r) {
    per_rank_root(pld::window(sig_buf, {pld::world_size(), 1}, pl::INT32), pl::device(r));
  });
});

TEST(Deadlock, CollectiveOnOneRankOnly) {
  // Rank 0 deposits its credits with every peer and waits for rank 1's.
  EXPECT_EQ(deadlock_report(root_only.compile({}, anyp::RunConfig::for_world_size(3))),
            "deadlock: no rank can make progress (1 of 3 ranks waiting)\n"
            "  rank 0: function 'root_only_barrier', op pld.tensor.barrier: waits for signal "
            "'sig' cell [1, 0] Ge 1; current value 0; never notified\n"
            "  ranks 1, 2 (2 ranks): finished\n"
            "builtin collective calls not entered by every rank:\n"
            "  collective call #1 on signal 'sig', pld.tensor.barrier in function "
            "'root_only_barrier': entered by rank 0; never entered by ranks 1, 2 (finished)");
}

// ---- notifies that cancel out ------------------------------------------------------------
// Every rank passes one builtin barrier, then rank 0 alone calls a second.
// Rank 0 waits for rank 1's credit in cell {1, 0}, which holds 0: rank 1's
// credit of the first barrier (+1) was taken back by rank 0's own epilogue
// (-1). The report says so, rather than "notified by ranks 0, 1".

const auto second_barrier_on_root =
    pl::jit::incore("second_barrier_on_root",
                    {pl::InOut("sig", pld::DistributedTensor({pld::world_size(), 1}, pl::INT32))},
                    [](pl::Value sig) {
                      pl::Scalar r = pld::rank(pld::get_comm_ctx(sig));
                      sig = pld::tensor::barrier(sig);
                      pl::if_(r == 0, [&] { sig = pld::tensor::barrier(sig); });
                    });

const auto per_rank_second = pl::jit::orchestration(
    "per_rank_second",
    {pl::InOut("sig", pld::DistributedTensor({pld::world_size(), 1}, pl::INT32))},
    [](pl::Value sig) { second_barrier_on_root(sig); });

const pl::HostFunction second_on_root = pl::jit::host("second_on_root", {}, [] {
  auto sig_buf = pld::alloc_window_buffer("sig", {pld::world_size(), 1}, pl::INT32);
  pl::range(pld::world_size(), [&](pl::Scalar r) {
    per_rank_second(pld::window(sig_buf, {pld::world_size(), 1}, pl::INT32), pl::device(r));
  });
});

TEST(Deadlock, NotifiesThatCancelOutAreShownWithTheirValues) {
  EXPECT_EQ(deadlock_report(second_on_root.compile({}, anyp::RunConfig::for_world_size(3))),
            "deadlock: no rank can make progress (1 of 3 ranks waiting)\n"
            "  rank 0: function 'second_barrier_on_root', op pld.tensor.barrier: waits for "
            "signal 'sig' cell [1, 0] Ge 1; current value 0; notified by rank 0 (AtomicAdd -1), "
            "rank 1 (AtomicAdd +1)\n"
            "  ranks 1, 2 (2 ranks): finished\n"
            "builtin collective calls not entered by every rank:\n"
            "  collective call #2 on signal 'sig', pld.tensor.barrier in function "
            "'second_barrier_on_root': entered by rank 0; never entered by ranks 1, 2 "
            "(finished)");
}

// ---- many ranks notify one cell, each several times ------------------------------------------
// Ranks 1..P-1 each add +1, +1 and -1 to rank 0's cell {0, 0}; rank 0 waits
// for 100, more than the cell ever holds. Whatever the interleaving, every
// notifier has one entry with all its notifies.

const auto fan_in = pl::jit::incore(
    "fan_in", {pl::InOut("sig", pld::DistributedTensor({1, 1}, pl::INT32))}, [](pl::Value sig) {
      pl::Scalar r = pld::rank(pld::get_comm_ctx(sig));
      pl::if_(
          r == 0,
          [&] {
            pld::system::wait(sig, {0, 0}, 100, WaitCmp::Ge);
          },
          [&] {
            pld::system::notify(sig, 0, {0, 0}, 1, NotifyOp::AtomicAdd);
            pld::system::notify(sig, 0, {0, 0}, 1, NotifyOp::AtomicAdd);
            pld::system::notify(sig, 0, {0, 0}, -1, NotifyOp::AtomicAdd);
          });
    });

const auto per_rank_fan_in = pl::jit::orchestration(
    "per_rank_fan_in", {pl::InOut("sig", pld::DistributedTensor({1, 1}, pl::INT32))},
    [](pl::Value sig) { fan_in(sig); });

const pl::HostFunction fan_in_program = pl::jit::host("fan_in_program", {}, [] {
  auto sig_buf = pld::alloc_window_buffer("sig", {1, 1}, pl::INT32);
  pl::range(pld::world_size(), [&](pl::Scalar r) {
    per_rank_fan_in(pld::window(sig_buf, {1, 1}, pl::INT32), pl::device(r));
  });
});

TEST(Deadlock, RepeatedNotifiesFromManyRanksAreTalliedPerRank) {
  const std::string expected =
      "deadlock: no rank can make progress (1 of 9 ranks waiting)\n"
      "  rank 0: function 'fan_in', op pld.system.wait: waits for signal 'sig' cell [0, 0] Ge 100; "
      "current value 8; notified by ranks 1-8 (8 ranks, each 2 AtomicAdds totalling +2, "
      "AtomicAdd -1)\n"
      "  ranks 1-8 (8 ranks): finished";
  for (std::uint64_t seed : {0u, 1u, 2u, 3u}) {
    anyp::RunConfig config = anyp::RunConfig::for_world_size(9);
    config.deterministic = true;
    config.schedule_seed = seed;
    config.preempt_budget = 1;
    EXPECT_EQ(deadlock_report(fan_in_program.compile({}, config)), expected) << seed;
  }
  EXPECT_EQ(deadlock_report(fan_in_program.compile({}, anyp::RunConfig::for_world_size(9))),
            expected);
}

// ---- the formatters on their own -----------------------------------------------------------

TEST(DeadlockText, RankRanges) {
  using anyp::runtime::rank_ranges_text;
  using anyp::runtime::rank_set_text;
  using V = std::vector<std::int64_t>;
  EXPECT_EQ(rank_ranges_text(V{0, 1, 2, 3, 5, 7, 8, 9}), "0-3, 5, 7-9");
  EXPECT_EQ(rank_ranges_text(V{4, 5}), "4, 5");
  EXPECT_EQ(rank_ranges_text(V{0, 1, 3, 4, 5}), "0, 1, 3-5");
  EXPECT_EQ(rank_ranges_text(V{}), "");
  EXPECT_EQ(rank_set_text(V{7}), "rank 7");
  EXPECT_EQ(rank_set_text(V{2, 3, 4}), "ranks 2-4");
  V even;
  for (std::int64_t r = 0; r < 100; r += 2) even.push_back(r);
  EXPECT_EQ(rank_ranges_text(even, 3), "0, 2, 4 and 47 more");
  EXPECT_EQ(rank_ranges_text(V{0, 1, 2, 4, 6, 7, 8, 9}, 2), "0-2, 4 and 4 more");
}

TEST(DeadlockText, NotifierTallies) {
  using anyp::runtime::notifiers_text;
  using anyp::runtime::NotifierTally;
  auto add = [](std::int64_t rank, std::int64_t value) {
    NotifierTally t{.rank = rank};
    (value >= 0 ? t.adds_up : t.adds_down) = 1;
    (value >= 0 ? t.up_total : t.down_total) = value;
    return t;
  };
  EXPECT_EQ(notifiers_text({add(0, 1), add(1, 1), add(2, 1), add(3, -1)}),
            "ranks 0-2 (3 ranks, each AtomicAdd +1), rank 3 (AtomicAdd -1)");
  NotifierTally both{.rank = 1, .adds_up = 1, .up_total = 1, .adds_down = 1, .down_total = -1};
  NotifierTally twice{.rank = 2, .adds_up = 2, .up_total = 2};
  NotifierTally zero{.rank = 3, .adds_up = 1};
  NotifierTally set{.rank = 4, .sets = 1, .last_set = 7};
  NotifierTally sets{.rank = 5, .adds_down = 3, .down_total = -3, .sets = 2, .last_set = 1};
  EXPECT_EQ(notifiers_text({add(0, 1), both, twice, zero, set, sets}),
            "rank 0 (AtomicAdd +1), rank 1 (AtomicAdd +1, AtomicAdd -1), rank 2 (2 AtomicAdds "
            "totalling +2), rank 3 (AtomicAdd +0), rank 4 (Set 7), rank 5 (3 AtomicAdds "
            "totalling -3, 2 Sets, the last to 1)");
  // Ranks that did the same are grouped wherever they are; after 8 groups
  // the rest is counted.
  std::vector<NotifierTally> many;
  for (std::int64_t r = 0; r < 2000; ++r) many.push_back(add(r, r < 10 ? r + 100 : r % 2 ? -1 : 1));
  EXPECT_EQ(notifiers_text(many),
            "rank 0 (AtomicAdd +100), rank 1 (AtomicAdd +101), rank 2 (AtomicAdd +102), rank 3 "
            "(AtomicAdd +103), rank 4 (AtomicAdd +104), rank 5 (AtomicAdd +105), rank 6 "
            "(AtomicAdd +106), rank 7 (AtomicAdd +107) and 1992 more ranks");
  for (std::int64_t r = 0; r < 10; ++r) many[r] = add(r, r % 2 ? -1 : 1);
  EXPECT_EQ(notifiers_text(many),
            "ranks 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30 and 984 more (1000 "
            "ranks, each AtomicAdd +1), ranks 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, "
            "29, 31 and 984 more (1000 ranks, each AtomicAdd -1)");
}

// ---- preemption ----------------------------------------------------------------------------
// Rank 0 spins through SPIN iterations of scalar math, publishes the result
// in its window and notifies everyone; the others wait for it, then every
// rank reads rank 0's row. With a small preempt_budget rank 0 is preempted
// many times; the answer is exact.

constexpr std::int64_t SPIN = 100000;
constexpr std::int64_t W = 8;  // one 32-byte INT32 row

const auto spin_step =
    pl::jit::incore("spin_step",
                    {pl::Out("y", pl::Tensor({1, W}, pl::INT32)),
                     pl::InOut("data", pld::DistributedTensor({1, W}, pl::INT32)),
                     pl::InOut("sig", pld::DistributedTensor({1, 1}, pl::INT32))},
                    [](pl::Value y, pl::Value data, pl::Value sig) {
                      auto ctx = pld::get_comm_ctx(data);
                      pl::Scalar r = pld::rank(ctx);
                      pl::Scalar n = pld::nranks(ctx);
                      pl::if_(
                          r == 0,
                          [&] {
                            pl::Scalar acc = 1;
                            pl::range(SPIN, [&](pl::Scalar i) { acc = (acc * 31 + i) % 1000003; });
                            pl::range(W, [&](pl::Scalar j) { pl::write(data, {0, j}, acc + j); });
                            pl::range(1, n, [&](pl::Scalar p) {
                              pld::system::notify(sig, p, {0, 0}, 1, NotifyOp::AtomicAdd);
                            });
                          },
                          [&] {
                            pld::system::wait(sig, {0, 0}, 1, WaitCmp::Ge);
                          });
                      y = pl::store(pld::tile::remote_load(data, 0, {0, 0}, {1, W}), {0, 0}, y);
                    });

const auto per_rank_spin = pl::jit::orchestration(
    "per_rank_spin",
    {pl::Out("y", pl::Tensor({1, W}, pl::INT32)),
     pl::InOut("data", pld::DistributedTensor({1, W}, pl::INT32)),
     pl::InOut("sig", pld::DistributedTensor({1, 1}, pl::INT32))},
    [](pl::Value y, pl::Value data, pl::Value sig) { spin_step(y, data, sig); });

const pl::Dim NR = pl::dynamic("NR");

const pl::HostFunction spin =
    pl::jit::host("spin", {pl::Out("y", pl::Tensor({NR, 1, W}, pl::INT32))}, [](pl::Value y) {
      auto data_buf = pld::alloc_window_buffer("data", {1, W}, pl::INT32);
      auto sig_buf = pld::alloc_window_buffer("sig", {1, 1}, pl::INT32);
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        per_rank_spin(y[r], pld::window(data_buf, {1, W}, pl::INT32),
                      pld::window(sig_buf, {1, 1}, pl::INT32), pl::device(r));
      });
    });

std::int64_t spin_value() {
  std::int64_t acc = 1;
  for (std::int64_t i = 0; i < SPIN; ++i) acc = (acc * 31 + i) % 1000003;
  return acc;
}

// "" when every rank's row is rank 0's published row.
std::string spin_mismatch(const anyp::HostTensor& y) {
  const std::int64_t acc = spin_value();
  for (std::int64_t r = 0; r < y.shape()[0]; ++r) {
    for (std::int64_t j = 0; j < W; ++j) {
      if (y.at({r, 0, j}) != static_cast<double>(acc + j)) {
        return "y[" + std::to_string(r) + "][0][" + std::to_string(j) +
               "] = " + std::to_string(y.at({r, 0, j})) + ", expected " + std::to_string(acc + j);
      }
    }
  }
  return "";
}

TEST(Preemption, LongSpinIsPreemptedAndFinishesExactly) {
  for (std::int64_t P : {2, 4}) {
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    config.preempt_budget = 64;
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, W}, pl::INT32);
    const anyp::RunStats stats = spin.compile({y}, config)(y);
    EXPECT_EQ(spin_mismatch(y), "") << "P=" << P;
    EXPECT_GT(stats.preemptions, 0) << "P=" << P;
    EXPECT_GT(stats.instructions, SPIN) << "P=" << P;
  }
}

TEST(Preemption, DeterministicScheduleWithATinyBudget) {
  for (std::uint64_t seed : {0u, 5u}) {
    anyp::RunConfig config = anyp::RunConfig::for_world_size(3);
    config.deterministic = true;
    config.schedule_seed = seed;
    config.preempt_budget = 16;
    anyp::HostTensor y = anyp::HostTensor::zeros({3, 1, W}, pl::INT32);
    const anyp::RunStats stats = spin.compile({y}, config)(y);
    EXPECT_EQ(spin_mismatch(y), "") << "seed " << seed;
    // Rank 0 needs well over 100000 instructions: thousands of 16-instruction slices.
    EXPECT_GT(stats.preemptions, SPIN / 16) << "seed " << seed;
    EXPECT_GT(stats.parks, 0) << "seed " << seed;  // the waiters ran while rank 0 spun
    EXPECT_EQ(stats.workers, 1);
  }
}

// ---- a cell changed only by data writes -----------------------------------------------

// Rank 1 stores a row of zeros into rank 0's [1, 8] INT32 signal with a
// plain remote_store; rank 0 waits for cell {0, 0} >= 1: a deadlock whose
// report names the data writer.
const std::vector<pl::Param> kDataWriteParams = {
    pl::InOut("sig", pld::DistributedTensor({1, W}, pl::INT32))};
const auto zero_by_data = pl::jit::incore("zero_by_data", kDataWriteParams, [](pl::Value sig) {
  pl::Scalar r = pld::rank(pld::get_comm_ctx(sig));
  pl::if_(r == 1, [&] {
    pld::tile::remote_store(pl::load(sig, {0, 0}, {1, W}), sig, 0, {0, 0});  // zeros
  });
  pl::if_(r == 0, [&] { pld::system::wait(sig, {0, 0}, 1, WaitCmp::Ge); });
});
const auto zero_by_data_per_rank = pl::jit::orchestration("per_rank_zero", kDataWriteParams,
                                                          [](pl::Value sig) { zero_by_data(sig); });
const pl::HostFunction data_written = pl::jit::host("data_written", {}, [] {
  auto sig = pld::alloc_window_buffer("sig", {1, W}, pl::INT32);
  pl::range(pld::world_size(), [&](pl::Scalar r) {
    zero_by_data_per_rank(pld::window(sig, {1, W}, pl::INT32), pl::device(r));
  });
});

TEST(Deadlock, ReportNamesRanksThatWroteTheCellAsData) {
  for (std::int64_t P : {2, 3}) {
    const std::string expected = "deadlock: no rank can make progress (1 of " + std::to_string(P) +
                                 " ranks waiting)\n"
                                 "  rank 0: function 'zero_by_data', op pld.system.wait: waits "
                                 "for signal 'sig' cell [0, 0] Ge 1; current value 0; never "
                                 "notified; written as data by rank 1\n  " +
                                 (P == 2 ? "rank 1" : "ranks 1, 2 (2 ranks)") + ": finished";
    EXPECT_EQ(deadlock_report(data_written.compile({}, anyp::RunConfig::for_world_size(P))),
              expected)
        << "P=" << P;
  }
}

}  // namespace
