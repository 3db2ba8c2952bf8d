// race_checker_test.cpp — the happens-before race checker
// (RunConfig::check_races): what it reports, what it must not report, and
// the happens-before rules it applies (program order; notify releases, a
// satisfied wait acquires; AtomicAdd notifies join into the cell, Set
// replaces; a data write into a signal cell releases like a Set; atomic
// adds never race with each other). Racy programs run on one-worker
// schedules only (FIFO, random or PCT): these tests also run under TSan, and
// two workers executing a racy program would race on the heap for real.
// Race-free programs also run on the default worker pool.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/source_locations.hpp"

namespace {

using pld::AtomicType;
using pld::NotifyOp;
using pld::WaitCmp;

constexpr std::int64_t ROW = 8;
const pl::Dim NR = pl::dynamic("NR");

// kernel(x, y, data, sig): x, y are the rank's [1, ROW] FP32 host rows;
// data is an [NR, ROW] FP32 window; sig an [NR, 8] INT32 window (rows of
// 32 bytes, so a tile can be stored into a signal row).
using Body = std::function<void(pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& sig)>;

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, ROW}, pl::FP32)), pl::Out("y", pl::Tensor({1, ROW}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({NR, ROW}, pl::FP32)),
    pl::InOut("sig", pld::DistributedTensor({NR, 8}, pl::INT32))};

pl::HostFunction program(const std::string& name, const Body& body) {
  const auto kernel = pl::jit::incore(
      name + "_kernel", kParams,
      [body](pl::Value x, pl::Value y, pl::Value data, pl::Value sig) { body(x, y, data, sig); });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", kParams,
      [kernel](pl::Value x, pl::Value y, pl::Value d, pl::Value s) { kernel(x, y, d, s); });
  return pl::jit::host(name,
                       {pl::In("x", pl::Tensor({NR, 1, ROW}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, ROW}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto data = pld::alloc_window_buffer("data", {NR, ROW}, pl::FP32);
                         auto sig = pld::alloc_window_buffer("sig", {NR, 8}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r];
                           pl::Value yr = y[r];
                           per_rank(xr, yr, pld::window(data, {NR, ROW}, pl::FP32),
                                    pld::window(sig, {NR, 8}, pl::INT32), pl::device(r));
                         });
                       });
}

anyp::RunConfig checked(std::int64_t P) {
  anyp::RunConfig c = anyp::RunConfig::for_world_size(P);
  c.check_races = true;
  return c;
}
anyp::RunConfig checked_fifo(std::int64_t P) {  // one worker, ranks in order: stable text
  anyp::RunConfig c = checked(P);
  c.workers = 1;
  return c;
}
// Racy programs run on one worker only: their racing heap accesses would be
// real data races between worker threads (and TSan runs these tests).
anyp::RunConfig checked_random(std::int64_t P, std::uint64_t seed) {
  anyp::RunConfig c = checked(P);
  c.deterministic = true;
  c.schedule_seed = seed;
  return c;
}
anyp::RunConfig checked_pct(std::int64_t P, std::uint64_t seed) {
  anyp::RunConfig c = checked(P);
  c.pct.enabled = true;
  c.pct.seed = seed;
  c.pct.depth = 3;
  c.pct.steps = 40;
  return c;
}

struct Outcome {
  std::string race;   // the RaceError's text, or ""
  std::string other;  // any other exception's text
  anyp::HostTensor x, y;
};

Outcome run(const pl::HostFunction& p, const anyp::RunConfig& config) {
  const std::int64_t P = static_cast<std::int64_t>(config.distributed.device_ids.size());
  Outcome o;
  anyp::InputGenerator gen(3);
  o.x = gen.uniform({P, 1, ROW});
  o.y = anyp::HostTensor::zeros({P, 1, ROW}, pl::FP32);
  try {
    p.compile({o.x, o.y}, config)(o.x, o.y);
  } catch (const anyp::RaceError& e) {
    o.race = anyp_test::without_locations(e.what());
  } catch (const std::exception& e) {
    o.other = anyp_test::without_locations(e.what());
  }
  return o;
}

// Rank r's y row must hold x[from(r)].
void expect_rows(const Outcome& o, const std::function<std::int64_t(std::int64_t)>& from) {
  const std::int64_t P = o.x.shape()[0];
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t j = 0; j < ROW; ++j)
      ASSERT_EQ(o.y.at({r, 0, j}), o.x.at({from(r), 0, j})) << "rank " << r << " element " << j;
}

// ---- push then read, with and without the notify -> wait -------------------------------

// Rank r stores its x row into row r of its right neighbour's data; then
// reads row `left` of its own data (what its left neighbour pushed).
pl::HostFunction push_then_read(bool synchronised) {
  return program(synchronised ? "push_sync" : "push_race",
                 [synchronised](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& sig) {
                   auto ctx = pld::get_comm_ctx(data);
                   pl::Scalar r = pld::rank(ctx);
                   pl::Scalar n = pld::nranks(ctx);
                   pl::Scalar left = (r + n - 1) % n;
                   pl::Scalar right = (r + 1) % n;
                   pld::tile::remote_store(pl::load(x, {0, 0}, {1, ROW}), data, right, {r, 0});
                   if (synchronised) {
                     pld::system::notify(sig, right, {r, 0}, 1, NotifyOp::AtomicAdd);
                     pld::system::wait(sig, {left, 0}, 1, WaitCmp::Ge);
                   }
                   y = pl::store(pl::load(data, {left, 0}, {1, ROW}), {0, 0}, y);
                 });
}

TEST(RaceChecker, PushReadWithoutSignalIsReported) {
  const pl::HostFunction p = push_then_read(false);
  EXPECT_EQ(run(p, checked_fifo(3)).race,
            "race report: 2 op pairs access the same elements from two ranks with no "
            "happens-before order (at least one writes)\n"
            "  race 1: window 'data' of rank 1, elements [0, 0:8]\n"
            "    first:  write by rank 0 (device 0), function 'push_race_kernel', op "
            "pld.tile.remote_store\n"
            "    second: read by rank 1 (device 1), function 'push_race_kernel', op pl.load\n"
            "    missing: no wait on rank 1 observed a notify that rank 0 issued after its write; "
            "rank 1 never synchronised with rank 0\n"
            "  race 2: window 'data' of rank 0, elements [2, 0:8]\n"
            "    first:  read by rank 0 (device 0), function 'push_race_kernel', op pl.load\n"
            "    second: write by rank 2 (device 2), function 'push_race_kernel', op "
            "pld.tile.remote_store\n"
            "    missing: no wait on rank 2 observed a notify that rank 0 issued after its read; "
            "rank 2 never synchronised with rank 0\n");
  for (std::int64_t P : {2, 3, 5, 8}) {
    EXPECT_NE(run(p, checked_random(P, 1)).race, "") << "P=" << P;
    for (std::uint64_t seed = 1; seed <= 10; ++seed)
      EXPECT_NE(run(p, checked_pct(P, seed)).race, "") << "P=" << P << " seed " << seed;
  }
}

TEST(RaceChecker, PushNotifyWaitReadIsSilentAndExact) {
  const pl::HostFunction p = push_then_read(true);
  for (std::int64_t P : {2, 3, 4, 5, 8, 16}) {
    const Outcome o = run(p, checked(P));
    EXPECT_EQ(o.race + o.other, "") << "P=" << P;
    expect_rows(o, [P](std::int64_t r) { return (r + P - 1) % P; });
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      const Outcome s = run(p, checked_pct(P, seed));
      EXPECT_EQ(s.race + s.other, "") << "P=" << P << " seed " << seed;
    }
  }
}

TEST(RaceChecker, SameScheduleSameReport) {
  const pl::HostFunction p = push_then_read(false);
  for (std::uint64_t seed : {1, 2, 3}) {
    const std::string first = run(p, checked_pct(4, seed)).race;
    EXPECT_NE(first, "");
    EXPECT_EQ(run(p, checked_pct(4, seed)).race, first) << "seed " << seed;
  }
}

// ---- atomic adds: they commute, but race with plain accesses ----------------------------

// Every rank atomically adds its x row into rank 0's data row 0; with the
// signal, every other rank then notifies rank 0, which waits for all of them
// and reads the sum.
pl::HostFunction add_to_root(bool signal) {
  return program(signal ? "add_sync" : "add_race", [signal](pl::Value& x, pl::Value& y,
                                                            pl::Value& data, pl::Value& sig) {
    auto ctx = pld::get_comm_ctx(data);
    pl::Scalar r = pld::rank(ctx);
    pl::Scalar n = pld::nranks(ctx);
    pld::tile::remote_store(pl::load(x, {0, 0}, {1, ROW}), data, 0, {0, 0}, AtomicType::Add);
    if (signal) {
      pl::if_(r != 0, [&] { pld::system::notify(sig, 0, {0, 0}, 1, NotifyOp::AtomicAdd); });
    }
    pl::if_(r == 0, [&] {
      if (signal) pld::system::wait(sig, {0, 0}, n - 1, WaitCmp::Ge);
      y = pl::store(pl::load(data, {0, 0}, {1, ROW}), {0, 0}, y);
    });
  });
}

TEST(RaceChecker, AtomicAddsCommuteButRaceWithAnUnorderedRead) {
  EXPECT_EQ(run(add_to_root(false), checked_fifo(3)).race,
            "race report: 1 op pair accesses the same elements from two ranks with no "
            "happens-before order (at least one writes)\n"
            "  race 1: window 'data' of rank 0, elements [0, 0:8]\n"
            "    first:  read by rank 0 (device 0), function 'add_race_kernel', op pl.load\n"
            "    second: atomic add by rank 1 (device 1), function 'add_race_kernel', op "
            "pld.tile.remote_store\n"
            "    missing: no wait on rank 1 observed a notify that rank 0 issued after its read; "
            "rank 1 never synchronised with rank 0\n");
  for (std::int64_t P : {2, 3, 4, 7}) {
    const Outcome o = run(add_to_root(true), checked(P));
    EXPECT_EQ(o.race + o.other, "") << "P=" << P;
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      const Outcome s = run(add_to_root(true), checked_pct(P, seed));
      EXPECT_EQ(s.race + s.other, "") << "P=" << P << " seed " << seed;
    }
  }
}

// ---- Set replaces the cell's clock, AtomicAdd joins it ---------------------------------

// Rank 1 pushes data to rank 0, then notifies rank 0's cell {0, 0}; rank 2
// notifies the same cell without pushing anything. Rank 0 waits for the cell
// and reads rank 1's row. On the one-worker FIFO schedule rank 2's notify
// comes last: with Set it replaces rank 1's release, so rank 0 never
// synchronised with rank 1 — a race; with AtomicAdd the releases join.
pl::HostFunction two_notifiers(NotifyOp op) {
  return program(op == NotifyOp::Set ? "set_last_wins" : "add_joins",
                 [op](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& sig) {
                   auto ctx = pld::get_comm_ctx(data);
                   pl::Scalar r = pld::rank(ctx);
                   pl::if_(r == 1, [&] {
                     pld::tile::remote_store(pl::load(x, {0, 0}, {1, ROW}), data, 0, {1, 0});
                   });
                   pl::if_(r != 0, [&] { pld::system::notify(sig, 0, {0, 0}, 1, op); });
                   pl::if_(r == 0, [&] {
                     pld::system::wait(sig, {0, 0}, 1, WaitCmp::Ge);
                     y = pl::store(pl::load(data, {1, 0}, {1, ROW}), {0, 0}, y);
                   });
                 });
}

TEST(RaceChecker, SetReplacesTheCellClockAtomicAddJoinsIt) {
  EXPECT_EQ(run(two_notifiers(NotifyOp::Set), checked_fifo(3)).race,
            "race report: 1 op pair accesses the same elements from two ranks with no "
            "happens-before order (at least one writes)\n"
            "  race 1: window 'data' of rank 0, elements [1, 0:8]\n"
            "    first:  write by rank 1 (device 1), function 'set_last_wins_kernel', op "
            "pld.tile.remote_store\n"
            "    second: read by rank 0 (device 0), function 'set_last_wins_kernel', op pl.load\n"
            "    missing: no wait on rank 0 observed a notify that rank 1 issued after its write; "
            "rank 0 never synchronised with rank 1\n");
  const Outcome joined = run(two_notifiers(NotifyOp::AtomicAdd), checked_fifo(3));
  EXPECT_EQ(joined.race + joined.other, "");
  for (std::int64_t j = 0; j < ROW; ++j) EXPECT_EQ(joined.y.at({0, 0, j}), joined.x.at({1, 0, j}));
}

// ---- a data write into a signal cell is a release ----------------------------------------

// Rank 1 pushes its row into rank 0's data, then writes a row of ones into
// rank 0's signal row 0 with a plain remote_store (not a notify). Rank 0's
// wait on cell {0, 0} sees it (a wait polls memory) and synchronises.
const auto flag_by_data_write =
    program("flag_by_store", [](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& sig) {
      auto ctx = pld::get_comm_ctx(data);
      pl::Scalar r = pld::rank(ctx);
      pl::if_(r == 1, [&] {
        pld::tile::remote_store(pl::load(x, {0, 0}, {1, ROW}), data, 0, {1, 0});
        pld::tile::remote_store(pl::cast(pl::load(x, {0, 0}, {1, 8}), pl::INT32), sig, 0, {0, 0});
      });
      pl::if_(r == 0, [&] {
        pld::system::wait(sig, {0, 0}, 1, WaitCmp::Ge);
        y = pl::store(pl::load(data, {1, 0}, {1, ROW}), {0, 0}, y);
      });
    });

TEST(RaceChecker, DataWriteIntoASignalCellReleasesLikeASet) {
  for (std::int64_t P : {2, 3, 5}) {
    const Outcome o = run(flag_by_data_write, checked(P));
    EXPECT_EQ(o.race + o.other, "") << "P=" << P;
    for (std::int64_t j = 0; j < ROW; ++j) EXPECT_EQ(o.y.at({0, 0, j}), o.x.at({1, 0, j}));
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      const Outcome s = run(flag_by_data_write, checked_pct(P, seed));
      EXPECT_EQ(s.race + s.other, "") << "P=" << P << " seed " << seed;
    }
  }
}

// ---- an unsliced host tensor ------------------------------------------------------------

const auto shared_out_kernel = pl::jit::incore(
    "store_shared",
    {pl::In("x", pl::Tensor({1, ROW}, pl::FP32)), pl::Out("out", pl::Tensor({1, ROW}, pl::FP32))},
    [](pl::Value x, pl::Value out) {
      out = pl::store(pl::load(x, {0, 0}, {1, ROW}), {0, 0}, out);
    });
const auto shared_out_per_rank = pl::jit::orchestration(
    "per_rank_shared",
    {pl::In("x", pl::Tensor({1, ROW}, pl::FP32)), pl::Out("out", pl::Tensor({1, ROW}, pl::FP32))},
    [](pl::Value x, pl::Value out) { shared_out_kernel(x, out); });
const pl::HostFunction shared_out = pl::jit::host("shared_out",
                                                  {pl::In("x", pl::Tensor({NR, 1, ROW}, pl::FP32)),
                                                   pl::Out("out", pl::Tensor({1, ROW}, pl::FP32))},
                                                  [](pl::Value x, pl::Value out) {
                                                    pl::range(pld::world_size(), [&](pl::Scalar r) {
                                                      pl::Value xr = x[r];
                                                      shared_out_per_rank(xr, out, pl::device(r));
                                                    });
                                                  });

TEST(RaceChecker, RanksStoringIntoOneUnslicedHostTensorRace) {
  anyp::InputGenerator gen(5);
  const anyp::HostTensor x = gen.uniform({3, 1, ROW});
  const anyp::HostTensor out = anyp::HostTensor::zeros({1, ROW}, pl::FP32);
  std::string report;
  try {
    shared_out.compile({x, out}, checked_fifo(3))(x, out);
  } catch (const anyp::RaceError& e) {
    report = anyp_test::without_locations(e.what());
  }
  EXPECT_EQ(report,
            "race report: 1 op pair accesses the same elements from two ranks with no "
            "happens-before order (at least one writes)\n"
            "  race 1: host tensor 'out', elements [0, 0:8]\n"
            "    first:  write by rank 0 (device 0), function 'store_shared', op pl.store\n"
            "    second: write by rank 1 (device 1), function 'store_shared', op pl.store\n"
            "    missing: no wait on rank 1 observed a notify that rank 0 issued after its write; "
            "rank 1 never synchronised with rank 0\n");
}

// ---- many pairs: deduplicated by op pair, the first few shown ----------------------------

// An op is a (function, op) site. Six store kernels on rank 1 each write a
// row (0 ... 5) that rank 0's load kernel has read, unordered, in a loop of
// ten loads (one op): six op pairs, four shown and a count. (P = 6, so that
// data has six rows.)
pl::Function store_kernel(int k) {
  return pl::jit::incore(
      "store_" + std::to_string(k), kParams,
      [k](pl::Value x, pl::Value, pl::Value data, pl::Value) {
        pl::Scalar r = pld::rank(pld::get_comm_ctx(data));
        pl::if_(r == 1, [&] { data = pl::store(pl::load(x, {0, 0}, {1, ROW}), {k, 0}, data); });
      });
}

const auto load_kernel =
    pl::jit::incore("load_rows", kParams, [](pl::Value, pl::Value y, pl::Value data, pl::Value) {
      pl::Scalar r = pld::rank(pld::get_comm_ctx(data));
      pl::if_(r == 0, [&] {
        pl::range(10, [&](pl::Scalar i) {
          y = pl::store(pld::tile::remote_load(data, 1, {i % 6, 0}, {1, ROW}), {0, 0}, y);
        });
      });
    });

const pl::HostFunction six_pairs = [] {
  std::vector<pl::Function> stores;
  for (int k = 0; k < 6; ++k) stores.push_back(store_kernel(k));
  const auto per_rank = pl::jit::orchestration(
      "per_rank_six", kParams, [stores](pl::Value x, pl::Value y, pl::Value d, pl::Value s) {
        load_kernel(x, y, d, s);
        for (const auto& store : stores) store(x, y, d, s);
      });
  return pl::jit::host("six_pairs",
                       {pl::In("x", pl::Tensor({NR, 1, ROW}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, ROW}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto data = pld::alloc_window_buffer("data", {NR, ROW}, pl::FP32);
                         auto sig = pld::alloc_window_buffer("sig", {NR, 8}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r];
                           pl::Value yr = y[r];
                           per_rank(xr, yr, pld::window(data, {NR, ROW}, pl::FP32),
                                    pld::window(sig, {NR, 8}, pl::INT32), pl::device(r));
                         });
                       });
}();

TEST(RaceChecker, ReportsEachOpPairOnceAndCountsTheRest) {
  const std::string report = run(six_pairs, checked_fifo(6)).race;
  EXPECT_EQ(report.substr(0, report.find('\n')),
            "race report: 6 op pairs access the same elements from two ranks with no "
            "happens-before order (at least one writes)");
  EXPECT_NE(
      report.find("\n  race 4: window 'data' of rank 1, elements [3, 0:8]\n"
                  "    first:  read by rank 0 (device 0), function 'load_rows', op "
                  "pld.tile.remote_load\n"
                  "    second: write by rank 1 (device 1), function 'store_3', op pl.store\n"),
      std::string::npos)
      << report;
  EXPECT_EQ(report.find("race 5:"), std::string::npos) << report;
  EXPECT_EQ(report.substr(report.size() - 26), "  ... and 2 more op pairs\n") << report;
}

}  // namespace

namespace {

// ---- credits that are consumed or reset: what a wait still acquires ----------------------

// Window data [1, ROW]; `pending` a [1, 1] INT32 cell; `bar` an [NR, 1]
// barrier signal.
const std::vector<pl::Param> kLatchParams = {
    pl::In("x", pl::Tensor({1, ROW}, pl::FP32)), pl::Out("y", pl::Tensor({1, ROW}, pl::FP32)),
    pl::InOut("buf", pld::DistributedTensor({1, ROW}, pl::FP32)),
    pl::InOut("pending", pld::DistributedTensor({1, 1}, pl::INT32)),
    pl::InOut("bar", pld::DistributedTensor({NR, 1}, pl::INT32))};

using LatchBody = std::function<void(pl::Value& x, pl::Value& y, pl::Value& buf, pl::Value& pending,
                                     pl::Value& bar)>;

pl::HostFunction latch_program(const std::string& name, const LatchBody& body) {
  const auto kernel = pl::jit::incore(name + "_kernel", kLatchParams,
                                      [body](pl::Value x, pl::Value y, pl::Value b, pl::Value p,
                                             pl::Value s) { body(x, y, b, p, s); });
  const auto per_rank =
      pl::jit::orchestration("per_rank_latch", kLatchParams,
                             [kernel](pl::Value x, pl::Value y, pl::Value b, pl::Value p,
                                      pl::Value s) { kernel(x, y, b, p, s); });
  return pl::jit::host(name,
                       {pl::In("x", pl::Tensor({NR, 1, ROW}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, ROW}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto b = pld::alloc_window_buffer("buf", {1, ROW}, pl::FP32);
                         auto p = pld::alloc_window_buffer("pending", {1, 1}, pl::INT32);
                         auto s = pld::alloc_window_buffer("bar", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r];
                           pl::Value yr = y[r];
                           per_rank(xr, yr, pld::window(b, {1, ROW}, pl::FP32),
                                    pld::window(p, {1, 1}, pl::INT32),
                                    pld::window(s, {NR, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

// A countdown latch: my reader (left) pulls my row, then counts my
// `pending` down from 1 to 0; I wait for 0 before restaging. The wait needs
// the decrement, so it is ordered after the pull: no race, for Eq 0 as for
// Le 0.
pl::HostFunction countdown(pld::WaitCmp cmp) {
  return latch_program(
      cmp == pld::WaitCmp::Eq ? "latch_eq" : "latch_le",
      [cmp](pl::Value& x, pl::Value& y, pl::Value& buf, pl::Value& pending, pl::Value& bar) {
        auto ctx = pld::get_comm_ctx(buf);
        pl::Scalar r = pld::rank(ctx);
        pl::Scalar right = (r + 1) % pld::nranks(ctx);
        buf = pl::store(pl::load(x, {0, 0}, {1, ROW}), {0, 0}, buf);
        pld::system::notify(pending, r, {0, 0}, 1, NotifyOp::Set);
        bar = pld::tensor::barrier(bar);
        y = pl::store(pld::tile::remote_load(buf, right, {0, 0}, {1, ROW}), {0, 0}, y);
        pld::system::notify(pending, right, {0, 0}, -1, NotifyOp::AtomicAdd);
        pld::system::wait(pending, {0, 0}, 0, cmp);
        buf = pl::store(pl::load(x, {0, 0}, {1, ROW}), {0, 0}, buf);  // restage
      });
}

TEST(RaceChecker, ACountdownToZeroIsOrderedAfterEveryDecrement) {
  for (pld::WaitCmp cmp : {pld::WaitCmp::Eq, pld::WaitCmp::Le}) {
    const pl::HostFunction p = countdown(cmp);
    for (std::int64_t P : {2, 3, 5}) {
      const Outcome o = run(p, checked(P));
      EXPECT_EQ(o.race + o.other, "") << "P=" << P;
      expect_rows(o, [P](std::int64_t r) { return (r + 1) % P; });
      for (std::uint64_t seed = 1; seed <= 10; ++seed) {
        const Outcome s = run(p, checked_pct(P, seed));
        EXPECT_EQ(s.race + s.other, "") << "P=" << P << " seed " << seed;
      }
    }
  }
}

// A rank resets its own flag with a plain write of 0, a barrier orders the
// reset before every notify, then put -> notify -> wait Ge 1 -> load: the
// wait must acquire the put's notify, not stop at the reset.
const auto reset_then_put =
    latch_program("reset_then_put",
                  [](pl::Value& x, pl::Value& y, pl::Value& buf, pl::Value& flag, pl::Value& bar) {
                    auto ctx = pld::get_comm_ctx(buf);
                    pl::Scalar r = pld::rank(ctx);
                    pl::Scalar right = (r + 1) % pld::nranks(ctx);
                    pl::write(flag, {0, 0}, 0);
                    bar = pld::tensor::barrier(bar);
                    pld::tensor::put(buf, right, x, AtomicType::None);
                    pld::system::notify(flag, right, {0, 0}, 1, NotifyOp::AtomicAdd);
                    pld::system::wait(flag, {0, 0}, 1, WaitCmp::Ge);
                    y = pl::store(pl::load(buf, {0, 0}, {1, ROW}), {0, 0}, y);
                  });

TEST(RaceChecker, AWaitAfterAPlainResetAcquiresTheLaterNotify) {
  for (std::int64_t P : {2, 3, 5}) {
    const Outcome o = run(reset_then_put, checked(P));
    EXPECT_EQ(o.race + o.other, "") << "P=" << P;
    expect_rows(o, [P](std::int64_t r) { return (r + P - 1) % P; });
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      const Outcome s = run(reset_then_put, checked_pct(P, seed));
      EXPECT_EQ(s.race + s.other, "") << "P=" << P << " seed " << seed;
    }
  }
}

// ---- shadow pages: accesses that cover pages whole and in part ----------------------------

// The checker keeps its shadow in pages of 64 granules, one word while they
// are equal (shadow_memory.hpp). Rank r stores 128 FP32 (pages 0 and 1
// whole) into its right neighbour's [1, 200] window and reads 104 elements
// of its own from `from`, unordered: from 40, part of page 0 (its own
// words), page 1 whole (one word, the same history as the word before it)
// and part of page 2; from 64, page 1 whole (one word that finds the race
// itself) and part of page 2. Both races name exactly the elements
// [from, 128) both accesses touched, as a word-by-word shadow would.
constexpr std::int64_t kWide = 200;
const std::vector<pl::Param> kWideParams = {
    pl::In("x", pl::Tensor({1, kWide}, pl::FP32)), pl::Out("y", pl::Tensor({1, kWide}, pl::FP32)),
    pl::InOut("wide", pld::DistributedTensor({1, kWide}, pl::FP32))};

pl::HostFunction wide_program(std::int64_t from) {
  const auto kernel = pl::jit::incore(
      "pages_kernel", kWideParams, [from](pl::Value x, pl::Value y, pl::Value wide) {
        auto ctx = pld::get_comm_ctx(wide);
        pl::Scalar right = (pld::rank(ctx) + 1) % pld::nranks(ctx);
        pld::tile::remote_store(pl::load(x, {0, 0}, {1, 128}), wide, right, {0, 0});
        y = pl::store(pl::load(wide, {0, from}, {1, 104}), {0, from}, y);
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank_pages", kWideParams,
      [kernel](pl::Value x, pl::Value y, pl::Value wide) { kernel(x, y, wide); });
  return pl::jit::host("pages",
                       {pl::In("x", pl::Tensor({NR, 1, kWide}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, kWide}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto wide = pld::alloc_window_buffer("wide", {1, kWide}, pl::FP32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r];
                           pl::Value yr = y[r];
                           per_rank(xr, yr, pld::window(wide, {1, kWide}, pl::FP32), pl::device(r));
                         });
                       });
}

TEST(RaceChecker, PagesReportTheElementsBothAccessesTouched) {
  anyp::InputGenerator gen(7);
  const anyp::HostTensor x = gen.uniform({2, 1, kWide});
  const anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, kWide}, pl::FP32);
  for (std::int64_t from : {40, 64}) {
    std::string report;
    try {
      wide_program(from).compile({x, y}, checked_fifo(2))(x, y);
    } catch (const anyp::RaceError& e) {
      report = anyp_test::without_locations(e.what());
    }
    const std::string elements = "elements [0, " + std::to_string(from) + ":128]\n";
    EXPECT_EQ(report,
              "race report: 2 op pairs access the same elements from two ranks with no "
              "happens-before order (at least one writes)\n"
              "  race 1: window 'wide' of rank 0, " +
                  elements +
                  "    first:  read by rank 0 (device 0), function 'pages_kernel', op pl.load\n"
                  "    second: write by rank 1 (device 1), function 'pages_kernel', op "
                  "pld.tile.remote_store\n"
                  "    missing: no wait on rank 1 observed a notify that rank 0 issued after its "
                  "read; rank 1 never synchronised with rank 0\n"
                  "  race 2: window 'wide' of rank 1, " +
                  elements +
                  "    first:  write by rank 0 (device 0), function 'pages_kernel', op "
                  "pld.tile.remote_store\n"
                  "    second: read by rank 1 (device 1), function 'pages_kernel', op pl.load\n"
                  "    missing: no wait on rank 1 observed a notify that rank 0 issued after its "
                  "write; rank 1 never synchronised with rank 0\n")
        << "from " << from;
  }
}

}  // namespace
