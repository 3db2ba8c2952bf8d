// rma_race_bench_test.cpp — the RMARaceBench cases (RWTH-HPC/RMARaceBench,
// SC-W'23) that map onto anyp's model, translated one by one into anyp
// kernels and run under the happens-before race checker
// (RunConfig::check_races). Each TEST is named after the original file and
// mirrors its access pattern: which rank does what, in which order, with
// which synchronisation.
//
// Mapping (docs/race-checker.md §4): shmem_put / gaspi_write / MPI_Put ->
// pld::tensor::put (region form, one INT32 element, from the rank's
// `localbuf` window); put_signal / write_notify -> the put, then
// pld::system::notify (SHMEM_SIGNAL_ADD -> AtomicAdd, SHMEM_SIGNAL_SET and
// GASPI notification values -> Set); wait_until / signal_fetch polling /
// notify_waitsome -> pld::system::wait; shmem_atomic_set -> notify Set;
// plain loads and stores -> pl::read / pl::write; shmem_fence, shmem_quiet,
// gaspi_wait, MPI_Win_flush_all, lock / unlock -> nothing (anyp's put
// completes in program order, and completion is not synchronisation);
// shmem_barrier_all / gaspi_barrier / MPI_Barrier -> pld::tensor::barrier.
// The barrier every original makes right after allocating its symmetric
// memory is left out: anyp zeroes the windows before the ranks start. A
// `printf` of a value becomes a pl::write of it into the rank's host row y.
//
// Every "yes" case must throw anyp::RaceError: the first race of its report
// is checked exactly under one fixed schedule, and the labelled pair must be
// reported under 20 uniform-random and 20 PCT schedules (every schedule,
// including those where the data came out right). Every "no" case must run
// silently on the default schedule and on those 40 schedules, with exact
// values. Racy programs run only under one-worker schedules (this suite also
// runs under ThreadSanitizer).
#include <gtest/gtest.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "support/source_locations.hpp"

namespace {

using pld::NotifyOp;
using pld::WaitCmp;

constexpr std::int64_t W = 8;  // one 32-byte INT32 row
// Iterations of a plain-load polling loop. A plain load never blocks, so the
// loop is bounded (and stops reading once it has seen the flag): it ends on
// every schedule, whether or not the writer ran first.
constexpr std::int64_t POLLS = 200;
const pl::Dim NR = pl::dynamic("NR");

// The symmetric memory of one case, named after the original's variables.
struct Names {
  std::string remote = "remote";  // the contended INT32 location (element {0, 0})
  std::string local = "localbuf";
  std::string sig = "sig";
  std::string sig2 = "sig2";
};

// kernel(y, remote, local, sig, sig2, bar): y is the rank's [1, W] INT32
// host row (what it "printed"); remote and local are [1, W] INT32 windows;
// sig and sig2 [1, 1] INT32 windows; bar the [NR, 1] barrier signal.
using Body = std::function<void(pl::Value& y, pl::Value& remote, pl::Value& local, pl::Value& sig,
                                pl::Value& sig2, pl::Value& bar)>;

const std::vector<pl::Param> kParams = {
    pl::Out("y", pl::Tensor({1, W}, pl::INT32)),
    pl::InOut("remote", pld::DistributedTensor({1, W}, pl::INT32)),
    pl::InOut("local", pld::DistributedTensor({1, W}, pl::INT32)),
    pl::InOut("sig", pld::DistributedTensor({1, 1}, pl::INT32)),
    pl::InOut("sig2", pld::DistributedTensor({1, 1}, pl::INT32)),
    pl::InOut("bar", pld::DistributedTensor({NR, 1}, pl::INT32))};

pl::HostFunction program(const std::string& name, const Names& names, const Body& body) {
  const auto kernel = pl::jit::incore(
      name, kParams,
      [body](pl::Value y, pl::Value remote, pl::Value local, pl::Value sig, pl::Value sig2,
             pl::Value bar) { body(y, remote, local, sig, sig2, bar); });
  const auto per_rank = pl::jit::orchestration(
      "rrb_per_rank", kParams,
      [kernel](pl::Value y, pl::Value remote, pl::Value local, pl::Value sig, pl::Value sig2,
               pl::Value bar) { kernel(y, remote, local, sig, sig2, bar); });
  return pl::jit::host(name + "_host", {pl::Out("y", pl::Tensor({NR, 1, W}, pl::INT32))},
                       [per_rank, names](pl::Value y) {
                         auto remote = pld::alloc_window_buffer(names.remote, {1, W}, pl::INT32);
                         auto local = pld::alloc_window_buffer(names.local, {1, W}, pl::INT32);
                         auto sig = pld::alloc_window_buffer(names.sig, {1, 1}, pl::INT32);
                         auto sig2 = pld::alloc_window_buffer(names.sig2, {1, 1}, pl::INT32);
                         auto bar = pld::alloc_window_buffer("barrier", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value yr = y[r];
                           per_rank(yr, pld::window(remote, {1, W}, pl::INT32),
                                    pld::window(local, {1, W}, pl::INT32),
                                    pld::window(sig, {1, 1}, pl::INT32),
                                    pld::window(sig2, {1, 1}, pl::INT32),
                                    pld::window(bar, {NR, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

// `dst[column] = value` on `peer` as a one-sided put: the value is staged in
// the rank's own localbuf[0] and put from there (shmem_int_put(&dst[column],
// &value, 1, peer)).
void put_value(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& local,
               const pl::ScalarArg& value, const pl::ScalarArg& column = 0) {
  pl::write(local, {0, 0}, value);
  pld::tensor::put(dst, peer, local, {0, column}, {0, 0}, {1, 1});
}

// ---- running -------------------------------------------------------------------------

anyp::RunConfig checked(std::int64_t P) {
  anyp::RunConfig c = anyp::RunConfig::for_world_size(P);
  c.check_races = true;
  return c;
}
anyp::RunConfig checked_random(std::int64_t P, std::uint64_t seed) {
  anyp::RunConfig c = checked(P);
  c.deterministic = true;
  c.schedule_seed = seed;
  return c;
}
anyp::RunConfig pct(std::int64_t P, std::uint64_t seed, std::int64_t steps) {
  anyp::RunConfig c = checked(P);
  c.pct.enabled = true;
  c.pct.seed = seed;
  c.pct.depth = 3;
  c.pct.steps = steps;
  return c;
}

struct Outcome {
  std::string race;   // the RaceError's text, or ""
  std::string other;  // any other exception's text, or ""
  anyp::HostTensor y;
  std::int64_t steps = 0;
};

Outcome run(const pl::HostFunction& p, const anyp::RunConfig& config) {
  const auto P = static_cast<std::int64_t>(config.distributed.device_ids.size());
  Outcome o;
  o.y = anyp::HostTensor::zeros({P, 1, W}, pl::INT32);
  try {
    o.steps = p.compile({o.y}, config)(o.y).schedule_steps;
  } catch (const anyp::RaceError& e) {
    o.race = anyp_test::without_locations(e.what());
  } catch (const std::exception& e) {
    o.other = anyp_test::without_locations(e.what());
  }
  return o;
}

// The steps of one PCT run without change points (depth 1, unchecked: a racy
// program runs to the end), so the change points of depth-3 runs fall
// inside the run.
std::int64_t pct_steps(const pl::HostFunction& p, std::int64_t P) {
  anyp::RunConfig c = pct(P, 0, 0);
  c.check_races = false;
  c.pct.depth = 1;
  const Outcome o = run(p, c);
  EXPECT_EQ(o.race + o.other, "");
  return std::max<std::int64_t>(o.steps, 1);
}

// The lines of the race whose memory line ends in `where` ("window 'remote'
// of rank 1, elements [0, 0]"), from its "  race N: " through its
// "missing:"; "" when no race names that memory.
std::string race_on(const std::string& report, const std::string& where) {
  const std::size_t at = report.find(": " + where + "\n");
  if (at == std::string::npos) return "";
  const std::size_t begin = report.rfind("  race ", at);
  std::size_t end = report.find("  race ", at);
  if (end == std::string::npos) end = report.find("  ... and ", at);
  return report.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// The lines of race 1 of a report.
std::string first_race(const std::string& report) {
  const std::size_t begin = report.find("  race 1: ");
  if (begin == std::string::npos) return "no race 1 in: " + report;
  std::size_t end = report.find("  race 2: ", begin);
  if (end == std::string::npos) end = report.find("  ... and ", begin);
  return report.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

constexpr std::uint64_t kSeeds = 20;  // schedules of each kind per case

// A "yes" case: RaceError under the random schedule `seed` with `first` as
// its race 1, and under every one of 20 random and 20 PCT schedules a report
// naming the labelled pair's memory (`where`, e.g. "window 'remote' of rank
// 1, elements [0, 0]") and both of its ops, op_a and op_b. Those schedules
// must run the pair in both orders (so the report does not depend on which
// access came first, nor on whether the reader happened to see the new
// value).
void expect_race(const pl::HostFunction& p, std::int64_t P, std::uint64_t seed,
                 const std::string& first, const std::string& where, const std::string& op_a,
                 const std::string& op_b) {
  const Outcome fixed = run(p, checked_random(P, seed));
  EXPECT_EQ(fixed.other, "");
  EXPECT_EQ(first_race(fixed.race), first) << fixed.race;
  const std::int64_t steps = pct_steps(p, P);
  std::set<bool> orders;  // op_a reported first?
  for (std::uint64_t s = 1; s <= kSeeds; ++s) {
    for (const bool use_pct : {false, true}) {
      const Outcome o = run(p, use_pct ? pct(P, s, steps) : checked_random(P, s));
      const std::string label = std::string(use_pct ? "pct" : "random") + " seed " +
                                std::to_string(s) + " (P=" + std::to_string(P) + ")";
      EXPECT_EQ(o.other, "") << label;
      ASSERT_NE(o.race, "") << label << ": race not reported";
      const std::string race = race_on(o.race, where);
      EXPECT_NE(race, "") << label << ": no race on " << where << "\n" << o.race;
      EXPECT_NE(race.find(op_a), std::string::npos) << label << "\n" << o.race;
      EXPECT_NE(race.find(op_b), std::string::npos) << label << "\n" << o.race;
      if (!race.empty()) orders.insert(race.find(op_a) < race.find(op_b));
    }
  }
  EXPECT_EQ(orders.size(), 2u) << "every schedule ran the racing pair in the same order";
}

// A "no" case: silent on the default (multi-worker) schedule and on 20
// random and 20 PCT schedules, and y[r][0][j] == expected[r][j] each time
// (elements not listed must be 0).
void expect_no_race(const pl::HostFunction& p, std::int64_t P,
                    const std::vector<std::vector<std::int64_t>>& expected) {
  auto check = [&](const Outcome& o, const std::string& label) {
    EXPECT_EQ(o.race + o.other, "") << label;
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t j = 0; j < W; ++j) {
        const auto& row = expected[static_cast<std::size_t>(r)];
        const std::int64_t want =
            j < static_cast<std::int64_t>(row.size()) ? row[static_cast<std::size_t>(j)] : 0;
        EXPECT_EQ(o.y.at({r, 0, j}), static_cast<double>(want))
            << label << ": y[" << r << "][0][" << j << "]";
      }
    }
  };
  check(run(p, checked(P)), "default schedule");
  const std::int64_t steps = pct_steps(p, P);
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    check(run(p, checked_random(P, seed)), "random seed " + std::to_string(seed));
    check(run(p, pct(P, seed, steps)), "pct seed " + std::to_string(seed));
  }
}

// ---- OpenSHMEM: sync ----------------------------------------------------------------

// SHMEM/sync/015-shmem-sync-putsignal-remote-no.c: PE 1 put_signals its
// rank into data[1] on PE 0 (SHMEM_SIGNAL_ADD); PE 0 polls the signal with
// shmem_signal_fetch until it is 1, then reads data[0..2). One of the two
// put-with-signal cases RMASanitizer gets wrong.
TEST(RmaRaceBench, Shmem_Sync_PutSignal_Remote_No) {
  const pl::HostFunction p = program(
      "shmem_putsignal_no", {.remote = "data", .sig = "signal"},
      [](pl::Value& y, pl::Value& data, pl::Value& local, pl::Value& signal, pl::Value&,
         pl::Value& bar) {
        pl::Scalar r = pld::rank(pld::get_comm_ctx(data));
        pl::if_(r == 0, [&] {
          pld::system::wait(signal, {0, 0}, 1, WaitCmp::Eq);  // signal_fetch polling
          pl::range(2, [&](pl::Scalar i) { pl::write(y, {0, i}, pl::read(data, {0, i})); });
        });
        pl::if_(r == 1, [&] {
          put_value(data, 0, local, r, r);  // shmem_int_put_signal(&data[my_pe], &my_pe, ...
          pld::system::notify(signal, 0, {0, 0}, 1, NotifyOp::AtomicAdd);  // ... ADD, 0)
        });
        bar = pld::tensor::barrier(bar);
      });
  expect_no_race(p, 2, {{0, 1}, {}});
}

// SHMEM/sync/016-shmem-sync-putsignal-remote-yes.c: PE 1 put_signals its
// rank into `remote` on PE 0 (SHMEM_SIGNAL_ADD); PE 0 polls the signal with
// plain loads (`while (signal < 1)`) instead of shmem_signal_fetch, then
// reads `remote`. The labelled race is the plain load of the signal against
// the put_signal's signal update; the read of `remote` after the plain-load
// loop is unordered too and is reported as a second op pair. The other
// put-with-signal case RMASanitizer gets wrong.
TEST(RmaRaceBench, Shmem_Sync_PutSignal_Remote_Yes) {
  const pl::HostFunction p =
      program("shmem_putsignal_yes", {.sig = "signal"},
              [](pl::Value& y, pl::Value& remote, pl::Value& local, pl::Value& signal, pl::Value&,
                 pl::Value& bar) {
                pl::Scalar r = pld::rank(pld::get_comm_ctx(remote));
                pl::if_(r == 0, [&] {
                  pl::Scalar seen = 0;
                  pl::range(POLLS, [&](pl::Scalar) {
                    pl::if_(seen < 1, [&] { seen = pl::read(signal, {0, 0}); });  // CONFLICT
                  });
                  pl::write(y, {0, 0}, pl::read(remote, {0, 0}));  // printf remote
                });
                pl::if_(r == 1, [&] {
                  put_value(remote, 0, local, r);  // CONFLICT: shmem_int_put_signal(...
                  pld::system::notify(signal, 0, {0, 0}, 1, NotifyOp::AtomicAdd);  // ADD, 0)
                });
                bar = pld::tensor::barrier(bar);
              });
  expect_race(p, 2, 2,
              "  race 1: window 'signal' of rank 0, elements [0, 0]\n"
              "    first:  atomic add by rank 1 (device 1), function 'shmem_putsignal_yes', op "
              "pld.system.notify\n"
              "    second: read by rank 0 (device 0), function 'shmem_putsignal_yes', op pl.read\n"
              "    missing: no wait on rank 0 observed a notify that rank 1 issued after its "
              "atomic add; rank 0 never synchronised with rank 1\n",
              "window 'signal' of rank 0, elements [0, 0]",
              "function 'shmem_putsignal_yes', op pl.read",
              "function 'shmem_putsignal_yes', op pld.system.notify");
}

// SHMEM/sync/013-shmem-sync-waituntil-remote-yes.c (015 in later versions):
// PE 0 puts 42 into `remote` on PE 1, fences and atomic_sets `flag` on PE 1
// to 1; PE 1 reads `remote` before its wait_until(flag == 1).
TEST(RmaRaceBench, Shmem_Sync_WaitUntil_Remote_Yes) {
  const pl::HostFunction p =
      program("shmem_waituntil_yes", {.sig = "flag"},
              [](pl::Value& y, pl::Value& remote, pl::Value& local, pl::Value& flag, pl::Value&,
                 pl::Value& bar) {
                pl::Scalar r = pld::rank(pld::get_comm_ctx(remote));
                pl::if_(r == 0, [&] {
                  put_value(remote, 1, local, 42);                         // CONFLICT
                  pld::system::notify(flag, 1, {0, 0}, 1, NotifyOp::Set);  // shmem_int_atomic_set
                });
                pl::if_(r == 1, [&] {
                  pl::write(y, {0, 0}, pl::read(remote, {0, 0}));  // CONFLICT: before the wait
                  pld::system::wait(flag, {0, 0}, 1, WaitCmp::Eq);
                });
                bar = pld::tensor::barrier(bar);
                pl::write(y, {0, 1}, pl::read(remote, {0, 0}));  // the final printf
              });
  expect_race(
      p, 2, 1,
      "  race 1: window 'remote' of rank 1, elements [0, 0]\n"
      "    first:  write by rank 0 (device 0), function 'shmem_waituntil_yes', op pld.tensor.put\n"
      "    second: read by rank 1 (device 1), function 'shmem_waituntil_yes', op pl.read\n"
      "    missing: no wait on rank 1 observed a notify that rank 0 issued after its write; rank 1 "
      "never synchronised with rank 0\n",
      "window 'remote' of rank 1, elements [0, 0]",
      "function 'shmem_waituntil_yes', op pld.tensor.put",
      "function 'shmem_waituntil_yes', op pl.read");
}

// SHMEM/sync/014-shmem-sync-waituntil-remote-no.c: as above, but PE 1 reads
// `remote` after its wait_until(flag == 1).
TEST(RmaRaceBench, Shmem_Sync_WaitUntil_Remote_No) {
  const pl::HostFunction p =
      program("shmem_waituntil_no", {.sig = "flag"},
              [](pl::Value& y, pl::Value& remote, pl::Value& local, pl::Value& flag, pl::Value&,
                 pl::Value& bar) {
                pl::Scalar r = pld::rank(pld::get_comm_ctx(remote));
                pl::if_(r == 0, [&] {
                  put_value(remote, 1, local, 42);
                  pld::system::notify(flag, 1, {0, 0}, 1, NotifyOp::Set);  // shmem_int_atomic_set
                });
                pl::if_(r == 1, [&] {
                  pld::system::wait(flag, {0, 0}, 1, WaitCmp::Eq);
                  pl::write(y, {0, 0}, pl::read(remote, {0, 0}));
                });
                bar = pld::tensor::barrier(bar);
                pl::write(y, {0, 1}, pl::read(remote, {0, 0}));  // the final printf
              });
  expect_no_race(p, 2, {{0, 0}, {42, 42}});
}

// ---- OpenSHMEM: conflict ------------------------------------------------------------

// SHMEM/conflict/034-shmem-conflict-put_signal-store-remote-yes.c: PE 0
// put_signals localbuf (1) into `remote` on PE 1 (SHMEM_SIGNAL_SET); PE 1
// concurrently stores 42 into its own `remote`.
TEST(RmaRaceBench, Shmem_Conflict_PutSignal_Store_Remote_Yes) {
  const pl::HostFunction p =
      program("shmem_put_signal_store_yes", {.sig = "ps_sig_addr"},
              [](pl::Value& y, pl::Value& remote, pl::Value& local, pl::Value& ps_sig_addr,
                 pl::Value&, pl::Value& bar) {
                pl::Scalar r = pld::rank(pld::get_comm_ctx(remote));
                pl::if_(r == 0, [&] {
                  put_value(remote, 1, local, 1);  // CONFLICT
                  pld::system::notify(ps_sig_addr, 1, {0, 0}, 1, NotifyOp::Set);
                });
                pl::if_(r == 1, [&] { pl::write(remote, {0, 0}, 42); });  // CONFLICT
                bar = pld::tensor::barrier(bar);
                pl::write(y, {0, 0}, pl::read(remote, {0, 0}));  // printf remote
              });
  expect_race(
      p, 2, 1,
      "  race 1: window 'remote' of rank 1, elements [0, 0]\n"
      "    first:  write by rank 0 (device 0), function 'shmem_put_signal_store_yes', op "
      "pld.tensor.put\n"
      "    second: write by rank 1 (device 1), function 'shmem_put_signal_store_yes', op pl.write\n"
      "    missing: no wait on rank 1 observed a notify that rank 0 issued after its write; rank 1 "
      "never synchronised with rank 0\n",
      "window 'remote' of rank 1, elements [0, 0]",
      "function 'shmem_put_signal_store_yes', op pld.tensor.put",
      "function 'shmem_put_signal_store_yes', op pl.write");
}

// SHMEM/conflict/035-shmem-conflict-put_signal-put_signal-remote-yes.c
// (3 PEs): PE 0 and PE 2 both put_signal into `remote` on PE 1 (values 1 and
// 2), each with its own signal (ps_sig_addr, ps_sig_addr2).
TEST(RmaRaceBench, Shmem_Conflict_PutSignal_PutSignal_Remote_Yes) {
  const pl::HostFunction p =
      program("shmem_put_signal_put_signal_yes", {.sig = "ps_sig_addr", .sig2 = "ps_sig_addr2"},
              [](pl::Value& y, pl::Value& remote, pl::Value& local, pl::Value& ps_sig_addr,
                 pl::Value& ps_sig_addr2, pl::Value& bar) {
                pl::Scalar r = pld::rank(pld::get_comm_ctx(remote));
                pl::if_(r == 0, [&] {
                  put_value(remote, 1, local, 1);  // CONFLICT
                  pld::system::notify(ps_sig_addr, 1, {0, 0}, 1, NotifyOp::Set);
                });
                pl::if_(r == 2, [&] {
                  put_value(remote, 1, local, 2);  // CONFLICT (localbuf = 2)
                  pld::system::notify(ps_sig_addr2, 1, {0, 0}, 1, NotifyOp::Set);
                });
                bar = pld::tensor::barrier(bar);
                pl::write(y, {0, 0}, pl::read(remote, {0, 0}));  // printf remote
              });
  expect_race(p, 3, 1,
              "  race 1: window 'remote' of rank 1, elements [0, 0]\n"
              "    first:  write by rank 0 (device 0), function 'shmem_put_signal_put_signal_yes', "
              "op pld.tensor.put\n"
              "    second: write by rank 2 (device 2), function 'shmem_put_signal_put_signal_yes', "
              "op pld.tensor.put\n"
              "    missing: no wait on rank 2 observed a notify that rank 0 issued after its "
              "write; rank 2 never synchronised with rank 0\n",
              "window 'remote' of rank 1, elements [0, 0]",
              "write by rank 0 (device 0), function 'shmem_put_signal_put_signal_yes', op "
              "pld.tensor.put",
              "write by rank 2 (device 2), function 'shmem_put_signal_put_signal_yes', op "
              "pld.tensor.put");
}

// SHMEM/conflict/026-shmem-conflict-put-atomicset-remote-yes.c (3 PEs): PE 0
// puts localbuf (1) into `remote` on PE 1 while PE 2 atomic_sets the same
// `remote` on PE 1 to 1.
TEST(RmaRaceBench, Shmem_Conflict_Put_AtomicSet_Remote_Yes) {
  const pl::HostFunction p =
      program("shmem_put_atomicset_yes", {},
              [](pl::Value& y, pl::Value& remote, pl::Value& local, pl::Value&, pl::Value&,
                 pl::Value& bar) {
                pl::Scalar r = pld::rank(pld::get_comm_ctx(remote));
                pl::if_(r == 0, [&] { put_value(remote, 1, local, 1); });  // CONFLICT
                pl::if_(r == 2, [&] {
                  // CONFLICT: shmem_int_atomic_set(&remote, 1, 1)
                  pld::system::notify(remote, 1, {0, 0}, 1, NotifyOp::Set);
                });
                bar = pld::tensor::barrier(bar);
                pl::write(y, {0, 0}, pl::read(remote, {0, 0}));  // printf remote
              });
  expect_race(p, 3, 1,
              "  race 1: window 'remote' of rank 1, elements [0, 0]\n"
              "    first:  write by rank 0 (device 0), function 'shmem_put_atomicset_yes', op "
              "pld.tensor.put\n"
              "    second: atomic add by rank 2 (device 2), function 'shmem_put_atomicset_yes', op "
              "pld.system.notify\n"
              "    missing: no wait on rank 2 observed a notify that rank 0 issued after its "
              "write; rank 2 never synchronised with rank 0\n",
              "window 'remote' of rank 1, elements [0, 0]",
              "function 'shmem_put_atomicset_yes', op pld.tensor.put",
              "function 'shmem_put_atomicset_yes', op pld.system.notify");
}

// SHMEM/conflict/029-shmem-conflict-atomicset-atomicset-remote-no.c (3
// PEs): PE 0 and PE 2 both atomic_set `remote` on PE 1 to 1; atomics do not
// race with each other. After the barrier every PE prints its `remote`.
TEST(RmaRaceBench, Shmem_Conflict_AtomicSet_AtomicSet_Remote_No) {
  const pl::HostFunction p = program(
      "shmem_atomicset_atomicset_no", {},
      [](pl::Value& y, pl::Value& remote, pl::Value&, pl::Value&, pl::Value&, pl::Value& bar) {
        pl::Scalar r = pld::rank(pld::get_comm_ctx(remote));
        pl::if_(r == 0, [&] { pld::system::notify(remote, 1, {0, 0}, 1, NotifyOp::Set); });
        pl::if_(r == 2, [&] { pld::system::notify(remote, 1, {0, 0}, 1, NotifyOp::Set); });
        bar = pld::tensor::barrier(bar);
        pl::write(y, {0, 0}, pl::read(remote, {0, 0}));  // printf remote
      });
  expect_no_race(p, 3, {{0}, {1}, {0}});
}

// ---- GASPI --------------------------------------------------------------------------
// gaspi_write_notify(localbuf[0] -> remote_data[0] on rank 1, notification 0
// = 1); the closing gaspi_barrier plus the all-to-all notify / waitsome
// exchange before the final printf are one pld::tensor::barrier.

// GASPI/sync/007-GASPI-sync-notify-waitsome-remote-no.c: rank 0
// write_notifies localbuf[0] into remote_data[0] on rank 1; rank 1
// notify_waitsomes for notification 0 (wait until non-zero) before it reads
// remote_data[0]. (The original leaves localbuf[0] uninitialised; here it
// is 1, as in 036, so the value check means something.)
TEST(RmaRaceBench, Gaspi_Sync_NotifyWaitsome_Remote_No) {
  const pl::HostFunction p =
      program("gaspi_notify_waitsome_no", {.remote = "remote_data", .sig = "notification"},
              [](pl::Value& y, pl::Value& remote_data, pl::Value& localbuf, pl::Value& notification,
                 pl::Value&, pl::Value& bar) {
                pl::Scalar r = pld::rank(pld::get_comm_ctx(remote_data));
                pl::if_(r == 0, [&] {
                  put_value(remote_data, 1, localbuf, 1);  // gaspi_write_notify: the write ...
                  pld::system::notify(notification, 1, {0, 0}, 1, NotifyOp::Set);  // ... notify
                });
                pl::if_(r == 1, [&] {
                  pld::system::wait(notification, {0, 0}, 0, WaitCmp::Ne);  // notify_waitsome
                  pl::write(y, {0, 0}, pl::read(remote_data, {0, 0}));
                });
                bar = pld::tensor::barrier(bar);
                pl::write(y, {0, 1}, pl::read(localbuf, {0, 0}));  // the final printf
                pl::write(y, {0, 2}, pl::read(remote_data, {0, 0}));
              });
  expect_no_race(p, 2, {{0, 1, 0}, {1, 0, 1}});
}

// GASPI/sync/008-GASPI-sync-notify-waitsome-remote-yes.c (010 in later
// versions): as above with rank 1's notify_waitsome missing: it loads
// remote_data[0] while the write_notify may still be in flight.
TEST(RmaRaceBench, Gaspi_Sync_NotifyWaitsome_Remote_Yes) {
  const pl::HostFunction p =
      program("gaspi_notify_waitsome_yes", {.remote = "remote_data", .sig = "notification"},
              [](pl::Value& y, pl::Value& remote_data, pl::Value& localbuf, pl::Value& notification,
                 pl::Value&, pl::Value& bar) {
                pl::Scalar r = pld::rank(pld::get_comm_ctx(remote_data));
                pl::if_(r == 0, [&] {
                  put_value(remote_data, 1, localbuf, 1);  // CONFLICT
                  pld::system::notify(notification, 1, {0, 0}, 1, NotifyOp::Set);
                });
                pl::if_(r == 1, [&] {
                  // the notify_waitsome is missing
                  pl::write(y, {0, 0}, pl::read(remote_data, {0, 0}));  // CONFLICT
                });
                bar = pld::tensor::barrier(bar);
                pl::write(y, {0, 1}, pl::read(localbuf, {0, 0}));  // the final printf
                pl::write(y, {0, 2}, pl::read(remote_data, {0, 0}));
              });
  expect_race(
      p, 2, 1,
      "  race 1: window 'remote_data' of rank 1, elements [0, 0]\n"
      "    first:  write by rank 0 (device 0), function 'gaspi_notify_waitsome_yes', op "
      "pld.tensor.put\n"
      "    second: read by rank 1 (device 1), function 'gaspi_notify_waitsome_yes', op pl.read\n"
      "    missing: no wait on rank 1 observed a notify that rank 0 issued after its write; rank 1 "
      "never synchronised with rank 0\n",
      "window 'remote_data' of rank 1, elements [0, 0]",
      "function 'gaspi_notify_waitsome_yes', op pld.tensor.put",
      "function 'gaspi_notify_waitsome_yes', op pl.read");
}

// GASPI/conflict/036-GASPI-conflict-write_notify-load-remote-yes.c: rank 0
// sets localbuf[0] = 1 and write_notifies it into remote_data[0] on rank 1;
// rank 1 loads remote_data[0] concurrently (no notify_waitsome at all).
TEST(RmaRaceBench, Gaspi_Conflict_WriteNotify_Load_Remote_Yes) {
  const pl::HostFunction p =
      program("gaspi_write_notify_load_yes", {.remote = "remote_data", .sig = "notification"},
              [](pl::Value& y, pl::Value& remote_data, pl::Value& localbuf, pl::Value& notification,
                 pl::Value&, pl::Value& bar) {
                pl::Scalar r = pld::rank(pld::get_comm_ctx(remote_data));
                pl::if_(r == 0, [&] {
                  put_value(remote_data, 1, localbuf, 1);  // CONFLICT
                  pld::system::notify(notification, 1, {0, 0}, 1, NotifyOp::Set);
                });
                pl::if_(r == 1, [&] {
                  pl::write(y, {0, 0}, pl::read(remote_data, {0, 0}));  // CONFLICT
                });
                bar = pld::tensor::barrier(bar);
                pl::write(y, {0, 1}, pl::read(localbuf, {0, 0}));  // the final printf
                pl::write(y, {0, 2}, pl::read(remote_data, {0, 0}));
              });
  expect_race(
      p, 2, 1,
      "  race 1: window 'remote_data' of rank 1, elements [0, 0]\n"
      "    first:  write by rank 0 (device 0), function 'gaspi_write_notify_load_yes', op "
      "pld.tensor.put\n"
      "    second: read by rank 1 (device 1), function 'gaspi_write_notify_load_yes', op pl.read\n"
      "    missing: no wait on rank 1 observed a notify that rank 0 issued after its write; rank 1 "
      "never synchronised with rank 0\n",
      "window 'remote_data' of rank 1, elements [0, 0]",
      "function 'gaspi_write_notify_load_yes', op pld.tensor.put",
      "function 'gaspi_write_notify_load_yes', op pl.read");
}

// GASPI/conflict/037-GASPI-conflict-write_notify-write-remote-yes.c (3
// ranks): rank 0 write_notifies localbuf[0] = 1 into remote_data[0] on rank
// 1 while rank 2 gaspi_writes its localbuf[0] = 42 to the same element.
TEST(RmaRaceBench, Gaspi_Conflict_WriteNotify_Write_Remote_Yes) {
  const pl::HostFunction p =
      program("gaspi_write_notify_write_yes", {.remote = "remote_data", .sig = "notification"},
              [](pl::Value& y, pl::Value& remote_data, pl::Value& localbuf, pl::Value& notification,
                 pl::Value&, pl::Value& bar) {
                pl::Scalar r = pld::rank(pld::get_comm_ctx(remote_data));
                pl::if_(r == 0, [&] {
                  put_value(remote_data, 1, localbuf, 1);  // CONFLICT
                  pld::system::notify(notification, 1, {0, 0}, 1, NotifyOp::Set);
                });
                pl::if_(r == 2, [&] { put_value(remote_data, 1, localbuf, 42); });  // CONFLICT
                bar = pld::tensor::barrier(bar);
                pl::write(y, {0, 1}, pl::read(localbuf, {0, 0}));  // the final printf
                pl::write(y, {0, 2}, pl::read(remote_data, {0, 0}));
              });
  expect_race(p, 3, 1,
              "  race 1: window 'remote_data' of rank 1, elements [0, 0]\n"
              "    first:  write by rank 0 (device 0), function 'gaspi_write_notify_write_yes', op "
              "pld.tensor.put\n"
              "    second: write by rank 2 (device 2), function 'gaspi_write_notify_write_yes', op "
              "pld.tensor.put\n"
              "    missing: no wait on rank 2 observed a notify that rank 0 issued after its "
              "write; rank 2 never synchronised with rank 0\n",
              "window 'remote_data' of rank 1, elements [0, 0]",
              "write by rank 0 (device 0), function 'gaspi_write_notify_write_yes', op "
              "pld.tensor.put",
              "write by rank 2 (device 2), function 'gaspi_write_notify_write_yes', op "
              "pld.tensor.put");
}

// ---- MPI RMA ------------------------------------------------------------------------

// MPIRMA/sync/036-MPI-sync-polling-remote-yes.c: rank 0 MPI_Puts 1 into
// win_base[0] on rank 1 inside an exclusive lock epoch; rank 1 polls its
// win_base[0] with plain (volatile) loads until it reads 1. Defined by MPI,
// but a race a detector must report.
TEST(RmaRaceBench, MpiRma_Sync_Polling_Remote_Yes) {
  const pl::HostFunction p =
      program("mpi_polling_yes", {.remote = "win_base", .local = "value"},
              [](pl::Value& y, pl::Value& win_base, pl::Value& value, pl::Value&, pl::Value&,
                 pl::Value& bar) {
                pl::Scalar r = pld::rank(pld::get_comm_ctx(win_base));
                pl::if_(
                    r == 0,
                    [&] {
                      // MPI_Win_lock; CONFLICT: MPI_Put; MPI_Win_unlock
                      put_value(win_base, 1, value, 1);
                    },
                    [&] {
                      pl::Scalar flag = 0;
                      pl::range(POLLS, [&](pl::Scalar) {
                        pl::if_(flag != 1, [&] { flag = pl::read(win_base, {0, 0}); });  // CONFLICT
                      });
                    });
                bar = pld::tensor::barrier(bar);
                pl::write(y, {0, 0}, pl::read(win_base, {0, 0}));  // the final printf
              });
  expect_race(
      p, 2, 1,
      "  race 1: window 'win_base' of rank 1, elements [0, 0]\n"
      "    first:  write by rank 0 (device 0), function 'mpi_polling_yes', op pld.tensor.put\n"
      "    second: read by rank 1 (device 1), function 'mpi_polling_yes', op pl.read\n"
      "    missing: no wait on rank 1 observed a notify that rank 0 issued after its write; rank 1 "
      "never synchronised with rank 0\n",
      "window 'win_base' of rank 1, elements [0, 0]",
      "function 'mpi_polling_yes', op pld.tensor.put", "function 'mpi_polling_yes', op pl.read");
}

// MPIRMA/sync/013-MPI-sync-lockall-flushall-remote-no.c: inside a lock_all
// epoch rank 0 puts 1 into win_base[0] on rank 1, flush_alls and enters an
// MPI_Barrier; rank 1 enters the barrier, then loads win_base[0].
TEST(RmaRaceBench, MpiRma_Sync_LockallFlushall_Remote_No) {
  const pl::HostFunction p =
      program("mpi_lockall_flushall_no", {.remote = "win_base", .local = "value"},
              [](pl::Value& y, pl::Value& win_base, pl::Value& value, pl::Value&, pl::Value&,
                 pl::Value& bar) {
                pl::Scalar r = pld::rank(pld::get_comm_ctx(win_base));
                pl::if_(r == 0, [&] { put_value(win_base, 1, value, 1); });  // MPI_Put; flush_all
                bar = pld::tensor::barrier(bar);                             // MPI_Barrier
                pl::if_(r == 1, [&] { pl::write(y, {0, 0}, pl::read(win_base, {0, 0})); });
                bar = pld::tensor::barrier(bar);                   // unlock_all; MPI_Barrier
                pl::write(y, {0, 1}, pl::read(win_base, {0, 0}));  // the final printf
              });
  expect_no_race(p, 2, {{0, 0}, {1, 1}});
}

// MPIRMA/sync/014-MPI-sync-lockall-flushall-remote-yes.c: as above without
// the barrier between the put + flush_all and the load: the flush completes
// the put at the target but tells rank 1 nothing.
TEST(RmaRaceBench, MpiRma_Sync_LockallFlushall_Remote_Yes) {
  const pl::HostFunction p = program(
      "mpi_lockall_flushall_yes", {.remote = "win_base", .local = "value"},
      [](pl::Value& y, pl::Value& win_base, pl::Value& value, pl::Value&, pl::Value&,
         pl::Value& bar) {
        pl::Scalar r = pld::rank(pld::get_comm_ctx(win_base));
        pl::if_(r == 0, [&] { put_value(win_base, 1, value, 1); });  // CONFLICT; flush_all
        pl::if_(r == 1, [&] { pl::write(y, {0, 0}, pl::read(win_base, {0, 0})); });  // CONFLICT
        bar = pld::tensor::barrier(bar);                   // unlock_all; MPI_Barrier
        pl::write(y, {0, 1}, pl::read(win_base, {0, 0}));  // the final printf
      });
  expect_race(
      p, 2, 1,
      "  race 1: window 'win_base' of rank 1, elements [0, 0]\n"
      "    first:  write by rank 0 (device 0), function 'mpi_lockall_flushall_yes', op "
      "pld.tensor.put\n"
      "    second: read by rank 1 (device 1), function 'mpi_lockall_flushall_yes', op pl.read\n"
      "    missing: no wait on rank 1 observed a notify that rank 0 issued after its write; rank 1 "
      "never synchronised with rank 0\n",
      "window 'win_base' of rank 1, elements [0, 0]",
      "function 'mpi_lockall_flushall_yes', op pld.tensor.put",
      "function 'mpi_lockall_flushall_yes', op pl.read");
}

}  // namespace

// ---- what the translation leaves out --------------------------------------------------
// Every case of the list in docs/race-checker.md §4 is expressible; none had
// to be dropped. Where the translation departs from the C source:
//  - Plain-load polling loops (SHMEM 016, MPI RMA 036) are bounded
//    (POLLS iterations, reading only until the flag is seen): anyp has no
//    unbounded loop, and a plain load never blocks, so an unbounded spin
//    could starve the writer under a one-worker schedule. The race is the
//    same: every iteration's load is unordered with the put.
//  - shmem_signal_fetch polling (SHMEM 015) is a blocking pld::system::wait
//    (Eq 1); gaspi_notify_waitsome over one notification is a wait Ne 0.
//  - Signals are INT32 cells (SHMEM uses uint64_t); a put's source is the
//    rank's `localbuf` window (SHMEM/MPI put from a private variable), which
//    only the rank itself touches.
//  - The initial barrier after allocation is dropped (anyp zeroes windows
//    before the ranks start); the closing barriers, and GASPI's closing
//    all-to-all notify / waitsome exchange, are one pld::tensor::barrier.
//  - shmem_fence / shmem_quiet / gaspi_wait / MPI flush and lock epochs have
//    no anyp counterpart: an anyp put completes in program order, and a
//    notify releases all of the rank's earlier writes to every peer, so
//    fence-then-atomic_set is exactly put-then-notify.
