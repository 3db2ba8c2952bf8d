// data_path_bench.cpp — issue 10's in-process figures on the threads engine,
// each against a baseline measured in the same process (public API only; the
// builtin ring is tests/support/allreduce_programs.cpp's):
//
//   copy      put and tile staging (load + remote_store) of 1 MiB and 16 MiB
//             per rank, P = 2 on one worker, against memcpy of the same bytes
//             and against the same staging written by hand
//   fixed     one step-07 run (ring get) at P = 4 (µs), and a run whose windows are
//             16 MiB per rank (P = 2) against memset-ing those bytes
//   workers   one worker against two: the builtin ring allreduce at P = 128
//             (notify-heavy) and 64 rounds of 64 Ki-element tile math per
//             rank at P = 4 (compute-heavy); CPU time against wall x workers
//   ring      the builtin ring allreduce of 256 floats at P = 64, 128, 256:
//             run time and notifies per rank
//   mesh      the builtin mesh allreduce of 960 floats at P = 4, 8, 16, 32, 64:
//             µs per allreduce (run_data_path.sh sets MPI_Allreduce beside it)
//
//   data_path_bench [copy|fixed|workers|ring|mesh]...   (default: all)
// Every figure is a median; each line says what it measures.
#include <sys/resource.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "programs/allreduce_rounds.hpp"
#include "programs/ladder_programs.hpp"
#include "support/allreduce_programs.hpp"
#include "support/tile_math_rounds.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");

// The builtin ring allreduce of n floats (x -> y), as the timeline's tests run it.
const pl::HostFunction& builtin_ring(std::int64_t n) {
  return anyp_test::allreduce_program(anyp_test::Allreduce::BuiltinRing, n);
}

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double cpu_us() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Wall and CPU µs of one call of body() (medians over `reps`, after one
// warm-up call).
struct Timing {
  double wall = 0, cpu = 0;
};
Timing time_runs(int reps, const std::function<void()>& body) {
  body();
  std::vector<double> wall, cpu;
  for (int i = 0; i < reps; ++i) {
    const double w0 = now_us(), c0 = cpu_us();
    body();
    wall.push_back(now_us() - w0);
    cpu.push_back(cpu_us() - c0);
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

// Median wall µs of `reps` calls of body().
double median_us(int reps, const std::function<void()>& body) { return time_runs(reps, body).wall; }

anyp::RunConfig config_for(std::int64_t P, int workers) {
  anyp::RunConfig c = anyp::RunConfig::for_world_size(P);
  c.workers = workers;
  return c;
}

// ---- copy: bench::ring_rounds, put or staged through a tile.
// µs per round of bench::ring_rounds at P = 2 on one worker, free of
// per-run costs: (T(2R) - T(R)) / R (both runs allocate the same tiles and
// re-zero the same window bytes, which "fixed" measures on its own).
double copy_us_per_round(std::int64_t floats, bool staged, std::int64_t rounds, int reps) {
  const anyp::RunConfig c = config_for(2, 1);
  anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, floats}, pl::FP32);
  std::memset(x.data(), 1, x.nbytes());  // written pages, as memcpy's source
  auto once = bench::ring_rounds(floats, rounds, staged).compile({x}, c);
  auto twice = bench::ring_rounds(floats, 2 * rounds, staged).compile({x}, c);
  const double t1 = median_us(reps, [&] { once(x); });
  const double t2 = median_us(reps, [&] { twice(x); });
  return (t2 - t1) / static_cast<double>(rounds);
}

void bench_copy() {
  for (const std::int64_t bytes : {std::int64_t{1} << 20, std::int64_t{16} << 20}) {
    const std::int64_t floats = bytes / 4;
    const std::int64_t rounds = bytes <= (1 << 20) ? 64 : 8;
    // The baselines: the same two copies per round (rank 0's and rank 1's)
    // between the same number of distinct buffers; and the same two
    // copies staged by hand through a buffer per rank, as the two ranks'
    // tiles are (twice the bytes read and written: at most 1/2 of memcpy,
    // less once the buffers outgrow the caches).
    std::vector<char> s0(bytes, 1), s1(bytes, 1), d0(bytes), d1(bytes), t0(bytes), t1(bytes);
    auto per_round = [&](auto&& round) {
      return median_us(7,
                       [&] {
                         for (std::int64_t i = 0; i < rounds; ++i) round();
                       }) /
             static_cast<double>(rounds);
    };
    const double memcpy_us = per_round([&] {
      std::memcpy(d1.data(), s0.data(), s0.size());
      std::memcpy(d0.data(), s1.data(), s1.size());
    });
    const double plain_staged_us = per_round([&] {
      std::memcpy(t0.data(), s0.data(), s0.size());
      std::memcpy(d1.data(), t0.data(), t0.size());
      std::memcpy(t1.data(), s1.data(), s1.size());
      std::memcpy(d0.data(), t1.data(), t1.size());
    });
    const double put_us = copy_us_per_round(floats, false, rounds, 5);
    const double staged_us = copy_us_per_round(floats, true, rounds, 5);
    const double gbs = 2.0 * static_cast<double>(bytes) / 1e3;  // bytes per round / µs -> GB/s
    std::printf(
        "copy bytes=%lld memcpy_GBps=%.2f put_GBps=%.2f put_ratio=%.2f staged_GBps=%.2f "
        "staged_ratio=%.2f plain_staged_ratio=%.2f staged_vs_plain_staged=%.2f\n",
        static_cast<long long>(bytes), gbs / memcpy_us, gbs / put_us, memcpy_us / put_us,
        gbs / staged_us, memcpy_us / staged_us, memcpy_us / plain_staged_us,
        plain_staged_us / staged_us);
  }
}

// ---- fixed: step 07 at P = 4 (bench::prepare(7): the ring get, 64 floats), and big windows.
// Every rank writes one 32-byte row (8 floats) of a `floats`-element window buffer.
pl::HostFunction big_window_program(std::int64_t floats) {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, 8}, pl::FP32)),
      pl::InOut("big", pld::DistributedTensor({1, floats}, pl::FP32))};
  const auto kernel = pl::jit::incore("touch", params, [](pl::Value x, pl::Value big) {
    big = pl::store(pl::load(x, {0, 0}, {1, 8}), {0, 0}, big);
  });
  const auto per_rank = pl::jit::orchestration_for("touch_per_rank", kernel);
  return pl::jit::host("big_window_" + std::to_string(floats),
                       {pl::In("x", pl::Tensor({NR, 1, 8}, pl::FP32))}, [=](pl::Value x) {
                         auto buf = pld::alloc_window_buffer("big", {1, floats}, pl::FP32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r];
                           per_rank(xr, pld::window(buf, {1, floats}, pl::FP32), pl::device(r));
                         });
                       });
}

void bench_fixed() {
  {
    for (const int workers : {1, 2}) {
      const bench::Prepared step07 = bench::prepare(7, 4, config_for(4, workers));
      const double us = median_us(201, [&] { step07.run(); });
      std::printf("fixed step07 P=4 workers=%d run_us=%.1f\n", workers, us);
    }
  }
  {
    const std::int64_t bytes = std::int64_t{16} << 20, P = 2;
    anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, 8}, pl::FP32);
    auto compiled = big_window_program(bytes / 4).compile({x}, config_for(P, 1));
    std::vector<char> heap(static_cast<std::size_t>(P * bytes), 1);
    const double memset_us = median_us(9, [&] { std::memset(heap.data(), 0, heap.size()); });
    const double run_us = median_us(9, [&] { compiled(x); });
    std::printf("fixed big_window P=2 bytes_per_rank=%lld memset_us=%.0f run_us=%.0f ratio=%.2f\n",
                static_cast<long long>(bytes), memset_us, run_us, run_us / memset_us);
  }
}

// ---- workers: notify-heavy and compute-heavy runs on 1 and 2 workers.
void compare_workers(const char* what, const std::function<anyp::CompiledProgram(int)>& compile,
                     const std::function<void(const anyp::CompiledProgram&)>& run, int reps) {
  Timing t[2];
  for (const int workers : {1, 2}) {
    const anyp::CompiledProgram compiled = compile(workers);
    t[workers - 1] = time_runs(reps, [&] { run(compiled); });
  }
  std::printf(
      "workers %s one_us=%.0f two_us=%.0f speedup=%.2f cpu_two_us=%.0f cpu_over_wall_x2=%.2f\n",
      what, t[0].wall, t[1].wall, t[0].wall / t[1].wall, t[1].cpu, t[1].cpu / (2 * t[1].wall));
}

void bench_workers() {
  {
    const std::int64_t P = 128;
    anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, 256}, pl::FP32);
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, 256}, pl::FP32);
    compare_workers(
        "ring_allreduce_P128",
        [&](int w) {
          return builtin_ring(256).compile({x, y}, config_for(P, w));
        },
        [&](const anyp::CompiledProgram& c) { c(x, y); }, 5);
  }
  {
    const std::int64_t P = 4, n = 64 * 1024;
    anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, n}, pl::FP32);
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, n}, pl::FP32);
    compare_workers(
        "tile_math_P4_64Ki_x64",
        [&](int w) {
          return anyp_test::tile_math_rounds(n, 64).compile({x, y}, config_for(P, w));
        },
        [&](const anyp::CompiledProgram& c) { c(x, y); }, 7);
  }
}

void bench_ring() {
  for (const std::int64_t P : {64, 128, 256}) {
    anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, 256}, pl::FP32);
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, 256}, pl::FP32);
    auto compiled = builtin_ring(256).compile({x, y}, anyp::RunConfig::for_world_size(P));
    anyp::RunStats stats;
    const double us = median_us(5, [&] { stats = compiled(x, y); });
    std::int64_t most = 0;
    for (const anyp::RankCost& c : stats.cost) most = std::max(most, c.notifies + c.local_notifies);
    std::printf("ring builtin_allreduce P=%lld run_ms=%.2f notifies_per_rank_max=%lld bound=%lld\n",
                static_cast<long long>(P), us / 1e3, static_cast<long long>(most),
                static_cast<long long>(4 * (P - 1)));
  }
}

// ---- mesh: µs per builtin mesh allreduce of 960 floats, (T(R) - T(0)) / R.
void bench_mesh() {
  for (const std::int64_t P : {4, 8, 16, 32, 64}) {
    const std::int64_t rounds = P <= 16 ? 200 : 40;
    anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, 1}, pl::FP32);
    double us[2] = {0, 0};
    for (const int workers : {1, 2}) {
      const anyp::RunConfig c = config_for(P, workers);
      auto zero = bench::allreduce_rounds(960, 0, pld::AllreduceMode::Mesh).compile({x}, c);
      auto full = bench::allreduce_rounds(960, rounds, pld::AllreduceMode::Mesh).compile({x}, c);
      const double t0 = median_us(5, [&] { zero(x); });
      const double tr = median_us(5, [&] { full(x); });
      us[workers - 1] = (tr - t0) / static_cast<double>(rounds);
    }
    std::printf(
        "mesh builtin_allreduce P=%lld floats=960 us_per_round_one_worker=%.2f "
        "us_per_round_two_workers=%.2f\n",
        static_cast<long long>(P), us[0], us[1]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> what(argv + 1, argv + argc);
  if (what.empty()) what = {"copy", "fixed", "workers", "ring", "mesh"};
  for (const std::string& w : what) {
    if (w == "copy")
      bench_copy();
    else if (w == "fixed")
      bench_fixed();
    else if (w == "workers")
      bench_workers();
    else if (w == "ring")
      bench_ring();
    else if (w == "mesh")
      bench_mesh();
    else {
      std::fprintf(stderr,
                   "data_path_bench: unknown part '%s' (copy, fixed, workers, ring, mesh)\n",
                   w.c_str());
      return 2;
    }
    std::fflush(stdout);
  }
  return 0;
}
