// run_time_valid_test.cpp — a valid_shape known only at run time (issue 24,
// section D; PyPTO's `valid = pl.min(TILE, n - p0)`): a row of N elements
// walked in tiles of 8, the last one ragged, loaded with the run-time
// extent, computed and stored without a valid_shape of its own (the tile
// carries it), for N = 1 ... 20 with the tail at every position, at
// P = 2, 3, 5, race-checked; an extent variable assigned again after the
// load (PyPTO's `valid = pl.min(...)` in two loops of one kernel: the store
// keeps the load's value); the printed IR; and the errors by their exact
// text (an extent outside [1, the tile's] when the op runs, a floating
// extent).
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>

#include "support/source_locations.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");
const pl::Dim N = pl::dynamic("N");
constexpr std::int64_t T = 8;  // the tile width

// y = x * 2 + 1 over [1, N], tile by tile: every tile but the last is whole.
pl::HostFunction ragged_walk() {
  const auto kernel = pl::jit::incore(
      "walk",
      {pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({1, N}, pl::FP32))},
      [](pl::Value x, pl::Value y) {
        pl::range(0, N, T, [&](pl::Scalar p0) {
          const pl::Scalar valid = pl::min(T, N - p0);
          const pl::Tile t = pl::load(x, {0, p0}, {1, T}, {1, valid});
          const pl::Tile u = pl::add(pl::mul(t, 2), 1);
          y = pl::store(u, {0, p0}, y);  // writes only the valid part: u carries it
        });
      });
  const auto orch = pl::jit::orchestration_for("orch", kernel);
  return pl::jit::host("host",
                       {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, N}, pl::FP32))},
                       [orch](pl::Value x, pl::Value y) {
                         pl::range(pld::world_size(),
                                   [&](pl::Scalar r) { orch(x[r], y[r], pl::device(r)); });
                       });
}

class RunTimeValid : public testing::TestWithParam<std::int64_t> {};

TEST_P(RunTimeValid, ARaggedTailAtEveryLength) {
  const std::int64_t P = GetParam();
  const pl::HostFunction host = ragged_walk();
  for (std::int64_t n = 1; n <= 20; ++n) {
    anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, n}, pl::FP32);
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, n}, pl::FP32);
    for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i) - 9);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    config.check_races = true;
    host.compile({x, y}, config)(x, y);
    for (std::int64_t i = 0; i < x.numel(); ++i)
      ASSERT_EQ(y.get(i), 2 * x.get(i) + 1) << "n " << n << " element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(P, RunTimeValid, testing::Values(2, 3, 5));

TEST(RunTimeValidIr, TheStoreCarriesTheLoadsExtents) {
  const auto kernel = pl::jit::incore(
      "walk",
      {pl::In("x", pl::Tensor({1, 16}, pl::FP32)), pl::Out("y", pl::Tensor({1, 16}, pl::FP32))},
      [](pl::Value x, pl::Value y) {
        const pl::Scalar valid = pl::min(T, pl::Scalar(5));
        y = pl::store(pl::load(x, {0, 0}, {1, T}, {1, valid}), {0, 8}, y);
      });
  const std::string ir = anyp_test::without_locations(kernel.ir_text());
  EXPECT_NE(ir.find("= pl.load %x[0, 0] [1, 8] valid=[1, %"), std::string::npos) << ir;
  EXPECT_NE(ir.find("pl.store %"), std::string::npos) << ir;
  EXPECT_NE(ir.find(" -> %y[0, 8] valid=[1, %"), std::string::npos) << ir;
}

// PyPTO's allreduce-intrinsic kernel: `valid = pl.min(C, n - col)` in a
// stage-in loop and again in a stage-out loop, each store inheriting its
// load's region; and the name assigned again between a load and its store.
// Each store writes the region its load had, for n = 1 ... 20.
TEST_P(RunTimeValid, AnExtentAssignedAgainKeepsTheLoadsValue) {
  const std::int64_t P = GetParam();
  const auto kernel = pl::jit::incore(
      "two_loops",
      {pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({1, N}, pl::FP32)),
       pl::Out("z", pl::Tensor({1, N}, pl::FP32))},
      [](pl::Value x, pl::Value y, pl::Value z) {
        pl::Scalar valid = pl::min(T, N);
        pl::range(0, N, T, [&](pl::Scalar p0) {
          valid = pl::min(T, N - p0);
          y = pl::store(pl::load(x, {0, p0}, {1, T}, {1, valid}), {0, p0}, y);
        });
        pl::range(0, N, T, [&](pl::Scalar p0) {
          valid = pl::min(T, N - p0);
          const pl::Tile t = pl::add(pl::load(x, {0, p0}, {1, T}, {1, valid}), 1);
          valid = pl::Scalar(1);  // the store still writes the load's region
          z = pl::store(t, {0, p0}, z);
        });
      });
  const auto orch = pl::jit::orchestration_for("orch", kernel);
  const auto host = pl::jit::host(
      "host",
      {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, 1, N}, pl::FP32)),
       pl::Out("z", pl::Tensor({NR, 1, N}, pl::FP32))},
      [orch](pl::Value x, pl::Value y, pl::Value z) {
        pl::range(pld::world_size(), [&](pl::Scalar r) { orch(x[r], y[r], z[r], pl::device(r)); });
      });
  for (std::int64_t n = 1; n <= 20; ++n) {
    anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, n}, pl::FP32);
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, n}, pl::FP32), z = y.clone();
    for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i) - 9);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    config.check_races = true;
    host.compile({x, y, z}, config)(x, y, z);
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      ASSERT_EQ(y.get(i), x.get(i)) << "n " << n << " element " << i;
      ASSERT_EQ(z.get(i), x.get(i) + 1) << "n " << n << " element " << i;
    }
  }
}

std::string failure(const pl::Function& kernel, std::int64_t n) {
  const auto orch = pl::jit::orchestration_for("orch", kernel);
  const auto host = pl::jit::host(
      "host",
      {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, 1, N}, pl::FP32))},
      [orch](pl::Value x, pl::Value y) {
        pl::range(pld::world_size(), [&](pl::Scalar r) { orch(x[r], y[r], pl::device(r)); });
      });
  anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, n}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, n}, pl::FP32);
  // Both ranks make the mistake; one worker runs rank 0 first, so the
  // report names it every time (with two, whichever fails first is named).
  anyp::RunConfig config = anyp::RunConfig::for_world_size(2);
  config.workers = 1;
  try {
    host.compile({x, y}, config)(x, y);
    return "ran without error";
  } catch (const anyp::Error& e) {
    return anyp_test::without_locations(e.what());
  }
}

pl::Function kernel_with(const std::function<void(pl::Value&, pl::Value&)>& body) {
  return pl::jit::incore(
      "k", {pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({1, N}, pl::FP32))},
      [body](pl::Value x, pl::Value y) { body(x, y); });
}

TEST(RunTimeValidErrors, EachMistakeByItsMessage) {
  // N - 0 = 10 > 8: the extent is larger than the tile.
  EXPECT_EQ(failure(kernel_with([](pl::Value& x, pl::Value& y) {
                      const pl::Scalar valid = pl::min(N, 100);
                      y = pl::store(pl::load(x, {0, 0}, {1, T}, {1, valid}), {0, 0}, y);
                    }),
                    10),
            "run error: rank 0 (device 0), function 'k', op pl.load: valid_shape [1, 10] is "
            "outside the tile [1, 8] in dim 1: each extent is in [1, the tile's]");
  EXPECT_EQ(failure(kernel_with([](pl::Value& x, pl::Value& y) {
                      const pl::Scalar valid = N - 8;
                      y = pl::store(pl::load(x, {0, 0}, {1, T}), {0, 0}, y, {1, valid});
                    }),
                    8),
            "run error: rank 0 (device 0), function 'k', op pl.store: valid_shape [1, 0] is "
            "outside the tile [1, 8] in dim 1: each extent is in [1, the tile's]");
  EXPECT_EQ(failure(kernel_with([](pl::Value& x, pl::Value& y) {
                      const pl::Scalar half = pl::cast(N, pl::FP32) * 0.5;
                      y = pl::store(pl::load(x, {0, 0}, {1, T}, {1, half}), {0, 0}, y);
                    }),
                    8),
            "compile error: function 'k' (incore): pl.load: a valid_shape extent is Scalar FP32; "
            "extents are integers (pl::cast it)");
}

}  // namespace
