// partial_tiles_test.cpp — partial tiles (issue 12, item 6; PyPTO's
// valid_shape): a load reads only the valid region into the top-left corner
// of an aligned tile and pads with 0, a store writes only that corner. A
// [1, 17] FP32 allreduce needs no staging trick (P = 2, 3, 5, 8, race-
// checked), a ragged [5, 20] block round-trips through an [8, 24] tile, and
// the mistakes are named.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/tile_structured.hpp"
#include "support/source_locations.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t L = 17;  // a ragged row: 68 B, not a whole number of 32-byte units

pl::HostFunction ragged_allreduce() {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, L}, pl::FP32)), pl::Out("y", pl::Tensor({1, L}, pl::FP32)),
      pl::InOut("data", pld::DistributedTensor({1, L}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};
  const auto kernel = pl::jit::incore(
      "ragged_allreduce", params, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        data = pl::store(pl::load(x, {0, 0}, {1, 24}, {1, L}), {0, 0}, data, {1, L});
        data = pld::tensor::allreduce(data, signal);
        y = pl::store(pl::load(data, {0, 0}, {1, 24}, {1, L}), {0, 0}, y, {1, L});
      });
  const auto per_rank = pl::jit::orchestration_for("per_rank", kernel);
  return pl::jit::host("host",
                       {pl::In("x", pl::Tensor({NR, 1, L}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, L}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto data = pld::alloc_window_buffer("data", {1, L}, pl::FP32);
                         auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], pld::window(data, {1, L}, pl::FP32),
                                    pld::window(signal, {NR, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

class PartialTiles : public testing::TestWithParam<std::int64_t> {};

TEST_P(PartialTiles, ARaggedRowAllreducesWithoutStaging) {
  const std::int64_t P = GetParam();
  anyp::InputGenerator gen(17);
  anyp::HostTensor x = gen.uniform({P, 1, L});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, L}, pl::FP32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  ragged_allreduce().compile({x, y}, config)(x, y);
  for (std::int64_t j = 0; j < L; ++j) {
    double sum = 0;
    for (std::int64_t k = 0; k < P; ++k) sum += x.at({k, 0, j});
    for (std::int64_t r = 0; r < P; ++r)
      EXPECT_NEAR(y.at({r, 0, j}), sum, 1e-5 + 1e-5 * sum) << "P=" << P << " r=" << r;
  }
}

INSTANTIATE_TEST_SUITE_P(P, PartialTiles, testing::Values(2, 3, 5, 8));

// x [5, 20] -> an [8, 24] tile (zero padded) -> a store of the partial tile
// (its valid [5, 20] part: the rest of `full` keeps its -7), a store with the
// whole tile as its valid_shape (the padding shows), and 2x + 1 stored back
// (a tile computed elementwise from a partial one is partial too).
TEST(PartialTiles2D, ARaggedBlockRoundTripsAndThePaddingIsZero) {
  const auto kernel = pl::jit::incore(
      "ragged_block",
      {pl::In("x", pl::Tensor({5, 20}, pl::FP32)), pl::InOut("full", pl::Tensor({8, 24}, pl::FP32)),
       pl::Out("padded", pl::Tensor({8, 24}, pl::FP32)),
       pl::Out("back", pl::Tensor({5, 20}, pl::FP32))},
      [](pl::Value x, pl::Value full, pl::Value padded, pl::Value back) {
        const pl::Tile t = pl::load(x, {0, 0}, {8, 24}, {5, 20});
        full = pl::store(t, {0, 0}, full);
        padded = pl::store(t, {0, 0}, padded, {8, 24});
        back = pl::store(pl::add(pl::mul(t, 2.0), 1.0), {0, 0}, back);
      });
  const auto per_rank = pl::jit::orchestration_for("per_rank", kernel);
  const auto host =
      pl::jit::host("host",
                    {pl::In("x", pl::Tensor({NR, 5, 20}, pl::FP32)),
                     pl::InOut("full", pl::Tensor({NR, 8, 24}, pl::FP32)),
                     pl::Out("padded", pl::Tensor({NR, 8, 24}, pl::FP32)),
                     pl::Out("back", pl::Tensor({NR, 5, 20}, pl::FP32))},
                    [per_rank](pl::Value x, pl::Value full, pl::Value padded, pl::Value back) {
                      pl::range(pld::world_size(), [&](pl::Scalar r) {
                        per_rank(x[r], full[r], padded[r], back[r], pl::device(r));
                      });
                    });
  const std::int64_t P = 3;
  anyp::HostTensor x = anyp::HostTensor::arange({P, 5, 20}, pl::FP32);
  anyp::HostTensor full = anyp::HostTensor::zeros({P, 8, 24}, pl::FP32);
  anyp::HostTensor padded = anyp::HostTensor::zeros({P, 8, 24}, pl::FP32);
  anyp::HostTensor back = anyp::HostTensor::zeros({P, 5, 20}, pl::FP32);
  for (std::int64_t i = 0; i < full.numel(); ++i) full.set(i, -7);      // kept outside [5, 20]
  for (std::int64_t i = 0; i < padded.numel(); ++i) padded.set(i, -7);  // overwritten
  host.compile({x, full, padded, back}, anyp::RunConfig::for_world_size(P))(x, full, padded, back);
  for (std::int64_t r = 0; r < P; ++r) {
    for (std::int64_t i = 0; i < 8; ++i)
      for (std::int64_t j = 0; j < 24; ++j) {
        const bool valid = i < 5 && j < 20;
        EXPECT_EQ(full.at({r, i, j}), valid ? x.at({r, i, j}) : -7.0) << r << " " << i << " " << j;
        EXPECT_EQ(padded.at({r, i, j}), valid ? x.at({r, i, j}) : 0.0) << r << " " << i << " " << j;
      }
    for (std::int64_t i = 0; i < 5; ++i)
      for (std::int64_t j = 0; j < 20; ++j) EXPECT_EQ(back.at({r, i, j}), 2 * x.at({r, i, j}) + 1);
  }
}

std::string compile_error(const std::function<void(pl::Value, pl::Value)>& body) {
  const auto kernel = pl::jit::incore(
      "k", {pl::In("x", pl::Tensor({1, L}, pl::FP32)), pl::Out("y", pl::Tensor({1, L}, pl::FP32))},
      body);
  const auto per_rank = pl::jit::orchestration_for("per_rank", kernel);
  const auto host = pl::jit::host(
      "host",
      {pl::In("x", pl::Tensor({NR, 1, L}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, 1, L}, pl::FP32))},
      [per_rank](pl::Value x, pl::Value y) {
        pl::range(pld::world_size(), [&](pl::Scalar r) { per_rank(x[r], y[r], pl::device(r)); });
      });
  anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, L}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, L}, pl::FP32);
  try {
    host.compile({x, y}, anyp::RunConfig::for_world_size(2));
  } catch (const anyp::CompileError& e) {
    return anyp_test::without_locations(e.what());
  }
  return "compiled without error";
}

TEST(PartialTilesErrors, TheMistakesAreNamed) {
  EXPECT_EQ(compile_error([](pl::Value x, pl::Value) {
              pl::load(x, {0, 0}, {1, 24}, {1, 25});
            }),
            "compile error: function 'k' (incore), op pl.load: valid_shape [1, 25] is larger than "
            "the tile [1, 24] in dim 1");
  EXPECT_EQ(compile_error([](pl::Value x, pl::Value) {
              pl::load(x, {0, 0}, {1, 24}, {17});
            }),
            "compile error: function 'k' (incore): pl.load: valid_shape has 1 extent, but the "
            "tile has 2 dims");
  EXPECT_EQ(compile_error([](pl::Value x, pl::Value) {
              pl::load(x, {0, 2}, {1, 24}, {1, L});
            }),
            "compile error: function 'k' (incore), op pl.load: region out of bounds in dim 1: "
            "offset 2 + extent 17 exceeds the source 'x' [1, 17]");
  // The tile itself still follows the tile rule.
  EXPECT_EQ(compile_error([](pl::Value x, pl::Value) {
              pl::load(x, {0, 0}, {1, L}, {1, L});
            }),
            "compile error: function 'k' (incore), op pl.load: a tile row of 17 x FP32 = 68 B is "
            "not a whole number of 32-byte units (tile [1, 17]); load a tile of a multiple of 8 "
            "elements per row with a valid_shape of the part you need (only that part is read), "
            "or pl::read one element");
  // A store of a partial tile writes its valid part (PyPTO's tiles carry
  // their valid_shape): the [1, 24] tile with [1, 17] valid fits y [1, 17].
  EXPECT_EQ(compile_error([](pl::Value x, pl::Value y) {
              y = pl::store(pl::load(x, {0, 0}, {1, 24}, {1, L}), {0, 0}, y);
            }),
            "compiled without error");
  // A variable redefined in straight-line code keeps the region its
  // current value has: computed from the partial tile, it is partial.
  EXPECT_EQ(compile_error([](pl::Value x, pl::Value y) {
              pl::Tile t = pl::load(x, {0, 0}, {1, 24}, {1, L});
              t = pl::add(t, 1.0);
              y = pl::store(t, {0, 0}, y);
            }),
            "compiled without error");
  // Redefined in a branch, which value reaches the store depends on the
  // run: the whole tile is stored.
  EXPECT_EQ(compile_error([](pl::Value x, pl::Value y) {
              pl::Tile t = pl::load(x, {0, 0}, {1, 24}, {1, L});
              pl::if_(pl::Scalar(1) == 1, [&] { t = pl::add(t, 1.0); });
              y = pl::store(t, {0, 0}, y);
            }),
            "compile error: function 'k' (incore), op pl.store: the region [1, 24] is larger than "
            "the target 'y' [1, 17] in dim 1");
}

// The padding is written, not inherited: tile storage is not zeroed when it
// grows (runtime/rank_vm.hpp), so embed into a dirty buffer.
TEST(PartialTilesEmbed, PaddingIsZeroWhateverTheStorageHeld) {
  const std::vector<std::int64_t> shape = {3, 8}, part = {2, 5};
  std::vector<float> in(10), out(24, -1.0f);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i + 1);
  anyp::runtime::tile_embed(shape, sizeof(float), part,
                            reinterpret_cast<const std::byte*>(in.data()),
                            reinterpret_cast<std::byte*>(out.data()));
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 8; ++j)
      EXPECT_EQ(out[static_cast<std::size_t>(i * 8 + j)],
                i < 2 && j < 5 ? static_cast<float>(i * 5 + j + 1) : 0.0f)
          << i << " " << j;
}

}  // namespace
