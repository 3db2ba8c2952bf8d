// trace_recovery_test.cpp — a failed trace leaves nothing behind (issue 7):
// an exception thrown while a body is traced (the user's own, or a
// CompileError from a pl:: op), from an incore kernel, an orchestration
// function or the host, also from inside pl::range and pl::if_ bodies,
// reaches the caller of compile() unchanged (same type, same what()); the
// thread's trace stack is unwound, no plan is cached, and the next compile of
// the same function objects traces them again and runs with exact results.
// Also: pl::dynamic dims of the same name are one dim (bound once, checked
// by the rank-loop rule, conflicts reported with parameter and dim).
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include "compiler/pipeline.hpp"
#include "frontend/trace.hpp"
#include "ir/expr.hpp"
#include "support/source_locations.hpp"

namespace {

constexpr std::int64_t TILE = 8;  // [8, 8] FP32 tiles: rows of 32 bytes
const pl::Dim NR = pl::dynamic("NR");

// A user-defined exception type: it must arrive as itself, not as a
// CompileError or a sliced std::runtime_error.
struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Code run at fixed places while the program below is traced.
struct Hooks {
  std::function<void()> kernel;      // top of the incore body
  std::function<void()> kernel_if;   // inside the kernel's pl::if_ body
  std::function<void()> host_range;  // inside the host's rank loop body
  std::function<void()> host;        // in the host body, after the rank loop
};

void run_hook(const std::function<void()>& hook) {
  if (hook) hook();
}

// Throws `error` on the first call only (counting calls in `calls`).
template <class E>
std::function<void()> throw_once(int& calls, E error) {
  return [&calls, error] {
    if (++calls == 1) throw error;
  };
}

const std::vector<pl::Param> kRankParams = {pl::In("x", pl::Tensor({TILE, TILE}, pl::FP32)),
                                            pl::Out("y", pl::Tensor({TILE, TILE}, pl::FP32)),
                                            pl::In("r", pl::INT32)};

// y = x + r, except on rank 0: y = 2 * x.
pl::Function make_kernel(const Hooks& hooks) {
  return pl::jit::incore("hello", kRankParams, [&hooks](pl::Value x, pl::Value y, pl::Scalar r) {
    run_hook(hooks.kernel);
    pl::Tile t = pl::load(x, {0, 0}, {TILE, TILE});
    pl::Scalar rf = pl::cast(r, pl::FP32);
    y = pl::store(pl::add(t, rf), {0, 0}, y);
    pl::if_(r == 0, [&] {
      run_hook(hooks.kernel_if);
      y = pl::store(pl::mul(t, 2.0), {0, 0}, y);
    });
  });
}

pl::Function make_per_rank(const pl::Function& kernel) {
  return pl::jit::orchestration(
      "per_rank", kRankParams,
      [kernel](pl::Value x, pl::Value y, pl::Scalar r) { kernel(x, y, r); });
}

pl::HostFunction make_host(const pl::Function& per_rank, const Hooks& hooks,
                           std::string name = "host") {
  return pl::jit::host(std::move(name),
                       {pl::In("x", pl::Tensor({NR, TILE, TILE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, TILE, TILE}, pl::FP32))},
                       [per_rank, &hooks](pl::Value x, pl::Value y) {
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           run_hook(hooks.host_range);
                           pl::Value xr = x[r];
                           pl::Value yr = y[r];
                           per_rank(xr, yr, r, pl::device(r));
                         });
                         run_hook(hooks.host);
                       });
}

// How a compile ended: the exception's dynamic type and what(), or none.
struct Outcome {
  const std::type_info* type = nullptr;
  std::string what;
};

Outcome compile_outcome(const pl::HostFunction& host, const std::vector<anyp::HostTensor>& args,
                        std::int64_t P) {
  std::vector<anyp::ArgRef> refs(args.begin(), args.end());
  try {
    host.compile(refs, anyp::RunConfig::for_world_size(P));
  } catch (const std::exception& e) {
    return {&typeid(e), anyp_test::without_locations(e.what())};
  }
  return {};
}

Outcome compile_outcome(const pl::HostFunction& host, std::int64_t P) {
  return compile_outcome(host,
                         {anyp::HostTensor::zeros({P, TILE, TILE}, pl::FP32),
                          anyp::HostTensor::zeros({P, TILE, TILE}, pl::FP32)},
                         P);
}

// Compiles `host` (the program above) at P, runs it on x = arange and checks
// every element exactly: y[0] = 2 * x[0], y[r] = x[r] + r for r > 0.
void expect_runs_exactly(const pl::HostFunction& host, std::int64_t P) {
  anyp::HostTensor x = anyp::HostTensor::arange({P, TILE, TILE}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({P, TILE, TILE}, pl::FP32);
  host.compile({x, y}, anyp::RunConfig::for_world_size(P))(x, y);
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, TILE, TILE}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r) {
    for (std::int64_t i = 0; i < TILE; ++i) {
      for (std::int64_t j = 0; j < TILE; ++j) {
        const double v = x.at({r, i, j});
        expected.set_at({r, i, j}, r == 0 ? 2 * v : v + static_cast<double>(r));
      }
    }
  }
  EXPECT_TRUE(anyp::equal_exact(y, expected)) << "P=" << P;
}

// After a failed compile: no trace is active on this thread and no plan was
// added to the compile cache.
void expect_nothing_left(std::size_t plans_before) {
  EXPECT_EQ(anyp::detail::Trace::active(), nullptr);
  EXPECT_EQ(anyp::compiler::plan_cache_size(), plans_before);
}

// ---- exceptions while tracing -----------------------------------------------------------

// The incore kernel throws the user's own exception type on its first trace
// (host -> orchestration -> kernel). Afterwards the kernel, its
// orchestration caller and another host calling that orchestration all
// compile, and the host that failed compiles and runs.
TEST(TraceRecovery, KernelExceptionReachesTheCallerUnchanged) {
  int kernel_traces = 0;
  Hooks hooks;
  hooks.kernel = throw_once(kernel_traces, UserError("hello: bad input 7"));
  const pl::Function per_rank = make_per_rank(make_kernel(hooks));
  const pl::HostFunction host = make_host(per_rank, hooks);
  const pl::HostFunction other_host = make_host(per_rank, hooks, "other_host");

  const std::size_t plans = anyp::compiler::plan_cache_size();
  const Outcome failed = compile_outcome(host, 3);
  ASSERT_NE(failed.type, nullptr);
  EXPECT_TRUE(*failed.type == typeid(UserError)) << failed.type->name();
  EXPECT_EQ(failed.what, "hello: bad input 7");
  expect_nothing_left(plans);
  EXPECT_EQ(kernel_traces, 1);

  expect_runs_exactly(other_host, 3);  // traces per_rank and hello again
  EXPECT_EQ(kernel_traces, 2);
  for (std::int64_t P : {2, 3, 5}) expect_runs_exactly(host, P);
  EXPECT_EQ(kernel_traces, 2);  // a successful trace is kept
}

// A CompileError raised by a pl:: op inside the kernel's pl::if_ body (a
// float loop bound) is not cached either: the next compile traces again.
TEST(TraceRecovery, CompileErrorFromAPlOpInAnIfBodyIsNotCached) {
  int if_traces = 0;
  Hooks hooks;
  hooks.kernel_if = [&if_traces] {
    if (++if_traces == 1) pl::range(1.5, [](pl::Scalar) {});
  };
  const pl::HostFunction host = make_host(make_per_rank(make_kernel(hooks)), hooks);

  const std::size_t plans = anyp::compiler::plan_cache_size();
  const Outcome failed = compile_outcome(host, 2);
  ASSERT_NE(failed.type, nullptr);
  EXPECT_TRUE(*failed.type == typeid(anyp::CompileError)) << failed.type->name();
  EXPECT_EQ(failed.what,
            "compile error: function 'hello' (incore): pl.range: bounds must be integers");
  expect_nothing_left(plans);
  for (std::int64_t P : {2, 3}) expect_runs_exactly(host, P);
  EXPECT_EQ(if_traces, 2);
}

// The host body itself throws, after its rank loop has traced the
// orchestration function and the kernel: the host is traced again next
// time, the callees (traced successfully) are reused.
TEST(TraceRecovery, HostBodyExceptionReachesTheCallerUnchanged) {
  int host_traces = 0, kernel_traces = 0;
  Hooks hooks;
  hooks.host = throw_once(host_traces, std::runtime_error("host: no plan today"));
  hooks.kernel = [&kernel_traces] { ++kernel_traces; };
  const pl::HostFunction host = make_host(make_per_rank(make_kernel(hooks)), hooks);

  const std::size_t plans = anyp::compiler::plan_cache_size();
  const Outcome failed = compile_outcome(host, 3);
  ASSERT_NE(failed.type, nullptr);
  EXPECT_TRUE(*failed.type == typeid(std::runtime_error)) << failed.type->name();
  EXPECT_EQ(failed.what, "host: no plan today");
  expect_nothing_left(plans);

  expect_runs_exactly(host, 3);
  EXPECT_EQ(host_traces, 2);
  EXPECT_EQ(kernel_traces, 1);
}

// A throw from inside the host's pl::range body (a block the trace had
// opened) unwinds the same way.
TEST(TraceRecovery, ExceptionFromARangeBodyReachesTheCallerUnchanged) {
  int range_traces = 0;
  Hooks hooks;
  hooks.host_range = throw_once(range_traces, std::logic_error("rank loop: r is unknown"));
  const pl::HostFunction host = make_host(make_per_rank(make_kernel(hooks)), hooks);

  const std::size_t plans = anyp::compiler::plan_cache_size();
  const Outcome failed = compile_outcome(host, 5);
  ASSERT_NE(failed.type, nullptr);
  EXPECT_TRUE(*failed.type == typeid(std::logic_error)) << failed.type->name();
  EXPECT_EQ(failed.what, "rank loop: r is unknown");
  expect_nothing_left(plans);

  for (std::int64_t P : {5, 2}) expect_runs_exactly(host, P);
  EXPECT_EQ(range_traces, 2);
}

// A throw from the kernel's pl::if_ body, while the host trace, the
// orchestration trace and the kernel trace are all active (three nested
// traces on this thread), unwinds all three.
TEST(TraceRecovery, ExceptionFromAnIfBodyUnwindsEveryNestedTrace) {
  int if_traces = 0;
  Hooks hooks;
  hooks.kernel_if = throw_once(if_traces, UserError("if body failed"));
  const pl::HostFunction host = make_host(make_per_rank(make_kernel(hooks)), hooks);

  const std::size_t plans = anyp::compiler::plan_cache_size();
  const Outcome failed = compile_outcome(host, 2);
  ASSERT_NE(failed.type, nullptr);
  EXPECT_TRUE(*failed.type == typeid(UserError)) << failed.type->name();
  EXPECT_EQ(failed.what, "if body failed");
  expect_nothing_left(plans);

  expect_runs_exactly(host, 2);
  EXPECT_EQ(if_traces, 2);
}

// An exception that leaves a pl::range body but is caught inside the traced
// body would leave the loop's block open and misplace every later op: that
// is a compile error, not a silently wrong program. It poisons nothing.
TEST(TraceRecovery, ExceptionCaughtInsideTheBodyIsACompileError) {
  int host_traces = 0;
  Hooks hooks;
  hooks.host = [&host_traces] {
    if (++host_traces > 1) return;
    try {
      pl::range(2, [](pl::Scalar) { throw std::runtime_error("swallowed"); });
    } catch (const std::runtime_error&) {
    }
  };
  const pl::HostFunction host = make_host(make_per_rank(make_kernel(hooks)), hooks);

  const std::size_t plans = anyp::compiler::plan_cache_size();
  const Outcome failed = compile_outcome(host, 3);
  ASSERT_NE(failed.type, nullptr);
  EXPECT_TRUE(*failed.type == typeid(anyp::CompileError)) << failed.type->name();
  EXPECT_EQ(failed.what,
            "compile error: function 'host' (host): a pl::range or pl::if_ body was left by an "
            "exception that was caught inside this function's body; let exceptions thrown while "
            "tracing propagate out of the body");
  expect_nothing_left(plans);

  expect_runs_exactly(host, 3);
  EXPECT_EQ(host_traces, 2);
}

// Recursion is still reported, and the error does not stick: once the body
// no longer calls itself, the same function objects compile and run.
TEST(TraceRecovery, RecursionErrorDoesNotStick) {
  Hooks hooks;
  const pl::Function kernel = make_kernel(hooks);
  int traces = 0;
  std::optional<pl::Function> self;
  self.emplace(pl::jit::orchestration(
      "per_rank", kRankParams, [&self, &traces, kernel](pl::Value x, pl::Value y, pl::Scalar r) {
        if (++traces == 1) (*self)(x, y, r);
        kernel(x, y, r);
      }));
  const pl::HostFunction host = make_host(*self, hooks);

  const std::size_t plans = anyp::compiler::plan_cache_size();
  const Outcome failed = compile_outcome(host, 2);
  ASSERT_NE(failed.type, nullptr);
  EXPECT_TRUE(*failed.type == typeid(anyp::CompileError)) << failed.type->name();
  EXPECT_EQ(failed.what,
            "compile error: function 'per_rank' calls itself (directly or through the functions "
            "it calls); a traced program cannot recurse");
  expect_nothing_left(plans);

  expect_runs_exactly(host, 2);
  EXPECT_EQ(traces, 2);
}

// ---- same-name dynamic dims ------------------------------------------------------------

// Another pl::dynamic("NR") call, as a kernel written in another translation
// unit would make.
pl::Dim kernel_nr() { return pl::dynamic("NR"); }

// y[r] = x[(r + 1) % P] + x[r]. The host declares x with the namespace-scope
// NR and y with `host_y_nr`; the kernel reads the whole x through a
// parameter shaped with kernel_nr() and uses that dim as a value.
pl::HostFunction make_neighbour_sum(const pl::Dim& host_y_nr) {
  const pl::Dim KNR = kernel_nr();
  const std::vector<pl::Param> params = {pl::In("all", pl::Tensor({KNR, TILE}, pl::FP32)),
                                         pl::Out("y", pl::Tensor({1, TILE}, pl::FP32)),
                                         pl::In("r", pl::INT32)};
  const pl::Function kernel =
      pl::jit::incore("neighbour_sum", params, [KNR](pl::Value all, pl::Value y, pl::Scalar r) {
        pl::Scalar right = (r + 1) % KNR;
        pl::Tile a = pl::load(all, {right, 0}, {1, TILE});
        pl::Tile b = pl::load(all, {r, 0}, {1, TILE});
        y = pl::store(pl::add(a, b), {0, 0}, y);
      });
  const pl::Function per_rank = pl::jit::orchestration(
      "per_rank", params,
      [kernel](pl::Value all, pl::Value y, pl::Scalar r) { kernel(all, y, r); });
  return pl::jit::host("host",
                       {pl::In("x", pl::Tensor({NR, TILE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({host_y_nr, 1, TILE}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value yr = y[r];
                           per_rank(x, yr, r, pl::device(r));
                         });
                       });
}

TEST(TraceRecovery, SameNameDynamicDimsAreOneDim) {
  const pl::Dim again = kernel_nr();
  EXPECT_EQ(again.node()->dim_id, NR.node()->dim_id);
  EXPECT_NE(again.node()->dim_id, anyp::ir::kWorldSizeDimId);
  EXPECT_EQ(again.to_string(), "NR");
  EXPECT_NE(pl::dynamic("NR_other").node()->dim_id, NR.node()->dim_id);

  const pl::HostFunction host = make_neighbour_sum(pl::dynamic("NR"));
  for (std::int64_t P : {2, 3, 5}) {
    anyp::HostTensor x = anyp::HostTensor::arange({P, TILE}, pl::FP32);
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, TILE}, pl::FP32);
    host.compile({x, y}, anyp::RunConfig::for_world_size(P))(x, y);
    anyp::HostTensor expected = anyp::HostTensor::zeros({P, 1, TILE}, pl::FP32);
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t j = 0; j < TILE; ++j) {
        expected.set_at({r, 0, j}, x.at({(r + 1) % P, j}) + x.at({r, j}));
      }
    }
    EXPECT_TRUE(anyp::equal_exact(y, expected)) << "P=" << P;
  }
}

// One name, one value: two arguments that disagree on NR (declared through
// two pl::dynamic("NR") objects) are reported with parameter and dim, and
// the rank-loop rule for NR applies to the second object too.
TEST(TraceRecovery, SameNameDynamicDimsBindToOneValue) {
  const pl::HostFunction host = make_neighbour_sum(pl::dynamic("NR"));
  const auto args = [](std::int64_t x_rows, std::int64_t y_rows) {
    return std::vector<anyp::HostTensor>{anyp::HostTensor::zeros({x_rows, TILE}, pl::FP32),
                                         anyp::HostTensor::zeros({y_rows, 1, TILE}, pl::FP32)};
  };
  const Outcome conflict = compile_outcome(host, args(4, 3), 3);
  ASSERT_NE(conflict.type, nullptr);
  EXPECT_TRUE(*conflict.type == typeid(anyp::CompileError)) << conflict.type->name();
  EXPECT_EQ(conflict.what,
            "compile error: function 'host', parameter 'y', dim 0: dim NR is bound to 4 by "
            "parameter 'x' dim 0, but the argument has 3");
  const Outcome sliced = compile_outcome(host, args(3, 4), 3);
  ASSERT_NE(sliced.type, nullptr);
  EXPECT_EQ(sliced.what,
            "compile error: function 'host', parameter 'y', dim 0: NR is 4 here, but the rank "
            "loop over pld::world_size() runs P = 3 ranks (from the device list) and gives rank "
            "r the row y[r]: a tensor sliced by the rank loop needs exactly P rows\n"
            "  hint: shape the host tensors from the device count");
  const Outcome ok = compile_outcome(host, args(3, 3), 3);
  EXPECT_EQ(ok.type, nullptr) << ok.what;
}

}  // namespace
