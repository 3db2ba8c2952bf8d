// one_dim_signals_test.cpp — the builtin collectives on one-dim [NR] signal
// and count windows (issue 12, item 5; PyPTO accepts them), against the
// same kernel on [NR, 1] windows: an allreduce, an allgather, a barrier and
// an all_to_all_v (with [NR] send_counts and recv_counts) give bit-identical
// results and the same cost card, at P = 2, 3, 5 and 8, race-checked.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <vector>

namespace {

constexpr std::int64_t S = 64;  // row of the allreduce and allgather
constexpr std::int64_t C = 8;   // row of the all_to_all_v
const pl::Dim NR = pl::dynamic("NR");

pl::HostFunction program(bool one_dim) {
  const pl::Shape cells = one_dim ? pl::Shape{NR} : pl::Shape{NR, 1};
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, S}, pl::FP32)),
      pl::In("src", pl::Tensor({NR, C}, pl::FP32)),
      pl::In("send_counts", pl::Tensor(cells, pl::INT32)),
      pl::Out("y", pl::Tensor({1, S}, pl::FP32)),
      pl::Out("g", pl::Tensor({NR, S}, pl::FP32)),
      pl::Out("z", pl::Tensor({NR, C}, pl::FP32)),
      pl::InOut("data", pld::DistributedTensor({1, S}, pl::FP32)),
      pl::InOut("gathered", pld::DistributedTensor({NR, S}, pl::FP32)),
      pl::InOut("dst", pld::DistributedTensor({NR, C}, pl::FP32)),
      pl::InOut("recv_counts", pld::DistributedTensor(cells, pl::INT32)),
      pl::InOut("signal", pld::DistributedTensor(cells, pl::INT32))};
  const auto kernel =
      pl::jit::incore(one_dim ? "collectives_1d" : "collectives_2d", params,
                      [](pl::Value x, pl::Value src, pl::Value send_counts, pl::Value y,
                         pl::Value g, pl::Value z, pl::Value data, pl::Value gathered,
                         pl::Value dst, pl::Value recv_counts, pl::Value signal) {
                        data = pl::store(pl::load(x, {0, 0}, {1, S}), {0, 0}, data);
                        data = pld::tensor::allreduce(data, signal);
                        y = pl::store(pl::load(data, {0, 0}, {1, S}), {0, 0}, y);
                        gathered = pld::tensor::allgather(x, gathered, signal);
                        g = pl::store(pl::load(gathered, {0, 0}, {NR, S}), {0, 0}, g);
                        signal = pld::tensor::barrier(signal);
                        dst = pld::tensor::all_to_all_v(src, send_counts, dst, recv_counts, signal);
                        z = pl::store(pl::load(dst, {0, 0}, {NR, C}), {0, 0}, z);
                      });
  const auto per_rank = pl::jit::orchestration_for("per_rank", kernel);
  const pl::Shape host_cells = one_dim ? pl::Shape{NR, NR} : pl::Shape{NR, NR, 1};
  return pl::jit::host(
      "host",
      {pl::In("x", pl::Tensor({NR, 1, S}, pl::FP32)),
       pl::In("src", pl::Tensor({NR, NR, C}, pl::FP32)),
       pl::In("send_counts", pl::Tensor(host_cells, pl::INT32)),
       pl::Out("y", pl::Tensor({NR, 1, S}, pl::FP32)),
       pl::Out("g", pl::Tensor({NR, NR, S}, pl::FP32)),
       pl::Out("z", pl::Tensor({NR, NR, C}, pl::FP32))},
      [per_rank, cells](pl::Value x, pl::Value src, pl::Value counts, pl::Value y, pl::Value g,
                        pl::Value z) {
        auto data = pld::alloc_window_buffer("data", {1, S}, pl::FP32);
        auto gathered = pld::alloc_window_buffer("gathered", {NR, S}, pl::FP32);
        auto dst = pld::alloc_window_buffer("dst", {NR, C}, pl::FP32);
        auto recv_counts = pld::alloc_window_buffer("recv_counts", cells, pl::INT32);
        auto signal = pld::alloc_window_buffer("signal", cells, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(x[r], src[r], counts[r], y[r], g[r], z[r], pld::window(data, {1, S}, pl::FP32),
                   pld::window(gathered, {NR, S}, pl::FP32), pld::window(dst, {NR, C}, pl::FP32),
                   pld::window(recv_counts, cells, pl::INT32),
                   pld::window(signal, cells, pl::INT32), pl::device(r));
        });
      });
}

struct Outcome {
  anyp::HostTensor y, g, z;
  std::vector<anyp::RankCost> costs;
};

Outcome run(bool one_dim, std::int64_t P) {
  anyp::InputGenerator gen(12);
  anyp::HostTensor x = gen.uniform({P, 1, S}), src = gen.uniform({P, P, C});
  anyp::HostTensor counts = anyp::HostTensor::zeros(
      one_dim ? std::vector<std::int64_t>{P, P} : std::vector<std::int64_t>{P, P, 1}, pl::INT32);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t d = 0; d < P; ++d) counts.set_int(r * P + d, (r + 2 * d) % (C + 1));
  Outcome o{anyp::HostTensor::zeros({P, 1, S}, pl::FP32),
            anyp::HostTensor::zeros({P, P, S}, pl::FP32),
            anyp::HostTensor::zeros({P, P, C}, pl::FP32),
            {}};
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  const anyp::RunStats stats = program(one_dim).compile({x, src, counts, o.y, o.g, o.z}, config)(
      x, src, counts, o.y, o.g, o.z);
  o.costs = stats.cost;
  // The allgather, by hand: every rank holds every x in rank order.
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t k = 0; k < P; ++k)
      for (std::int64_t j = 0; j < S; ++j) EXPECT_EQ(o.g.at({r, k, j}), x.at({k, 0, j}));
  // The all_to_all_v, by hand: row s of rank r's dst holds the first
  // count(s -> r) = (s + 2r) % 9 elements of rank s's row r, zeros after.
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t s = 0; s < P; ++s)
      for (std::int64_t j = 0; j < C; ++j)
        EXPECT_EQ(o.z.at({r, s, j}), j < (s + 2 * r) % (C + 1) ? src.at({s, r, j}) : 0.0)
            << "rank " << r << " row " << s << " element " << j;
  return o;
}

class OneDimSignals : public testing::TestWithParam<std::int64_t> {};

TEST_P(OneDimSignals, TheBuiltinsBehaveAsOnNRByOneWindows) {
  const std::int64_t P = GetParam();
  const Outcome one = run(true, P), two = run(false, P);
  for (std::int64_t i = 0; i < one.y.numel(); ++i) ASSERT_EQ(one.y.get(i), two.y.get(i)) << i;
  for (std::int64_t i = 0; i < one.z.numel(); ++i) ASSERT_EQ(one.z.get(i), two.z.get(i)) << i;
  ASSERT_EQ(one.costs.size(), two.costs.size());
  for (std::size_t r = 0; r < one.costs.size(); ++r) {
    EXPECT_EQ(one.costs[r].bytes_in, two.costs[r].bytes_in) << "rank " << r;
    EXPECT_EQ(one.costs[r].bytes_out, two.costs[r].bytes_out) << "rank " << r;
    EXPECT_EQ(one.costs[r].notifies, two.costs[r].notifies) << "rank " << r;
    EXPECT_EQ(one.costs[r].local_notifies, two.costs[r].local_notifies) << "rank " << r;
    EXPECT_EQ(one.costs[r].waits, two.costs[r].waits) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(P, OneDimSignals, testing::Values(2, 3, 5, 8));

}  // namespace
