// pypto_forms_test.cpp — forms PyPTO's own distributed tests write, run as
// written: size-1 data moved in a column tile ([8, 1] FP32 or [16, 1] FP16)
// with valid_shape [1, 1], by pld::tile::remote_load from a peer's [1, 1]
// window (tests/st/distributed/test_l3_remote_load.py's size-1 case) and by
// pl::load from a [1, 1] host tensor, then stored whole into a column
// output — only the valid element moves, the rest of the output keeps what
// it held; and the ring allreduce on PyPTO's host signal [2(n - 1) + 1, n].
// Exact values at P = 2 ... 8.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>

namespace {

const pl::Dim NR = pl::dynamic("NR");

// Rank r publishes its value in a [1, 1] window; every rank pulls its right
// neighbour's into a column tile [rows, 1] with valid_shape [1, 1] and stores
// the tile into out [rows, 1].
pl::HostFunction remote_column_program(pl::DType dtype, std::int64_t rows) {
  const pl::Function k = pl::jit::incore(
      "remote_column",
      {pl::In("x", pl::Tensor({1, 1}, dtype)),
       pl::InOut("data", pld::DistributedTensor({1, 1}, dtype)),
       pl::Out("out", pl::Tensor({rows, 1}, dtype)),
       pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
      [rows](pl::Value x, pl::Value data, pl::Value out, pl::Value signal) {
        auto ctx = pld::get_comm_ctx(data);
        pl::Scalar right = (pld::rank(ctx) + 1) % pld::nranks(ctx);
        pl::write(data, {0, 0}, pl::read(x, {0, 0}));
        signal = pld::tensor::barrier(signal);
        const pl::Tile tile = pld::tile::remote_load(data, right, {0, 0}, {rows, 1}, {1, 1});
        out = pl::store(tile, {0, 0}, out);
      });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", k);
  return pl::jit::host("remote_column_host",
                       {pl::In("x", pl::Tensor({NR, 1, 1}, dtype)),
                        pl::InOut("out", pl::Tensor({NR, rows, 1}, dtype))},
                       [per_rank, dtype](pl::Value x, pl::Value out) {
                         auto data_buf = pld::alloc_window_buffer("data", {1, 1}, dtype);
                         auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r], outr = out[r];
                           per_rank(xr, pld::window(data_buf, {1, 1}, dtype), outr,
                                    pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

class PyptoForms : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(PyptoForms, SizeOneDataInAColumnTileWithValidShape) {
  const std::int64_t P = GetParam();
  for (const auto& [dtype, rows] : {std::pair{pl::FP32, 8}, std::pair{pl::FP16, 16}}) {
    anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, 1}, dtype);
    for (std::int64_t r = 0; r < P; ++r) x.set(r, 10.0 * static_cast<double>(r + 1));
    anyp::HostTensor out = anyp::HostTensor::zeros({P, rows, 1}, dtype);
    for (std::int64_t i = 0; i < out.numel(); ++i) out.set(i, -3.0);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    config.check_races = true;
    remote_column_program(dtype, rows).compile({x, out}, config)(x, out);
    for (std::int64_t r = 0; r < P; ++r) {
      EXPECT_EQ(out.at({r, 0, 0}), 10.0 * static_cast<double>((r + 1) % P + 1)) << "rank " << r;
      for (std::int64_t i = 1; i < rows; ++i)
        EXPECT_EQ(out.at({r, i, 0}), -3.0) << "only the valid element moves: rank " << r;
    }
  }
}

// pl::load of a [8, 1] column with valid_shape [1, 1] from a [1, 1] tensor,
// times 2, stored into a [1, 1] output: the valid part carries through the
// elementwise op to the store.
TEST_P(PyptoForms, ALocalColumnLoadOfOneElement) {
  const std::int64_t P = GetParam();
  const pl::Function k = pl::jit::incore(
      "local_column",
      {pl::In("x", pl::Tensor({1, 1}, pl::FP32)), pl::Out("y", pl::Tensor({1, 1}, pl::FP32))},
      [](pl::Value x, pl::Value y) {
        const pl::Tile t = pl::load(x, {0, 0}, {8, 1}, {1, 1});
        y = pl::store(pl::mul(t, 2.0), {0, 0}, y);
      });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", k);
  const pl::HostFunction host = pl::jit::host("local_column_host",
                                              {pl::In("x", pl::Tensor({NR, 1, 1}, pl::FP32)),
                                               pl::Out("y", pl::Tensor({NR, 1, 1}, pl::FP32))},
                                              [per_rank](pl::Value x, pl::Value y) {
                                                pl::range(pld::world_size(), [&](pl::Scalar r) {
                                                  pl::Value xr = x[r], yr = y[r];
                                                  per_rank(xr, yr, pl::device(r));
                                                });
                                              });
  anyp::HostTensor x = anyp::HostTensor::arange({P, 1, 1}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, 1}, pl::FP32);
  host.compile({x, y}, anyp::RunConfig::for_world_size(P))(x, y);
  for (std::int64_t r = 0; r < P; ++r) EXPECT_EQ(y.at({r, 0, 0}), 2.0 * static_cast<double>(r));
  EXPECT_EQ(k.ir_text(),
            "incore local_column(%x: Tensor[1, 1] FP32 in, %y: Tensor[1, 1] FP32 out) {\n"
            "  %2 = pl.load %x[0, 0] [8, 1] valid=[1, 1] : Tile[8, 1] FP32\n"
            "  %3 = pl.mul %2, 2.0 : Tile[8, 1] FP32\n"
            "  %y = pl.store %3 -> %y[0, 0] valid=[1, 1]\n"
            "}\n");
}

// PyPTO's host-level ring allreduce allocates [2(n - 1) + 1, n] cells.
TEST_P(PyptoForms, TheRingAllreduceOnPyptosSignalShape) {
  const std::int64_t P = GetParam();
  const pl::Function stage =
      pl::jit::incore("stage",
                      {pl::In("x", pl::Tensor({1, 64}, pl::FP32)),
                       pl::InOut("data", pld::DistributedTensor({1, 64}, pl::FP32))},
                      [](pl::Value x, pl::Value data) {
                        data = pl::store(pl::load(x, {0, 0}, {1, 64}), {0, 0}, data);
                      });
  const pl::Function unstage =
      pl::jit::incore("unstage",
                      {pl::In("data", pld::DistributedTensor({1, 64}, pl::FP32)),
                       pl::Out("y", pl::Tensor({1, 64}, pl::FP32))},
                      [](pl::Value data, pl::Value y) {
                        y = pl::store(pl::load(data, {0, 0}, {1, 64}), {0, 0}, y);
                      });
  const pl::Function stage_orch = pl::jit::orchestration_for("stage_orch", stage);
  const pl::Function unstage_orch = pl::jit::orchestration_for("unstage_orch", unstage);
  const pl::HostFunction host = pl::jit::host(
      "pypto_ring",
      {pl::In("x", pl::Tensor({NR, 1, 64}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, 1, 64}, pl::FP32))},
      [=](pl::Value x, pl::Value y) {
        auto data_buf = pld::alloc_window_buffer("data", {1, 64}, pl::FP32);
        auto signal_buf = pld::alloc_window_buffer("signal", {2 * (NR - 1) + 1, NR}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          pl::Value xr = x[r];
          stage_orch(xr, pld::window(data_buf, {1, 64}, pl::FP32), pl::device(r));
        });
        pl::Value data = pld::window(data_buf, {1, 64}, pl::FP32);
        pl::Value signal = pld::window(signal_buf, {2 * (NR - 1) + 1, NR}, pl::INT32);
        data = pld::tensor::allreduce(data, signal, pld::ReduceOp::Sum, pld::AllreduceMode::Ring);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          pl::Value yr = y[r];
          unstage_orch(pld::window(data_buf, {1, 64}, pl::FP32), yr, pl::device(r));
        });
      });
  anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, 64}, pl::FP32);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i % 97));
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, 64}, pl::FP32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  host.compile({x, y}, config)(x, y);
  for (std::int64_t j = 0; j < 64; ++j) {
    double sum = 0;
    for (std::int64_t r = 0; r < P; ++r) sum += x.at({r, 0, j});
    for (std::int64_t r = 0; r < P; ++r) ASSERT_EQ(y.at({r, 0, j}), sum) << r << " " << j;
  }
}

INSTANTIATE_TEST_SUITE_P(P, PyptoForms, ::testing::Values(2, 3, 4, 5, 8));

}  // namespace
