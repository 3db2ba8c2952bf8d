// call_argument_errors_test.cpp — arguments that used to change silently
// on their way into a call: an INT32 scalar into an INT8 parameter (300
// arrived as 44), a constant or a host value out of the parameter's range;
// and the mistakes of a host signature and host values that the messages
// once named badly (a host parameter declared as a window view, a value
// never set, "1 dims"). Exact messages; the accepted forms run.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>

#include "support/kernel_errors.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");
using anyp_test::trace_error;

// A kernel that writes its INT8 scalar n into y[0, 0] (INT8 [1, 32]).
const pl::Function& int8_kernel() {
  static const pl::Function k =
      pl::jit::incore("k8", {pl::Out("y", pl::Tensor({1, 32}, pl::INT8)), pl::In("n", pl::INT8)},
                      [](pl::Value y, pl::Scalar n) {
                        pl::write(y, {0, 0}, n);
                      });
  return k;
}

TEST(CallArguments, AnInt32ScalarIntoAnInt8ParameterIsRefused) {
  const pl::Function orch = pl::jit::orchestration(
      "orch", {pl::Out("y", pl::Tensor({1, 32}, pl::INT8)), pl::In("m", pl::INT32)},
      [](pl::Value y, pl::Scalar m) { int8_kernel()(y, m); });
  EXPECT_EQ(trace_error(orch),
            "compile error: function 'orch' (orchestration): call @k8: argument 1 ('n') is Scalar "
            "INT32, which does not fit parameter 'n' (Scalar INT8) without losing its value; pass "
            "a value of INT8 (pl::cast it where a narrower value is meant)");
  const pl::Function cast = pl::jit::orchestration(
      "orch_cast", {pl::Out("y", pl::Tensor({1, 32}, pl::INT8)), pl::In("m", pl::INT32)},
      [](pl::Value y, pl::Scalar m) { int8_kernel()(y, pl::cast(m, pl::INT8)); });
  EXPECT_EQ(trace_error(cast), "traced without error");
}

TEST(CallArguments, AConstantOutOfTheParametersRangeIsRefused) {
  const pl::Function orch =
      pl::jit::orchestration("orch300", {pl::Out("y", pl::Tensor({1, 32}, pl::INT8))},
                             [](pl::Value y) { int8_kernel()(y, 300); });
  EXPECT_EQ(trace_error(orch),
            "compile error: function 'orch300' (orchestration): call @k8: argument 1 ('n') is the "
            "constant 300, which does not fit parameter 'n' (Scalar INT8) without losing its "
            "value; pass a value of INT8 (pl::cast it where a narrower value is meant)");
  const pl::Function fine =
      pl::jit::orchestration("orch100", {pl::Out("y", pl::Tensor({1, 32}, pl::INT8))},
                             [](pl::Value y) { int8_kernel()(y, 100); });
  EXPECT_EQ(trace_error(fine), "traced without error");
}

// The host knows its values when it compiles: a value that fits is passed,
// one that does not is named.
TEST(CallArguments, AHostValueOutOfTheParametersRangeIsRefused) {
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank8", int8_kernel());
  auto host_passing = [&](std::int64_t base) {
    return pl::jit::host("host8", {pl::Out("y", pl::Tensor({NR, 1, 32}, pl::INT8))},
                         [per_rank, base](pl::Value y) {
                           pl::range(pld::world_size(), [&](pl::Scalar r) {
                             pl::Value yr = y[r];
                             per_rank(yr, r + base, pl::device(r));
                           });
                         });
  };
  anyp::HostTensor y = anyp::HostTensor::zeros({3, 1, 32}, pl::INT8);
  host_passing(100).compile({y}, anyp::RunConfig::for_world_size(3))(y);
  for (std::int64_t r = 0; r < 3; ++r) EXPECT_EQ(y.get_int(r * 32), 100 + r);
  std::string error = "compiled without error";
  try {
    host_passing(126).compile({y}, anyp::RunConfig::for_world_size(3));
  } catch (const anyp::CompileError& e) {
    error = e.what();
  }
  EXPECT_EQ(error,
            "compile error: function 'host8' (host): dispatch of 'per_rank8', argument 1 ('n'): "
            "the value 128 does not fit parameter 'n' (Scalar INT8, range [-128, 127])");
}

TEST(CallArguments, AHostParameterDeclaredAsAWindowViewIsRefused) {
  const pl::HostFunction host = pl::jit::host(
      "window_host", {pl::InOut("w", pld::DistributedTensor({NR, 8}, pl::FP32))}, [](pl::Value) {});
  anyp::HostTensor w = anyp::HostTensor::zeros({2, 8}, pl::FP32);
  std::string error = "compiled without error";
  try {
    host.compile({w}, anyp::RunConfig::for_world_size(2));
  } catch (const anyp::CompileError& e) {
    error = e.what();
  }
  EXPECT_EQ(error,
            "compile error: function 'window_host' (host): parameter 'w' is a "
            "pld::DistributedTensor, but a host function's parameters are the run's arguments, "
            "host tensors and scalars: declare it pl::Tensor (the host makes window views itself, "
            "with pld::alloc_window_buffer and pld::window)");
}

TEST(CallArguments, OneDimIsSingular) {
  const pl::Function k =
      pl::jit::incore("k1", {pl::InOut("y", pl::Tensor({1, 32}, pl::FP32))}, [](pl::Value y) {
        pl::load(y, {0, 0}, {32});
      });
  EXPECT_EQ(trace_error(k),
            "compile error: function 'k1' (incore): pl.load: the tile shape has 1 dim, but the "
            "tensor has 2");
  const pl::Function arity = pl::jit::incore("k1b", {pl::InOut("y", pl::Tensor({1, 32}, pl::FP32))},
                                             [](pl::Value y) { pl::write(y, {0}, 1.0); });
  EXPECT_EQ(trace_error(arity),
            "compile error: function 'k1b' (incore): pl.write: indices has 1 entry, but the "
            "tensor has 2 dims");
}

}  // namespace
