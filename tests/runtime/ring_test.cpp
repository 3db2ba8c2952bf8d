// ring_test.cpp — runtime tests of step 07 (the seed: a ring shift whose
// host signature names the rank count NR = pl::dynamic("NR")): one process
// compiles and runs both modes at many P; parameterised runs up to P = 64;
// deterministic schedules; worker counts; the compile cache and its
// artifacts; and the runtime's acceptance of a 1-rank program. Also the
// builtin barrier called 100 times back to back on one [NR, 1] signal, each
// round checked through data (a ring read of the right neighbour), and the
// signal left all-zero afterwards (self-clearing, docs/design.md §11).
//
// The kernels are copies of examples/distributed/07_dynamic_rank_count.cpp
// (tests may not include an example). Golden: get y[r] = x[(r+1) % P],
// put y[r] = x[(r-1) mod P]; both exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "compiler/pipeline.hpp"
#include "support/recruit_at_start.hpp"
#include "support/step07_program.hpp"

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");

using pld::AtomicType;
using pld::NotifyOp;
using pld::WaitCmp;

// ---- helpers -------------------------------------------------------------------------

enum class Mode { Put, Get };

const char* mode_name(Mode m) { return m == Mode::Put ? "put" : "get"; }

// Readable test parameters in gtest/ctest output.
void PrintTo(Mode m, std::ostream* os) { *os << mode_name(m); }

const pl::HostFunction& ring_of(Mode m) {
  return m == Mode::Put ? anyp_test::ring_put() : anyp_test::ring_get();
}

// Devices 0..P-1 and otherwise default options.
// "" when y is exactly the ring shift of x for `mode`, else the first mismatch.
std::string ring_mismatch(Mode mode, const anyp::HostTensor& x, const anyp::HostTensor& y) {
  const std::int64_t P = x.shape()[0];
  if (y.shape() != x.shape()) return "y is " + y.shape_string() + ", x is " + x.shape_string();
  for (std::int64_t r = 0; r < P; ++r) {
    const std::int64_t from = mode == Mode::Get ? (r + 1) % P : (r + P - 1) % P;
    for (std::int64_t j = 0; j < SIZE; ++j) {
      if (y.at({r, 0, j}) != x.at({from, 0, j})) {
        std::ostringstream s;
        s << "P=" << P << " " << mode_name(mode) << ": y[" << r << "][0][" << j
          << "] = " << y.at({r, 0, j}) << ", expected x[" << from << "][0][" << j
          << "] = " << x.at({from, 0, j});
        return s.str();
      }
    }
  }
  return "";
}

// Compiles and runs step 07 at P with `config`; returns the mismatch ("" = exact).
std::string run_ring(Mode mode, std::int64_t P, const anyp::RunConfig& config,
                     anyp::RunStats* stats = nullptr) {
  anyp::InputGenerator gen(7);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::CompiledProgram compiled = ring_of(mode).compile({x, y}, config);
  EXPECT_EQ(compiled.world_size(), P);
  const anyp::RunStats s = compiled(x, y);
  if (stats) *stats = s;
  return ring_mismatch(mode, x, y);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh directory under the system temp dir, removed on destruction.
struct TempDir {
  explicit TempDir(const std::string& tag) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path = std::filesystem::temp_directory_path() /
           ("anyp_ring_test_" + std::string(info->name()) + "_" + tag + "_" +
            std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    std::filesystem::remove_all(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};

// ---- tests ---------------------------------------------------------------------------

// The seed's promise: one source (and one process) serves every P.
TEST(Ring07, OneProcessRunsBothModesForEveryPFrom2To16) {
  for (std::int64_t P = 2; P <= 16; ++P) {
    for (Mode mode : {Mode::Put, Mode::Get}) {
      EXPECT_EQ(run_ring(mode, P, anyp::RunConfig::for_world_size(P)), "")
          << "P=" << P << " " << mode_name(mode);
    }
  }
}

class Ring07AtP : public ::testing::TestWithParam<std::tuple<Mode, std::int64_t>> {};

TEST_P(Ring07AtP, ShiftsExactly) {
  const auto [mode, P] = GetParam();
  anyp::RunStats stats;
  EXPECT_EQ(run_ring(mode, P, anyp::RunConfig::for_world_size(P), &stats), "");
  EXPECT_GT(stats.instructions, 0);
  // Default workers: min(P, hardware threads), all from the start when the
  // tests recruit so; the adaptive rule keeps a ring (no tile compute) on one.
  const std::int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(stats.workers, anyp_test::recruiting_at_start()
                               ? static_cast<int>(std::min<std::int64_t>(P, cores))
                               : 1);
}

INSTANTIATE_TEST_SUITE_P(Ranks, Ring07AtP,
                         ::testing::Combine(::testing::Values(Mode::Put, Mode::Get),
                                            ::testing::Values(2, 3, 4, 5, 8, 16, 64)),
                         [](const auto& info) {
                           return std::string(mode_name(std::get<0>(info.param))) + "_P" +
                                  std::to_string(std::get<1>(info.param));
                         });

// Deterministic mode: one worker, the next rank drawn by a seeded RNG. Every
// seed gives the same exact answer.
TEST(Ring07, DeterministicSchedulesGiveTheSameExactAnswer) {
  for (Mode mode : {Mode::Put, Mode::Get}) {
    for (std::int64_t P : {2, 3, 5, 8}) {
      for (std::uint64_t seed : {0u, 1u, 2u, 7u, 12345u}) {
        anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
        config.deterministic = true;
        config.schedule_seed = seed;
        anyp::RunStats stats;
        EXPECT_EQ(run_ring(mode, P, config, &stats), "")
            << mode_name(mode) << " P=" << P << " seed=" << seed;
        EXPECT_EQ(stats.workers, 1);
      }
    }
  }
}

// A deterministic schedule is replayable: the same seed gives the same counters.
TEST(Ring07, DeterministicScheduleReplaysIdentically) {
  anyp::RunConfig config = anyp::RunConfig::for_world_size(5);
  config.deterministic = true;
  config.schedule_seed = 42;
  config.preempt_budget = 3;
  anyp::RunStats first, second;
  ASSERT_EQ(run_ring(Mode::Get, 5, config, &first), "");
  ASSERT_EQ(run_ring(Mode::Get, 5, config, &second), "");
  EXPECT_EQ(first.instructions, second.instructions);
  EXPECT_EQ(first.parks, second.parks);
  EXPECT_EQ(first.preemptions, second.preemptions);
  EXPECT_GT(first.preemptions, 0);
}

TEST(Ring07, OneAndTwoWorkers) {
  const anyp_test::RecruitAtStart every_worker(true);
  for (int workers : {1, 2}) {
    for (Mode mode : {Mode::Put, Mode::Get}) {
      for (std::int64_t P : {2, 3, 8}) {
        anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
        config.workers = workers;
        anyp::RunStats stats;
        EXPECT_EQ(run_ring(mode, P, config, &stats), "")
            << mode_name(mode) << " P=" << P << " workers=" << workers;
        EXPECT_EQ(stats.workers, workers);
      }
    }
  }
}

// Running a compiled program twice: windows are zeroed at each run, and the
// answer follows the new inputs.
TEST(Ring07, CompiledProgramRunsRepeatedly) {
  const std::int64_t P = 4;
  anyp::InputGenerator gen(7);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::CompiledProgram compiled =
      anyp_test::ring_put().compile({x, y}, anyp::RunConfig::for_world_size(P));
  for (int round = 0; round < 3; ++round) {
    for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, gen.next());
    compiled(x, y);
    EXPECT_EQ(ring_mismatch(Mode::Put, x, y), "") << "round " << round;
  }
}

// Non-trivial device ids: rank r runs on device_ids[r]; the answer does not
// depend on the ids.
TEST(Ring07, RunsOnArbitraryDeviceIds) {
  anyp::RunConfig config;
  config.distributed.device_ids = {7, 3, 11};
  anyp::InputGenerator gen(7);
  anyp::HostTensor x = gen.uniform({3, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({3, 1, SIZE}, pl::FP32);
  anyp::CompiledProgram compiled = anyp_test::ring_get().compile({x, y}, config);
  compiled(x, y);
  EXPECT_EQ(ring_mismatch(Mode::Get, x, y), "");
  const std::string lowered = compiled.lowered_code();
  EXPECT_NE(lowered.find("  rank 0 (device 7): per_rank_get(x+0B, y+0B, window:src_buf, "
                         "window:dst_buf, window:signal_buf)\n"
                         "  rank 1 (device 3): per_rank_get(x+256B, y+256B, window:src_buf, "
                         "window:dst_buf, window:signal_buf)\n"
                         "  rank 2 (device 11): per_rank_get(x+512B, y+512B, window:src_buf, "
                         "window:dst_buf, window:signal_buf)\n"),
            std::string::npos)
      << lowered;
}

// The runtime accepts P = 1 (only the examples insist on P >= 2): the ring
// wraps onto rank 0 itself.
TEST(Ring07, OneRankProgramRuns) {
  for (Mode mode : {Mode::Put, Mode::Get}) {
    EXPECT_EQ(run_ring(mode, 1, anyp::RunConfig::for_world_size(1)), "") << mode_name(mode);
  }
}

// Compiling twice with the same arguments and config hits the cache: no new
// plan, and the two programs write byte-identical artifacts.
TEST(Ring07CompileCache, SameArgumentsGiveTheSamePlanAndIdenticalArtifacts) {
  const std::int64_t P = 5;
  anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  TempDir first("a"), second("b");
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.output_dir = first.path.string();
  anyp::CompiledProgram a = anyp_test::ring_get().compile({x, y}, config);
  const std::size_t plans = anyp::compiler::plan_cache_size();
  config.output_dir = second.path.string();
  anyp::CompiledProgram b = anyp_test::ring_get().compile({x, y}, config);
  EXPECT_EQ(anyp::compiler::plan_cache_size(), plans);
  EXPECT_EQ(a.output_dir(), first.path.string());
  EXPECT_EQ(b.output_dir(), second.path.string());
  for (const char* file :
       {"symbolic.ir", "specialized.ir", "window_layout.txt", "lowered.txt", "manifest.json"}) {
    const std::string text = read_file(first.path / file);
    EXPECT_FALSE(text.empty()) << file;
    EXPECT_EQ(text, read_file(second.path / file)) << file;
  }
  EXPECT_EQ(read_file(first.path / "specialized.ir"), a.specialized_ir());
  EXPECT_EQ(read_file(first.path / "manifest.json"), a.manifest_json());
  // Other tensors of the same shape and dtype are the same cache entry.
  anyp::HostTensor x2 = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::HostTensor y2 = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::CompiledProgram c =
      anyp_test::ring_get().compile({x2, y2}, anyp::RunConfig::for_world_size(P));
  EXPECT_EQ(anyp::compiler::plan_cache_size(), plans);
  EXPECT_EQ(c.lowered_code(), a.lowered_code());
  EXPECT_EQ(c.output_dir(), "");  // nothing written unless asked
}

// Different P: different plans, different specialised IR; the symbolic IR
// is the one source.
TEST(Ring07CompileCache, DifferentPGiveDifferentSpecializedIr) {
  std::vector<std::string> specialized;
  std::string symbolic;
  for (std::int64_t P : {2, 3, 4}) {
    anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
    anyp::CompiledProgram compiled =
        anyp_test::ring_put().compile({x, y}, anyp::RunConfig::for_world_size(P));
    EXPECT_EQ(compiled.world_size(), P);
    const std::string header = "; specialised for P = " + std::to_string(P) +
                               ", NR = " + std::to_string(P) + "\nhost ring_put(%x: Tensor[" +
                               std::to_string(P) + ", 1, 64] FP32 in, %y: Tensor[" +
                               std::to_string(P) + ", 1, 64] FP32 out) {\n";
    EXPECT_EQ(compiled.specialized_ir().substr(0, header.size()), header);
    EXPECT_NE(compiled.specialized_ir().find("  for %5 in range(0, " + std::to_string(P) + ") {\n"),
              std::string::npos)
        << compiled.specialized_ir();
    for (const std::string& other : specialized) EXPECT_NE(compiled.specialized_ir(), other);
    specialized.push_back(compiled.specialized_ir());
    if (symbolic.empty()) symbolic = compiled.symbolic_ir();
    EXPECT_EQ(compiled.symbolic_ir(), symbolic);
    EXPECT_EQ(compiled.symbolic_ir(), anyp_test::ring_put().ir_text());
  }
}

// The cache key includes the device list: same P, other devices, other plan.
// (The cache is cleared first, so it holds nothing for the program yet.)
TEST(Ring07CompileCache, DeviceListIsPartOfTheKey) {
  anyp::clear_compile_cache();
  const pl::HostFunction& ring = anyp_test::ring_put();
  anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, SIZE}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, SIZE}, pl::FP32);
  anyp::RunConfig a = anyp::RunConfig::for_world_size(2), b = anyp::RunConfig::for_world_size(2);
  b.distributed.device_ids = {5, 9};
  const std::size_t before = anyp::compiler::plan_cache_size();
  anyp::CompiledProgram ca = ring.compile({x, y}, a);
  EXPECT_EQ(anyp::compiler::plan_cache_size(), before + 1);
  anyp::CompiledProgram cb = ring.compile({x, y}, b);
  EXPECT_EQ(anyp::compiler::plan_cache_size(), before + 2);
  ring.compile({x, y}, b);
  EXPECT_EQ(anyp::compiler::plan_cache_size(), before + 2);
  EXPECT_EQ(ca.specialized_ir(), cb.specialized_ir());
  EXPECT_NE(ca.manifest_json(), cb.manifest_json());
  EXPECT_NE(cb.manifest_json().find("\"device_ids\": [5, 9],"), std::string::npos)
      << cb.manifest_json();
}

// ---- the builtin barrier, back to back ------------------------------------------------------
// 100 rounds on one [NR, 1] signal. Round k: stage x[r] + 1000 k in slot k % 2
// of my window, barrier, read my right neighbour's slot (double buffering:
// a slot is rewritten two rounds later, after the neighbour has passed the
// barrier that follows its read), record it in seen[k] and accumulate it.
// After a final barrier the signal's cells are copied out with pl::read: the
// self-clearing credit protocol (docs/design.md §11) leaves them all 0.

constexpr std::int64_t W = 8;  // one 32-byte FP32 row
constexpr std::int64_t ROUNDS = 100;

const std::vector<pl::Param> kBarrierParams = {
    pl::In("x", pl::Tensor({1, W}, pl::FP32)),
    pl::Out("seen", pl::Tensor({ROUNDS, W}, pl::FP32)),
    pl::Out("total", pl::Tensor({1, W}, pl::FP32)),
    pl::Out("cells", pl::Tensor({NR, 1}, pl::INT32)),
    pl::InOut("data", pld::DistributedTensor({2, W}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

const auto barrier_rounds = pl::jit::incore(
    "barrier_rounds", kBarrierParams,
    [](pl::Value x, pl::Value seen, pl::Value total, pl::Value cells, pl::Value data,
       pl::Value signal) {
      auto ctx = pld::get_comm_ctx(data);
      pl::Scalar r = pld::rank(ctx);
      pl::Scalar n = pld::nranks(ctx);
      pl::Scalar right = (r + 1) % n;
      pl::Tile mine = pl::load(x, {0, 0}, {1, W});
      pl::Tile acc = pl::mul(mine, 0.0);
      pl::range(ROUNDS, [&](pl::Scalar k) {
        pl::Scalar slot = k % 2;
        data = pl::store(pl::add(mine, pl::cast(k * 1000, pl::FP32)), {slot, 0}, data);
        signal = pld::tensor::barrier(signal);
        pl::Tile got = pld::tile::remote_load(data, right, {slot, 0}, {1, W});
        seen = pl::store(got, {k, 0}, seen);
        acc = pl::add(acc, got);
      });
      total = pl::store(acc, {0, 0}, total);
      signal = pld::tensor::barrier(signal);
      pl::range(n, [&](pl::Scalar i) { pl::write(cells, {i, 0}, pl::read(signal, {i, 0})); });
    });

const auto per_rank_barrier = pl::jit::orchestration(
    "per_rank_barrier", kBarrierParams,
    [](pl::Value x, pl::Value seen, pl::Value total, pl::Value cells, pl::Value data,
       pl::Value signal) { barrier_rounds(x, seen, total, cells, data, signal); });

const pl::HostFunction barrier_loop = pl::jit::host(
    "barrier_loop",
    {pl::In("x", pl::Tensor({NR, 1, W}, pl::FP32)),
     pl::Out("seen", pl::Tensor({NR, ROUNDS, W}, pl::FP32)),
     pl::Out("total", pl::Tensor({NR, 1, W}, pl::FP32)),
     pl::Out("cells", pl::Tensor({NR, NR, 1}, pl::INT32))},
    [](pl::Value x, pl::Value seen, pl::Value total, pl::Value cells) {
      auto data_buf = pld::alloc_window_buffer("data", {2, W}, pl::FP32);
      auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        pl::Value xr = x[r];
        pl::Value seen_r = seen[r];
        pl::Value total_r = total[r];
        pl::Value cells_r = cells[r];
        per_rank_barrier(xr, seen_r, total_r, cells_r, pld::window(data_buf, {2, W}, pl::FP32),
                         pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
      });
    });

// Runs barrier_loop at P; "" when every value is exact, else the first mismatch.
std::string run_barrier_loop(std::int64_t P, const anyp::RunConfig& config) {
  anyp::HostTensor x = anyp::HostTensor::arange({P, 1, W}, pl::FP32);  // x[r][0][j] = 8 r + j
  anyp::HostTensor seen = anyp::HostTensor::zeros({P, ROUNDS, W}, pl::FP32);
  anyp::HostTensor total = anyp::HostTensor::zeros({P, 1, W}, pl::FP32);
  anyp::HostTensor cells = anyp::HostTensor::zeros({P, P, 1}, pl::INT32);
  for (std::int64_t i = 0; i < cells.numel(); ++i) cells.set(i, -7);  // must be overwritten
  barrier_loop.compile({x, seen, total, cells}, config)(x, seen, total, cells);
  auto where = [&](const std::string& name, std::int64_t r, std::int64_t a, std::int64_t b,
                   double got, double want) {
    std::ostringstream s;
    s << "P=" << P << ": " << name << "[" << r << "][" << a << "][" << b << "] = " << got
      << ", expected " << want;
    return s.str();
  };
  for (std::int64_t r = 0; r < P; ++r) {
    const std::int64_t right = (r + 1) % P;
    for (std::int64_t j = 0; j < W; ++j) {
      double sum = 0;
      for (std::int64_t k = 0; k < ROUNDS; ++k) {
        const double want = static_cast<double>(W * right + j + 1000 * k);
        sum += want;
        if (seen.at({r, k, j}) != want) return where("seen", r, k, j, seen.at({r, k, j}), want);
      }
      if (total.at({r, 0, j}) != sum) return where("total", r, 0, j, total.at({r, 0, j}), sum);
    }
    for (std::int64_t i = 0; i < P; ++i) {
      if (cells.at({r, i, 0}) != 0) return where("cells", r, i, 0, cells.at({r, i, 0}), 0);
    }
  }
  return "";
}

TEST(BuiltinBarrier, HundredBackToBackBarriersOnOneSignal) {
  for (std::int64_t P = 2; P <= 8; ++P)
    EXPECT_EQ(run_barrier_loop(P, anyp::RunConfig::for_world_size(P)), "");
}

TEST(BuiltinBarrier, HundredBarriersUnderDeterministicSchedules) {
  for (std::int64_t P : {3, 5}) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
      config.deterministic = true;
      config.schedule_seed = seed;
      config.preempt_budget = 7;  // ranks drift apart mid-barrier
      EXPECT_EQ(run_barrier_loop(P, config), "") << "seed " << seed;
    }
  }
}

}  // namespace
