// all_to_all_v_rows_test.cpp — pld::tensor::all_to_all_v with
// pld::Counts::Rows (PyPTO's counts, collectives.md §3.8): a [NR * B, C]
// source, B rows per destination; rank r sends the first send_counts[d]
// rows of block d, clamped to [0, B], into block r of rank d's target, and
// rank d finds the clamped count in recv_counts[r]. Counts that are
// negative, zero, partial, full and over capacity, at P = 2, 3, 5, 8,
// race-checked; the rows past a count are never written. The Python side
// (what pld.tensor.all_to_all_v means there) is
// tests/python/test_all_to_all_v.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <cstdint>

namespace {

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t B = 3;  // rows per destination (PyPTO's MAX_RECV)
constexpr std::int64_t C = 8;  // elements per row

pl::Function exchange_rows_kernel() {
  return pl::jit::incore(
      "exchange_rows",
      {pl::In("x", pl::Tensor({NR * B, C}, pl::FP32)),
       pl::In("counts", pl::Tensor({NR, 1}, pl::INT32)),
       pl::Out("y", pl::Tensor({NR * B, C}, pl::FP32)),
       pl::Out("got", pl::Tensor({NR, 1}, pl::INT32)),
       pl::InOut("data", pld::DistributedTensor({NR * B, C}, pl::FP32)),
       pl::InOut("recv", pld::DistributedTensor({NR, 1}, pl::INT32)),
       pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
      [](pl::Value x, pl::Value counts, pl::Value y, pl::Value got, pl::Value data, pl::Value recv,
         pl::Value signal) {
        data = pld::tensor::all_to_all_v(x, counts, data, recv, signal, pld::Counts::Rows);
        pl::range(NR * B, [&](pl::Scalar row) {
          y = pl::store(pl::load(data, {row, 0}, {1, C}), {row, 0}, y);
        });
        pl::range(NR, [&](pl::Scalar s) { pl::write(got, {s, 0}, pl::read(recv, {s, 0})); });
      });
}

pl::HostFunction exchange_rows() {
  const pl::Function orch =
      pl::jit::orchestration_for("exchange_rows_orch", exchange_rows_kernel());
  return pl::jit::host("rows_host",
                       {pl::In("x", pl::Tensor({NR, NR * B, C}, pl::FP32)),
                        pl::In("counts", pl::Tensor({NR, NR, 1}, pl::INT32)),
                        pl::Out("y", pl::Tensor({NR, NR * B, C}, pl::FP32)),
                        pl::Out("got", pl::Tensor({NR, NR, 1}, pl::INT32))},
                       [orch](pl::Value x, pl::Value counts, pl::Value y, pl::Value got) {
                         auto data = pld::alloc_window_buffer("data", {NR * B, C}, pl::FP32);
                         auto recv = pld::alloc_window_buffer("recv", {NR, 1}, pl::INT32);
                         auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           orch(x[r], counts[r], y[r], got[r],
                                pld::window(data, {NR * B, C}, pl::FP32),
                                pld::window(recv, {NR, 1}, pl::INT32),
                                pld::window(signal, {NR, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

class AllToAllVRows : public testing::TestWithParam<std::int64_t> {};

TEST_P(AllToAllVRows, CountsAreRowsClampedToTheBlock) {
  const std::int64_t P = GetParam();
  anyp::HostTensor x = anyp::HostTensor::zeros({P, P * B, C}, pl::FP32);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i + 1));  // never 0
  anyp::HostTensor counts = anyp::HostTensor::zeros({P, P, 1}, pl::INT32);
  // Rank r's count for d runs through -1, 0, 1, B, B + 2 (negative, none,
  // partial, full, over capacity).
  const std::int64_t pattern[] = {-1, 0, 1, B, B + 2};
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t d = 0; d < P; ++d) counts.set_int(r * P + d, pattern[(r + 2 * d) % 5]);
  anyp::HostTensor y = anyp::HostTensor::zeros({P, P * B, C}, pl::FP32);
  anyp::HostTensor got = anyp::HostTensor::zeros({P, P, 1}, pl::INT32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  exchange_rows().compile({x, counts, y, got}, config)(x, counts, y, got);
  for (std::int64_t d = 0; d < P; ++d) {    // the receiver
    for (std::int64_t r = 0; r < P; ++r) {  // the sender
      const std::int64_t rows = std::clamp<std::int64_t>(pattern[(r + 2 * d) % 5], 0, B);
      ASSERT_EQ(got.at({d, r, 0}), rows) << "rank " << d << " from " << r;
      for (std::int64_t k = 0; k < B; ++k)
        for (std::int64_t j = 0; j < C; ++j) {
          const double want = k < rows ? x.at({r, d * B + k, j}) : 0.0;  // past the count: unsent
          ASSERT_EQ(y.at({d, r * B + k, j}), want)
              << "rank " << d << " from " << r << " row " << k << " element " << j;
        }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(P, AllToAllVRows, testing::Values(2, 3, 5, 8));

TEST(AllToAllVRowsIr, TheIrSaysTheCountsAreRows) {
  const std::string ir = exchange_rows_kernel().ir_text();
  EXPECT_NE(ir.find(" counts=rows"), std::string::npos) << ir;
}

}  // namespace
