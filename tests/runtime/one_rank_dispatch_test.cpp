// one_rank_dispatch_test.cpp — PyPTO's one-device form: a host that calls
// its orchestration function without pl::device(r) runs it on rank 0 of a
// one-rank run (P = 1); at P > 1 the rank matters and the dispatch is
// refused, naming P.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <string>

#include "support/source_locations.hpp"

namespace {

constexpr std::int64_t N = 64;

const auto add_one = pl::jit::incore(
    "add_one",
    {pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({1, N}, pl::FP32))},
    [](pl::Value x, pl::Value y) {
      y = pl::store(pl::add(pl::load(x, {0, 0}, {1, N}), 1.0), {0, 0}, y);
    });
const auto orch = pl::jit::orchestration_for("orch", add_one);
const pl::HostFunction host = pl::jit::host(
    "host", {pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({1, N}, pl::FP32))},
    [](pl::Value x, pl::Value y) { orch(x, y); });

TEST(OneRankDispatch, ADispatchWithoutADeviceRunsOnRankZeroAtPOne) {
  anyp::InputGenerator gen(3);
  const anyp::HostTensor x = gen.uniform({1, N});
  const anyp::HostTensor y = anyp::HostTensor::zeros({1, N}, pl::FP32);
  host.compile({x, y}, anyp::RunConfig::for_world_size(1))(x, y);
  for (std::int64_t j = 0; j < N; ++j) {
    EXPECT_EQ(y.at({0, j}), static_cast<float>(x.at({0, j}) + 1.0f)) << j;
  }
}

TEST(OneRankDispatch, IsRefusedWhenTheRankMatters) {
  const anyp::HostTensor x = anyp::HostTensor::zeros({1, N}, pl::FP32);
  const anyp::HostTensor y = anyp::HostTensor::zeros({1, N}, pl::FP32);
  std::string error = "compiled without error";
  try {
    host.compile({x, y}, anyp::RunConfig::for_world_size(3));
  } catch (const anyp::CompileError& e) {
    error = anyp_test::without_locations(e.what());
  }
  EXPECT_EQ(error,
            "compile error: function 'host' (host): the dispatch of 'orch' has no pl::device(r): "
            "the host runs orchestration functions on a device (only a one-rank run may leave it "
            "out, and runs it on rank 0; here P = 3)");
}

}  // namespace
