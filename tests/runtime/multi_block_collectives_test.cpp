// multi_block_collectives_test.cpp — host collectives over core_num blocks
// (PyPTO's core_num=; issue 12, item 3): a Mesh allreduce whose chunks are
// dealt out to the blocks, and an all_to_all_v whose destinations
// are, each block on its own lane (column) of an [NR, S] signal. At PyPTO's
// cases (P = 2 with 2 blocks and one element, 2 with 4 blocks and 4127
// elements on a 6-wide signal, 4 with 2 blocks and 1041 elements) and at odd
// P, race-checked; back to back through one signal (every lane returns to
// 0); the cost card counts every block's waits; a signal narrower than
// core_num and core_num in a kernel are compile errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace {

const pl::Dim NR = pl::dynamic("NR");
const pl::Dim SZ = pl::dynamic("SZ");
const pl::Dim STRIDE = pl::dynamic("STRIDE");

// stage: data = x; consume: y = data, lanes = the signal (read back).
const auto stage = pl::jit::incore("stage",
                                   {pl::In("x", pl::Tensor({1, SZ}, pl::FP32)),
                                    pl::InOut("data", pld::DistributedTensor({1, SZ}, pl::FP32))},
                                   [](pl::Value x, pl::Value data) { pl::tensor::copy(data, x); });
const auto consume =
    pl::jit::incore("consume",
                    {pl::In("data", pld::DistributedTensor({1, SZ}, pl::FP32)),
                     pl::In("signal", pld::DistributedTensor({NR, STRIDE}, pl::INT32)),
                     pl::Out("y", pl::Tensor({1, SZ}, pl::FP32)),
                     pl::Out("lanes", pl::Tensor({NR, STRIDE}, pl::INT32))},
                    [](pl::Value data, pl::Value signal, pl::Value y, pl::Value lanes) {
                      pl::tensor::copy(y, data);  // memory to memory: any width
                      pl::tensor::copy(lanes, signal);
                    });
const auto stage_on = pl::jit::orchestration_for("stage_on_rank", stage);
const auto consume_on = pl::jit::orchestration_for("consume_on_rank", consume);

// `rounds` host allreduces over `cores` blocks through one signal, each
// after a fresh stage of x (so round 2 sums x again, not round 1's sum).
pl::HostFunction allreduce_program(std::int64_t cores, int rounds) {
  return pl::jit::host("multicore_allreduce",
                       {pl::In("x", pl::Tensor({NR, 1, SZ}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, SZ}, pl::FP32)),
                        pl::Out("lanes", pl::Tensor({NR, NR, STRIDE}, pl::INT32))},
                       [cores, rounds](pl::Value x, pl::Value y, pl::Value lanes) {
                         auto data = pld::alloc_window_buffer("data", {1, SZ}, pl::FP32);
                         auto signal = pld::alloc_window_buffer("signal", {NR, STRIDE}, pl::INT32);
                         for (int round = 0; round < rounds; ++round) {
                           pl::range(pld::world_size(), [&](pl::Scalar r) {
                             stage_on(x[r], pld::window(data, {1, SZ}, pl::FP32), pl::device(r));
                           });
                           pld::tensor::allreduce(pld::window(data, {1, SZ}, pl::FP32),
                                                  pld::window(signal, {NR, STRIDE}, pl::INT32),
                                                  pld::core_num(cores));
                         }
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           consume_on(pld::window(data, {1, SZ}, pl::FP32),
                                      pld::window(signal, {NR, STRIDE}, pl::INT32), y[r], lanes[r],
                                      pl::device(r));
                         });
                       });
}

struct Case {
  std::int64_t P, cores, size, stride;
};

class MultiBlockAllreduce : public testing::TestWithParam<Case> {};

TEST_P(MultiBlockAllreduce, EveryBlockReducesItsTilesOnItsOwnLane) {
  const auto [P, cores, size, stride] = GetParam();
  for (int rounds : {1, 2}) {
    anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, size}, pl::FP32);
    for (std::int64_t r = 0; r < P; ++r)
      for (std::int64_t i = 0; i < size; ++i) x.set_at({r, 0, i}, static_cast<double>(r * 100 + i));
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, size}, pl::FP32);
    anyp::HostTensor lanes = anyp::HostTensor::zeros({P, P, stride}, pl::INT32);
    for (std::int64_t j = 0; j < P * P * stride; ++j) lanes.set(j, 7);  // overwritten with 0s
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    config.check_races = true;
    config.workers = 2;
    const anyp::RunStats stats =
        allreduce_program(cores, rounds).compile({x, y, lanes}, config)(x, y, lanes);
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t i = 0; i < size; ++i) {
        const double want = static_cast<double>(P * i + 100 * P * (P - 1) / 2);
        ASSERT_EQ(y.at({r, 0, i}), want) << "rank " << r << " element " << i;
      }
      for (std::int64_t j = 0; j < P * stride; ++j)  // every lane back to 0
        ASSERT_EQ(lanes.get(r * P * stride + j), 0) << "rank " << r << " cell " << j;
    }
    // Per rank and round: block b waits for P - 1 credits at each of its
    // 1 + share(b) barriers, where share(b) = ceil((chunks - b) / cores)
    // and chunks = max(16 KiB chunks, min(cores, size)); a block other than
    // 0 waits for its launch (and, once, for the end of the run), block 0
    // for the join.
    const std::int64_t tiles = std::max((4 * size + 16383) / 16384, std::min(cores, size));
    std::int64_t barrier_waits = 0;
    for (std::int64_t b = 0; b < cores; ++b)
      barrier_waits += (P - 1) * (1 + (tiles - b + cores - 1) / cores);
    const std::int64_t per_round = barrier_waits + (cores - 1) + 1;
    for (std::int64_t r = 0; r < P; ++r)
      EXPECT_EQ(stats.cost[r].waits, rounds * per_round + (cores - 1)) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(PyptoAndOddP, MultiBlockAllreduce,
                         testing::Values(Case{2, 2, 1, 2}, Case{2, 4, 4127, 6}, Case{4, 2, 1041, 2},
                                         Case{3, 3, 700, 3}, Case{5, 4, 2000, 4},
                                         Case{7, 2, 513, 5}));

// On persistent windows that are never reset, run after run: the signal's
// lanes and the launch cells are all back at 0 when a run ends.
TEST(MultiBlockAllreduceSession, PersistentWindowsRunAfterRun) {
  const std::int64_t P = 3, cores = 3, size = 700, stride = 3;
  anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, size}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t i = 0; i < size; ++i) x.set_at({r, 0, i}, static_cast<double>(r + i));
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, size}, pl::FP32);
  anyp::HostTensor lanes = anyp::HostTensor::zeros({P, P, stride}, pl::INT32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  anyp::CompiledProgram compiled = allreduce_program(cores, 1).compile({x, y, lanes}, config);
  anyp::Session session = compiled.prepare({.persistent_windows = true, .reset_windows = false});
  for (int run = 0; run < 3; ++run) {
    session.run({x, y, lanes});
    for (std::int64_t r = 0; r < P; ++r)
      for (std::int64_t i = 0; i < size; ++i)
        ASSERT_EQ(y.at({r, 0, i}), static_cast<double>(P * i + P * (P - 1) / 2))
            << "run " << run << " rank " << r << " element " << i;
  }
}

// ---- all_to_all_v over core_num blocks ------------------------------------------------

constexpr std::int64_t C = 8;  // elements per destination row
const std::vector<pl::Param> kStageVParams = {
    pl::In("x", pl::Tensor({NR, C}, pl::FP32)),
    pl::InOut("src", pld::DistributedTensor({NR, C}, pl::FP32)),
    pl::InOut("counts", pld::DistributedTensor({NR, 1}, pl::INT32))};
// Rank r sends the first (r + 2d + round) % 9 elements of row d to rank d.
pl::Function stage_v(int round) {
  return pl::jit::incore("stage_v" + std::to_string(round), kStageVParams,
                         [round](pl::Value x, pl::Value src, pl::Value counts) {
                           const pl::Scalar r = pld::rank(pld::get_comm_ctx(src));
                           src = pl::store(pl::load(x, {0, 0}, {NR, C}), {0, 0}, src);
                           pl::range(NR, [&](pl::Scalar d) {
                             pl::write(counts, {d, 0}, (r + 2 * d + round) % (C + 1));
                           });
                         });
}
const auto copy_v = pl::jit::incore(
    "copy_v",
    {pl::Out("y", pl::Tensor({NR, C}, pl::FP32)), pl::Out("n", pl::Tensor({NR, 1}, pl::INT32)),
     pl::In("dst", pld::DistributedTensor({NR, C}, pl::FP32)),
     pl::In("recv_counts", pld::DistributedTensor({NR, 1}, pl::INT32))},
    [](pl::Value y, pl::Value n, pl::Value dst, pl::Value recv_counts) {
      y = pl::store(pl::load(dst, {0, 0}, {NR, C}), {0, 0}, y);
      pl::range(NR, [&](pl::Scalar s) { pl::write(n, {s, 0}, pl::read(recv_counts, {s, 0})); });
    });

class MultiBlockAllToAllV : public testing::TestWithParam<std::tuple<std::int64_t, std::int64_t>> {
};

TEST_P(MultiBlockAllToAllV, TwoRoundsThroughOneSignalDealDestinationsToBlocks) {
  const auto [P, cores] = GetParam();
  const auto copy_on = pl::jit::orchestration_for("copy_v_on_rank", copy_v);
  const pl::HostFunction host = pl::jit::host(
      "multicore_a2av",
      {pl::In("x", pl::Tensor({2, NR, NR, C}, pl::FP32)),
       pl::Out("y", pl::Tensor({2, NR, NR, C}, pl::FP32)),
       pl::Out("n", pl::Tensor({2, NR, NR, 1}, pl::INT32))},
      [cores, &copy_on](pl::Value x, pl::Value y, pl::Value n) {
        auto src = pld::alloc_window_buffer("src", {NR, C}, pl::FP32);
        auto counts = pld::alloc_window_buffer("counts", {NR, 1}, pl::INT32);
        auto dst = pld::alloc_window_buffer("dst", {NR, C}, pl::FP32);
        auto recv = pld::alloc_window_buffer("recv_counts", {NR, 1}, pl::INT32);
        auto sig = pld::alloc_window_buffer("sig", {NR, cores}, pl::INT32);
        for (int round = 0; round < 2; ++round) {
          const auto stage_on =
              pl::jit::orchestration_for("stage_v_on_rank" + std::to_string(round), stage_v(round));
          pl::range(pld::world_size(), [&](pl::Scalar r) {
            stage_on(x[round][r], pld::window(src, {NR, C}, pl::FP32),
                     pld::window(counts, {NR, 1}, pl::INT32), pl::device(r));
          });
          pld::tensor::all_to_all_v(
              pld::window(src, {NR, C}, pl::FP32), pld::window(counts, {NR, 1}, pl::INT32),
              pld::window(dst, {NR, C}, pl::FP32), pld::window(recv, {NR, 1}, pl::INT32),
              pld::window(sig, {NR, cores}, pl::INT32), pld::core_num(cores));
          pl::range(pld::world_size(), [&](pl::Scalar r) {
            copy_on(y[round][r], n[round][r], pld::window(dst, {NR, C}, pl::FP32),
                    pld::window(recv, {NR, 1}, pl::INT32), pl::device(r));
          });
          pld::tensor::barrier();  // the copies are done before round 2's puts
        }
      });
  anyp::InputGenerator gen(13);
  anyp::HostTensor x = gen.uniform({2, P, P, C});
  anyp::HostTensor y = anyp::HostTensor::zeros({2, P, P, C}, pl::FP32);
  anyp::HostTensor n = anyp::HostTensor::zeros({2, P, P, 1}, pl::INT32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  config.workers = 2;
  host.compile({x, y, n}, config)(x, y, n);
  for (std::int64_t round = 0; round < 2; ++round)
    for (std::int64_t r = 0; r < P; ++r)
      for (std::int64_t s = 0; s < P; ++s) {
        const std::int64_t count = (s + 2 * r + round) % (C + 1);
        ASSERT_EQ(n.at_int({round, r, s, 0}), count) << "round " << round << " rank " << r;
        for (std::int64_t j = 0; j < count; ++j)
          ASSERT_EQ(y.at({round, r, s, j}), x.at({round, s, r, j}))
              << "round " << round << " rank " << r << " row " << s << " element " << j;
      }
}

INSTANTIATE_TEST_SUITE_P(PCores, MultiBlockAllToAllV,
                         testing::Combine(testing::Values(2, 3, 4, 5), testing::Values(2, 3, 6)));

// ---- mistakes --------------------------------------------------------------------------

std::string compile_error(std::int64_t cores, std::int64_t stride) {
  const std::int64_t P = 2, size = 16;
  anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, size}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, size}, pl::FP32);
  anyp::HostTensor lanes = anyp::HostTensor::zeros({P, P, stride}, pl::INT32);
  try {
    allreduce_program(cores, 1).compile({x, y, lanes}, anyp::RunConfig::for_world_size(P));
    return "compiled";
  } catch (const anyp::CompileError& e) {
    return e.what();
  }
}

TEST(MultiBlockCollectiveMistakes, ASignalNarrowerThanCoreNumIsRefused) {
  const std::string error = compile_error(4, 2);
  EXPECT_NE(error.find("the Mesh signal of a collective over core_num = 4 blocks must be [P, S] "
                       "INT32 with S >= 4 (a lane per block), which is [2, >= 4] at P = 2, got "
                       "[2, 2]"),
            std::string::npos)
      << error;
  const std::string zero = compile_error(0, 2);
  EXPECT_NE(zero.find("core_num 0: a collective runs on 1 to 256 blocks"), std::string::npos)
      << zero;
}

// The blocks of a collective run at once: no more than the platform's
// vector cores (a2a3sim's model: 48).
TEST(MultiBlockCollectiveMistakes, MoreBlocksThanVectorCoresAreRefused) {
  EXPECT_EQ(compile_error(48, 48), "compiled");
  const std::string error = compile_error(49, 49);
  EXPECT_NE(error.find("op pld.tensor.allreduce"), std::string::npos) << error;
  EXPECT_NE(error.find(": core_num = 49 is more than a2a3sim's 48 vector cores per device (a "
                       "collective's blocks run at once: block b of every rank waits for block b "
                       "of its peers); use core_num <= 48"),
            std::string::npos)
      << error;
}

TEST(MultiBlockCollectiveMistakes, CoreNumIsAHostLevelForm) {
  try {
    const auto k =
        pl::jit::incore("in_kernel",
                        {pl::InOut("data", pld::DistributedTensor({1, 8}, pl::FP32)),
                         pl::InOut("signal", pld::DistributedTensor({NR, 2}, pl::INT32))},
                        [](pl::Value data, pl::Value signal) {
                          pld::tensor::allreduce(data, signal, pld::core_num(2));
                        });
    FAIL() << "traced: " << k.ir_text();
  } catch (const anyp::CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("pld.tensor.allreduce with core_num is a host-level form"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
