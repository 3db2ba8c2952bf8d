// step07_bench.cpp — compile time, run time, CPU time and peak memory of the
// seed program (step 07, ring put/get) at a given P, with Google Benchmark.
//
//   step07_bench --benchmark_filter='/P:4/'    # every benchmark at P = 4
//
// BM_Compile: the whole pipeline for a fresh plan (bind, check, specialise,
//   layout, lower), with the trace already cached as in any real process.
// BM_CompileRun: compile (cached plan) + run, as an example does per run.
// BM_Run: one run of a compiled program. Time is wall time; CPU is process
//   CPU time over all workers, so CPU / Time shows how busy the workers are
//   (no spinning: CPU <= Time x workers).
// Peak memory per P is measured on whole example processes by
// bench/run_step07.sh (/usr/bin/time), where nothing else shares the process.
#include <benchmark/benchmark.h>

#include <anyp/anyp.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("src", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("dst", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))};

const auto get_step = pl::jit::incore(
    "get_step", kParams,
    [](pl::Value x, pl::Value y, pl::Value src, pl::Value dst, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(src);
      pl::Scalar r = pld::rank(ctx);
      pl::Scalar n = pld::nranks(ctx);
      src = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, src);
      pld::system::notify(signal, (r + n - 1) % n, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
      pld::system::wait(signal, {0, 0}, 1, pld::WaitCmp::Ge);
      pld::tensor::get(dst, (r + 1) % n, src);
      y = pl::store(pl::load(dst, {0, 0}, {1, SIZE}), {0, 0}, y);
    });

const auto put_step =
    pl::jit::incore("put_step", kParams,
                    [](pl::Value x, pl::Value y, pl::Value src, pl::Value dst, pl::Value signal) {
                      auto ctx = pld::get_comm_ctx(src);
                      pl::Scalar r = pld::rank(ctx);
                      pl::Scalar right = (r + 1) % pld::nranks(ctx);
                      src = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, src);
                      pld::tensor::put(dst, right, src);
                      pld::system::notify(signal, right, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
                      pld::system::wait(signal, {0, 0}, 1, pld::WaitCmp::Ge);
                      y = pl::store(pl::load(dst, {0, 0}, {1, SIZE}), {0, 0}, y);
                    });

pl::HostFunction make_ring(const char* name, const pl::Function& kernel) {
  const auto per_rank =
      pl::jit::orchestration(std::string("per_rank_") + name, kParams,
                             [kernel](pl::Value x, pl::Value y, pl::Value s, pl::Value d,
                                      pl::Value g) { kernel(x, y, s, d, g); });
  return pl::jit::host(name,
                       {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto src_buf = pld::alloc_window_buffer("src_buf", {1, SIZE}, pl::FP32);
                         auto dst_buf = pld::alloc_window_buffer("dst_buf", {1, SIZE}, pl::FP32);
                         auto sig_buf = pld::alloc_window_buffer("signal_buf", {1, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], pld::window(src_buf, {1, SIZE}, pl::FP32),
                                    pld::window(dst_buf, {1, SIZE}, pl::FP32),
                                    pld::window(sig_buf, {1, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

const pl::HostFunction ring_get = make_ring("get", get_step);
const pl::HostFunction ring_put = make_ring("put", put_step);

anyp::RunConfig config_for(std::int64_t P, std::int64_t first_device = 0) {
  anyp::RunConfig c;
  c.distributed.device_ids.clear();
  for (std::int64_t i = 0; i < P; ++i) c.distributed.device_ids.push_back(first_device + i);
  return c;
}

const pl::HostFunction& ring(int mode) { return mode == 0 ? ring_put : ring_get; }

void BM_Compile(benchmark::State& state) {
  const std::int64_t P = state.range(0);
  auto x = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  auto y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  std::int64_t fresh = 1;
  ring(static_cast<int>(state.range(1))).compile({x, y}, config_for(P));  // trace once
  for (auto _ : state) {
    // New device ids each time: a cache miss, so the whole pipeline runs.
    auto c = ring(static_cast<int>(state.range(1))).compile({x, y}, config_for(P, P * fresh++));
    benchmark::DoNotOptimize(c);
    state.PauseTiming();
    anyp::clear_compile_cache();  // keep memory flat across iterations
    state.ResumeTiming();
  }
}

void BM_CompileRun(benchmark::State& state) {
  const std::int64_t P = state.range(0);
  anyp::InputGenerator gen(7);
  auto x = gen.uniform({P, 1, SIZE});
  auto y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  for (auto _ : state) {
    auto c = ring(static_cast<int>(state.range(1))).compile({x, y}, config_for(P));
    c(x, y);
  }
}

void BM_Run(benchmark::State& state) {
  const std::int64_t P = state.range(0);
  anyp::InputGenerator gen(7);
  auto x = gen.uniform({P, 1, SIZE});
  auto y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  auto c = ring(static_cast<int>(state.range(1))).compile({x, y}, config_for(P));
  anyp::RunStats stats;
  for (auto _ : state) stats = c(x, y);
  state.counters["workers"] = stats.workers;
  state.counters["parks"] = static_cast<double>(stats.parks);
}

void ranks(benchmark::internal::Benchmark* b) {
  b->ArgNames({"P", "get"});
  for (int mode : {0, 1}) {
    for (std::int64_t p : {2, 4, 16, 64, 256, 1024, 4096}) b->Args({p, mode});
  }
}

BENCHMARK(BM_Compile)->Apply(ranks)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CompileRun)
    ->Apply(ranks)
    ->Unit(benchmark::kMicrosecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();
BENCHMARK(BM_Run)
    ->Apply(ranks)
    ->Unit(benchmark::kMicrosecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
