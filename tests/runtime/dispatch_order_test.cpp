// dispatch_order_test.cpp — host dispatches across ranks follow PyPTO's
// task dependencies (compiler/order_dispatches.hpp): a dispatch that reads a
// host-tensor view (In or InOut) runs after the last dispatch of another
// rank that wrote that view, and the race checker sees the order; what the
// rule does not order stays a race: two writers (Out) of one view. Dispatch
// groups that pass one window run in host order (PyPTO's own host-barrier
// test, one window reused over two rounds, ported as written, gets each
// round's values). Exact values at P = 2 ... 16, free, deterministic and PCT
// schedules, the lowered dispatch list, a deadlock through the order named,
// and persistent windows of a session run after run.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "support/source_locations.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t N = 32;

using pld::NotifyOp;
using pld::WaitCmp;

// produce: y = 2 x on every rank, one round; consume: z = the next rank's y.
const pl::Function& produce_orch() {
  static const pl::Function k = pl::jit::incore(
      "produce",
      {pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({1, N}, pl::FP32))},
      [](pl::Value x, pl::Value y) {
        pl::Tile t = pl::load(x, {0, 0}, {1, N});
        y = pl::store(pl::add(t, t), {0, 0}, y);
      });
  static const pl::Function orch = pl::jit::orchestration_for("produce_orch", k);
  return orch;
}

pl::Function consume_orch(pl::Intent intent) {
  const pl::TypeSpec t = pl::Tensor({1, N}, pl::FP32);
  const pl::Function k = pl::jit::incore(
      intent == pl::Intent::In ? "consume" : "consume_inout",
      {intent == pl::Intent::In ? pl::In("y", t) : pl::InOut("y", t), pl::Out("z", t)},
      [](pl::Value y, pl::Value z) {
        z = pl::store(pl::load(y, {0, 0}, {1, N}), {0, 0}, z);
      });
  return pl::jit::orchestration_for(
      intent == pl::Intent::In ? "consume_orch" : "consume_inout_orch", k);
}

// Round 1 writes y[r] on rank r; round 2 reads y[(r + 1) % P] on rank r.
pl::HostFunction neighbour_program(pl::Intent intent) {
  const pl::Function produce = produce_orch();
  const pl::Function consume = consume_orch(intent);
  return pl::jit::host(intent == pl::Intent::In ? "neighbour" : "neighbour_inout",
                       {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
                        pl::InOut("y", pl::Tensor({NR, 1, N}, pl::FP32)),
                        pl::Out("z", pl::Tensor({NR, 1, N}, pl::FP32))},
                       [produce, consume](pl::Value x, pl::Value y, pl::Value z) {
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r];
                           pl::Value yr = y[r];
                           produce(xr, yr, pl::device(r));
                         });
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value next = y[(r + 1) % pld::world_size()];
                           pl::Value zr = z[r];
                           consume(next, zr, pl::device(r));
                         });
                       });
}

anyp::RunConfig config(std::int64_t P, int schedule) {
  anyp::RunConfig c = anyp::RunConfig::for_world_size(P);
  c.check_races = true;
  if (schedule == 1) {
    c.deterministic = true;
    c.schedule_seed = 11;
  } else if (schedule >= 2) {
    c.pct.enabled = true;
    c.pct.seed = static_cast<std::uint64_t>(schedule);
    c.pct.depth = 3;
    c.pct.steps = 40;
  }
  return c;
}

class DispatchOrder : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(DispatchOrder, AReadOfAnotherRanksHostTensorViewWaitsForItsWriter) {
  const std::int64_t P = GetParam();
  for (const pl::Intent intent : {pl::Intent::In, pl::Intent::InOut}) {
    const pl::HostFunction host = neighbour_program(intent);
    for (int schedule = 0; schedule < 6; ++schedule) {
      anyp::InputGenerator gen(static_cast<std::uint32_t>(P));
      anyp::HostTensor x = gen.uniform({P, 1, N});
      anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, N}, pl::FP32);
      anyp::HostTensor z = anyp::HostTensor::zeros({P, 1, N}, pl::FP32);
      host.compile({x, y, z}, config(P, schedule))(x, y, z);  // a race would throw
      for (std::int64_t r = 0; r < P; ++r)
        for (std::int64_t j = 0; j < N; ++j)
          ASSERT_EQ(z.at({r, 0, j}), 2 * x.at({(r + 1) % P, 0, j}))
              << "P=" << P << " rank " << r << " schedule " << schedule;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(P, DispatchOrder, ::testing::Values(2, 3, 4, 5, 8, 13, 16));

TEST(DispatchOrderPlan, TheDispatchListShowsWhatEachDispatchWaitsFor) {
  anyp::HostTensor x = anyp::HostTensor::zeros({3, 1, N}, pl::FP32);
  anyp::HostTensor y = x.clone(), z = x.clone();
  const anyp::CompiledProgram c =
      neighbour_program(pl::Intent::In).compile({x, y, z}, anyp::RunConfig::for_world_size(3));
  const std::string listing = c.lowered_code();
  const std::string list = listing.substr(listing.find("dispatch list:\n"));
  EXPECT_EQ(list,
            "dispatch list:\n"
            "  rank 0 (device 0): produce_orch(x+0B, y+0B), then releases rank 2 (order cell 0)\n"
            "  rank 0 (device 0): consume_orch(y+128B, z+0B), after rank 1's dispatch 0 (order "
            "cell 0 Ge 1)\n"
            "  rank 1 (device 1): produce_orch(x+128B, y+128B), then releases rank 0 (order cell "
            "0)\n"
            "  rank 1 (device 1): consume_orch(y+256B, z+128B), after rank 2's dispatch 0 (order "
            "cell 0 Ge 1)\n"
            "  rank 2 (device 2): produce_orch(x+256B, y+256B), then releases rank 1 (order cell "
            "0)\n"
            "  rank 2 (device 2): consume_orch(y+0B, z+256B), after rank 0's dispatch 0 (order "
            "cell 0 Ge 1)\n");
  EXPECT_NE(c.window_layout().find("(dispatch order): offset 0, slot 32 B, used 4 B, signal "
                                   "(credits only)"),
            std::string::npos)
      << c.window_layout();
}

// The order's waits and releases are notifies and waits at the door, on
// the runtime's own cells: modeled time places them, and the cost card,
// which counts the program's signals, leaves them out.
TEST(DispatchOrderPlan, TheOrderShowsInTheTimelineNotInTheCostCard) {
  const std::int64_t P = 5;
  anyp::InputGenerator gen(3);
  anyp::HostTensor x = gen.uniform({P, 1, N});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, N}, pl::FP32), z = y.clone();
  anyp::RunConfig c = anyp::RunConfig::for_world_size(P);
  c.timeline = true;
  const anyp::RunStats stats = neighbour_program(pl::Intent::In).compile({x, y, z}, c)(x, y, z);
  for (std::int64_t r = 0; r < P; ++r) {
    const anyp::RankCost& rc = stats.cost[static_cast<std::size_t>(r)];
    EXPECT_EQ(rc.notifies + rc.local_notifies, 0) << "rank " << r;
    EXPECT_EQ(rc.waits, 0) << "rank " << r;
  }
  ASSERT_TRUE(stats.timeline);
  EXPECT_GT(stats.timeline->makespan_ns, 0);
  EXPECT_EQ(stats.timeline->rounds, 1);  // each consume waits once, for its release
}

// A session reuses its windows, order cells included: they start each run at 0.
TEST(DispatchOrderPlan, ASessionOfPersistentWindowsRunsTheOrderRunAfterRun) {
  const std::int64_t P = 4;
  anyp::InputGenerator gen(5);
  anyp::HostTensor x = gen.uniform({P, 1, N});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, N}, pl::FP32), z = y.clone();
  anyp::RunConfig c = config(P, 0);
  anyp::Session s = neighbour_program(pl::Intent::In)
                        .compile({x, y, z}, c)
                        .prepare({.persistent_windows = true, .reset_windows = false});
  for (int run = 0; run < 3; ++run) {
    z = anyp::HostTensor::zeros({P, 1, N}, pl::FP32);
    s.run({x, y, z});
    for (std::int64_t r = 0; r < P; ++r)
      ASSERT_EQ(z.at({r, 0, 3}), 2 * x.at({(r + 1) % P, 0, 3})) << "run " << run;
  }
}

std::string failure(const pl::HostFunction& host, std::int64_t P,
                    std::vector<anyp::HostTensor> args, int schedule = 0) {
  std::vector<anyp::ArgRef> refs(args.begin(), args.end());
  try {
    host.compile(refs, config(P, schedule)).run(refs);
  } catch (const anyp::Error& e) {
    return anyp_test::without_locations(e.what());
  }
  return "ran without error";
}

// Two writers of one view, both Out: the rule orders nobody (an Out waits
// for no one), so the race checker must still report the writes.
TEST(DispatchOrderRule, TwoWritersOfOneViewAreStillARace) {
  const pl::Function produce = produce_orch();
  const pl::HostFunction host = pl::jit::host("two_writers",
                                              {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
                                               pl::Out("y", pl::Tensor({NR, 1, N}, pl::FP32))},
                                              [produce](pl::Value x, pl::Value y) {
                                                pl::range(pld::world_size(), [&](pl::Scalar r) {
                                                  pl::Value xr = x[r];
                                                  pl::Value y0 = y[0];
                                                  produce(xr, y0, pl::device(r));
                                                });
                                              });
  const std::int64_t P = 3;
  const std::string report = failure(
      host, P,
      {anyp::HostTensor::zeros({P, 1, N}, pl::FP32), anyp::HostTensor::zeros({P, 1, N}, pl::FP32)});
  EXPECT_EQ(report.rfind("race report: ", 0), 0u) << report;
  EXPECT_NE(report.find("host tensor 'y'"), std::string::npos) << report;
}

// PyPTO's HostTensorBarrierSignalReuse (tests/st/distributed/
// test_l3_host_tensor_barrier.py), ported as written: publish(inp, data),
// a host barrier, consume(rank r + 1's data) — twice over one window. The
// dispatch groups that pass window 'data' run in host order, so rank r + 1's
// round-2 publish waits until every rank's round-1 consume has ended. With
// `second_barrier`, also a host barrier after each consume (redundant now).
pl::HostFunction barrier_rounds(bool second_barrier) {
  const pl::Function publish_step =
      pl::jit::incore("publish_step",
                      {pl::In("inp", pl::Tensor({1, N}, pl::FP32)),
                       pl::InOut("data", pld::DistributedTensor({1, N}, pl::FP32))},
                      [](pl::Value inp, pl::Value data) {
                        data = pl::store(pl::load(inp, {0, 0}, {1, N}), {0, 0}, data);
                      });
  const pl::Function consume_step = pl::jit::incore(
      "consume_step",
      {pl::In("data", pld::DistributedTensor({1, N}, pl::FP32)),
       pl::Out("out", pl::Tensor({1, N}, pl::FP32)), pl::In("peer", pl::INT32)},
      [](pl::Value data, pl::Value out, pl::Scalar peer) {
        out = pl::store(pld::tile::remote_load(data, peer, {0, 0}, {1, N}), {0, 0}, out);
      });
  const pl::Function publish = pl::jit::orchestration_for("publish_orch", publish_step);
  const pl::Function consume = pl::jit::orchestration_for("consume_orch", consume_step);
  return pl::jit::host(second_barrier ? "barrier_rounds_twice" : "barrier_rounds",
                       {pl::In("inputs", pl::Tensor({2, NR, 1, N}, pl::FP32)),
                        pl::Out("outputs", pl::Tensor({2, NR, 1, N}, pl::FP32))},
                       [=](pl::Value inputs, pl::Value outputs) {
                         auto data_buf = pld::alloc_window_buffer("data", {1, N}, pl::FP32);
                         auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                         pl::Value signal = pld::window(signal_buf, {NR, 1}, pl::INT32);
                         for (int round = 0; round < 2; ++round) {
                           pl::range(pld::world_size(), [&](pl::Scalar r) {
                             pl::Value data = pld::window(data_buf, {1, N}, pl::FP32);
                             pl::Value in = inputs[round];
                             pl::Value inr = in[r];
                             publish(inr, data, pl::device(r));
                           });
                           pld::tensor::barrier(signal);
                           pl::range(pld::world_size(), [&](pl::Scalar r) {
                             pl::Value data = pld::window(data_buf, {1, N}, pl::FP32);
                             pl::Value out = outputs[round];
                             pl::Value outr = out[r];
                             consume(data, outr, (r + 1) % pld::world_size(), pl::device(r));
                           });
                           if (second_barrier) pld::tensor::barrier(signal);
                         }
                       });
}

TEST(DispatchOrderRule, PyptosBarrierRoundsOverOneWindowRunInHostOrder) {
  for (std::int64_t P : {2, 3, 5}) {
    anyp::InputGenerator gen(9);
    const anyp::HostTensor inputs = gen.uniform({2, P, 1, N});
    for (bool second_barrier : {false, true}) {
      for (int schedule = 0; schedule < 4; ++schedule) {
        SCOPED_TRACE("P = " + std::to_string(P) + ", schedule " + std::to_string(schedule) +
                     (second_barrier ? ", second barrier" : ""));
        anyp::HostTensor outputs = anyp::HostTensor::zeros({2, P, 1, N}, pl::FP32);
        // Run under the race checker (config()): no race, no error.
        ASSERT_EQ(failure(barrier_rounds(second_barrier), P, {inputs, outputs}, schedule),
                  "ran without error");
        for (std::int64_t round = 0; round < 2; ++round)
          for (std::int64_t r = 0; r < P; ++r)
            for (std::int64_t j = 0; j < N; ++j)
              ASSERT_EQ(outputs.get((round * P + r) * N + j),
                        inputs.get((round * P + (r + 1) % P) * N + j))
                  << "round " << round << ", rank " << r << ", element " << j;
      }
    }
  }
}

// Rank 0's second dispatch reads y[1], which rank 1's first dispatch writes;
// that dispatch waits for a notify rank 0 sends only in its second: the
// order is part of the deadlock, and the report names it.
TEST(DispatchOrderRule, ADeadlockThroughTheOrderIsReportedWithIt) {
  const pl::Function waiter = pl::jit::incore(
      "waiter",
      {pl::Out("y", pl::Tensor({1, N}, pl::FP32)),
       pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
      [](pl::Value y, pl::Value signal) {
        auto ctx = pld::get_comm_ctx(signal);
        pl::if_(pld::rank(ctx) == 1, [&] { pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge); });
        y = pl::store(pl::zeros({1, N}, pl::FP32), {0, 0}, y);
      });
  const pl::Function notifier =
      pl::jit::incore("notifier",
                      {pl::In("y", pl::Tensor({1, N}, pl::FP32)),
                       pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
                      [](pl::Value, pl::Value signal) {
                        pld::system::notify(signal, 1, {0, 0}, 1, NotifyOp::AtomicAdd);
                      });
  const pl::Function first = pl::jit::orchestration_for("first", waiter);
  const pl::Function second = pl::jit::orchestration_for("second", notifier);
  const pl::HostFunction host = pl::jit::host(
      "order_deadlock", {pl::InOut("y", pl::Tensor({NR, 1, N}, pl::FP32))}, [=](pl::Value y) {
        auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          pl::Value yr = y[r];
          first(yr, pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
        });
        pl::Value y1 = y[1];
        second(y1, pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(0));
      });
  const std::string report = failure(host, 2, {anyp::HostTensor::zeros({2, 1, N}, pl::FP32)});
  EXPECT_EQ(report,
            "deadlock: no rank can make progress (2 of 2 ranks waiting)\n"
            "  rank 0: dispatch 1 (second) waits for dispatch 0 of rank 1 (first), the last "
            "writer of host tensor 'y' at byte 128, which it takes as In or InOut (the "
            "dispatch order cells: PyPTO's task dependencies; give each rank its own view of the "
            "tensor, or pass it Out) Ge 1; current value 0; never notified\n"
            "  rank 1: function 'waiter', op pld.system.wait: waits for signal 'signal' cell [0, "
            "0] Ge 1; current value 0; never notified");
}

}  // namespace
