// diagnostics_run_messages_test.cpp — the run-time messages
// docs/diagnostics.md quotes that no other runtime test asserted
// (tests/docs/test_diagnostics_quoted.py checks that every quoted message is
// asserted by some test): the arguments of a run and its memory footprint
// (§4.1), a rank's failures in tile and scalar math and in all_to_all_v
// (§4.2), processes of the MPI engine that trace different programs (under
// mpirun: the test starts itself there), and a session's resident tensor
// (§6). Each case runs a small program that makes the mistake and compares
// the whole message (what()).
// Compile-time messages are in tests/unit/diagnostics_messages_test.cpp.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/memory_available.hpp"
#include "support/source_locations.hpp"
#include "support/tile_op_runner.hpp"

// Sanitized builds (GCC's macros, Clang's __has_feature): Open MPI is not
// built with the sanitizers, so the test that starts mpirun skips there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ANYP_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ANYP_TEST_SANITIZED 1
#endif
#endif

namespace {

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t W = 8;  // one 32-byte FP32 row

using anyp_test::make_input;
using anyp_test::tile_op_error;

// The what() of the anyp::Error that `fn` throws, or what happened instead.
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const anyp::Error& e) {
    return anyp_test::without_locations(e.what());
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + anyp_test::without_locations(e.what());
  }
  return "ran without error";
}

// ---- §4.1 the arguments of a run, and its footprint --------------------------------------------

// y[r] = x[r] + k, for a scalar host argument k.
pl::HostFunction add_k_program() {
  const std::vector<pl::Param> params = {pl::In("x", pl::Tensor({1, W}, pl::FP32)),
                                         pl::Out("y", pl::Tensor({1, W}, pl::FP32)),
                                         pl::In("k", pl::FP32)};
  const pl::Function add_k =
      pl::jit::incore("add_k", params, [](pl::Value x, pl::Value y, pl::Scalar k) {
        y = pl::store(pl::add(pl::load(x, {0, 0}, {1, W}), k), {0, 0}, y);
      });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", add_k);
  return pl::jit::host("add_k_host",
                       {pl::In("x", pl::Tensor({NR, 1, W}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, W}, pl::FP32)), pl::In("k", pl::FP32)},
                       [per_rank](pl::Value x, pl::Value y, pl::Scalar k) {
                         pl::range(pld::world_size(),
                                   [&](pl::Scalar r) { per_rank(x[r], y[r], k, pl::device(r)); });
                       });
}

TEST(DiagnosticsRunArguments, ATensorForAScalar) {
  const pl::HostFunction host = add_k_program();
  anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, W}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, W}, pl::FP32);
  const anyp::CompiledProgram compiled =
      host.compile({x, y, 1.5}, anyp::RunConfig::for_world_size(2));
  EXPECT_EQ(error_of([&] { compiled(x, y, 1.5); }), "ran without error");
  EXPECT_EQ(error_of([&] { compiled(x, y, x); }),
            "run error: argument 'k' must be a scalar, got a tensor");
}

// Two window buffers of 8 FP32 per rank at P = 2, under a 1 KiB limit.
TEST(DiagnosticsRunArguments, ARunLargerThanTheMemoryLimit) {
  const pl::Function k = pl::jit::incore("k",
                                         {pl::InOut("a", pld::DistributedTensor({1, W}, pl::FP32)),
                                          pl::InOut("b", pld::DistributedTensor({1, W}, pl::FP32))},
                                         [](pl::Value a, pl::Value b) { pl::tensor::copy(a, b); });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", k);
  const pl::HostFunction host = pl::jit::host(
      "two_windows", {pl::InOut("y", pl::Tensor({NR, 1, W}, pl::FP32))}, [per_rank](pl::Value) {
        auto a = pld::alloc_window_buffer("a", {1, W}, pl::FP32);
        auto b = pld::alloc_window_buffer("b", {1, W}, pl::FP32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(pld::window(a, {1, W}, pl::FP32), pld::window(b, {1, W}, pl::FP32),
                   pl::device(r));
        });
      });
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, W}, pl::FP32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(2);
  // The rank VMs' part depends on the lowered code: take it from a run that fits.
  const anyp::RunStats fits = host.compile({y}, config)(y);
  ASSERT_EQ(fits.memory.size(), 3u);
  ASSERT_EQ(fits.memory[2].what, "rank VMs");
  const std::string vms =
      anyp::bytes_text(fits.memory[2].bytes) + " (" + fits.memory[2].detail + ")";
  const std::string total =
      anyp::bytes_text(fits.memory[0].bytes + fits.memory[1].bytes + fits.memory[2].bytes);
  const std::string windows_and_record =
      "windows 128 B (2 ranks × 64 B; largest buffer 'a' [1, 8] FP32, 32 B per rank), notify "
      "record 8 B (a 4-byte slot per word of the signal buffers, a bit per 64-byte line)";
  config.memory_limit = 64;
  EXPECT_EQ(error_of([&] { host.compile({y}, config)(y); }),
            "run error: out of memory: this run needs about " + total +
                " and 64 B is available (the run's memory limit, RunConfig::memory_limit "
                "(--memory-limit)); it needs " +
                total + ": " + windows_and_record + ", rank VMs " + vms + "; run at a smaller P");
}

// ---- §4.2 a rank fails --------------------------------------------------------------------------

TEST(DiagnosticsRankFails, IntegerDivisionByARunTimeZero) {
  const auto x = make_input(2, 8, pl::INT32, [](std::int64_t, std::int64_t i) { return i; });
  EXPECT_EQ(tile_op_error({{x, {1, 8}}}, 8, pl::INT32,
                          [](const auto& t) { return pl::div(t[0], pl::max(0, 0)); }),
            "run error: rank 0 (device 0), function 'op', op pl.div: division by zero: the scalar "
            "operand is 0");
}

// Rank 1's row_vec has a zero in its element 3.
TEST(DiagnosticsRankFails, RowExpandDivisionByAZeroElement) {
  const auto t = make_input(2, 64, pl::INT32, [](std::int64_t, std::int64_t i) { return i; });
  const auto v = make_input(
      2, 8, pl::INT32, [](std::int64_t r, std::int64_t i) { return r == 1 && i == 3 ? 0 : 2; });
  EXPECT_EQ(tile_op_error({{t, {8, 8}}, {v, {8, 1}}}, 64, pl::INT32,
                          [](const auto& in) { return pl::row_expand_div(in[0], in[1]); }),
            "run error: rank 1 (device 1), function 'op', op pl.row_expand_div: division by zero: "
            "element 3 of row_vec [8, 1] is 0");
}

TEST(DiagnosticsRankFails, ScalarModuloByARunTimeZero) {
  const auto x = make_input(2, 8, pl::INT32, [](std::int64_t, std::int64_t i) { return i; });
  EXPECT_EQ(tile_op_error({{x, {1, 8}}}, 8, pl::INT32,
                          [](const auto&) {
                            pl::Scalar zero = pl::max(0, 0);
                            pl::Scalar q = pl::max(7, 0) % zero;
                            return pl::full({1, 8}, q, pl::INT32);
                          }),
            "run error: rank 0 (device 0), function 'op', op scalar mod: 7 % 0 divides by zero");
}

// all_to_all_v with rank 0 sending 9 elements of an 8-element row to rank 1.
TEST(DiagnosticsRankFails, ASendCountLongerThanARow) {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({NR, W}, pl::FP32)), pl::In("counts", pl::Tensor({NR, 1}, pl::INT32)),
      pl::InOut("data", pld::DistributedTensor({NR, W}, pl::FP32)),
      pl::InOut("recv", pld::DistributedTensor({NR, 1}, pl::INT32)),
      pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};
  const pl::Function a2av = pl::jit::incore(
      "a2av", params,
      [](pl::Value x, pl::Value counts, pl::Value data, pl::Value recv, pl::Value signal) {
        data = pld::tensor::all_to_all_v(x, counts, data, recv, signal);
      });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", a2av);
  const pl::HostFunction host =
      pl::jit::host("a2av_host",
                    {pl::In("x", pl::Tensor({NR, NR, W}, pl::FP32)),
                     pl::In("counts", pl::Tensor({NR, NR, 1}, pl::INT32))},
                    [per_rank](pl::Value x, pl::Value counts) {
                      auto data = pld::alloc_window_buffer("data", {NR, W}, pl::FP32);
                      auto recv = pld::alloc_window_buffer("recv", {NR, 1}, pl::INT32);
                      auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                      pl::range(pld::world_size(), [&](pl::Scalar r) {
                        per_rank(x[r], counts[r], pld::window(data, {NR, W}, pl::FP32),
                                 pld::window(recv, {NR, 1}, pl::INT32),
                                 pld::window(signal, {NR, 1}, pl::INT32), pl::device(r));
                      });
                    });
  anyp::HostTensor x = anyp::HostTensor::zeros({2, 2, W}, pl::FP32);
  anyp::HostTensor counts = anyp::HostTensor::zeros({2, 2, 1}, pl::INT32);
  counts.set_at({0, 1, 0}, 9);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(2);
  config.workers = 1;
  EXPECT_EQ(error_of([&] {
              host.compile({x, counts}, config)(x, counts);
            }),
            "run error: rank 0 (device 0), function 'a2av', op pld.tensor.all_to_all_v: send count "
            "9 is out of range [0, 8] (the row length)");
}

// ---- §4, on the MPI engine
// -----------------------------------------------------------------------

// Set in the processes the test below starts under mpirun.
constexpr const char* kMpiChild = "ANYP_DIAGNOSTICS_MPI_CHILD";

// The footprint a refusal names, from the parts of a run that fitted.
std::string footprint_text(const anyp::RunStats& stats) {
  double total = 0;
  std::string parts;
  for (const anyp::RunStats::MemoryPart& p : stats.memory) {
    total += p.bytes;
    parts += (parts.empty() ? "" : ", ") + p.what + " " + anyp::bytes_text(p.bytes) +
             (p.detail.empty() ? "" : " (" + p.detail + ")");
  }
  return anyp::bytes_text(total) + ": " + parts;
}

// In the processes under mpirun. First, process 0 alone runs under a 64 B
// memory limit: it refuses the run, and process 1, which had room, says that
// another process refused. Then each process allocates a window buffer of
// its own size: their programs differ, and every process refuses the run.
void mpi_child() {
  const std::int64_t rank = anyp::process_world("mpi").rank;
  const pl::Function k = pl::jit::incore(
      "k", {pl::InOut("w", pld::DistributedTensor({1, W}, pl::FP32))}, [](pl::Value w) {
        w = pl::store(pl::full({1, W}, 1.0, pl::FP32), {0, 0}, w);
      });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", k);
  auto program = [per_rank](std::int64_t elements) {
    return pl::jit::host("per_process", {pl::InOut("y", pl::Tensor({NR, 1, W}, pl::FP32))},
                         [per_rank, elements](pl::Value) {
                           auto buf = pld::alloc_window_buffer("buf", {1, elements}, pl::FP32);
                           pl::range(pld::world_size(), [&](pl::Scalar r) {
                             per_rank(pld::window(buf, {1, W}, pl::FP32), pl::device(r));
                           });
                         });
  };
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, W}, pl::FP32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(2);
  config.engine = "mpi";
  const pl::HostFunction same = program(W);
  const std::string footprint = footprint_text(same.compile({y}, config)(y));
  config.memory_limit = rank == 0 ? 64 : 0;
  const std::string refused = error_of([&] { same.compile({y}, config)(y); });
  if (rank == 0) {
    const std::string total = footprint.substr(0, footprint.find(':'));
    EXPECT_EQ(refused, "run error: out of memory: this run needs about " + total +
                           " and 64 B is available (the run's memory limit, "
                           "RunConfig::memory_limit (--memory-limit)); it needs " +
                           footprint + "; run at a smaller P");
  } else {
    EXPECT_EQ(refused,
              "run error: out of memory: 1 of the run's processes have less memory available "
              "than this run needs in each (" +
                  footprint + "); run at a smaller P");
  }
  config.memory_limit = 0;
  EXPECT_EQ(error_of([&] { program(W * (rank + 1)).compile({y}, config)(y); }),
            "run error: engine 'mpi': the processes compiled different programs for "
            "'per_process' (their window layouts differ); every process must trace the same "
            "program with the same arguments and configuration");
}

// Starts this test in two processes under mpirun (kMpiChild set), where it
// runs mpi_child; both must pass.
TEST(DiagnosticsMpi, RefusalsThatNeedTwoProcesses) {
  if (std::getenv(kMpiChild) != nullptr) return mpi_child();
#ifdef ANYP_TEST_SANITIZED
  GTEST_SKIP() << "Open MPI is not built with the sanitizers";
#endif
  const auto engines = anyp::available_engines();
  if (std::find(engines.begin(), engines.end(), "mpi") == engines.end())
    GTEST_SKIP() << "this build has no MPI engine";
  if (std::system("command -v mpirun > /dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun";
  std::array<char, 32> tmp{};
  std::snprintf(tmp.data(), tmp.size(), "/tmp/anyp_mpi_XXXXXX");
  ASSERT_NE(mkdtemp(tmp.data()), nullptr);
  const std::string dir = tmp.data();
  const testing::TestInfo& self = *testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = std::string(self.test_suite_name()) + "." + self.name();
  // Open MPI keeps its session files under TMPDIR; as root it needs leave to run.
  const std::string command =
      std::string("env ") + kMpiChild + "=1 OMPI_ALLOW_RUN_AS_ROOT=1 " +
      "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 TMPDIR=" + dir +
      " OMPI_MCA_orte_tmpdir_base=" + dir + " timeout 120 mpirun -q -n 2 " +
      std::filesystem::read_symlink("/proc/self/exe").string() +
      " --gtest_color=no --gtest_filter=" + name + " 2>&1";
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::array<char, 4096> chunk{};
  while (std::fgets(chunk.data(), static_cast<int>(chunk.size()), pipe) != nullptr)
    output += chunk.data();
  const int status = pclose(pipe);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(status, 0) << output;
  const std::string passed = "[       OK ] " + name;
  std::size_t passes = 0;
  for (auto at = output.find(passed); at != std::string::npos; at = output.find(passed, at + 1))
    ++passes;
  EXPECT_EQ(passes, 2u) << output;
}

// ---- §6 sessions --------------------------------------------------------------------------------

TEST(DiagnosticsSession, AResidentTensorThatIsNotDefined) {
  const pl::HostFunction host = add_k_program();
  anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, W}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, W}, pl::FP32);
  anyp::Session session(host.compile({x, y, 1.5}, anyp::RunConfig::for_world_size(2)),
                        anyp::SessionOptions{});
  EXPECT_EQ(error_of([&] { session.resident(anyp::HostTensor()); }),
            "Session::resident: the initial tensor is not defined");
}

}  // namespace
