// session_bench.cpp — what a Session buys over CompiledProgram::run, each
// figure against its baseline measured in this run (median of ROUNDS):
//   1. per-run cost of K runs of a small allreduce: CompiledProgram::run
//      (a new engine and fresh pooled windows per run) against Session::run
//      (one engine) and against a session with persistent windows;
//   2. overlap: K runs each followed by host work of about one run's
//      length, run then work (sequential) against submit, work, wait.
// One worker, so the host thread has the other core.
//
//   BUILD=build/release bash bench/run_session.sh
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

constexpr std::int64_t S = 4096;
const pl::Dim NR = pl::dynamic("NR");

const pl::HostFunction program = [] {
  const auto kernel = pl::jit::incore(
      "bench_allreduce",
      {pl::In("x", pl::Tensor({1, S}, pl::FP32)), pl::Out("y", pl::Tensor({1, S}, pl::FP32)),
       pl::InOut("data", pld::DistributedTensor({1, S}, pl::FP32)),
       pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
      [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        data = pl::store(pl::load(x, {0, 0}, {1, S}), {0, 0}, data);
        data = pld::tensor::allreduce(data, signal);
        y = pl::store(pl::load(data, {0, 0}, {1, S}), {0, 0}, y);
      });
  const auto orch = pl::jit::orchestration_for("bench_allreduce_rank", kernel);
  return pl::jit::host("bench_allreduce",
                       {pl::In("x", pl::Tensor({NR, 1, S}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, S}, pl::FP32))},
                       [orch](pl::Value x, pl::Value y) {
                         auto data = pld::alloc_window_buffer("data", {1, S}, pl::FP32);
                         auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           orch(x[r], y[r], pld::window(data, {1, S}, pl::FP32),
                                pld::window(signal, {NR, 1}, pl::INT32), pl::device(r));
                         });
                       });
}();

// Host work of about `s` seconds (a spin, so it needs a core).
void host_work(double s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(s);
  volatile std::uint64_t n = 0;
  while (std::chrono::steady_clock::now() < end) n = n + 1;
}

}  // namespace

int main() {
  constexpr int K = 200, kRounds = 5;
  for (const std::int64_t P : {4, 8}) {
    anyp::InputGenerator gen(1);
    const anyp::HostTensor x = gen.uniform({P, 1, S});
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, S}, pl::FP32);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    config.workers = 1;
    const anyp::CompiledProgram prog = program.compile({x, y}, config);
    for (int i = 0; i < K; ++i) prog(x, y);  // warm-up: the heap pool, the caches
    const double compiled = median_of(kRounds, [&] {
      return seconds([&] {
               for (int i = 0; i < K; ++i) prog(x, y);
             }) /
             K;
    });
    anyp::Session session = prog.prepare();
    const double reused = median_of(kRounds, [&] {
      return seconds([&] {
               for (int i = 0; i < K; ++i) session(x, y);
             }) /
             K;
    });
    anyp::Session kept = prog.prepare({.persistent_windows = true, .reset_windows = false});
    const double persistent = median_of(kRounds, [&] {
      return seconds([&] {
               for (int i = 0; i < K; ++i) kept(x, y);
             }) /
             K;
    });
    const double work = compiled;  // host work as long as a run
    const double sequential = median_of(kRounds, [&] {
      return seconds([&] {
               for (int i = 0; i < K; ++i) {
                 session(x, y);
                 host_work(work);
               }
             }) /
             K;
    });
    const double overlapped = median_of(kRounds, [&] {
      return seconds([&] {
               for (int i = 0; i < K; ++i) {
                 anyp::RunHandle h = session.submit({x, y});
                 host_work(work);
                 h.wait();
               }
             }) /
             K;
    });
    std::printf("P=%lld  allreduce of %lld FP32, %d runs, median of %d rounds\n",
                static_cast<long long>(P), static_cast<long long>(S), K, kRounds);
    std::printf("  CompiledProgram::run       %8.2f us/run  (baseline)\n", compiled * 1e6);
    std::printf("  Session::run               %8.2f us/run  %.2fx\n", reused * 1e6,
                reused / compiled);
    std::printf("  Session, persistent        %8.2f us/run  %.2fx\n", persistent * 1e6,
                persistent / compiled);
    std::printf("  run + host work            %8.2f us/it   (baseline)\n", sequential * 1e6);
    std::printf("  submit + host work + wait  %8.2f us/it   %.2fx\n", overlapped * 1e6,
                overlapped / sequential);
  }
}
