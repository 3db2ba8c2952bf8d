// everyday_api_test.cpp — the everyday API of issue 7 at compile time: the
// IR that pl::full, pl::reshape, pl::range with a step, compound assignment,
// the tile operators and sub-windows record, which overloads the operators
// resolve to, and every compile error they add, with its exact text
// (pl.full values, pl.reshape counts, zero steps, window offsets, and calls
// whose arguments are bound by parameter name).
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/kernel_errors.hpp"
#include "support/source_locations.hpp"

namespace {

constexpr std::int64_t N = anyp_test::kProbeWidth;  // the probe kernel's y is [1, N]
const pl::Dim NR = pl::dynamic("NR");

// ---- overload resolution ------------------------------------------------------------------------

// Tile operators are hidden friends of Tile: they resolve to Tile, and
// scalar expressions resolve as before.
static_assert(
    std::is_same_v<decltype(std::declval<pl::Tile>() + std::declval<pl::Tile>()), pl::Tile>);
static_assert(std::is_same_v<decltype(std::declval<pl::Tile>() - 1), pl::Tile>);
static_assert(std::is_same_v<decltype(2.0 * std::declval<pl::Tile>()), pl::Tile>);
static_assert(
    std::is_same_v<decltype(std::declval<pl::Tile>() * std::declval<pl::Scalar>()), pl::Tile>);
static_assert(std::is_same_v<decltype(-std::declval<pl::Tile>()), pl::Tile>);
static_assert(std::is_same_v<decltype(std::declval<pl::Scalar>() + 1), pl::Scalar>);
static_assert(std::is_same_v<decltype(1 - std::declval<pl::Scalar>()), pl::Scalar>);
static_assert(std::is_same_v<decltype(-std::declval<pl::Scalar>()), pl::Scalar>);
static_assert(std::is_same_v<decltype(std::declval<pl::Scalar&>() += 1), pl::Scalar&>);
static_assert(std::is_same_v<decltype(NR * 4 + 1), pl::Dim>);
// A scalar minus a tile has no meaning here (write -(t - s)); a Dim has no
// unary minus (it would have to record a constant).
template <class A, class B>
concept Subtractable = requires(A a, B b) {
  a - b;
};
template <class A>
concept Negatable = requires(A a) {
  -a;
};
static_assert(!Subtractable<pl::Scalar, pl::Tile>);
static_assert(!Negatable<pl::Dim>);
static_assert(Negatable<pl::Scalar> && Negatable<pl::Tile>);

// ---- helpers ------------------------------------------------------------------------------------

using anyp_test::compile_error;
using anyp_test::kernel_of;
using anyp_test::trace_error;

// ---- the IR they record
// ----------------------------------------------------------------------------

TEST(EverydayIr, FullReshapeOperatorsAndSteppedRanges) {
  const pl::Function k = pl::jit::incore(
      "k", {pl::InOut("y", pl::Tensor({1, N}, pl::FP32)), pl::In("n", pl::INT32)},
      [](pl::Value y, pl::Scalar n) {
        pl::Tile t = pl::full({4, 8}, 1.5, pl::FP32);
        pl::Tile neg = -t;  // named: C++ leaves the order of operator operands unspecified
        pl::Tile u = pl::reshape(neg + pl::zeros({4, 8}, pl::FP32), {1, N});
        pl::Scalar acc = 0;
        pl::range(0, 8, [&](pl::Scalar i) { acc += i; });
        pl::range(8, 0, -2, [&](pl::Scalar i) { acc -= i; });
        pl::range(0, 8, n, [&](pl::Scalar i) { acc *= i; });
        y = pl::store(u * pl::cast(acc, pl::FP32), {0, 0}, y);
      });
  EXPECT_EQ(k.ir_text(),
            "incore k(%y: Tensor[1, 32] FP32 inout, %n: Scalar INT32) {\n"
            "  %2 = pl.full 1.5 [4, 8] : Tile[4, 8] FP32\n"
            "  %3 = pl.mul %2, -1 : Tile[4, 8] FP32\n"
            "  %4 = pl.full 0 [4, 8] : Tile[4, 8] FP32\n"
            "  %5 = pl.add %3, %4 : Tile[4, 8] FP32\n"
            "  %6 = pl.reshape %5 [1, 32] : Tile[1, 32] FP32\n"
            "  %7 = const 0 : Scalar INT32\n"
            "  for %8 in range(0, 8) {\n"
            "    %9 = add %7, %8 : Scalar INT32\n"
            "    %7 = %9\n"
            "  }\n"
            "  for %10 in range(8, 0, -2) {\n"
            "    %11 = sub %7, %10 : Scalar INT32\n"
            "    %7 = %11\n"
            "  }\n"
            "  for %12 in range(0, 8, %n) {\n"
            "    %13 = mul %7, %12 : Scalar INT32\n"
            "    %7 = %13\n"
            "  }\n"
            "  %14 = pl.cast %7 : Scalar FP32\n"
            "  %15 = pl.mul %6, %14 : Tile[1, 32] FP32\n"
            "  %y = pl.store %15 -> %y[0, 0]\n"
            "}\n");
}

// s op= b converts back to s's dtype when s op b promotes (INT8 + INT32 is INT32).
TEST(EverydayIr, CompoundAssignmentConvertsBackToTheVariablesDtype) {
  const pl::Function k =
      pl::jit::incore("k", {pl::InOut("y", pl::Tensor({1, N}, pl::INT32)), pl::In("s", pl::INT8)},
                      [](pl::Value y, pl::Scalar s) {
                        s += 100;
                        pl::write(y, {0, 0}, +s);
                      });
  EXPECT_EQ(k.ir_text(),
            "incore k(%y: Tensor[1, 32] INT32 inout, %s: Scalar INT8) {\n"
            "  %2 = add %s, 100 : Scalar INT32\n"
            "  %3 = pl.cast %2 : Scalar INT8\n"
            "  %s = %3\n"
            "  %4 = %s\n"
            "  pl.write %y[0, 0] = %4\n"
            "}\n");
}

TEST(EverydayIr, SubWindowsPrintTheirOffset) {
  const pl::Function k = pl::jit::incore("k",
                                         {pl::InOut("a", pld::DistributedTensor({1, N}, pl::FP32)),
                                          pl::InOut("b", pld::DistributedTensor({1, N}, pl::FP32))},
                                         [](pl::Value, pl::Value) {});
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", k);
  const pl::HostFunction host =
      pl::jit::host("host", {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32))}, [=](pl::Value) {
        auto buf = pld::alloc_window_buffer("buf", {2, N}, pl::FP32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          auto a = pld::window(buf, {1, N}, pl::FP32, 0);
          auto b = pld::window(buf, {1, N}, pl::FP32, N);
          per_rank(pl::arg("b") = b, pl::arg("a") = a, pl::device(r));
        });
      });
  EXPECT_EQ(host.ir_text(),
            "host host(%x: Tensor[NR, 1, 32] FP32 in) {\n"
            "  %1 = pld.alloc_window_buffer \"buf\" [2, 32] FP32\n"
            "  pld.world_size\n"
            "  for %2 in range(0, world_size) {\n"
            "    %3 = pld.window %1 [1, 32] FP32 offset=0\n"
            "    %4 = pld.window %1 [1, 32] FP32 offset=32\n"
            "    call @per_rank(%3, %4) device=%2\n"
            "  }\n"
            "}\n"
            "\n"
            "orchestration per_rank(%a: DistributedTensor[1, 32] FP32 inout, %b: "
            "DistributedTensor[1, 32] FP32 inout) {\n"
            "  call @k(%a, %b)\n"
            "}\n"
            "\n"
            "incore k(%a: DistributedTensor[1, 32] FP32 inout, %b: DistributedTensor[1, 32] FP32 "
            "inout) {\n"
            "}\n");
  anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, N}, pl::FP32);
  const std::string lowered = host.compile({x}, anyp::RunConfig::for_world_size(2)).lowered_code();
  EXPECT_NE(lowered.find("per_rank(window:buf, window:buf+128B)"), std::string::npos) << lowered;
}

// ---- pl.full
// ------------------------------------------------------------------------------------------

TEST(EverydayErrors, FullIntegerConstantOutOfRange) {
  EXPECT_EQ(trace_error(kernel_of("k",
                                  [](pl::Value) {
                                    pl::full({1, N}, 300, pl::INT8);
                                  })),
            "compile error: function 'k' (incore): pl.full: the value 300 does not fit INT8 "
            "(range [-128, 127])");
  EXPECT_EQ(trace_error(kernel_of("k",
                                  [](pl::Value) {
                                    pl::full({1, N}, -32769, pl::INT16);
                                  })),
            "compile error: function 'k' (incore): pl.full: the value -32769 does not fit INT16 "
            "(range [-32768, 32767])");
  EXPECT_EQ(trace_error(kernel_of("k",
                                  [](pl::Value) {
                                    pl::full({1, N}, std::int64_t{1} << 31, pl::INT32);
                                  })),
            "compile error: function 'k' (incore): pl.full: the value 2147483648 does not fit "
            "INT32 (range [-2147483648, 2147483647])");
}

TEST(EverydayErrors, FullFloatingValueForAnIntegerDtype) {
  EXPECT_EQ(trace_error(kernel_of("k",
                                  [](pl::Value) {
                                    pl::full({1, N}, 1.5, pl::INT32);
                                  })),
            "compile error: function 'k' (incore): pl.full: a floating value for an INT32 tile; "
            "tiles are typed: use an integer value, or a floating dtype");
  EXPECT_EQ(trace_error(kernel_of("k",
                                  [](pl::Value) {
                                    pl::Scalar f = 2.0;
                                    pl::full({1, N}, f, pl::INT8);
                                  })),
            "compile error: function 'k' (incore): pl.full: a floating value (Scalar FP32) for an "
            "INT8 tile; tiles are typed: pl::cast the value to an integer dtype first");
}

// A Dim value is checked once NR is bound: 100 * NR is 200 at P = 2.
TEST(EverydayErrors, FullDimValueCheckedAfterBinding) {
  const pl::Function k = kernel_of("k", [](pl::Value) { pl::full({1, N}, NR * 100, pl::INT8); });
  EXPECT_EQ(compile_error(k, 1), "compiled without error");
  EXPECT_EQ(compile_error(k, 2),
            "compile error: function 'k' (incore), op pl.full: the value 200 does not fit INT8 "
            "(range [-128, 127])");
}

TEST(EverydayErrors, FullTileFollowsTheTileRowRule) {
  const pl::Function k = kernel_of("k", [](pl::Value) { pl::zeros({1, 4}, pl::FP32); });
  EXPECT_EQ(compile_error(k, 2),
            "compile error: function 'k' (incore), op pl.full: a tile row of 4 x FP32 = 16 B is "
            "not a whole number of 32-byte units (tile [1, 4]); use a multiple of 8 FP32 elements "
            "per row");
}

// ---- pl.reshape
// -----------------------------------------------------------------------------------------

TEST(EverydayErrors, ReshapeMustKeepTheElementCount) {
  EXPECT_EQ(trace_error(kernel_of("k",
                                  [](pl::Value y) {
                                    pl::reshape(pl::load(y, {0, 0}, {1, N}), {4, 4});
                                  })),
            "compile error: function 'k' (incore): pl.reshape: the tile [1, 32] has 32 elements, "
            "but the new shape [4, 4] has 16; a reshape keeps the element count");
  // With NR in the shape, the count is checked once NR is bound.
  const pl::Function k = kernel_of("k", [](pl::Value y) {
    pl::reshape(pl::load(y, {0, 0}, {1, N}), {NR, 8});
  });
  EXPECT_EQ(compile_error(k, 4), "compiled without error");
  EXPECT_EQ(compile_error(k, 2),
            "compile error: function 'k' (incore), op pl.reshape: the tile [1, 32] has 32 "
            "elements, but the new shape [2, 8] has 16; a reshape keeps the element count");
}

TEST(EverydayErrors, ReshapeFollowsTheTileRowRule) {
  const pl::Function k = kernel_of("k", [](pl::Value y) {
    pl::reshape(pl::load(y, {0, 0}, {1, N}), {8, 4});
  });
  EXPECT_EQ(compile_error(k, 2),
            "compile error: function 'k' (incore), op pl.reshape: a tile row of 4 x FP32 = 16 B "
            "is not a whole number of 32-byte units (tile [8, 4]); use a multiple of 8 FP32 "
            "elements per row");
}

TEST(EverydayErrors, ReshapeOfANonTile) {
  EXPECT_EQ(trace_error(kernel_of("k",
                                  [](pl::Value y) {
                                    pl::reshape(pl::Tile(y.var()), {1, N});
                                  })),
            "compile error: function 'k' (incore): pl.reshape: the operand must be a Tile, got "
            "Tensor[1, 32] FP32");
}

// ---- pl.range steps
// -------------------------------------------------------------------------------------

TEST(EverydayErrors, ConstantZeroOrFloatingStep) {
  EXPECT_EQ(trace_error(kernel_of("k", [](pl::Value) { pl::range(0, 8, 0, [](pl::Scalar) {}); })),
            "compile error: function 'k' (incore): pl.range: the step is 0; use a positive step "
            "to count up or a negative one to count down");
  EXPECT_EQ(trace_error(kernel_of("k", [](pl::Value) { pl::range(0, 8, 0.5, [](pl::Scalar) {}); })),
            "compile error: function 'k' (incore): pl.range: the step must be an integer");
}

// A Dim step is evaluated when the kernel is lowered: NR - 2 is 0 at P = 2.
TEST(EverydayErrors, DimStepThatIsZeroForThisP) {
  const pl::Function k =
      kernel_of("k", [](pl::Value) { pl::range(0, 8, NR - 2, [](pl::Scalar) {}); });
  EXPECT_EQ(compile_error(k, 3), "compiled without error");
  EXPECT_EQ(compile_error(k, 2),
            "compile error: function 'k' (incore), op pl.range: the step NR - 2 is 0 here");
}

// The host runs its loops at compile time, so a zero step is a compile error there.
TEST(EverydayErrors, HostZeroStep) {
  const pl::Function k = kernel_of("k", [](pl::Value) {});
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", k);
  const pl::HostFunction host = pl::jit::host(
      "host", {pl::InOut("y", pl::Tensor({NR, 1, N}, pl::FP32))}, [per_rank](pl::Value y) {
        pl::Scalar step = pld::world_size() - 2;
        pl::range(0, pld::world_size(), step, [&](pl::Scalar r) { per_rank(y[r], pl::device(r)); });
      });
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, N}, pl::FP32);
  try {
    host.compile({y}, anyp::RunConfig::for_world_size(2));
    ADD_FAILURE() << "compiled";
  } catch (const anyp::CompileError& e) {
    EXPECT_EQ(anyp_test::without_locations(e.what()),
              "compile error: function 'host' (host): pl.range: the step is 0");
  }
}

// ---- sub-windows
// ------------------------------------------------------------------------------------------

std::string window_error(const pl::ScalarArg& offset) {
  const pl::Function k = pl::jit::incore(
      "k", {pl::InOut("w", pld::DistributedTensor({1, N}, pl::FP32))}, [](pl::Value) {});
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", k);
  const pl::HostFunction host =
      pl::jit::host("host", {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32))}, [=](pl::Value) {
        auto buf = pld::alloc_window_buffer("buf", {2, N}, pl::FP32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(pld::window(buf, {1, N}, pl::FP32, offset), pl::device(r));
        });
      });
  anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, N}, pl::FP32);
  try {
    host.compile({x}, anyp::RunConfig::for_world_size(2));
  } catch (const anyp::CompileError& e) {
    return anyp_test::without_locations(e.what());
  }
  return "compiled without error";
}

TEST(EverydayErrors, SubWindowMustFitItsBuffer) {
  EXPECT_EQ(window_error(N), "compiled without error");
  EXPECT_EQ(window_error(N + 1),
            "compile error: function 'host' (host): pld.window: a view [1, 32] FP32 (128 B) at "
            "element offset 33 (byte 132) does not fit window buffer 'buf' (256 B)");
  EXPECT_EQ(window_error(-1),
            "compile error: function 'host' (host): pld.window: a view [1, 32] FP32 (128 B) at "
            "element offset -1 (byte -4) does not fit window buffer 'buf' (256 B)");
  EXPECT_EQ(window_error(1.0),
            "compile error: function 'host' (host): pld.window: the offset must be an integer (a "
            "count of FP32 elements)");
}

// ---- calls by parameter name
// -------------------------------------------------------------------------------

// host -> per_rank(x, y) with the host's call given by `call`.
std::string named_call_error(
    const std::function<void(const pl::Function&, pl::Value, pl::Value, pl::Scalar)>& call) {
  const std::vector<pl::Param> params = {pl::In("x", pl::Tensor({1, N}, pl::FP32)),
                                         pl::Out("y", pl::Tensor({1, N}, pl::FP32))};
  const pl::Function k = pl::jit::incore("copy", params, [](pl::Value x, pl::Value y) {
    y = pl::store(pl::load(x, {0, 0}, {1, N}), {0, 0}, y);
  });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", k);
  const pl::HostFunction host = pl::jit::host(
      "host",
      {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, 1, N}, pl::FP32))},
      [=](pl::Value x, pl::Value y) {
        pl::range(pld::world_size(), [&](pl::Scalar r) { call(per_rank, x[r], y[r], r); });
      });
  anyp::HostTensor x = anyp::HostTensor::arange({2, 1, N}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, N}, pl::FP32);
  try {
    host.compile({x, y}, anyp::RunConfig::for_world_size(2))(x, y);
  } catch (const anyp::CompileError& e) {
    return anyp_test::without_locations(e.what());
  }
  return anyp::equal_exact(x, y) ? "ran: y == x" : "ran: y != x";
}

TEST(EverydayNamedCall, AnyOrderBindsByName) {
  EXPECT_EQ(named_call_error([](const pl::Function& f, pl::Value x, pl::Value y, pl::Scalar r) {
              f(pl::arg("y") = y, pl::arg("x") = x, pl::device(r));
            }),
            "ran: y == x");
  EXPECT_EQ(named_call_error([](const pl::Function& f, pl::Value x, pl::Value y, pl::Scalar r) {
              f(x, y, pl::device(r));
            }),
            "ran: y == x");
}

TEST(EverydayNamedCall, MissingUnknownRepeatedAndUnnamedArguments) {
  EXPECT_EQ(named_call_error([](const pl::Function& f, pl::Value x, pl::Value, pl::Scalar r) {
              f(pl::arg("x") = x, pl::device(r));
            }),
            "compile error: function 'host' (host): call of 'per_rank': parameter 'y' is not "
            "given (the parameters of 'per_rank': x, y)");
  EXPECT_EQ(named_call_error([](const pl::Function& f, pl::Value x, pl::Value y, pl::Scalar r) {
              f(pl::arg("x") = x, pl::arg("z") = y, pl::device(r));
            }),
            "compile error: function 'host' (host): call of 'per_rank': 'per_rank' has no "
            "parameter named 'z' (its parameters: x, y)");
  EXPECT_EQ(named_call_error([](const pl::Function& f, pl::Value x, pl::Value y, pl::Scalar r) {
              f(pl::arg("x") = x, pl::arg("x") = y, pl::device(r));
            }),
            "compile error: function 'host' (host): call of 'per_rank': parameter 'x' is given "
            "twice");
  EXPECT_EQ(named_call_error([](const pl::Function& f, pl::Value x, pl::Value y, pl::Scalar r) {
              f(pl::arg("x") = x, y, pl::device(r));
            }),
            "compile error: function 'host' (host): call of 'per_rank': argument 1 has no name; "
            "name every argument (pl::arg(\"name\") = value) or none");
  EXPECT_EQ(named_call_error([](const pl::Function& f, pl::Value x, pl::Value y, pl::Scalar r) {
              f(pl::device(r), pl::arg("x") = x, pl::arg("y") = y);
            }),
            "compile error: function 'host' (host): call of 'per_rank': pl::device(r) must be the "
            "last argument");
}

// orchestration_for copies the kernel's parameter list, intents included.
TEST(EverydayNamedCall, OrchestrationForCopiesTheParameterList) {
  const pl::Function k = pl::jit::incore(
      "k",
      {pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({NR, N}, pl::FP32)),
       pl::InOut("w", pld::DistributedTensor({NR, 1}, pl::INT32)), pl::In("s", pl::INT32)},
      [](pl::Value, pl::Value, pl::Value, pl::Scalar) {});
  EXPECT_EQ(pl::jit::orchestration_for("wrap", k).ir_text(),
            "orchestration wrap(%x: Tensor[1, 32] FP32 in, %y: Tensor[NR, 32] FP32 out, %w: "
            "DistributedTensor[NR, 1] INT32 inout, %s: Scalar INT32) {\n"
            "  call @k(%x, %y, %w, %s)\n"
            "}\n"
            "\n"
            "incore k(%x: Tensor[1, 32] FP32 in, %y: Tensor[NR, 32] FP32 out, %w: "
            "DistributedTensor[NR, 1] INT32 inout, %s: Scalar INT32) {\n"
            "}\n");
}

}  // namespace
