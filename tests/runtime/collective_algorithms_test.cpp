// collective_algorithms_test.cpp — the algorithm lists of
// anyp/collective_algorithms.hpp drive every place that names an
// algorithm: each pld:: mode enum is its list then Auto; Auto's estimates
// (compiler/choose_algorithm.hpp) price exactly the list's algorithms, in
// list order (the ring from P = 2); and each listed algorithm compiles and
// runs under its mode at P = 3, naming itself in the collective table.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <string>
#include <vector>

#include "compiler/choose_algorithm.hpp"
#include "ir/op_attrs.hpp"

namespace {

namespace ir = anyp::ir;

#define ANYP_ROW(context, algorithm, snake_name) ir::Algorithm::algorithm,
const std::vector<ir::Algorithm> kAllreduce = {ANYP_ALLREDUCE_ALGORITHMS(ANYP_ROW, _)};
const std::vector<ir::Algorithm> kBroadcast = {ANYP_BROADCAST_ALGORITHMS(ANYP_ROW, _)};
const std::vector<ir::Algorithm> kAllgather = {ANYP_ALLGATHER_ALGORITHMS(ANYP_ROW, _)};
const std::vector<ir::Algorithm> kReduceScatter = {ANYP_REDUCE_SCATTER_ALGORITHMS(ANYP_ROW, _)};
const std::vector<ir::Algorithm> kAllToAll = {ANYP_ALL_TO_ALL_ALGORITHMS(ANYP_ROW, _)};
#undef ANYP_ROW

std::vector<ir::Algorithm> kinds(const std::vector<anyp::compiler::AlgorithmEstimate>& e) {
  std::vector<ir::Algorithm> out;
  for (const auto& x : e) out.push_back(x.kind);
  return out;
}

TEST(CollectiveAlgorithms, EachModeEnumIsItsListThenAuto) {
  EXPECT_EQ(static_cast<std::size_t>(pld::AllreduceMode::Auto), kAllreduce.size());
  EXPECT_EQ(static_cast<std::size_t>(pld::BroadcastMode::Auto), kBroadcast.size());
  EXPECT_EQ(static_cast<std::size_t>(pld::AllgatherMode::Auto), kAllgather.size());
  EXPECT_EQ(static_cast<std::size_t>(pld::ReduceScatterMode::Auto), kReduceScatter.size());
  EXPECT_EQ(static_cast<std::size_t>(pld::AllToAllMode::Auto), kAllToAll.size());
}

TEST(CollectiveAlgorithms, AutoPricesEveryListedAlgorithmInListOrder) {
  const anyp::runtime::CostModel& m = anyp::runtime::platform_cost_model("a2a3sim");
  for (std::int64_t P : {2, 3, 8}) {
    using anyp::DType;
    EXPECT_EQ(
        kinds(anyp::compiler::allreduce_estimates(P, 256, DType::FP32, ir::ReduceKind::Sum, m)),
        kAllreduce);
    EXPECT_EQ(kinds(anyp::compiler::broadcast_estimates(P, 256, DType::FP32, m)), kBroadcast);
    EXPECT_EQ(kinds(anyp::compiler::allgather_estimates(P, 256, DType::FP32, m)), kAllgather);
    EXPECT_EQ(kinds(anyp::compiler::reduce_scatter_estimates(P, 256, DType::FP32,
                                                             ir::ReduceKind::Sum, m)),
              kReduceScatter);
    EXPECT_EQ(kinds(anyp::compiler::all_to_all_estimates(P, 256, DType::FP32, m)), kAllToAll);
  }
}

// allgather at P = 3 under every mode of its list: each rank gets every row.
const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t N = 8;

TEST(CollectiveAlgorithms, EveryAllgatherModeRunsAndNamesItself) {
  for (std::size_t row = 0; row < kAllgather.size(); ++row) {
    const auto mode = static_cast<pld::AllgatherMode>(row);  // the enum is the list
    const pl::Function kernel = pl::jit::incore(
        "gather",
        {pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({NR, N}, pl::FP32)),
         pl::InOut("data", pld::DistributedTensor({NR, N}, pl::FP32)),
         pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
        [mode](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
          data = pld::tensor::allgather(x, data, signal, mode);
          y = pl::store(pl::load(data, {0, 0}, {NR, N}), {0, 0}, y);
        });
    const pl::Function orch = pl::jit::orchestration_for("gather_orch", kernel);
    const pl::HostFunction host = pl::jit::host(
        "gather_host",
        {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
         pl::Out("y", pl::Tensor({NR, NR, N}, pl::FP32))},
        [orch](pl::Value x, pl::Value y) {
          pl::Value data_buf = pld::alloc_window_buffer("data", {NR, N}, pl::FP32);
          pl::Value signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
          pl::range(pld::world_size(), [&](pl::Scalar r) {
            orch(x[r], y[r], pld::window(data_buf, {NR, N}, pl::FP32),
                 pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
          });
        });
    auto x = anyp::HostTensor::arange({3, 1, N}, anyp::DType::FP32);
    auto y = anyp::HostTensor::zeros({3, 3, N}, anyp::DType::FP32);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(3);
    config.check_races = true;
    const anyp::CompiledProgram compiled = host.compile({x, y}, config);
    compiled(x, y);
    for (std::int64_t i = 0; i < 3 * 3 * N; ++i)
      ASSERT_EQ(y.get(i), static_cast<double>(i % (3 * N))) << ir::algorithm_name(kAllgather[row]);
    const std::string table = compiled.collective_table();
    EXPECT_NE(
        table.find(std::string(": runs ") + ir::algorithm_name(kAllgather[row]) + " (pinned)"),
        std::string::npos)
        << table;
  }
}

}  // namespace
