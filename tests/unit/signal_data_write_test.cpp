// signal_data_write_test.cpp — a wait polls its cell's memory, so a data
// write into a signal window (remote_store, put) satisfies it just like a
// notify would; the parked rank must wake, not be reported as deadlocked.
// (Kept out of the TSan suite: the simulator's data write and the wait's
// re-check are deliberately unsynchronised, as on a device.)
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");

// Rank r writes a row of 8 INT32 ones into right's flag window with
// remote_store, then waits until left has done the same to its own flag.
const auto flag_ring =
    pl::jit::incore("flag_ring",
                    {pl::Out("y", pl::Tensor({1, 8}, pl::INT32)),
                     pl::InOut("flag", pld::DistributedTensor({1, 8}, pl::INT32))},
                    [](pl::Value y, pl::Value flag) {
                      auto ctx = pld::get_comm_ctx(flag);
                      pl::Scalar r = pld::rank(ctx);
                      pl::Scalar right = (r + 1) % pld::nranks(ctx);
                      pl::Tile ones = pl::add(pl::mul(pl::load(y, {0, 0}, {1, 8}), 0), 1);
                      pld::tile::remote_store(ones, flag, right, {0, 0});
                      pld::system::wait(flag, {0, 0}, 1, pld::WaitCmp::Ge);
                      y = pl::store(pl::load(flag, {0, 0}, {1, 8}), {0, 0}, y);
                    });

const auto per_rank =
    pl::jit::orchestration("per_rank",
                           {pl::Out("y", pl::Tensor({1, 8}, pl::INT32)),
                            pl::InOut("flag", pld::DistributedTensor({1, 8}, pl::INT32))},
                           [](pl::Value y, pl::Value flag) { flag_ring(y, flag); });

const pl::HostFunction host =
    pl::jit::host("flags", {pl::Out("y", pl::Tensor({NR, 1, 8}, pl::INT32))}, [](pl::Value y) {
      auto buf = pld::alloc_window_buffer("flag", {1, 8}, pl::INT32);
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        per_rank(y[r], pld::window(buf, {1, 8}, pl::INT32), pl::device(r));
      });
    });

TEST(SignalDataWrite, RemoteStoreIntoACellWakesItsWait) {
  for (std::int64_t P : {2, 3, 5, 8}) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      anyp::RunConfig config;
      config.distributed.device_ids.clear();
      for (std::int64_t r = 0; r < P; ++r) config.distributed.device_ids.push_back(r);
      config.deterministic = true;
      config.schedule_seed = seed;
      auto y = anyp::HostTensor::zeros({P, 1, 8}, pl::INT32);
      host.compile({y}, config)(y);
      for (std::int64_t r = 0; r < P; ++r) {
        for (std::int64_t j = 0; j < 8; ++j) EXPECT_EQ(y.at({r, 0, j}), 1.0) << "P=" << P;
      }
    }
  }
}

// The modeled timeline cannot follow a cell changed by data: the wait ends
// when the write is done, and the timeline's note says so.
TEST(SignalDataWrite, TimelineNotesTheWaitAWriteSatisfied) {
  anyp::RunConfig config = anyp::RunConfig::for_world_size(2);
  config.timeline = true;
  auto y = anyp::HostTensor::zeros({2, 1, 8}, pl::INT32);
  const anyp::RunStats stats = host.compile({y}, config)(y);
  ASSERT_TRUE(stats.timeline);
  // In the order the model met them: on a2a3sim the remote stores run on
  // DMA engines, and rank 1's wait is met first.
  EXPECT_EQ(stats.timeline->note,
            "rank 1's wait on signal 'flag' cell [0, 0] of rank 1 was satisfied by a data write "
            "into the cell, not a notify: it ends when that write is done\n"
            "rank 0's wait on signal 'flag' cell [0, 0] of rank 0 was satisfied by a data write "
            "into the cell, not a notify: it ends when that write is done");
  EXPECT_TRUE(stats.timeline->flows.empty());
}

}  // namespace
