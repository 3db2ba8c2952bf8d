// source_location_test.cpp — every op records where the user wrote it, and
// compile errors name it: "op pl.matmul at source_location_test.cpp:LINE"
// for errors found when the program is compiled for a P, and
// "function 'k' (incore) at source_location_test.cpp:LINE" for errors found
// while a body is traced. The line is the pl/pld call's (the outermost one:
// pl::zeros built on pl::full names the user's line), also inside pl::range
// and pl::if_ bodies and in a callee traced from its caller; the Python
// front-end's pinned locations win over C++ ones.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <string>

#include "frontend/call_site.hpp"
#include "ir/source_loc.hpp"

namespace {

std::string at(int line) { return " at source_location_test.cpp:" + std::to_string(line); }

std::string trace_error_of(const pl::Function& fn) {
  try {
    fn.ir_text();
  } catch (const anyp::CompileError& e) {
    return e.what();
  }
  return "traced without error";
}

std::string compile_error_of(const pl::Function& kernel, std::int64_t P) {
  const pl::Dim NR = pl::dynamic("NR");
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", kernel);
  const pl::HostFunction host = pl::jit::host(
      "host", {pl::InOut("y", pl::Tensor({NR, 1, 32}, pl::FP32))}, [per_rank](pl::Value y) {
        pl::range(pld::world_size(), [&](pl::Scalar r) { per_rank(y[r], pl::device(r)); });
      });
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, 32}, pl::FP32);
  try {
    host.compile({y}, anyp::RunConfig::for_world_size(P));
  } catch (const anyp::CompileError& e) {
    return e.what();
  }
  return "compiled without error";
}

pl::Function kernel(const std::function<void(pl::Value)>& body) {
  return pl::jit::incore("k", {pl::InOut("y", pl::Tensor({1, 32}, pl::FP32))}, body);
}

TEST(SourceLocation, ATraceErrorNamesTheLineOfTheCall) {
  int line = 0;
  const auto k = kernel([&](pl::Value y) {
    pl::Tile t = pl::load(y, {0, 0}, {1, 32});
    line = __LINE__ + 1;
    pl::store(pl::cast(t, pl::INT32), {0, 0}, y);
  });
  const std::string error = trace_error_of(k);
  EXPECT_EQ(error, "compile error: function 'k' (incore)" + at(line) +
                       ": pl.store: dtype mismatch: an INT32 tile stored into an FP32 tensor; "
                       "convert it with pl::cast");
}

TEST(SourceLocation, ACompileErrorNamesTheOpAndItsLine) {
  int line = 0;
  const auto k = kernel([&](pl::Value y) {
    pl::Tile a = pl::zeros({8, 16}, pl::FP32);
    pl::Tile b = pl::zeros({8, 8}, pl::FP32);
    line = __LINE__ + 1;
    pl::Tile c = pl::matmul(a, b);
    (void)c;
    (void)y;
  });
  // Extents are checked once the program is compiled for a P.
  const std::string error = compile_error_of(k, 2);
  EXPECT_EQ(error, "compile error: function 'k' (incore), op pl.matmul" + at(line) +
                       ": inner dims differ: lhs [8, 16] and rhs [8, 8]; lhs's columns (16) must "
                       "equal rhs's rows (8)");
}

TEST(SourceLocation, AnOpInsideARangeBodyNamesItsOwnLineNotTheLoops) {
  int line = 0;
  const auto k = kernel([&](pl::Value) {
    pl::range(4, [&](pl::Scalar i) {
      (void)i;
      line = __LINE__ + 1;
      pl::Tile t = pl::matmul(pl::zeros({8, 16}, pl::FP32), pl::zeros({8, 8}, pl::FP32));
      (void)t;
    });
  });
  const std::string error = compile_error_of(k, 2);
  EXPECT_NE(error.find("op pl.matmul" + at(line) + ": inner dims differ"), std::string::npos)
      << error;
}

TEST(SourceLocation, AZeroStepNamesTheRangesLine) {
  int line = 0;
  const auto k = kernel([&](pl::Value y) {
    line = __LINE__ + 1;
    pl::range(0, 4, 0, [&](pl::Scalar) { (void)y; });
  });
  const std::string error = trace_error_of(k);
  EXPECT_EQ(error, "compile error: function 'k' (incore)" + at(line) +
                       ": pl.range: the step is 0; use a positive step to count up or a negative "
                       "one to count down");
}

TEST(SourceLocation, APinnedLocationWinsAndAnUnpinnedOneIsGone) {
  const auto k = kernel([](pl::Value y) {
    anyp::detail::pin_call_site("/home/user/kernels/step.py", 42, 5);
    pl::Tile t = pl::load(y, {0, 0}, {1, 32});
    pl::store(pl::cast(t, pl::INT32), {0, 0}, y);
  });
  const std::string error = trace_error_of(k);
  anyp::detail::unpin_call_site();
  EXPECT_EQ(error.substr(0, 56), "compile error: function 'k' (incore) at step.py:42: pl.s");
  EXPECT_FALSE(anyp::detail::current_call_site().known());
}

TEST(SourceLocation, PrintsTheBaseNameAndTheLine) {
  const anyp::ir::SourceLoc loc{anyp::ir::intern_file_name("/a/b/c/kernel.cpp"), 7, 3};
  EXPECT_EQ(anyp::ir::to_string(loc), "kernel.cpp:7");
  EXPECT_EQ(anyp::ir::site_name("pl.add", loc), "pl.add at kernel.cpp:7");
  EXPECT_EQ(anyp::ir::site_name("pl.add", anyp::ir::SourceLoc{}), "pl.add");
  EXPECT_EQ(anyp::ir::intern_file_name("/a/b/c/kernel.cpp"), loc.file);
}

}  // namespace
