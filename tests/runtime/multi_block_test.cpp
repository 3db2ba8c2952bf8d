// multi_block_test.cpp — kernels launched over several blocks of a rank
// (pl::blocks(n), PyPTO's pl.spmd; issue 12, item 3): every block runs the
// kernel with its own pl::get_block_idx(), sharing the rank's windows and
// tensors, concurrently (a handshake between two blocks of one rank
// completes), under the race checker and the deadlock report, which name
// the block. Block counts 2, 3 and 4 at P = 1, 2, 3, 5, 8, with one and two
// workers.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "support/source_locations.hpp"

namespace {

constexpr std::int64_t kTile = 8;   // columns per tile
constexpr std::int64_t kTiles = 7;  // tiles per row: not a multiple of the block counts
constexpr std::int64_t N = kTile * kTiles;
const pl::Dim NR = pl::dynamic("NR");

using Body = std::function<void(pl::Value&, pl::Value&, pl::Value&, pl::Value&, pl::Value&)>;

// host(x [NR, 1, N], y [NR, 1, N], tags [NR, 1, 16]) -> a kernel over `blocks`
// blocks with windows inbox [1, N] FP32 and lanes [NR, 8] INT32.
pl::HostFunction program(const std::string& name, std::int64_t blocks, const Body& body) {
  const auto kernel = pl::jit::incore(
      name,
      {pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({1, N}, pl::FP32)),
       pl::Out("tags", pl::Tensor({1, 16}, pl::INT32)),
       pl::InOut("inbox", pld::DistributedTensor({1, N}, pl::FP32)),
       pl::InOut("lanes", pld::DistributedTensor({NR, 8}, pl::INT32))},
      [body](pl::Value x, pl::Value y, pl::Value tags, pl::Value inbox, pl::Value lanes) {
        body(x, y, tags, inbox, lanes);
      });
  const auto orch = pl::jit::orchestration_for(name + "_rank", kernel, pl::blocks(blocks));
  return pl::jit::host(name,
                       {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, N}, pl::FP32)),
                        pl::Out("tags", pl::Tensor({NR, 1, 16}, pl::INT32))},
                       [orch](pl::Value x, pl::Value y, pl::Value tags) {
                         auto inbox = pld::alloc_window_buffer("inbox", {1, N}, pl::FP32);
                         auto lanes = pld::alloc_window_buffer("lanes", {NR, 8}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           orch(x[r], y[r], tags[r], pld::window(inbox, {1, N}, pl::FP32),
                                pld::window(lanes, {NR, 8}, pl::INT32), pl::device(r));
                         });
                       });
}

// body(tile) for the tiles of this block: b, b + n, b + 2n, ... < kTiles.
void my_tiles(const std::function<void(pl::Scalar)>& body) {
  pl::range(pl::get_block_idx(), kTiles, pl::get_block_num(), body);
}

// Each block scales its tiles (y = 2x) and writes its index and the block
// count into its two tag cells.
Body scale_tiles() {
  return [](pl::Value& x, pl::Value& y, pl::Value& tags, pl::Value&, pl::Value&) {
    my_tiles([&](pl::Scalar j) {
      y = pl::store(pl::mul(pl::load(x, {0, j * kTile}, {1, kTile}), 2.0), {0, j * kTile}, y);
    });
    pl::write(tags, {0, pl::get_block_idx()}, pl::get_block_idx() + 100);
    pl::write(tags, {0, pl::get_block_idx() + 8}, pl::get_block_num());
  };
}

// Each block puts its tiles of x into the right neighbour's inbox, gives
// the neighbour a credit in lane (me, block), waits for the left
// neighbour's credit in its own lane, and copies its tiles of the inbox to
// y: every block synchronises with the same block of the neighbours only.
Body ring_shift_by_block() {
  return [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value& inbox, pl::Value& lanes) {
    const pld::CommCtx ctx = pld::get_comm_ctx(inbox);
    const pl::Scalar me = pld::rank(ctx), p = pld::nranks(ctx);
    const pl::Scalar right = (me + 1) % p, left = (me + p - 1) % p;
    const pl::Scalar lane = pl::get_block_idx();
    my_tiles([&](pl::Scalar j) {
      pld::tensor::put(inbox, right, x, {0, j * kTile}, {0, j * kTile}, {1, kTile});
    });
    pld::system::notify(lanes, right, {me, lane}, 1, pld::NotifyOp::AtomicAdd);
    pld::system::wait(lanes, {left, lane}, 1, pld::WaitCmp::Ge);
    pld::system::notify(lanes, me, {left, lane}, -1, pld::NotifyOp::AtomicAdd);  // back to 0
    my_tiles([&](pl::Scalar j) {
      y = pl::store(pl::load(inbox, {0, j * kTile}, {1, kTile}), {0, j * kTile}, y);
    });
  };
}

struct Result {
  anyp::HostTensor x, y, tags;
  anyp::RunStats stats;
};

Result run(const pl::HostFunction& host, std::int64_t P, int workers = 1, bool races = true) {
  anyp::InputGenerator gen(5);
  Result r{gen.uniform({P, 1, N}),
           anyp::HostTensor::zeros({P, 1, N}, pl::FP32),
           anyp::HostTensor::zeros({P, 1, 16}, pl::INT32),
           {}};
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = races;
  config.workers = workers;
  r.stats = host.compile({r.x, r.y, r.tags}, config)(r.x, r.y, r.tags);
  return r;
}

class MultiBlock : public testing::TestWithParam<std::tuple<std::int64_t, std::int64_t, int>> {};

TEST_P(MultiBlock, EveryBlockScalesItsBlockCyclicTiles) {
  const auto [P, blocks, workers] = GetParam();
  const Result r = run(program("scale", blocks, scale_tiles()), P, workers);
  for (std::int64_t k = 0; k < P; ++k) {
    for (std::int64_t i = 0; i < N; ++i)
      ASSERT_EQ(r.y.at({k, 0, i}), static_cast<double>(static_cast<float>(r.x.at({k, 0, i})) * 2))
          << "rank " << k << " element " << i;
    for (std::int64_t b = 0; b < 8; ++b) {
      EXPECT_EQ(r.tags.at({k, 0, b}), b < blocks ? 100 + b : 0) << "rank " << k << " block " << b;
      EXPECT_EQ(r.tags.at({k, 0, b + 8}), b < blocks ? blocks : 0) << "rank " << k;
    }
  }
}

TEST_P(MultiBlock, EachBlockSynchronisesWithTheSameBlockOfItsNeighbours) {
  const auto [P, blocks, workers] = GetParam();
  const Result r = run(program("shift", blocks, ring_shift_by_block()), P, workers);
  for (std::int64_t k = 0; k < P; ++k)
    for (std::int64_t i = 0; i < N; ++i)
      ASSERT_EQ(r.y.at({k, 0, i}), r.x.at({(k + P - 1) % P, 0, i})) << "rank " << k << " " << i;
  // The blocks' traffic adds up to the rank's: its whole row, once.
  for (std::int64_t k = 0; k < P; ++k) {
    EXPECT_EQ(r.stats.cost[k].bytes_out, P > 1 ? 4 * N : 0) << "rank " << k;
    EXPECT_EQ(r.stats.cost[k].bytes_in, P > 1 ? 4 * N : 0) << "rank " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(PBlocksWorkers, MultiBlock,
                         testing::Combine(testing::Values(1, 2, 3, 5, 8), testing::Values(2, 3, 4),
                                          testing::Values(1, 2)));

// Block 1 publishes a value and waits for block 0's answer, which block 0
// sends only after reading it: the blocks of a rank run concurrently (run
// one after the other, in either order, they would never finish).
TEST(MultiBlockConcurrency, TwoBlocksOfOneRankHandshake) {
  const Body handshake = [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value& inbox,
                            pl::Value& lanes) {
    const pl::Scalar me = pld::rank(pld::get_comm_ctx(inbox));
    pl::if_(
        pl::get_block_idx() == 1,
        [&] {
          inbox = pl::store(pl::load(x, {0, 0}, {1, N}), {0, 0}, inbox);
          pld::system::notify(lanes, me, {0, 1}, 1, pld::NotifyOp::Set);
          pld::system::wait(lanes, {0, 0}, 1, pld::WaitCmp::Eq);
          y = pl::store(pl::add(pl::load(inbox, {0, 0}, {1, N}), 1.0), {0, 0}, y);
        },
        [&] {
          pld::system::wait(lanes, {0, 1}, 1, pld::WaitCmp::Eq);
          inbox = pl::store(pl::mul(pl::load(inbox, {0, 0}, {1, N}), 10.0), {0, 0}, inbox);
          pld::system::notify(lanes, me, {0, 0}, 1, pld::NotifyOp::Set);
        });
  };
  for (std::int64_t P : {1, 3}) {
    const Result r = run(program("handshake", 2, handshake), P);
    for (std::int64_t k = 0; k < P; ++k)
      for (std::int64_t i = 0; i < N; ++i)
        ASSERT_EQ(r.y.at({k, 0, i}),
                  static_cast<double>(static_cast<float>(r.x.at({k, 0, i})) * 10.0f + 1.0f));
  }
}

// A launch returns when all its blocks have finished: the next kernel of
// the orchestration function reads what every block wrote.
TEST(MultiBlockJoin, TheNextKernelSeesEveryBlocksWrites) {
  const auto stage =
      pl::jit::incore("stage",
                      {pl::In("x", pl::Tensor({1, N}, pl::FP32)),
                       pl::InOut("inbox", pld::DistributedTensor({1, N}, pl::FP32))},
                      [](pl::Value x, pl::Value inbox) {
                        my_tiles([&](pl::Scalar j) {
                          inbox = pl::store(pl::add(pl::load(x, {0, j * kTile}, {1, kTile}), 1.0),
                                            {0, j * kTile}, inbox);
                        });
                      });
  const auto drain = pl::jit::incore("drain",
                                     {pl::In("inbox", pld::DistributedTensor({1, N}, pl::FP32)),
                                      pl::Out("y", pl::Tensor({1, N}, pl::FP32))},
                                     [](pl::Value inbox, pl::Value y) {
                                       y = pl::store(pl::load(inbox, {0, 0}, {1, N}), {0, 0}, y);
                                     });
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({1, N}, pl::FP32)),
      pl::InOut("inbox", pld::DistributedTensor({1, N}, pl::FP32))};
  const auto orch = pl::jit::orchestration("stage_then_drain", params,
                                           [&](pl::Value x, pl::Value y, pl::Value inbox) {
                                             stage(x, inbox, pl::blocks(3));
                                             drain(inbox, y);
                                           });
  const auto host =
      pl::jit::host("join",
                    {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
                     pl::Out("y", pl::Tensor({NR, 1, N}, pl::FP32))},
                    [&](pl::Value x, pl::Value y) {
                      auto inbox = pld::alloc_window_buffer("inbox", {1, N}, pl::FP32);
                      pl::range(pld::world_size(), [&](pl::Scalar r) {
                        orch(x[r], y[r], pld::window(inbox, {1, N}, pl::FP32), pl::device(r));
                      });
                    });
  for (std::int64_t P : {2, 5}) {
    anyp::InputGenerator gen(9);
    anyp::HostTensor x = gen.uniform({P, 1, N});
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, N}, pl::FP32);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    config.check_races = true;
    config.workers = 2;
    host.compile({x, y}, config)(x, y);
    for (std::int64_t i = 0; i < P * N; ++i)
      ASSERT_EQ(y.get(i), static_cast<double>(static_cast<float>(x.get(i)) + 1.0f)) << i;
  }
}

// Modeled time gives every block a core of its own: 64 tiles of tile math
// on 4 blocks finish well before the same tiles on one block, and the
// timeline has every block's ops, under its rank.
TEST(MultiBlockTimeline, BlocksOverlapTheirTileMath) {
  constexpr std::int64_t kWide = 65536, kChunk = 1024;
  const auto square = pl::jit::incore(
      "square",
      {pl::In("x", pl::Tensor({1, kWide}, pl::FP32)),
       pl::Out("y", pl::Tensor({1, kWide}, pl::FP32))},
      [](pl::Value x, pl::Value y) {
        pl::range(pl::get_block_idx(), kWide / kChunk, pl::get_block_num(), [&](pl::Scalar j) {
          const pl::Tile t = pl::load(x, {0, j * kChunk}, {1, kChunk});
          y = pl::store(pl::add(pl::mul(t, t), 1.0), {0, j * kChunk}, y);
        });
      });
  auto modeled = [&](std::int64_t blocks, std::int64_t P) {
    const auto orch = pl::jit::orchestration_for("square_rank", square, pl::blocks(blocks));
    const auto host = pl::jit::host(
        "timeline_blocks",
        {pl::In("x", pl::Tensor({NR, 1, kWide}, pl::FP32)),
         pl::Out("y", pl::Tensor({NR, 1, kWide}, pl::FP32))},
        [&](pl::Value x, pl::Value y) {
          pl::range(pld::world_size(), [&](pl::Scalar r) { orch(x[r], y[r], pl::device(r)); });
        });
    anyp::InputGenerator gen(3);
    anyp::HostTensor x = gen.uniform({P, 1, kWide});
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, kWide}, pl::FP32);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    config.timeline = true;
    return *host.compile({x, y}, config)(x, y).timeline;
  };
  for (std::int64_t P : {2, 3}) {
    const anyp::Timeline one = modeled(1, P), four = modeled(4, P);
    ASSERT_EQ(four.ranks.size(), static_cast<std::size_t>(P));
    std::vector<std::vector<int>> seen(P, std::vector<int>(4, 0));
    for (const anyp::TimelineOp& op : four.ops) seen[op.rank][op.block] = 1;
    for (std::int64_t r = 0; r < P; ++r)
      EXPECT_EQ(seen[r], std::vector<int>({1, 1, 1, 1})) << "rank " << r;
    for (const anyp::TimelineOp& op : one.ops) EXPECT_EQ(op.block, 0);
    // The same work (a rank's busy time sums its blocks'), done sooner:
    // the launch's two notifies cost less than the three blocks' tiles.
    EXPECT_LT(four.makespan_ns, 0.75 * one.makespan_ns)
        << "4 blocks: " << four.makespan_ns << " ns, 1 block: " << one.makespan_ns << " ns";
    // A block waiting for its launch is idle, not waiting: the only wait
    // is block 0's, for the join (the kernel has no signal of its own).
    for (std::int64_t r = 0; r < P; ++r) {
      EXPECT_EQ(one.ranks[r].wait_ns, 0.0) << "rank " << r;
      EXPECT_GT(four.ranks[r].wait_ns, 0.0) << "rank " << r;
      EXPECT_LT(four.ranks[r].wait_ns, four.makespan_ns) << "rank " << r;
    }
  }
}

// Two launches of different sizes in one orchestration function, in a
// loop: the rank has 4 agents, and the 2-block launch leaves 2 of them idle.
TEST(MultiBlockJoin, LaunchesOfTwoSizesInALoop) {
  const auto tag = pl::jit::incore(
      "tag", {pl::InOut("tags", pl::Tensor({1, 16}, pl::INT32)), pl::In("row", pl::INT32)},
      [](pl::Value tags, pl::Scalar row) {
        const pl::Scalar b = pl::get_block_idx();
        pl::write(tags, {0, row * 4 + b}, pl::read(tags, {0, row * 4 + b}) + pl::get_block_num());
      });
  const std::vector<pl::Param> params = {pl::InOut("tags", pl::Tensor({1, 16}, pl::INT32))};
  const auto orch = pl::jit::orchestration("two_sizes", params, [&](pl::Value tags) {
    pl::range(3, [&](pl::Scalar) {
      tag(tags, 0, pl::blocks(2));
      tag(tags, 1, pl::blocks(4));
    });
  });
  const auto host = pl::jit::host(
      "two_sizes", {pl::InOut("tags", pl::Tensor({NR, 1, 16}, pl::INT32))}, [&](pl::Value tags) {
        pl::range(pld::world_size(), [&](pl::Scalar r) { orch(tags[r], pl::device(r)); });
      });
  for (std::int64_t P : {1, 3}) {
    anyp::HostTensor tags = anyp::HostTensor::zeros({P, 1, 16}, pl::INT32);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    config.check_races = true;
    config.workers = 2;
    host.compile({tags}, config)(tags);
    for (std::int64_t r = 0; r < P; ++r)
      for (std::int64_t j = 0; j < 16; ++j) {
        const std::int64_t want = j < 2 ? 3 * 2 : (j >= 4 && j < 8) ? 3 * 4 : 0;
        EXPECT_EQ(tags.at_int({r, 0, j}), want) << "rank " << r << " cell " << j;
      }
  }
}

// A run that fails inside a launch leaves the launch and join cells set;
// the next run of a session whose windows are kept (never reset) starts
// with them at 0 again: its join waits for this run's blocks (a stale join
// credit would let the drain read the inbox while block 2 still writes it).
TEST(MultiBlockSession, ARunAfterAFailedLaunchStartsClean) {
  const auto stage = pl::jit::incore(
      "maybe_fail",
      {pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::In("fail", pl::Tensor({1, 8}, pl::INT32)),
       pl::Out("inbox", pld::DistributedTensor({1, N}, pl::FP32))},
      [](pl::Value x, pl::Value fail, pl::Value inbox) {
        const pl::Scalar b = pl::get_block_idx();
        // Block 2 starts late (a spin), so block 1 joins first; in a
        // failing run block 2 then loads past the end of x.
        pl::range((b == 2) * 64, [&](pl::Scalar) {});
        my_tiles([&](pl::Scalar j) {
          inbox = pl::store(pl::load(x, {0, j * kTile}, {1, kTile}), {0, j * kTile}, inbox);
        });
        const pl::Scalar failing = pl::read(fail, {0, 0}) * (b == 2);
        const pl::Tile probe = pl::load(x, {0, failing * N}, {1, kTile});
        (void)probe;
      });
  const auto drain = pl::jit::incore("drain",
                                     {pl::In("inbox", pld::DistributedTensor({1, N}, pl::FP32)),
                                      pl::Out("y", pl::Tensor({1, N}, pl::FP32))},
                                     [](pl::Value inbox, pl::Value y) {
                                       y = pl::store(pl::load(inbox, {0, 0}, {1, N}), {0, 0}, y);
                                     });
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({1, N}, pl::FP32)),
      pl::In("fail", pl::Tensor({1, 8}, pl::INT32)),
      pl::InOut("inbox", pld::DistributedTensor({1, N}, pl::FP32))};
  const auto orch = pl::jit::orchestration(
      "stage_drain", params, [&](pl::Value x, pl::Value y, pl::Value fail, pl::Value inbox) {
        stage(x, fail, inbox, pl::blocks(3));
        drain(inbox, y);
      });
  const auto host = pl::jit::host(
      "fail_then_run",
      {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, 1, N}, pl::FP32)),
       pl::In("fail", pl::Tensor({NR, 1, 8}, pl::INT32))},
      [&](pl::Value x, pl::Value y, pl::Value fail) {
        auto inbox = pld::alloc_window_buffer("inbox", {1, N}, pl::FP32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          orch(x[r], y[r], fail[r], pld::window(inbox, {1, N}, pl::FP32), pl::device(r));
        });
      });
  const std::int64_t P = 2;
  anyp::InputGenerator gen(4);
  anyp::HostTensor x = gen.uniform({P, 1, N});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, N}, pl::FP32);
  anyp::HostTensor fail = anyp::HostTensor::zeros({P, 1, 8}, pl::INT32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  config.preempt_budget = 4;  // the agents interleave instruction by instruction
  anyp::Session session = host.compile({x, y, fail}, config)
                              .prepare({.persistent_windows = true, .reset_windows = false});
  fail.set(0, 1);  // rank 0's block 2 fails
  EXPECT_THROW(session.run({x, y, fail}), anyp::RunError);
  fail.set(0, 0);
  for (int run = 0; run < 2; ++run) {
    y = anyp::HostTensor::zeros({P, 1, N}, pl::FP32);
    session.run({x, y, fail});
    for (std::int64_t i = 0; i < P * N; ++i) ASSERT_EQ(y.get(i), x.get(i)) << "run " << run;
  }
}

std::string failure(const pl::HostFunction& host, std::int64_t P) {
  try {
    run(host, P);
    return "ran without error";
  } catch (const anyp::Error& e) {
    return anyp_test::without_locations(e.what());
  }
}

// Every block stores its tiles and then tile 0: the same values from every
// block, so the answer is right, but the stores are unordered.
TEST(MultiBlockMistakes, TwoBlocksWritingOneTileIsARaceEvenWhenTheValuesAgree) {
  const Body overlap = [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&, pl::Value&) {
    my_tiles([&](pl::Scalar j) {
      y = pl::store(pl::load(x, {0, j * kTile}, {1, kTile}), {0, j * kTile}, y);
    });
    y = pl::store(pl::load(x, {0, 0}, {1, kTile}), {0, 0}, y);
  };
  const std::string report = failure(program("overlap", 2, overlap), 2);
  // The sides are two blocks of one rank, not "two ranks" (issue 22).
  EXPECT_EQ(report.rfind("race report: ", 0), 0u) << report;
  EXPECT_NE(report.find(" the same elements from two blocks of one rank with no happens-before "
                        "order (at least one writes)\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("host tensor 'y'"), std::string::npos) << report;
  EXPECT_NE(report.find("write by rank 0 (device 0) block 1, function 'overlap', op pl.store"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("missing: no wait on rank 0 block 1 observed a notify that rank 0 issued "
                        "after its write"),
            std::string::npos)
      << report;
}

TEST(MultiBlockMistakes, ABlockThatWaitsForeverIsNamedInTheDeadlockReport) {
  const Body stuck = [](pl::Value&, pl::Value&, pl::Value&, pl::Value&, pl::Value& lanes) {
    pl::if_(pl::get_block_idx() == 2, [&] {
      pld::system::wait(lanes, {0, 3}, 1, pld::WaitCmp::Ge);
    });
  };
  const std::string report = failure(program("stuck", 3, stuck), 2);
  EXPECT_NE(report.find("deadlock: no rank can make progress (2 of 2 ranks waiting)"),
            std::string::npos)
      << report;
  // Block 1 finished its part (its join credit is in), block 2 did not.
  EXPECT_NE(report.find("rank 1: function 'stuck_rank', op call @stuck: waits for blocks 1-2 of "
                        "its launch to finish (the block join cell) Ge 2; current value 1; "
                        "notified by rank 1 (AtomicAdd +1)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("ranks 0, 1 (2 ranks): block 2: function 'stuck', op pld.system.wait: "
                        "waits for signal 'lanes' cell [0, 3] Ge 1; current value 0; never "
                        "notified"),
            std::string::npos)
      << report;
}

TEST(MultiBlockMistakes, ARunErrorNamesTheBlock) {
  const Body out_of_range = [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&, pl::Value&) {
    y = pl::store(pl::load(x, {0, pl::get_block_idx() * N}, {1, kTile}), {0, 0}, y);
  };
  const std::string error = failure(program("oob", 2, out_of_range), 3);
  EXPECT_NE(error.find("block 1 of 2, function 'oob', op pl.load: region out of bounds: offsets "
                       "[0, 56] + shape [1, 8] exceeds the source [1, 56] (host tensor 'x')"),
            std::string::npos)
      << error;
}

}  // namespace
