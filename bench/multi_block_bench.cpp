// multi_block_bench.cpp — what a launch over several blocks (pl::blocks)
// costs and buys on the threads engine, each figure against its baseline
// measured in this run (median of kRounds):
//   1. tile math split over n blocks: 64 tiles of 4096 FP32 (exp, mul, add
//      each), one rank, two workers, against the same tiles on one block;
//   2. the launch itself: L launches of an empty kernel over n blocks in one
//      orchestration loop, per launch, against L one-block calls.
//
//   BUILD=build/release bash bench/run_multi_block.sh
#include <algorithm>
#include <anyp/anyp.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "timing.hpp"

namespace {

using anyp_bench::median_of;
using anyp_bench::seconds;

constexpr std::int64_t kTile = 4096, kTiles = 64, N = kTile * kTiles;
constexpr std::int64_t kLaunches = 200;
const pl::Dim NR = pl::dynamic("NR");

pl::HostFunction compute_program(std::int64_t blocks) {
  const auto kernel = pl::jit::incore(
      "tiles",
      {pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({1, N}, pl::FP32))},
      [](pl::Value x, pl::Value y) {
        pl::range(pl::get_block_idx(), kTiles, pl::get_block_num(), [&](pl::Scalar j) {
          const pl::Tile t = pl::load(x, {0, j * kTile}, {1, kTile});
          y = pl::store(pl::add(pl::mul(pl::exp(t), t), 1.0), {0, j * kTile}, y);
        });
      });
  const auto orch = pl::jit::orchestration_for("tiles_rank", kernel, pl::blocks(blocks));
  return pl::jit::host("compute",
                       {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, N}, pl::FP32))},
                       [orch](pl::Value x, pl::Value y) {
                         pl::range(pld::world_size(),
                                   [&](pl::Scalar r) { orch(x[r], y[r], pl::device(r)); });
                       });
}

pl::HostFunction launch_program(std::int64_t blocks) {
  const std::vector<pl::Param> params = {pl::InOut("y", pl::Tensor({1, 16}, pl::INT32))};
  const auto empty = pl::jit::incore("empty", params, [](pl::Value) {});
  const auto orch = pl::jit::orchestration("launches", params, [=](pl::Value y) {
    pl::range(kLaunches, [&](pl::Scalar) { empty(y, pl::blocks(blocks)); });
  });
  return pl::jit::host(
      "launch", {pl::InOut("y", pl::Tensor({NR, 1, 16}, pl::INT32))}, [orch](pl::Value y) {
        pl::range(pld::world_size(), [&](pl::Scalar r) { orch(y[r], pl::device(r)); });
      });
}

}  // namespace

int main() {
  constexpr int kRounds = 9, kRuns = 20;
  {
    anyp::InputGenerator gen(1);
    const anyp::HostTensor x = gen.uniform({1, 1, N});
    anyp::HostTensor y = anyp::HostTensor::zeros({1, 1, N}, pl::FP32);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(1);
    config.workers = 2;
    std::printf("tile math: %lld tiles of %lld FP32 on one rank, 2 workers, median of %d\n",
                static_cast<long long>(kTiles), static_cast<long long>(kTile), kRounds);
    double base = 0;
    for (const std::int64_t blocks : {1, 2, 4}) {
      const anyp::CompiledProgram prog = compute_program(blocks).compile({x, y}, config);
      prog(x, y);  // warm-up
      const double t = median_of(kRounds, [&] {
        return seconds([&] {
                 for (int i = 0; i < kRuns; ++i) prog(x, y);
               }) /
               kRuns;
      });
      if (blocks == 1) base = t;
      std::printf("  %lld block%s  %9.1f us/run  %.2fx%s\n", static_cast<long long>(blocks),
                  blocks == 1 ? " " : "s", t * 1e6, t / base, blocks == 1 ? "  (baseline)" : "");
    }
  }
  for (const std::int64_t P : {1, 4}) {
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, 16}, pl::INT32);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    config.workers = 2;
    std::printf("launch: %lld launches of an empty kernel per rank, P=%lld, 2 workers\n",
                static_cast<long long>(kLaunches), static_cast<long long>(P));
    double base = 0;
    for (const std::int64_t blocks : {1, 2, 4}) {
      const anyp::CompiledProgram prog = launch_program(blocks).compile({y}, config);
      prog(y);
      const double t = median_of(kRounds, [&] { return seconds([&] { prog(y); }) / kLaunches; });
      if (blocks == 1) base = t;
      std::printf("  %lld block%s  %9.2f us/launch  %.2fx%s\n", static_cast<long long>(blocks),
                  blocks == 1 ? " " : "s", t * 1e6, t / base,
                  blocks == 1 ? "  (baseline: a one-block call)" : "");
    }
  }
}
