// dim_solving_test.cpp — host dims bound through expressions (issue 12,
// item 1): a parameter declared [M * 2, 8] binds M from the argument's
// dim 0, as [(M - 1) * 4], [M / 2] and chains of such extents do; the
// bound dims reach the kernels (a real run at P = 2 and 3 checks the rows
// the kernel copies). An equation without a positive integer solution, or
// with two unknowns, is a compile error naming the parameter, the dim and
// the equation.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace {

const pl::Dim NR = pl::dynamic("NR");
const pl::Dim M = pl::dynamic("M");
const pl::Dim N = pl::dynamic("N");
constexpr std::int64_t W = 8;  // columns: one 32-byte FP32 row

// host(x [NR, x_rows, W], y [NR, x_rows, W]): rank r copies the first M
// rows of x[r] into y[r]. x_rows is the declared extent under test, and it
// is the only place M appears in the host signature: M must be solved from
// it.
pl::HostFunction copy_program(const pl::Dim& x_rows) {
  const auto kernel = pl::jit::incore("copy_rows",
                                      {pl::In("x", pl::Tensor({x_rows, W}, pl::FP32)),
                                       pl::Out("y", pl::Tensor({x_rows, W}, pl::FP32))},
                                      [](pl::Value x, pl::Value y) {
                                        y = pl::store(pl::load(x, {0, 0}, {M, W}), {0, 0}, y);
                                      });
  const auto per_rank = pl::jit::orchestration_for("per_rank", kernel);
  return pl::jit::host("host",
                       {pl::In("x", pl::Tensor({NR, x_rows, W}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, x_rows, W}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         pl::range(pld::world_size(),
                                   [&](pl::Scalar r) { per_rank(x[r], y[r], pl::device(r)); });
                       });
}

// A host whose only parameters are `params` (no dispatch needs them).
pl::HostFunction signature(std::vector<pl::Param> params) {
  const auto kernel =
      pl::jit::incore("noop", {pl::InOut("z", pl::Tensor({1, W}, pl::FP32))}, [](pl::Value) {});
  const auto per_rank = pl::jit::orchestration_for("per_rank", kernel);
  params.push_back(pl::InOut("z", pl::Tensor({NR, 1, W}, pl::FP32)));
  const std::size_t z = params.size() - 1;
  return pl::jit::host("host", params, [per_rank, z](pl::Value a, pl::Value b, pl::Value zz) {
    (void)a;
    (void)b;
    (void)z;
    pl::range(pld::world_size(), [&](pl::Scalar r) { per_rank(zz[r], pl::device(r)); });
  });
}

std::string compile_error(const pl::HostFunction& host, const std::vector<anyp::HostTensor>& args,
                          std::int64_t P) {
  std::vector<anyp::ArgRef> refs(args.begin(), args.end());
  try {
    host.compile(refs, anyp::RunConfig::for_world_size(P));
  } catch (const anyp::CompileError& e) {
    return e.what();
  }
  return "compiled without error";
}

anyp::HostTensor tensor(std::vector<std::int64_t> shape) {
  return anyp::HostTensor::zeros(std::move(shape), pl::FP32);
}

// Runs copy_program(x_rows) with x and y [P, rows, W]; checks that y holds
// x's first `m` rows and zeros after them on every rank; returns the
// manifest's binding of M ("M = 3").
std::string run_copy(const pl::Dim& x_rows, std::int64_t rows, std::int64_t m, std::int64_t P) {
  anyp::HostTensor x = anyp::HostTensor::arange({P, rows, W}, pl::FP32);
  anyp::HostTensor y = tensor({P, rows, W});
  anyp::CompiledProgram c =
      copy_program(x_rows).compile({x, y}, anyp::RunConfig::for_world_size(P));
  c(x, y);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t i = 0; i < rows * W; ++i)
      EXPECT_EQ(y.get(r * rows * W + i), i < m * W ? x.get(r * rows * W + i) : 0.0)
          << "rank " << r << " element " << i;
  const std::string manifest = c.manifest_json();
  const auto at = manifest.find("M = ");
  return at == std::string::npos ? "no M in the manifest"
                                 : manifest.substr(at, manifest.find_first_of(",\"", at) - at);
}

TEST(DimSolving, AnAffineExtentBindsItsDim) {
  for (std::int64_t P : {2, 3}) {
    EXPECT_EQ(run_copy(M * 2, 6, 3, P), "M = 3");
    EXPECT_EQ(run_copy(M + 1, 5, 4, P), "M = 4");
    EXPECT_EQ(run_copy((M - 1) * 4, 12, 4, P), "M = 4");
    EXPECT_EQ(run_copy(2 * M + 2, 10, 4, P), "M = 4");
  }
}

TEST(DimSolving, ExactDivisionIsInvertedToo) {
  // M / 2 = 3 gives M = 6 (a Dim's / must divide exactly); 24 / M = 3 gives M = 8.
  EXPECT_EQ(run_copy(M / 2 + 5, 8, 6, 2), "M = 6");
  anyp::HostTensor a = tensor({3, W}), b = tensor({8, W});
  EXPECT_EQ(compile_error(signature({pl::In("a", pl::Tensor({24 / M, W}, pl::FP32)),
                                     pl::In("b", pl::Tensor({M, W}, pl::FP32))}),
                          {a, b, tensor({2, 1, W})}, 2),
            "compiled without error");
}

TEST(DimSolving, OneSolutionCanBindTheNextExtentsDim) {
  // a [M * 2] binds M = 4, then b [M * N] binds N = 3, in either order.
  const anyp::HostTensor a = tensor({8, W}), b = tensor({12, W});
  EXPECT_EQ(compile_error(signature({pl::In("a", pl::Tensor({M * 2, W}, pl::FP32)),
                                     pl::In("b", pl::Tensor({M * N, W}, pl::FP32))}),
                          {a, b, tensor({2, 1, W})}, 2),
            "compiled without error");
  EXPECT_EQ(compile_error(signature({pl::In("b", pl::Tensor({M * N, W}, pl::FP32)),
                                     pl::In("a", pl::Tensor({M * 2, W}, pl::FP32))}),
                          {b, a, tensor({2, 1, W})}, 2),
            "compiled without error");
}

TEST(DimSolving, AnEquationWithoutAPositiveIntegerSolutionIsNamed) {
  const auto twice = signature(
      {pl::In("a", pl::Tensor({M * 2, W}, pl::FP32)), pl::In("b", pl::Tensor({1, W}, pl::FP32))});
  EXPECT_EQ(compile_error(twice, {tensor({7, W}), tensor({1, W}), tensor({2, 1, W})}, 2),
            "compile error: function 'host', parameter 'a', dim 0: cannot bind M from the "
            "argument's extent: M * 2 = 7: 7 is not a multiple of 2");
  const auto b = signature(
      {pl::In("a", pl::Tensor({M + 1, W}, pl::FP32)), pl::In("b", pl::Tensor({1, W}, pl::FP32))});
  EXPECT_EQ(compile_error(b, {tensor({1, W}), tensor({1, W}), tensor({2, 1, W})}, 2),
            "compile error: function 'host', parameter 'a', dim 0: cannot bind M from the "
            "argument's extent: M + 1 = 1 gives M = 0, and a dim is positive");
}

TEST(DimSolving, TwoUnknownsInOneExtentAreAmbiguous) {
  const auto b = signature(
      {pl::In("a", pl::Tensor({M * N, W}, pl::FP32)), pl::In("b", pl::Tensor({1, W}, pl::FP32))});
  EXPECT_EQ(compile_error(b, {tensor({12, W}), tensor({1, W}), tensor({2, 1, W})}, 2),
            "compile error: function 'host', parameter 'a', dim 0: extent M * N is not a positive "
            "exact integer (dim M is not bound; M * N = 12 has 2 unknown dims, M and N: declare "
            "a dim bare (as in [M, ...]) in some host parameter to bind it)");
}

TEST(DimSolving, ABareDimBindsFirstAndTheSolvedExtentIsChecked) {
  // b [M, W] binds M = 3 bare; a's M * 2 must then be 6.
  const auto b = signature(
      {pl::In("a", pl::Tensor({M * 2, W}, pl::FP32)), pl::In("b", pl::Tensor({M, W}, pl::FP32))});
  EXPECT_EQ(compile_error(b, {tensor({8, W}), tensor({3, W}), tensor({2, 1, W})}, 2),
            "compile error: function 'host', parameter 'a', dim 0: declared M * 2 = 6, actual 8");
}

}  // namespace
