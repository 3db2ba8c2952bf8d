// hot_path_bench.cpp — run time of two fixed programs through the public API
// only, so the same source builds against any revision of anyp (the door
// overhead comparison in bench/run_hot_path.sh builds it against the
// baseline revision and the working tree and runs both in one go):
//   step 07 ring get (SIZE 64) at P = 4 and P = 1024;
//   step 11 mesh allreduce (960 FP32, Sum) at P = 4 and P = 64.
//
//   hot_path_bench --benchmark_filter=Step07    Google Benchmark, wall clock
//   hot_path_bench --runs step07 1024 N         compile once, then N runs on
//                                               one worker (for callgrind:
//                                               instructions per run, free of
//                                               the machine's noise)
// Each benchmark compiles once, then times compiled(x, y).
#include <benchmark/benchmark.h>

#include <anyp/anyp.hpp>

namespace {

const pl::Dim NR = pl::dynamic("NR");

// ---- step 07, get mode --------------------------------------------------------
constexpr std::int64_t kRingSize = 64;

const std::vector<pl::Param> kRingParams = {
    pl::In("x", pl::Tensor({1, kRingSize}, pl::FP32)),
    pl::Out("y", pl::Tensor({1, kRingSize}, pl::FP32)),
    pl::InOut("src", pld::DistributedTensor({1, kRingSize}, pl::FP32)),
    pl::InOut("dst", pld::DistributedTensor({1, kRingSize}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))};

const auto get_step = pl::jit::incore(
    "get_step", kRingParams,
    [](pl::Value x, pl::Value y, pl::Value src, pl::Value dst, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(src);
      pl::Scalar r = pld::rank(ctx);
      pl::Scalar n = pld::nranks(ctx);
      src = pl::store(pl::load(x, {0, 0}, {1, kRingSize}), {0, 0}, src);
      pld::system::notify(signal, (r + n - 1) % n, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
      pld::system::wait(signal, {0, 0}, 1, pld::WaitCmp::Ge);
      pld::tensor::get(dst, (r + 1) % n, src);
      y = pl::store(pl::load(dst, {0, 0}, {1, kRingSize}), {0, 0}, y);
    });

const auto per_rank_get =
    pl::jit::orchestration("per_rank_get", kRingParams,
                           [](pl::Value x, pl::Value y, pl::Value s, pl::Value d, pl::Value g) {
                             get_step(x, y, s, d, g);
                           });

const pl::HostFunction ring_get =
    pl::jit::host("ring_get",
                  {pl::In("x", pl::Tensor({NR, 1, kRingSize}, pl::FP32)),
                   pl::Out("y", pl::Tensor({NR, 1, kRingSize}, pl::FP32))},
                  [](pl::Value x, pl::Value y) {
                    auto src_buf = pld::alloc_window_buffer("src_buf", {1, kRingSize}, pl::FP32);
                    auto dst_buf = pld::alloc_window_buffer("dst_buf", {1, kRingSize}, pl::FP32);
                    auto sig_buf = pld::alloc_window_buffer("signal_buf", {1, 1}, pl::INT32);
                    pl::range(pld::world_size(), [&](pl::Scalar r) {
                      pl::Value xr = x[r];
                      pl::Value yr = y[r];
                      per_rank_get(xr, yr, pld::window(src_buf, {1, kRingSize}, pl::FP32),
                                   pld::window(dst_buf, {1, kRingSize}, pl::FP32),
                                   pld::window(sig_buf, {1, 1}, pl::INT32), pl::device(r));
                    });
                  });

// ---- step 11, mesh allreduce ----------------------------------------------------
constexpr std::int64_t kReduceSize = 960;

const std::vector<pl::Param> kReduceParams = {
    pl::In("x", pl::Tensor({1, kReduceSize}, pl::FP32)),
    pl::Out("y", pl::Tensor({1, kReduceSize}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, kReduceSize}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

const auto allreduce_kernel = pl::jit::incore(
    "allreduce_kernel", kReduceParams,
    [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      data = pl::store(pl::load(x, {0, 0}, {1, kReduceSize}), {0, 0}, data);
      data = pld::tensor::allreduce(data, signal, pld::ReduceOp::Sum, pld::AllreduceMode::Mesh);
      y = pl::store(pl::load(data, {0, 0}, {1, kReduceSize}), {0, 0}, y);
    });

const auto per_rank_reduce = pl::jit::orchestration(
    "per_rank", kReduceParams,
    [](pl::Value x, pl::Value y, pl::Value d, pl::Value s) { allreduce_kernel(x, y, d, s); });

const pl::HostFunction mesh_allreduce =
    pl::jit::host("mesh_allreduce",
                  {pl::In("x", pl::Tensor({NR, 1, kReduceSize}, pl::FP32)),
                   pl::Out("y", pl::Tensor({NR, 1, kReduceSize}, pl::FP32))},
                  [](pl::Value x, pl::Value y) {
                    auto data_buf = pld::alloc_window_buffer("data", {1, kReduceSize}, pl::FP32);
                    auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                    pl::range(pld::world_size(), [&](pl::Scalar r) {
                      pl::Value xr = x[r];
                      pl::Value yr = y[r];
                      per_rank_reduce(xr, yr, pld::window(data_buf, {1, kReduceSize}, pl::FP32),
                                      pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
                    });
                  });

anyp::RunConfig config_for(std::int64_t P, int workers = 0) {
  anyp::RunConfig c;
  c.distributed.device_ids.clear();
  for (std::int64_t i = 0; i < P; ++i) c.distributed.device_ids.push_back(i);
  c.workers = workers;
  return c;
}

void run_program(benchmark::State& state, const pl::HostFunction& program, std::int64_t size) {
  const std::int64_t P = state.range(0);
  anyp::InputGenerator gen(7);
  auto x = gen.uniform({P, 1, size});
  auto y = anyp::HostTensor::zeros({P, 1, size}, pl::FP32);
  auto compiled = program.compile({x, y}, config_for(P));
  for (auto _ : state) compiled(x, y);
}

void BM_Step07Get(benchmark::State& state) { run_program(state, ring_get, kRingSize); }
void BM_Step11Mesh(benchmark::State& state) { run_program(state, mesh_allreduce, kReduceSize); }

BENCHMARK(BM_Step07Get)
    ->ArgName("P")
    ->Arg(4)
    ->Arg(1024)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_Step11Mesh)
    ->ArgName("P")
    ->Arg(4)
    ->Arg(64)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// --runs <step07|step11> <P> <N>
int fixed_runs(const char* which, std::int64_t P, int runs) {
  const bool ring = std::string(which) == "step07";
  const std::int64_t size = ring ? kRingSize : kReduceSize;
  anyp::InputGenerator gen(7);
  auto x = gen.uniform({P, 1, size});
  auto y = anyp::HostTensor::zeros({P, 1, size}, pl::FP32);
  auto compiled = (ring ? ring_get : mesh_allreduce).compile({x, y}, config_for(P, 1));
  for (int i = 0; i < runs; ++i) compiled(x, y);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--runs")
    return fixed_runs(argv[2], std::stoll(argv[3]), std::stoi(argv[4]));
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
