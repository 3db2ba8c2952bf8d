// out_of_memory_test.cpp — a run that cannot fit is refused before it runs,
// with the bytes it needs (part by part) and the bytes available, and never
// escapes as a raw std::bad_alloc: a 1 TiB window on the machine as it is,
// the same window and the builtin ring allreduce's O(P^3) signal under
// RunConfig::memory_limit (exact texts), RunStats::memory of a run that
// fits, and the race checker's own limit, which stops a run whose cell
// credits outgrow what the plan's footprint left them.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <regex>
#include <string>

#include "support/allreduce_programs.hpp"
#include "support/source_locations.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");

// A host whose one window buffer holds `elements` FP32 per rank; each rank
// writes its first row.
pl::HostFunction big_window_program(std::int64_t elements) {
  const pl::Function k = pl::jit::incore(
      "k", {pl::InOut("w", pld::DistributedTensor({1, 8}, pl::FP32))}, [](pl::Value w) {
        w = pl::store(pl::full({1, 8}, 1.0, pl::FP32), {0, 0}, w);
      });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", k);
  return pl::jit::host("big", {pl::InOut("x", pl::Tensor({NR, 1, 8}, pl::FP32))},
                       [per_rank, elements](pl::Value) {
                         auto buf = pld::alloc_window_buffer("big", {elements}, pl::FP32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           auto w = pld::window(buf, {1, 8}, pl::FP32);
                           per_rank(w, pl::device(r));
                         });
                       });
}

std::string run_error(const pl::HostFunction& host, std::int64_t P, anyp::RunConfig config) {
  anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, 8}, pl::FP32);
  try {
    host.compile({x}, config)(x);
  } catch (const anyp::RunError& e) {
    return anyp_test::without_locations(e.what());
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + anyp_test::without_locations(e.what());
  }
  return "ran without error";
}

constexpr std::int64_t kTiB = std::int64_t{1} << 40;

TEST(OutOfMemory, ATerabyteWindowIsRefusedBeforeTheRun) {
  const std::string error =
      run_error(big_window_program(kTiB / 4), 2, anyp::RunConfig::for_world_size(2));
  EXPECT_TRUE(std::regex_match(
      error, std::regex("run error: out of memory: this run needs about 2\\.0 TiB and [0-9.]+ "
                        "[KMGT]iB is available \\(.*\\); it needs 2\\.0 TiB: windows 2\\.0 TiB "
                        "\\(2 ranks × 1\\.0 TiB\\), notify record 4\\.0 GiB \\(a 4-byte slot per "
                        "word of the signal buffers, a bit per 64-byte line\\), rank VMs .*; run "
                        "at a smaller P")))
      << error;
}

TEST(OutOfMemory, TheMemoryLimitNamesItselfAsWhatIsAvailable) {
  anyp::RunConfig config = anyp::RunConfig::for_world_size(3);
  config.memory_limit = std::int64_t{1} << 30;
  const std::string error = run_error(big_window_program(std::int64_t{1} << 28), 3, config);
  const std::string head =
      "run error: out of memory: this run needs about 3.0 GiB and 1.0 GiB is available (the "
      "run's memory limit, RunConfig::memory_limit (--memory-limit)); it needs 3.0 GiB: windows "
      "3.0 GiB (3 ranks × 1.0 GiB), notify record 6.0 MiB (a 4-byte slot per word of the signal "
      "buffers, a bit per 64-byte line), rank VMs ";
  EXPECT_EQ(error.substr(0, head.size()), head) << error;
  EXPECT_EQ(error.substr(error.size() - 20), "; run at a smaller P") << error;
}

// The builtin ring allreduce's [2(P - 1), P] signal on every rank is
// 8P(P - 1) bytes per rank: 8.0 MiB at P = 1024, 8 GiB over the ranks, and
// the threads engine's notify record as much again.
TEST(OutOfMemory, TheRingAllreduceAtP1024IsRefusedUnderFourGiB) {
  const std::int64_t P = 1024;
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.memory_limit = std::int64_t{4} << 30;
  const pl::HostFunction& host =
      anyp_test::allreduce_program(anyp_test::Allreduce::BuiltinRing, 64);
  anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, 64}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, 64}, pl::FP32);
  std::string error = "ran without error";
  try {
    host.compile({x, y}, config)(x, y);
  } catch (const anyp::RunError& e) {
    error = anyp_test::without_locations(e.what());
  }
  const std::string head =
      "run error: out of memory: this run needs about 16.0 GiB and 4.0 GiB is available (the "
      "run's memory limit, RunConfig::memory_limit (--memory-limit)); it needs 16.0 GiB: windows "
      "8.0 GiB (1024 ranks × 8.0 MiB; largest buffer 'signal' [2046, 1024] INT32, 8.0 MiB "
      "per rank), notify record 8.0 GiB";
  EXPECT_EQ(error.substr(0, head.size()), head) << error;
}

TEST(OutOfMemory, ARunThatFitsReportsItsFootprint) {
  anyp::RunConfig config = anyp::RunConfig::for_world_size(4);
  config.check_races = true;
  anyp::HostTensor x = anyp::HostTensor::zeros({4, 1, 8}, pl::FP32);
  const anyp::RunStats stats = big_window_program(64).compile({x}, config)(x);
  ASSERT_EQ(stats.memory.size(), 5u);  // no signal buffer: no cell credits
  EXPECT_EQ(stats.memory[0].what, "windows");
  EXPECT_EQ(stats.memory[0].bytes, 4.0 * 256);  // 64 FP32 per rank
  EXPECT_EQ(stats.memory[1].what, "notify record");
  EXPECT_EQ(stats.memory[2].what, "rank VMs");
  EXPECT_EQ(stats.memory[3].what, "race checker: clocks");
  EXPECT_EQ(stats.memory[3].bytes, 4.0 * 4 * 4);
  EXPECT_EQ(stats.memory[4].what, "race checker: shadow");
  // A page of 64 granules (44 B) per rank's window, and one for x's 32.
  EXPECT_EQ(stats.memory[4].bytes, (4.0 + 1) * 44);
}

// Every rank notifies every cell of its row {r, j} on every peer: each rank
// holds (P - 1) P signal cells in use, P times what the footprint assumes
// (about one per peer), so the checker's own limit must stop the run.
pl::HostFunction every_cell_program() {
  const pl::Function k = pl::jit::incore(
      "every_cell", {pl::InOut("sig", pld::DistributedTensor({NR, NR}, pl::INT32))},
      [](pl::Value sig) {
        auto ctx = pld::get_comm_ctx(sig);
        pl::Scalar me = pld::rank(ctx), P = pld::nranks(ctx);
        pl::range(1, P, [&](pl::Scalar d) {
          pl::range(P, [&](pl::Scalar j) {
            pld::system::notify(sig, (me + d) % P, {me, j}, 1, pld::NotifyOp::AtomicAdd);
          });
        });
        pl::range(1, P, [&](pl::Scalar d) {
          pl::range(P, [&](pl::Scalar j) {
            pld::system::wait(sig, {(me + P - d) % P, j}, 1, pld::WaitCmp::Ge);
          });
        });
      });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", k);
  return pl::jit::host("every_cell_host", {pl::InOut("x", pl::Tensor({NR, 1, 8}, pl::FP32))},
                       [per_rank](pl::Value) {
                         auto buf = pld::alloc_window_buffer("sig", {NR, NR}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(pld::window(buf, {NR, NR}, pl::INT32), pl::device(r));
                         });
                       });
}

TEST(OutOfMemory, TheRaceCheckerStopsWhereItsCellCreditsOutgrowThePlan) {
  const std::int64_t P = 8;
  const pl::HostFunction host = every_cell_program();
  anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, 8}, pl::FP32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  config.deterministic = true;
  const anyp::RunStats fits = host.compile({x}, config)(x);  // no limit: it runs
  double planned = 0;
  for (const auto& part : fits.memory) planned += part.bytes;
  ASSERT_EQ(fits.memory.back().what, "race checker: cell credits");
  // Room for the plan and 4 KiB more: less than its (P - 1) P cells per rank
  // take (448 cells where the plan counts 64, about 48 bytes each).
  config.memory_limit = static_cast<std::int64_t>(planned) + 4 * 1024;
  const std::string error = run_error(host, P, config);
  EXPECT_TRUE(std::regex_match(
      error,
      std::regex("run error: rank [0-9] \\(device [0-9]\\), function 'every_cell', op "
                 "pld\\.system\\.notify: out of memory: the race checker's clocks, shadow words "
                 "and cell credits need more than [0-9.]+ KiB \\(what is available to the run "
                 "beside its windows\\); it holds [0-9]+ signal cells in use and [0-9]+ shared "
                 "vector clocks of 8 entries \\(one per agent\\), which grow with P: check the "
                 "program at a smaller P")))
      << error;
}

}  // namespace
