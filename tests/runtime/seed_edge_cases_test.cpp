// seed_edge_cases_test.cpp — the seed's table of edge cases (its step 07)
// in C++, row 3 (rows 1 and 2 are pitfalls 11 and 06 of the example
// suite): the handshake notifies the rank it reads instead of the rank that
// reads it. At P = 2 the two are one rank and the ring is right; from P = 3
// on, the race checker reports the unordered get and store, naming both
// ops and the missing wait. The fix (notify the left rank) passes at
// P = 2 ... 8 under the race checker. The Python twin is
// tests/python/test_seed_edge_cases.py.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>

#include "support/source_locations.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t SIZE = 16;

using pld::NotifyOp;
using pld::WaitCmp;

// Rank r stages x into src, notifies one neighbour, waits for
// one notify, gets the right rank's src and stores it in y.
pl::HostFunction ring(const char* name, bool notify_left) {
  const pl::Function kernel = pl::jit::incore(
      name,
      {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
       pl::InOut("src", pld::DistributedTensor({1, SIZE}, pl::FP32)),
       pl::InOut("dst", pld::DistributedTensor({1, SIZE}, pl::FP32)),
       pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))},
      [notify_left](pl::Value x, pl::Value y, pl::Value src, pl::Value dst, pl::Value signal) {
        auto ctx = pld::get_comm_ctx(src);
        const pl::Scalar me = pld::rank(ctx), n = pld::nranks(ctx);
        src = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, src);
        // The fix tells the left rank (its reader); row 3 tells the right
        // rank (the one it reads).
        const pl::Scalar peer = notify_left ? (me + n - 1) % n : (me + 1) % n;
        pld::system::notify(signal, peer, {0, 0}, 1, NotifyOp::AtomicAdd);
        pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);
        pld::tensor::get(dst, (me + 1) % n, src);
        y = pl::store(pl::load(dst, {0, 0}, {1, SIZE}), {0, 0}, y);
      });
  const pl::Function orch = pl::jit::orchestration_for(std::string(name) + "_orch", kernel);
  return pl::jit::host(std::string(name) + "_host",
                       {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                       [orch](pl::Value x, pl::Value y) {
                         auto src = pld::alloc_window_buffer("src", {1, SIZE}, pl::FP32);
                         auto dst = pld::alloc_window_buffer("dst", {1, SIZE}, pl::FP32);
                         auto signal = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           orch(x[r], y[r], pld::window(src, {1, SIZE}, pl::FP32),
                                pld::window(dst, {1, SIZE}, pl::FP32),
                                pld::window(signal, {1, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

// Runs `host` race-checked at P; "" when it ran and y is x rolled by one
// rank, else the error's text (without source locations).
std::string run_ring(const pl::HostFunction& host, std::int64_t P) {
  anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i));
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  try {
    host.compile({x, y}, config)(x, y);
  } catch (const anyp::Error& e) {
    return anyp_test::without_locations(e.what());
  }
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t j = 0; j < SIZE; ++j)
      if (y.at({r, 0, j}) != x.at({(r + 1) % P, 0, j}))
        return "rank " + std::to_string(r) + " element " + std::to_string(j) + " is wrong";
  return "";
}

class SeedEdgeCases : public testing::TestWithParam<std::int64_t> {};

TEST_P(SeedEdgeCases, TheFixNotifiesTheReaderAndPasses) {
  EXPECT_EQ(run_ring(ring("get_from_right", true), GetParam()), "");
}

TEST_P(SeedEdgeCases, Row3NotifyingTheRankItReadsIsARaceFromThreeRanksOn) {
  const std::int64_t P = GetParam();
  const std::string outcome = run_ring(ring("notifies_the_rank_it_reads", false), P);
  if (P == 2) {  // left and right are one rank: the ring is right
    EXPECT_EQ(outcome, "");
    return;
  }
  EXPECT_EQ(outcome.rfind("race report: ", 0), 0u) << outcome;
  EXPECT_NE(outcome.find("function 'notifies_the_rank_it_reads', op pld.tensor.get"),
            std::string::npos)
      << outcome;
  EXPECT_NE(outcome.find("function 'notifies_the_rank_it_reads', op pl.store"), std::string::npos)
      << outcome;
  EXPECT_NE(outcome.find("missing: no wait on rank"), std::string::npos) << outcome;
}

INSTANTIATE_TEST_SUITE_P(P, SeedEdgeCases, testing::Values(2, 3, 4, 5, 8));

}  // namespace
