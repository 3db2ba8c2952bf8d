// inferred_domains_test.cpp — comm domains inferred from the dispatched
// ranks (issue 24, section D; PyPTO's sub-communicators): window buffers
// whose views reach ranks 1 ... P - 1 only are those ranks' own window, so
// pld::rank / pld::nranks of their views are the index in and the size of
// that set, a ring shift wraps inside it, and a builtin allreduce sums over
// it with a [G, 1] signal (G = P - 1), while rank 0 runs something else; at
// P = 3 ... 9, race-checked; and the inferred domain named in a
// diagnostic (a signal of the world's size).
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>

#include "support/source_locations.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t C = 8;

// Ranks 1 ... P - 1: y = (sum of x over them, x of the next one in the set,
// the rank's index in the set). Rank 0: y = x.
pl::HostFunction subset_program() {
  const auto on_subset = pl::jit::incore(
      "on_subset",
      {pl::In("x", pl::Tensor({3, C}, pl::FP32)), pl::Out("y", pl::Tensor({3, C}, pl::FP32)),
       pl::InOut("data", pld::DistributedTensor({1, C}, pl::FP32)),
       pl::InOut("next", pld::DistributedTensor({1, C}, pl::FP32)),
       pl::InOut("signal", pld::DistributedTensor({NR - 1, 1}, pl::INT32))},
      [](pl::Value x, pl::Value y, pl::Value data, pl::Value next, pl::Value signal) {
        const auto ctx = pld::get_comm_ctx(data);
        const pl::Scalar me = pld::rank(ctx);
        const pl::Scalar n = pld::nranks(ctx);
        const pl::Tile row = pl::load(x, {0, 0}, {1, C});
        data = pl::store(row, {0, 0}, data);
        pld::tile::remote_store(row, next, (me + n - 1) % n, {0, 0});  // to the previous one
        data = pld::tensor::allreduce(data, signal);  // also orders the stores above
        y = pl::store(pl::load(data, {0, 0}, {1, C}), {0, 0}, y);
        y = pl::store(pl::load(next, {0, 0}, {1, C}), {1, 0}, y);
        y = pl::store(pl::full({1, C}, pl::cast(me, pl::FP32), pl::FP32), {2, 0}, y);
      });
  const auto copy = pl::jit::incore(
      "copy",
      {pl::In("x", pl::Tensor({3, C}, pl::FP32)), pl::Out("y", pl::Tensor({3, C}, pl::FP32))},
      [](pl::Value x, pl::Value y) {
        for (std::int64_t i = 0; i < 3; ++i) y = pl::store(pl::load(x, {i, 0}, {1, C}), {i, 0}, y);
      });
  const auto subset_orch = pl::jit::orchestration_for("subset_orch", on_subset);
  const auto copy_orch = pl::jit::orchestration_for("copy_orch", copy);
  return pl::jit::host("host",
                       {pl::In("x", pl::Tensor({NR, 3, C}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 3, C}, pl::FP32))},
                       [=](pl::Value x, pl::Value y) {
                         auto data = pld::alloc_window_buffer("data", {1, C}, pl::FP32);
                         auto next = pld::alloc_window_buffer("next", {1, C}, pl::FP32);
                         auto signal = pld::alloc_window_buffer("signal", {NR - 1, 1}, pl::INT32);
                         copy_orch(x[0], y[0], pl::device(0));
                         pl::range(1, pld::world_size(), [&](pl::Scalar r) {
                           subset_orch(x[r], y[r], pld::window(data, {1, C}, pl::FP32),
                                       pld::window(next, {1, C}, pl::FP32),
                                       pld::window(signal, {NR - 1, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

class InferredDomains : public testing::TestWithParam<std::int64_t> {};

TEST_P(InferredDomains, ASubsetOfRanksIsItsOwnCommunicator) {
  const std::int64_t P = GetParam();
  anyp::HostTensor x = anyp::HostTensor::zeros({P, 3, C}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 3, C}, pl::FP32);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i % 29));
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  subset_program().compile({x, y}, config)(x, y);
  for (std::int64_t c = 0; c < C; ++c) {
    for (std::int64_t i = 0; i < 3; ++i) ASSERT_EQ(y.at({0, i, c}), x.at({0, i, c}));
    double sum = 0;
    for (std::int64_t r = 1; r < P; ++r) sum += x.at({r, 0, c});
    for (std::int64_t r = 1; r < P; ++r) {
      const std::int64_t g = r - 1, n = P - 1;
      const std::int64_t from = 1 + (g + 1) % n;  // the next one in the set stores into r
      ASSERT_EQ(y.at({r, 0, c}), sum) << r;
      ASSERT_EQ(y.at({r, 1, c}), x.at({from, 0, c})) << r;
      ASSERT_EQ(y.at({r, 2, c}), static_cast<double>(g)) << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(P, InferredDomains, testing::Values(3, 4, 5, 8, 9));

TEST(InferredDomainErrors, ASignalOfTheWorldsSizeNamesTheInferredDomain) {
  // The same program with an [NR, 1] signal: the set has P - 1 ranks.
  const auto k = pl::jit::incore(
      "k",
      {pl::InOut("data", pld::DistributedTensor({1, C}, pl::FP32)),
       pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
      [](pl::Value data, pl::Value signal) { data = pld::tensor::allreduce(data, signal); });
  const auto orch = pl::jit::orchestration_for("orch", k);
  const auto copy =
      pl::jit::orchestration("idle", {pl::In("x", pl::Tensor({1, C}, pl::FP32))}, [](pl::Value) {});
  const auto host =
      pl::jit::host("host", {pl::In("x", pl::Tensor({NR, 1, C}, pl::FP32))}, [=](pl::Value x) {
        auto data = pld::alloc_window_buffer("data", {1, C}, pl::FP32);
        auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
        copy(x[0], pl::device(0));
        pl::range(1, pld::world_size(), [&](pl::Scalar r) {
          orch(pld::window(data, {1, C}, pl::FP32), pld::window(signal, {NR, 1}, pl::INT32),
               pl::device(r));
        });
      });
  anyp::HostTensor x = anyp::HostTensor::zeros({4, 1, C}, pl::FP32);
  try {
    host.compile({x}, anyp::RunConfig::for_world_size(4));
    FAIL() << "compiled";
  } catch (const anyp::CompileError& e) {
    EXPECT_EQ(anyp_test::without_locations(e.what()),
              "compile error: function 'k' (incore), op pld.tensor.allreduce: the Mesh signal "
              "must be [G, 1] INT32, which is [3, 1] at G = 3 (the group size of domain "
              "'ranks {1, 2, 3}'), got [4, 1]");
  }
}

}  // namespace
