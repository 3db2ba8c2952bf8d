// diagnostics_messages_test.cpp — the messages docs/diagnostics.md quotes
// that no other unit test asserted (tests/docs/test_diagnostics_quoted.py
// checks that every quoted message is asserted by some test): usage errors
// of the example command line (§1), RunConfig and cost-model errors (§2),
// compile errors while tracing, verifying, binding, checking and
// specialising (§3), and the HostTensor, artifact and compile-only errors
// (§6). Each case provokes the error the way a user would and compares the
// whole message (what(), or the exact stderr of the command line).
// Run-time messages are in tests/runtime/diagnostics_run_messages_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <anyp/engines.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "anyp/errors.hpp"
#include "anyp/example_cli.hpp"
#include "runtime/timeline/cost_model.hpp"
#include "support/kernel_errors.hpp"
#include "support/source_locations.hpp"
#include "support/step07_program.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");
const pl::Dim M = pl::dynamic("M");
constexpr std::int64_t W = 8;  // one 32-byte FP32 row

using anyp_test::trace_error;

// The what() of the exception E that `fn` throws, or what happened instead.
template <class E, class Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return anyp_test::without_locations(e.what());
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + anyp_test::without_locations(e.what());
  }
  return "no exception";
}

// Compiles `host` with `args` at P: the CompileError's what(), or what
// happened instead.
std::string compile_error(const pl::HostFunction& host, const std::vector<anyp::ArgRef>& args,
                          std::int64_t P) {
  const std::string got = message_of<anyp::CompileError>(
      [&] { host.compile(args, anyp::RunConfig::for_world_size(P)); });
  return got == "no exception" ? "compiled without error" : got;
}

// A kernel writing one row, its orchestration, and a host over y [NR, 1, W]
// whose body is `body` (the rank loop is up to it).
const pl::Function store_row =
    pl::jit::incore("store_row", {pl::InOut("y", pl::Tensor({1, W}, pl::FP32))}, [](pl::Value y) {
      y = pl::store(pl::full({1, W}, 1.0, pl::FP32), {0, 0}, y);
    });
const pl::Function store_row_on = pl::jit::orchestration_for("store_row_on", store_row);

pl::HostFunction host_of(const std::function<void(pl::Value)>& body) {
  return pl::jit::host("host", {pl::InOut("y", pl::Tensor({NR, 1, W}, pl::FP32))}, body);
}

std::string compile_host(const pl::HostFunction& host, std::int64_t P) {
  const anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, W}, pl::FP32);
  return compile_error(host, {y}, P);
}

// The standard rank loop: store_row_on(y[r]) on every rank.
void every_rank_stores(pl::Value y) {
  pl::range(pld::world_size(), [&](pl::Scalar r) { store_row_on(y[r], pl::device(r)); });
}

// ============================================================================================
// §1 — the example command line
// ============================================================================================

struct Argv {
  explicit Argv(std::vector<std::string> args) : strings(std::move(args)) {
    strings.insert(strings.begin(), "example");
    for (const std::string& s : strings) pointers.push_back(s.c_str());
  }
  int argc() const { return static_cast<int>(pointers.size()); }
  const char* const* argv() const { return pointers.data(); }
  std::vector<std::string> strings;
  std::vector<const char*> pointers;
};

const anyp::cli::ExampleSpec kSpec{.name = "07_dynamic_rank_count",
                                   .step = 7,
                                   .modes = {"put", "get"},
                                   .ops = {},
                                   .default_devices = {0, 1}};

// The UsageError message parse() throws for `args` ("" if it does not throw).
std::string usage_error(std::vector<std::string> args) {
  const Argv a(std::move(args));
  try {
    anyp::cli::parse(a.argc(), a.argv(), kSpec);
  } catch (const anyp::cli::UsageError& e) {
    return e.message;
  }
  return "";
}

bool have_mpi() {
  const auto engines = anyp::available_engines();
  return std::find(engines.begin(), engines.end(), "mpi") != engines.end();
}

std::string engines_text() {
  std::string names;
  for (const auto& e : anyp::available_engines()) names += (names.empty() ? "" : ", ") + e;
  return names;
}

TEST(DiagnosticsCli, ExploreDepthZero) {
  EXPECT_EQ(usage_error({"--explore", "4", "--explore-depth", "0"}),
            "--explore-depth: must be at least 1, got 0\nrun with --help for usage");
}

TEST(DiagnosticsCli, OutputDirWithoutCompileOnly) {
  EXPECT_EQ(usage_error({"--output-dir", "/tmp/artifacts"}),
            "--output-dir: only meaningful with --compile-only, --dep-gen, --scope-stats or "
            "--swimlane (a plain run writes nothing)");
}

TEST(DiagnosticsCli, SeveralUnexpectedArguments) {
  EXPECT_EQ(usage_error({"stray", "--bogus"}),
            "The following arguments were not expected: --bogus stray\nrun with --help for usage");
}

TEST(DiagnosticsCli, UnknownEngine) {
  EXPECT_EQ(usage_error({"--engine", "fibers"}),
            "--engine: engine 'fibers' is not available; supported engines: " + engines_text());
}

TEST(DiagnosticsCli, MpiEngineNotInThisBuild) {
  if (have_mpi()) GTEST_SKIP() << "this build has the MPI engine";
  EXPECT_EQ(usage_error({"--engine", "mpi"}),
            "--engine: engine 'mpi' is not in this build: Open MPI was not found when it was "
            "configured (install libopenmpi-dev and openmpi-bin, e.g. with scripts/setup.sh, and "
            "configure again); engines in this build: threads");
}

// report() with --timeline for a run that has no modeled timeline: the
// refusal on stderr, no OK, exit 2 (the flag cannot be honoured).
TEST(DiagnosticsCli, TimelineOfARunWithoutOne) {
  const Argv a({"--timeline"});
  const anyp::cli::Options options = anyp::cli::parse(a.argc(), a.argv(), kSpec);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const int code = anyp::cli::report({true}, options, anyp::RunStats{});
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "--timeline: the run has no modeled timeline (RunConfig::timeline was off)\n");
  EXPECT_EQ(out, "");
  EXPECT_EQ(code, 2);
}

// ============================================================================================
// §2 — the RunConfig and the cost model
// ============================================================================================

std::string config_error(const anyp::RunConfig& config) {
  const anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, W}, pl::FP32);
  return message_of<anyp::ConfigError>([&] { host_of(every_rank_stores).compile({y}, config); });
}

TEST(DiagnosticsConfig, NegativeMemoryLimit) {
  anyp::RunConfig config = anyp::RunConfig::for_world_size(2);
  config.memory_limit = -5;
  EXPECT_EQ(config_error(config),
            "memory_limit must be 0 (what the machine has) or positive, got -5");
}

TEST(DiagnosticsConfig, NegativePctSteps) {
  anyp::RunConfig config = anyp::RunConfig::for_world_size(2);
  config.pct.enabled = true;
  config.pct.depth = 2;
  config.pct.steps = -1;
  EXPECT_EQ(config_error(config), "pct.steps must not be negative, got -1");
}

TEST(DiagnosticsConfig, CostModelValueWithoutAKey) {
  EXPECT_EQ(message_of<anyp::ConfigError>([] {
              anyp::runtime::parse_cost_model("name = x\n= 5   # source: assumed\n", "my.model");
            }),
            "cost model 'my.model', line 2: a value without a key");
}

// ============================================================================================
// §3.1 — while tracing a body
// ============================================================================================

TEST(DiagnosticsTrace, AnOpOutsideAnyBody) {
  EXPECT_EQ(message_of<anyp::CompileError>([] { [[maybe_unused]] pl::Scalar s = 1; }),
            "compile error: pl::Scalar used outside a traced function body (pl::jit::host, "
            "pl::jit::orchestration or pl::jit::incore)");
}

TEST(DiagnosticsTrace, ABodyOfAnotherArity) {
  const pl::Function k = pl::jit::incore(
      "k", {pl::In("x", pl::Tensor({1, W}, pl::FP32)), pl::Out("y", pl::Tensor({1, W}, pl::FP32))},
      [](pl::Value) {});
  EXPECT_EQ(trace_error(k),
            "compile error: function 'k' (incore): declares 2 parameters but its body takes 1");
}

TEST(DiagnosticsTrace, AParameterDeclaredTwice) {
  const pl::Function k = pl::jit::incore(
      "k", {pl::In("y", pl::Tensor({1, W}, pl::FP32)), pl::Out("y", pl::Tensor({1, W}, pl::FP32))},
      [](pl::Value, pl::Value) {});
  EXPECT_EQ(trace_error(k),
            "compile error: function 'k' (incore): parameter 'y' is declared twice");
}

TEST(DiagnosticsTrace, AMovedFromHandle) {
  const pl::Function k = anyp_test::kernel_of("k", [](pl::Value y) {
    pl::Tile a = pl::zeros({1, W}, pl::FP32);
    pl::Tile b = std::move(a);
    y = pl::store(pl::add(a, b), {0, 0}, y);
  });
  EXPECT_EQ(trace_error(k),
            "compile error: function 'k' (incore): pl.add: a moved-from or empty handle was used");
}

// The kernel captures a scalar of the host body instead of taking it as a
// parameter.
TEST(DiagnosticsTrace, AValueOfAnotherFunction) {
  const pl::Scalar* captured = nullptr;
  const pl::Function k = anyp_test::kernel_of("k", [&captured](pl::Value y) {
    y = pl::store(pl::full({1, anyp_test::kProbeWidth}, *captured, pl::INT32), {0, 0}, y);
  });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", k);
  const pl::HostFunction host = pl::jit::host(
      "host", {pl::InOut("y", pl::Tensor({NR, 1, anyp_test::kProbeWidth}, pl::FP32))},
      [&](pl::Value y) {
        pl::Scalar two = 2;
        captured = &two;
        pl::range(pld::world_size(), [&](pl::Scalar r) { per_rank(y[r], pl::device(r)); });
      });
  EXPECT_EQ(trace_error(host),
            "compile error: function 'k' (incore): pl.full: a value of another function was used; "
            "pass it as a parameter instead of capturing it");
}

TEST(DiagnosticsTrace, ATensorWhereAScalarIsNeeded) {
  const pl::Function k = anyp_test::kernel_of(
      "k", [](pl::Value y) { pl::range(pl::Scalar(y.var()), [](pl::Scalar) {}); });
  EXPECT_EQ(trace_error(k),
            "compile error: function 'k' (incore): pl.range: expected a scalar, got Tensor[1, 32] "
            "FP32");
}

TEST(DiagnosticsTrace, AMatmulBiasOfAnotherDtype) {
  EXPECT_EQ(trace_error(anyp_test::kernel_of("k",
                                             [](pl::Value) {
                                               pl::Tile a = pl::zeros({16, 16}, pl::FP32);
                                               pl::Tile bias = pl::zeros({1, 16}, pl::FP16);
                                               pl::matmul_bias(a, a, bias);
                                             })),
            "compile error: function 'k' (incore): pl.matmul_bias: bias is an FP16 tile; it must "
            "be FP32 (the operands' and the accumulator's)");
}

TEST(DiagnosticsTrace, OffsetsOfAnotherArity) {
  EXPECT_EQ(trace_error(anyp_test::kernel_of("k",
                                             [](pl::Value y) {
                                               pl::load(y, {0, 0, 0}, {1, anyp_test::kProbeWidth});
                                             })),
            "compile error: function 'k' (incore): pl.load: offsets has 3 entries, but the tensor "
            "has 2 dims");
}

// Tensor-level ops: a [1, W] FP32 tensor a, a [W] FP32 tensor b and a
// [1, W] INT32 tensor n.
pl::Function tensor_kernel(const std::function<void(pl::Value, pl::Value, pl::Value)>& body) {
  return pl::jit::incore(
      "k",
      {pl::InOut("a", pl::Tensor({1, W}, pl::FP32)), pl::InOut("b", pl::Tensor({W}, pl::FP32)),
       pl::InOut("n", pl::Tensor({1, W}, pl::INT32))},
      [body](pl::Value a, pl::Value b, pl::Value n) { body(a, b, n); });
}

TEST(DiagnosticsTrace, TensorOpOperandsOfAnotherRank) {
  EXPECT_EQ(
      trace_error(
          tensor_kernel([](pl::Value a, pl::Value b, pl::Value) { pl::tensor::add(a, a, b); })),
      "compile error: function 'k' (incore): pl.tensor.add: rank mismatch: destination [1, 8], "
      "operands [1, 8] and [8]");
}

TEST(DiagnosticsTrace, TensorOpFloatingConstantWithAnIntegerTensor) {
  EXPECT_EQ(trace_error(tensor_kernel(
                [](pl::Value, pl::Value, pl::Value n) { pl::tensor::mul(n, n, 0.5); })),
            "compile error: function 'k' (incore): pl.tensor.mul: a floating constant with an "
            "INT32 tensor; use an integer constant");
}

TEST(DiagnosticsTrace, AGroupOfFloatingRanks) {
  const pl::HostFunction host = host_of([](pl::Value y) {
    const pld::CommDomain pairs = pld::comm_domain("pairs");
    pld::comm_group(pairs, {0, 0.5});
    every_rank_stores(y);
  });
  EXPECT_EQ(trace_error(host),
            "compile error: function 'host' (host): pld.comm_group: ranks, counts and strides "
            "must be integers");
}

// Kernels on a window w [1, W] FP32, a signal sig [NR, 1] INT32 and a plain
// tensor t [1, W] FP32.
pl::Function window_kernel(const std::function<void(pl::Value, pl::Value, pl::Value)>& body) {
  return pl::jit::incore("k",
                         {pl::InOut("w", pld::DistributedTensor({1, W}, pl::FP32)),
                          pl::InOut("sig", pld::DistributedTensor({NR, 1}, pl::INT32)),
                          pl::InOut("t", pl::Tensor({1, W}, pl::FP32))},
                         [body](pl::Value w, pl::Value sig, pl::Value t) { body(w, sig, t); });
}

TEST(DiagnosticsTrace, AFloatingPeer) {
  EXPECT_EQ(trace_error(window_kernel(
                [](pl::Value w, pl::Value, pl::Value t) { pld::tensor::put(w, 0.5, t); })),
            "compile error: function 'k' (incore): pld.tensor.put: peer must be an integer");
}

TEST(DiagnosticsTrace, AFloatingSignalValueOrExpectedCount) {
  EXPECT_EQ(trace_error(window_kernel([](pl::Value, pl::Value sig, pl::Value) {
              pld::system::notify(sig, 0, {0, 0}, 1.5, pld::NotifyOp::Set);
            })),
            "compile error: function 'k' (incore): pld.system.notify: the value (a signal cell "
            "is INT32) must be an integer");
  EXPECT_EQ(trace_error(window_kernel([](pl::Value, pl::Value sig, pl::Value) {
              pld::system::wait(sig, {0, 0}, 0.5, pld::WaitCmp::Ge);
            })),
            "compile error: function 'k' (incore): pld.system.wait: the expected value (a signal "
            "cell is INT32) must be an integer");
}

TEST(DiagnosticsTrace, LoadAndStoreOfAnotherRank) {
  EXPECT_EQ(trace_error(window_kernel([](pl::Value, pl::Value, pl::Value t) {
              pl::load(t, {0, 0}, {1, 1, W});
            })),
            "compile error: function 'k' (incore): pl.load: the tile shape has 3 dims, but the "
            "tensor has 2");
  EXPECT_EQ(trace_error(window_kernel([](pl::Value, pl::Value, pl::Value t) {
              t = pl::store(pl::zeros({1, 1, W}, pl::FP32), {0, 0}, t);
            })),
            "compile error: function 'k' (incore): pl.store: the tile has 3 dims, but the tensor "
            "has 2");
}

TEST(DiagnosticsTrace, RemoteLoadOfAnotherRank) {
  EXPECT_EQ(trace_error(window_kernel([](pl::Value w, pl::Value, pl::Value) {
              pld::tile::remote_load(w, 0, {0, 0, 0}, {1, 1, W});
            })),
            "compile error: function 'k' (incore): pld.tile.remote_load: the tile shape has 3 "
            "dims, but the window has 2");
}

TEST(DiagnosticsTrace, RemoteStoreOfAnotherDtype) {
  EXPECT_EQ(trace_error(window_kernel([](pl::Value w, pl::Value, pl::Value) {
              pld::tile::remote_store(pl::zeros({1, W}, pl::INT32), w, 0, {0, 0});
            })),
            "compile error: function 'k' (incore): pld.tile.remote_store: dtype mismatch: an "
            "INT32 tile stored into DistributedTensor[1, 8] FP32");
}

TEST(DiagnosticsTrace, PutAndGetOfAnotherRank) {
  EXPECT_EQ(trace_error(window_kernel([](pl::Value w, pl::Value, pl::Value t) {
              pld::tensor::put(w, 0, t, {0, 0}, {0, 0}, {1, 1, W});
            })),
            "compile error: function 'k' (incore): pld.tensor.put: the region shape has 3 dims; "
            "destination and source have 2 and 2");
  const pl::Function k =
      pl::jit::incore("k",
                      {pl::InOut("w", pld::DistributedTensor({1, W}, pl::FP32)),
                       pl::InOut("flat", pl::Tensor({W}, pl::FP32))},
                      [](pl::Value w, pl::Value flat) { pld::tensor::get(flat, 0, w); });
  EXPECT_EQ(trace_error(k),
            "compile error: function 'k' (incore): pld.tensor.get: destination Tensor[8] FP32 and "
            "source DistributedTensor[1, 8] FP32 differ in rank; use the region form");
}

// Collectives: a plain tensor x [NR, W] FP32 and INT32 counts [NR, 1], windows
// dst [NR, W] FP32, recv [NR, 1] INT32 and signal [NR, 1] of `signal_dtype`.
pl::Function collective_kernel(
    const std::function<void(pl::Value, pl::Value, pl::Value, pl::Value, pl::Value)>& body,
    pl::DType x_dtype = pl::FP32, pl::DType signal_dtype = pl::INT32) {
  return pl::jit::incore(
      "k",
      {pl::In("x", pl::Tensor({NR, W}, x_dtype)), pl::In("counts", pl::Tensor({NR, 1}, pl::INT32)),
       pl::InOut("dst", pld::DistributedTensor({NR, W}, pl::FP32)),
       pl::InOut("recv", pld::DistributedTensor({NR, 1}, pl::INT32)),
       pl::InOut("signal", pld::DistributedTensor({NR, 1}, signal_dtype))},
      [body](pl::Value x, pl::Value counts, pl::Value dst, pl::Value recv, pl::Value signal) {
        body(x, counts, dst, recv, signal);
      });
}

TEST(DiagnosticsTrace, AllToAllOfAnotherDtype) {
  EXPECT_EQ(trace_error(collective_kernel(
                [](pl::Value x, pl::Value, pl::Value dst, pl::Value, pl::Value signal) {
                  dst = pld::tensor::all_to_all(x, dst, signal);
                },
                pl::FP16)),
            "compile error: function 'k' (incore): pld.tensor.all_to_all: dtype mismatch: source "
            "Tensor[NR, 8] FP16, target DistributedTensor[NR, 8] FP32");
}

TEST(DiagnosticsTrace, AllToAllVCountsAndSignal) {
  EXPECT_EQ(trace_error(collective_kernel(
                [](pl::Value x, pl::Value, pl::Value dst, pl::Value recv, pl::Value signal) {
                  dst = pld::tensor::all_to_all_v(x, recv, dst, recv, signal);
                })),
            "compile error: function 'k' (incore): pld.tensor.all_to_all_v: send_counts must be a "
            "Tensor, got DistributedTensor[NR, 1] INT32");
  EXPECT_EQ(trace_error(collective_kernel(
                [](pl::Value x, pl::Value, pl::Value dst, pl::Value recv, pl::Value signal) {
                  dst = pld::tensor::all_to_all_v(x, x, dst, recv, signal);
                })),
            "compile error: function 'k' (incore): pld.tensor.all_to_all_v: send_counts must be "
            "INT32, got Tensor[NR, 8] FP32");
  EXPECT_EQ(trace_error(collective_kernel(
                [](pl::Value x, pl::Value counts, pl::Value dst, pl::Value recv, pl::Value signal) {
                  dst = pld::tensor::all_to_all_v(x, counts, dst, recv, signal);
                },
                pl::FP32, pl::INT64)),
            "compile error: function 'k' (incore): pld.tensor.all_to_all_v: the signal must be "
            "INT32, got DistributedTensor[NR, 1] INT64");
}

TEST(DiagnosticsTrace, AFloatingModulo) {
  EXPECT_EQ(trace_error(anyp_test::kernel_of("k",
                                             [](pl::Value) {
                                               pl::Scalar half = 0.5;
                                               [[maybe_unused]] pl::Scalar m = half % 2;
                                             })),
            "compile error: function 'k' (incore): scalar %: operands must be integers");
}

TEST(DiagnosticsTrace, IndexingAWindow) {
  const pl::HostFunction host = host_of([](pl::Value y) {
    auto buf = pld::alloc_window_buffer("buf", {NR, W}, pl::FP32);
    pl::Value w = pld::window(buf, {NR, W}, pl::FP32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      [[maybe_unused]] pl::Value row = w[r];
      store_row_on(y[r], pl::device(r));
    });
  });
  EXPECT_EQ(trace_error(host),
            "compile error: function 'host' (host): x[r] needs a tensor with a leading dim, got "
            "DistributedTensor[NR, 8] FP32");
}

TEST(DiagnosticsTrace, CoreNumInAKernel) {
  const pl::Function k =
      pl::jit::incore("k",
                      {pl::InOut("data", pld::DistributedTensor({1, W}, pl::FP32)),
                       pl::InOut("signal", pld::DistributedTensor({NR, 2}, pl::INT32))},
                      [](pl::Value data, pl::Value signal) {
                        data = pld::tensor::allreduce(data, signal, pld::core_num(2));
                      });
  EXPECT_EQ(trace_error(k),
            "compile error: function 'k' (incore): pld.tensor.allreduce with core_num is a "
            "host-level form (the host launches the collective over core_num blocks of every "
            "rank); in a kernel, launch the kernel over pl::blocks(n) instead");
}

// ============================================================================================
// §3.2 — levels and the call graph
// ============================================================================================

TEST(DiagnosticsVerify, ACallInsideAKernel) {
  const pl::Function inner = anyp_test::kernel_of("inner", [](pl::Value) {});
  const pl::Function outer = anyp_test::kernel_of("outer", [inner](pl::Value y) { inner(y); });
  EXPECT_EQ(anyp_test::compile_error(outer, 2),
            "compile error: function 'outer' (incore): op call @inner is not allowed at the "
            "incore level (it is a host and orchestration op)");
}

TEST(DiagnosticsVerify, AnOrchestrationCallingAnOrchestration) {
  const pl::Function twice =
      pl::jit::orchestration("twice", {pl::InOut("y", pl::Tensor({1, W}, pl::FP32))},
                             [](pl::Value y) { store_row_on(y); });
  const pl::HostFunction host = host_of([twice](pl::Value y) {
    pl::range(pld::world_size(), [&](pl::Scalar r) { twice(y[r], pl::device(r)); });
  });
  EXPECT_EQ(compile_host(host, 2),
            "compile error: function 'twice' (orchestration), op call @store_row_on: calls "
            "'store_row_on' (orchestration); an orchestration function calls incore kernels only");
}

TEST(DiagnosticsVerify, CompileOfAFunctionThatIsNotAHost) {
  const pl::HostFunction not_a_host(store_row_on.def());
  EXPECT_EQ(compile_host(not_a_host, 2),
            "compile error: function 'store_row_on' (orchestration): compile() needs a "
            "pl::jit::host function");
}

// ============================================================================================
// §3.3 — binding the host signature
// ============================================================================================

// host(a, k): a [NR, 1, W] FP32 and a scalar k.
const pl::HostFunction tensor_and_scalar = pl::jit::host(
    "host", {pl::InOut("a", pl::Tensor({NR, 1, W}, pl::FP32)), pl::In("k", pl::INT32)},
    [](pl::Value a, pl::Scalar) { every_rank_stores(a); });

TEST(DiagnosticsBind, AnArgumentOfTheOtherKind) {
  const anyp::HostTensor a = anyp::HostTensor::zeros({2, 1, W}, pl::FP32);
  EXPECT_EQ(compile_error(tensor_and_scalar, {a, a}, 2),
            "compile error: function 'host', parameter 'k': expected a scalar, got a tensor");
  EXPECT_EQ(compile_error(tensor_and_scalar, {3, 3}, 2),
            "compile error: function 'host', parameter 'a': expected a tensor, got a scalar");
}

// host(a [extent, W], z [NR, 1, W]): M appears only in a's extent.
std::string bind_error(const pl::Dim& extent, std::int64_t actual) {
  const pl::HostFunction host = pl::jit::host("host",
                                              {pl::In("a", pl::Tensor({extent, W}, pl::FP32)),
                                               pl::InOut("z", pl::Tensor({NR, 1, W}, pl::FP32))},
                                              [](pl::Value, pl::Value z) { every_rank_stores(z); });
  return compile_error(host,
                       {anyp::HostTensor::zeros({actual, W}, pl::FP32),
                        anyp::HostTensor::zeros({2, 1, W}, pl::FP32)},
                       2);
}

TEST(DiagnosticsBind, AnExtentThatCannotBeSolved) {
  EXPECT_EQ(bind_error(M * M, 9),
            "compile error: function 'host', parameter 'a', dim 0: extent M * M is not a positive "
            "exact integer (dim M is not bound; M * M = 9 mentions M more than once: declare a "
            "dim bare (as in [M, ...]) in some host parameter to bind it)");
  EXPECT_EQ(bind_error(M % 4, 3),
            "compile error: function 'host', parameter 'a', dim 0: extent M % 4 is not a positive "
            "exact integer (dim M is not bound; M % 4 = 3: % cannot be solved for a dim: declare "
            "a dim bare (as in [M, ...]) in some host parameter to bind it)");
}

// ============================================================================================
// §3.4 — kernel checks for this P
// ============================================================================================

// The host collective allreduce(data [1, W], signal [NR, cols], core_num(cores)).
pl::HostFunction core_num_program(std::int64_t cores, std::int64_t cols) {
  return host_of([cores, cols](pl::Value y) {
    auto data = pld::alloc_window_buffer("data", {1, W}, pl::FP32);
    auto signal = pld::alloc_window_buffer("signal", {NR, cols}, pl::INT32);
    every_rank_stores(y);
    pld::tensor::allreduce(pld::window(data, {1, W}, pl::FP32),
                           pld::window(signal, {NR, cols}, pl::INT32), pld::core_num(cores));
  });
}

TEST(DiagnosticsCheck, CoreNumOutOfRange) {
  EXPECT_EQ(compile_host(core_num_program(2, 2), 2), "compiled without error");
  EXPECT_EQ(compile_host(core_num_program(0, 2), 2),
            "compile error: function 'host_allreduce_0' (orchestration), op pld.tensor.allreduce: "
            "core_num 0: a collective runs on 1 to 256 blocks");
  EXPECT_EQ(compile_host(core_num_program(257, 300), 2),
            "compile error: function 'host_allreduce_0' (orchestration), op pld.tensor.allreduce: "
            "core_num 257: a collective runs on 1 to 256 blocks");
}

TEST(DiagnosticsCheck, ASignalWithALaneTooFew) {
  EXPECT_EQ(compile_host(core_num_program(4, 3), 2),
            "compile error: function 'host_allreduce_0' (orchestration), op pld.tensor.allreduce: "
            "the Mesh signal of a collective over core_num = 4 blocks must be [P, S] INT32 with S "
            ">= 4 (a lane per block), which is [2, >= 4] at P = 2, got [2, 3]");
}

TEST(DiagnosticsCheck, AParameterOfNineDims) {
  const pl::Shape nine = {1, 1, 1, 1, 1, 1, 1, 1, W};
  const pl::Function k =
      pl::jit::incore("k", {pl::In("x", pl::Tensor(nine, pl::FP32))}, [](pl::Value) {});
  const pl::Function k_on = pl::jit::orchestration_for("k_on", k);
  const pl::HostFunction host =
      pl::jit::host("host",
                    {pl::In("x", pl::Tensor({NR, 1, 1, 1, 1, 1, 1, 1, 1, W}, pl::FP32)),
                     pl::InOut("y", pl::Tensor({NR, 1, W}, pl::FP32))},
                    [k_on](pl::Value x, pl::Value y) {
                      pl::range(pld::world_size(), [&](pl::Scalar r) {
                        k_on(x[r], pl::device(r));
                        store_row_on(y[r], pl::device(r));
                      });
                    });
  EXPECT_EQ(
      compile_error(host,
                    {anyp::HostTensor::zeros({2, 1, 1, 1, 1, 1, 1, 1, 1, W}, pl::FP32),
                     anyp::HostTensor::zeros({2, 1, W}, pl::FP32)},
                    2),
      "compile error: function 'k_on' (orchestration), parameter 'x': 9 dims; anyp supports at "
      "most 8");
}

// The kernel's window w and plain t of the window_kernel, with y [1, W] the t.
pl::HostFunction window_program(const pl::Function& kernel) {
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", kernel);
  return host_of([per_rank](pl::Value y) {
    auto w = pld::alloc_window_buffer("w", {1, W}, pl::FP32);
    auto sig = pld::alloc_window_buffer("sig", {NR, 1}, pl::INT32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      per_rank(pld::window(w, {1, W}, pl::FP32), pld::window(sig, {NR, 1}, pl::INT32), y[r],
               pl::device(r));
    });
  });
}

// Extents of an op's result and of a put's region that do not divide for P = 3.
TEST(DiagnosticsCheck, ResultAndRegionShapesThatDoNotEvaluate) {
  EXPECT_EQ(compile_host(window_program(window_kernel([](pl::Value w, pl::Value, pl::Value t) {
                           pl::tensor::copy(pl::tensor::slice(t, {0, 0}, {1, W / NR}),
                                            pl::tensor::slice(w, {0, 0}, {1, W / NR}));
                         })),
                         3),
            "compile error: function 'k' (incore), op pl.tensor.slice, result shape, dim 1: "
            "extent 8 / NR is not a positive exact integer (8 / 3 is not an exact integer)");
  EXPECT_EQ(compile_host(window_program(window_kernel([](pl::Value w, pl::Value, pl::Value t) {
                           pld::tensor::put(w, 0, t, {0, 0}, {0, 0}, {1, W / NR});
                         })),
                         3),
            "compile error: function 'k' (incore), op pld.tensor.put, region shape, dim 1: extent "
            "8 / NR is not a positive exact integer (8 / 3 is not an exact integer)");
}

TEST(DiagnosticsCheck, AWholePutOfAnotherShape) {
  EXPECT_EQ(compile_host(window_program(window_kernel([](pl::Value w, pl::Value, pl::Value t) {
                           pld::tensor::put(w, 0, pl::tensor::slice(t, {0, 0}, {1, 4}));
                         })),
                         2),
            "compile error: function 'k' (incore), op pld.tensor.put: destination [1, 8] and "
            "source [1, 4] differ; use the region form (dst_offsets, src_offsets, shape)");
}

TEST(DiagnosticsCheck, ATensorOpOfTwoShapes) {
  EXPECT_EQ(compile_host(window_program(window_kernel([](pl::Value w, pl::Value, pl::Value t) {
                           pl::tensor::add(t, t, pl::tensor::slice(w, {0, 0}, {1, 4}));
                         })),
                         2),
            "compile error: function 'k' (incore), op pl.tensor.add: the operand [1, 4] and the "
            "destination [1, 8] differ; a tensor op takes one shape (pl::tensor::slice the larger "
            "one)");
}

TEST(DiagnosticsCheck, SendCountsOfAnotherShape) {
  const pl::Function k = pl::jit::incore(
      "k",
      {pl::In("x", pl::Tensor({NR, W}, pl::FP32)), pl::In("counts", pl::Tensor({1, 1}, pl::INT32)),
       pl::InOut("dst", pld::DistributedTensor({NR, W}, pl::FP32)),
       pl::InOut("recv", pld::DistributedTensor({NR, 1}, pl::INT32)),
       pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
      [](pl::Value x, pl::Value counts, pl::Value dst, pl::Value recv, pl::Value signal) {
        dst = pld::tensor::all_to_all_v(x, counts, dst, recv, signal);
      });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", k);
  const pl::HostFunction host =
      pl::jit::host("host",
                    {pl::In("x", pl::Tensor({NR, NR, W}, pl::FP32)),
                     pl::In("counts", pl::Tensor({NR, 1, 1}, pl::INT32))},
                    [per_rank](pl::Value x, pl::Value counts) {
                      auto dst = pld::alloc_window_buffer("dst", {NR, W}, pl::FP32);
                      auto recv = pld::alloc_window_buffer("recv", {NR, 1}, pl::INT32);
                      auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                      pl::range(pld::world_size(), [&](pl::Scalar r) {
                        per_rank(x[r], counts[r], pld::window(dst, {NR, W}, pl::FP32),
                                 pld::window(recv, {NR, 1}, pl::INT32),
                                 pld::window(signal, {NR, 1}, pl::INT32), pl::device(r));
                      });
                    });
  EXPECT_EQ(compile_error(host,
                          {anyp::HostTensor::zeros({3, 3, W}, pl::FP32),
                           anyp::HostTensor::zeros({3, 1, 1}, pl::INT32)},
                          3),
            "compile error: function 'k' (incore), op pld.tensor.all_to_all_v: send_counts must be "
            "[P, 1] INT32, which is [3, 1] at P = 3, got [1, 1]");
}

// The orchestration passes a [1, 4] slice where the kernel takes [1, W].
TEST(DiagnosticsCheck, AKernelArgumentOfAnotherShape) {
  const pl::Function per_rank = pl::jit::orchestration(
      "per_rank", {pl::InOut("y", pl::Tensor({1, W}, pl::FP32))}, [](pl::Value y) {
        store_row(pl::tensor::slice(y, {0, 0}, {1, 4}));
      });
  const pl::HostFunction host = host_of([per_rank](pl::Value y) {
    pl::range(pld::world_size(), [&](pl::Scalar r) { per_rank(y[r], pl::device(r)); });
  });
  EXPECT_EQ(compile_host(host, 2),
            "compile error: function 'per_rank' (orchestration), op call @store_row: argument 0 "
            "('y'): expected Tensor[1, 8] FP32, got Tensor[1, 4] FP32");
}

// ============================================================================================
// §3.5 — running the host at compile time
// ============================================================================================

TEST(DiagnosticsHost, AWindowBufferAllocatedTwice) {
  EXPECT_EQ(compile_host(host_of([](pl::Value y) {
                           pld::alloc_window_buffer("buf", {1, W}, pl::FP32);
                           pld::alloc_window_buffer("buf", {1, W}, pl::FP32);
                           every_rank_stores(y);
                         }),
                         2),
            "compile error: function 'host' (host): window buffer 'buf' is allocated twice");
}

TEST(DiagnosticsHost, AViewTooLargeToAddress) {
  constexpr std::int64_t kBig = std::int64_t{1} << 31;
  EXPECT_EQ(compile_host(host_of([](pl::Value y) {
                           auto buf = pld::alloc_window_buffer("buf", {1, W}, pl::FP32);
                           pld::window(buf, {kBig, kBig, 8}, pl::FP32);
                           every_rank_stores(y);
                         }),
                         2),
            "compile error: function 'host' (host): pld.window of 'buf': [2147483648, 2147483648, "
            "8] FP32 is too large: its size in bytes overflows 64 bits");
}

TEST(DiagnosticsHost, ABufferShapeThatDoesNotEvaluate) {
  EXPECT_EQ(compile_host(host_of([](pl::Value y) {
                           pld::alloc_window_buffer("buf", {1, W / NR}, pl::FP32);
                           every_rank_stores(y);
                         }),
                         3),
            "compile error: function 'host' (host), op pld.alloc_window_buffer 'buf', dim 1: "
            "extent 8 / NR is not a positive exact integer (8 / 3 is not an exact integer)");
  EXPECT_EQ(compile_host(host_of([](pl::Value y) {
                           auto buf = pld::alloc_window_buffer("buf", {1, W}, pl::FP32);
                           pld::window(buf, {1, W / NR}, pl::FP32);
                           every_rank_stores(y);
                         }),
                         3),
            "compile error: function 'host' (host), op pld.window of 'buf', dim 1: extent 8 / NR "
            "is not a positive exact integer (8 / 3 is not an exact integer)");
}

TEST(DiagnosticsHost, ABufferOfNineDims) {
  EXPECT_EQ(compile_host(host_of([](pl::Value y) {
                           pld::alloc_window_buffer("buf", {1, 1, 1, 1, 1, 1, 1, 1, W}, pl::FP32);
                           every_rank_stores(y);
                         }),
                         2),
            "compile error: function 'host' (host), op pld.alloc_window_buffer 'buf': 9 dims; anyp "
            "supports at most 8");
}

// The dispatch of rank r goes to device r + 1: past the device list at the last rank.
TEST(DiagnosticsHost, ADeviceOutOfRange) {
  EXPECT_EQ(compile_host(host_of([](pl::Value y) {
                           pl::range(pld::world_size(),
                                     [&](pl::Scalar r) { store_row_on(y[r], pl::device(r + 1)); });
                         }),
                         3),
            "compile error: function 'host' (host): dispatch of 'store_row_on': pl::device(3) is "
            "out of range for P = 3");
}

// A host parameter declared as a window is a host tensor all the same: it
// is not a pld::window view.
const pl::Function window_row = pl::jit::orchestration_for(
    "window_row", pl::jit::incore("k", {pl::InOut("w", pld::DistributedTensor({1, W}, pl::FP32))},
                                  [](pl::Value w) {
                                    w = pl::store(pl::full({1, W}, 1.0, pl::FP32), {0, 0}, w);
                                  }));

std::string compile_window_parameter(const std::function<void(pl::Value)>& body) {
  const pl::HostFunction host =
      pl::jit::host("host", {pl::InOut("w", pld::DistributedTensor({1, W}, pl::FP32))}, body);
  return compile_error(host, {anyp::HostTensor::zeros({1, W}, pl::FP32)}, 2);
}

// A host parameter declared as a window view is refused with the signature
// (it would be bound to a host tensor all the same).
TEST(DiagnosticsHost, AHostParameterDeclaredAsAWindowView) {
  EXPECT_EQ(compile_window_parameter([](pl::Value w) {
              pl::range(pld::world_size(), [&](pl::Scalar r) { window_row(w, pl::device(r)); });
            }),
            "compile error: function 'host' (host): parameter 'w' is a pld::DistributedTensor, "
            "but a host function's parameters are the run's arguments, host tensors and scalars: "
            "declare it pl::Tensor (the host makes window views itself, with "
            "pld::alloc_window_buffer and pld::window)");
}

// A row bound inside a loop that runs no iteration holds no value after it.
TEST(DiagnosticsHost, AValueThatWasNeverSet) {
  EXPECT_EQ(compile_host(host_of([](pl::Value y) {
                           std::optional<pl::Value> row;
                           pl::range(0, [&](pl::Scalar r) { row.emplace(y[r]); });
                           pl::range(pld::world_size(),
                                     [&](pl::Scalar r) { store_row_on(*row, pl::device(r)); });
                         }),
                         2),
            "compile error: function 'host' (host): dispatch of 'store_row_on', argument 0 ('y'): "
            "%2 was never set when the host reached this dispatch (it is assigned only inside a "
            "pl::range that ran no iteration or a pl::if_ branch that was not taken)");
}

// ============================================================================================
// §6 — host tensors, artifacts and compile-only runs
// ============================================================================================

TEST(DiagnosticsOther, AViewOfNullData) {
  EXPECT_EQ(message_of<std::invalid_argument>([] {
              anyp::HostTensor::view(nullptr, {2, W}, pl::FP32);
            }),
            "HostTensor::view: null data for tensor [2, 8]");
}

// A scratch directory under the system's temporary directory.
struct ScratchDir {
  ScratchDir() {
    path = std::filesystem::temp_directory_path() /
           ("anyp_diagnostics_" + std::to_string(::getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};

anyp::CompiledProgram compiled_step07() {
  const anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, anyp_test::kStep07Size}, pl::FP32);
  const anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, anyp_test::kStep07Size}, pl::FP32);
  return anyp_test::ring_get().compile({x, y}, anyp::RunConfig::for_world_size(2));
}

// An output directory under a regular file cannot be created.
TEST(DiagnosticsOther, AnOutputDirectoryThatCannotBeCreated) {
  ScratchDir scratch;
  const std::filesystem::path file = scratch.path / "a_file";
  std::ofstream(file) << "not a directory\n";
  anyp::CompiledProgram compiled = compiled_step07();
  const std::string dir = (file / "out").string();
  EXPECT_EQ(message_of<anyp::Error>([&] { compiled.write_artifact(dir); }),
            "cannot create output directory " + dir + ": Not a directory");
}

// An artifact file whose name is taken by a directory cannot be written.
TEST(DiagnosticsOther, AnArtifactFileThatCannotBeWritten) {
  ScratchDir scratch;
  std::filesystem::create_directories(scratch.path / "symbolic.ir");
  anyp::CompiledProgram compiled = compiled_step07();
  EXPECT_EQ(message_of<anyp::Error>([&] { compiled.write_artifact(scratch.path.string()); }),
            "cannot write " + (scratch.path / "symbolic.ir").string());
}

TEST(DiagnosticsOther, CompileOnlyWithoutAnOutputDirectory) {
  anyp::CompiledProgram compiled = compiled_step07();
  anyp::cli::Options options;
  options.output_dir.clear();
  EXPECT_EQ(
      message_of<std::invalid_argument>([&] { anyp::cli::finish_compile_only(compiled, options); }),
      "finish_compile_only: Options::output_dir is empty");
}

TEST(DiagnosticsOther, WaitOnAHandleWithoutARun) {
  EXPECT_EQ(message_of<anyp::Error>([] { anyp::RunHandle().wait(); }),
            "RunHandle::wait: the handle has no run (default-constructed)");
}

}  // namespace
