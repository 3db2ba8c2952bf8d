// compile_errors_test.cpp — every compile error a user can provoke, with its
// exact message (anyp::CompileError::what(), compared whole): the seed's
// fatal pitfall (a static rank dim), dims bound twice, derived extents that
// are not positive exact integers, x[r] and regions out of bounds, ops at the
// wrong level, dispatch rules, tile-row alignment, dtype mismatches, window
// allocation rules, window/tensor kind mismatches, writes to pl::In
// parameters and wrong argument counts (docs/api.md §3–§14, docs/ladder-steps.md §2).
//
// Most cases reuse one small program (host -> per_rank -> kernel, each rank
// copying x to y through a window) with one thing broken. Functions are
// created inside each test, so every test traces its own program.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "support/source_locations.hpp"

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");

using pld::AtomicType;
using pld::NotifyOp;
using pld::WaitCmp;

using KernelBody = std::function<void(pl::Value x, pl::Value y, pl::Value data, pl::Value signal)>;
using HostBody = std::function<void(pl::Value x, pl::Value y)>;

std::vector<pl::Param> kernel_params() {
  return {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)),
          pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
          pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
          pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))};
}

std::vector<pl::Param> host_params(pl::Dim rows = NR) {
  return {pl::In("x", pl::Tensor({rows, 1, SIZE}, pl::FP32)),
          pl::Out("y", pl::Tensor({rows, 1, SIZE}, pl::FP32))};
}

// The valid kernel: stage x in the window, copy it back out to y.
void copy_body(pl::Value x, pl::Value y, pl::Value data, pl::Value) {
  data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data);
  y = pl::store(pl::load(data, {0, 0}, {1, SIZE}), {0, 0}, y);
}

pl::Function make_kernel(const KernelBody& body = copy_body) {
  return pl::jit::incore("kernel", kernel_params(), body);
}

pl::Function make_per_rank(const pl::Function& kernel) {
  return pl::jit::orchestration("per_rank", kernel_params(),
                                [kernel](pl::Value x, pl::Value y, pl::Value data,
                                         pl::Value signal) { kernel(x, y, data, signal); });
}

// The valid host body: windows above the rank loop, views and x[r], y[r]
// inside it, one dispatch of per_rank per rank.
HostBody standard_host_body(const pl::Function& per_rank) {
  return [per_rank](pl::Value x, pl::Value y) {
    auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
    auto signal_buf = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      auto data = pld::window(data_buf, {1, SIZE}, pl::FP32);
      auto signal = pld::window(signal_buf, {1, 1}, pl::INT32);
      pl::Value xr = x[r];
      pl::Value yr = y[r];
      per_rank(xr, yr, data, signal, pl::device(r));
    });
  };
}

pl::HostFunction make_host(const HostBody& body, std::vector<pl::Param> params = host_params(),
                           std::string name = "host") {
  return pl::jit::host(std::move(name), std::move(params), body);
}

// The standard program with `body` as its kernel.
pl::HostFunction program_with_kernel(const KernelBody& body) {
  return make_host(standard_host_body(make_per_rank(make_kernel(body))));
}

anyp::HostTensor rows(std::int64_t n, pl::DType dtype = pl::FP32) {
  return anyp::HostTensor::zeros({n, 1, SIZE}, dtype);
}

// Compiles `host` with `args` at P; returns the CompileError's what(), or a
// description of what happened instead.
std::string compile_error(const pl::HostFunction& host, const std::vector<anyp::HostTensor>& args,
                          std::int64_t P) {
  std::vector<anyp::ArgRef> refs(args.begin(), args.end());
  try {
    host.compile(refs, anyp::RunConfig::for_world_size(P));
  } catch (const anyp::CompileError& e) {
    return anyp_test::without_locations(e.what());
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + anyp_test::without_locations(e.what());
  }
  return "compiled without error";
}

// The usual arguments: x and y with P rows.
std::string compile_error(const pl::HostFunction& host, std::int64_t P) {
  return compile_error(host, {rows(P), rows(P)}, P);
}

// ---- the standard program is valid ---------------------------------------------------------

TEST(CompileErrors, StandardProgramCompilesAndRuns) {
  const pl::HostFunction host = program_with_kernel(copy_body);
  for (std::int64_t P : {1, 2, 3}) {
    anyp::InputGenerator gen(1);
    anyp::HostTensor x = gen.uniform({P, 1, SIZE});
    anyp::HostTensor y = rows(P);
    host.compile({x, y}, anyp::RunConfig::for_world_size(P))(x, y);
    EXPECT_TRUE(anyp::equal_exact(x, y)) << "P=" << P;
  }
}

// ---- binding dims from the arguments -----------------------------------------------------------

// The seed's fatal pitfall: a host signature that pins the rank count to 2.
TEST(CompileErrors, StaticRankDimIsTheSeedsFatalPitfall) {
  const pl::HostFunction ring_get =
      make_host(standard_host_body(make_per_rank(make_kernel())), host_params(2), "ring_get");
  EXPECT_EQ(compile_error(ring_get, 2), "compiled without error");
  EXPECT_EQ(compile_error(ring_get, 3),
            "compile error: function 'ring_get', parameter 'x', dim 0: declared 2, actual 3 (P = "
            "3)\n  hint: a constant in the host signature pins this dim to 2; if it is the rank "
            "count, declare NR = pl::dynamic(\"NR\") and write NR in the host signature");
}

// x is read rotated (x[(r + 1) % P]), so only y is sliced by the rank loop.
TEST(CompileErrors, DimBoundToTwoValuesByTwoArguments) {
  const pl::Function per_rank = make_per_rank(make_kernel());
  const pl::HostFunction host = make_host([per_rank](pl::Value x, pl::Value y) {
    auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
    auto signal_buf = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      auto data = pld::window(data_buf, {1, SIZE}, pl::FP32);
      auto signal = pld::window(signal_buf, {1, 1}, pl::INT32);
      pl::Value next = x[(r + 1) % pld::world_size()];
      pl::Value yr = y[r];
      per_rank(next, yr, data, signal, pl::device(r));
    });
  });
  EXPECT_EQ(compile_error(host, {rows(4), rows(3)}, 3),
            "compile error: function 'host', parameter 'y', dim 0: dim NR is bound to 4 by "
            "parameter 'x' dim 0, but the argument has 3");
}

// Host tensors shaped for another P than the device list's: the rank loop
// slices them, so their leading dim must be P (pitfall 11).
TEST(CompileErrors, RankSlicedTensorNeedsExactlyPRows) {
  const pl::HostFunction host = program_with_kernel(copy_body);
  EXPECT_EQ(compile_error(host, {rows(3), rows(4)}, 3),
            "compile error: function 'host', parameter 'y', dim 0: NR is 4 here, but the rank loop "
            "over pld::world_size() runs P = 3 ranks (from the device list) and gives rank r the "
            "row y[r]: a tensor sliced by the rank loop needs exactly P rows\n  hint: shape the "
            "host tensors from the device count");
  EXPECT_EQ(compile_error(host, {rows(2), rows(2)}, 3),
            "compile error: function 'host', parameter 'x', dim 0: NR is 2 here, but the rank loop "
            "over pld::world_size() runs P = 3 ranks (from the device list) and gives rank r the "
            "row x[r]: a tensor sliced by the rank loop needs exactly P rows\n  hint: shape the "
            "host tensors from the device count");
  for (std::int64_t P : {2, 5, 16}) {
    const std::string expected =
        "compile error: function 'host', parameter 'x', dim 0: NR is " + std::to_string(P + 1) +
        " here, but the rank loop over pld::world_size() runs P = " + std::to_string(P) + " ranks";
    const std::string got = compile_error(host, {rows(P + 1), rows(P + 1)}, P);
    EXPECT_EQ(got.substr(0, expected.size()), expected) << "P=" << P;
  }
}

// A rank loop over NR (not pld::world_size()) whose NR comes from the
// arguments: with fewer rows than devices some ranks would never run (their
// collectives hang, their outputs stay untouched), with more it would
// dispatch past the device list.
TEST(CompileErrors, RankLoopOverNrNeedsExactlyPRanks) {
  const pl::Function per_rank = make_per_rank(make_kernel());
  const pl::HostFunction host = make_host([per_rank](pl::Value x, pl::Value y) {
    auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
    auto signal_buf = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
    pl::range(NR, [&](pl::Scalar r) {
      auto data = pld::window(data_buf, {1, SIZE}, pl::FP32);
      auto signal = pld::window(signal_buf, {1, 1}, pl::INT32);
      pl::Value xr = x[r];
      pl::Value yr = y[r];
      per_rank(xr, yr, data, signal, pl::device(r));
    });
  });
  for (std::int64_t P : {2, 3, 5, 16}) {
    EXPECT_EQ(compile_error(host, P), "compiled without error") << "P=" << P;
    for (std::int64_t nr : {P + 1, 2 * P}) {
      if (nr < 1) continue;
      EXPECT_EQ(
          compile_error(host, {rows(nr), rows(nr)}, P),
          "compile error: function 'host', parameter 'x', dim 0: NR is " + std::to_string(nr) +
              " here, but the loop over NR dispatches one call per rank (pl::device(r)) and P = " +
              std::to_string(P) +
              " ranks (from the device list): a rank loop cannot run over more than P ranks\n  "
              "hint: "
              "shape the host tensors from the device count, or loop over pld::world_size()")
          << "P=" << P << " NR=" << nr;
    }
  }
}

TEST(CompileErrors, WorldSizeDimDisagreesWithTheDeviceList) {
  const pl::HostFunction host =
      make_host(standard_host_body(make_per_rank(make_kernel())), host_params(pld::world_size()));
  EXPECT_EQ(compile_error(host, 3), "compiled without error");
  EXPECT_EQ(compile_error(host, {rows(4), rows(4)}, 3),
            "compile error: function 'host', parameter 'x', dim 0: dim world_size is bound to 3 by "
            "the device list (P = 3), but the argument has 4");
}

TEST(CompileErrors, ArgumentWithTheWrongNumberOfDims) {
  const pl::HostFunction host = program_with_kernel(copy_body);
  EXPECT_EQ(compile_error(host, {anyp::HostTensor::zeros({3, SIZE}, pl::FP32), rows(3)}, 3),
            "compile error: function 'host', parameter 'x': declared 3 dims [NR, 1, 64], actual 2 "
            "dims [3, 64]");
}

TEST(CompileErrors, HostArgumentDtypeDiffersFromDeclaration) {
  const pl::HostFunction host = program_with_kernel(copy_body);
  EXPECT_EQ(
      compile_error(host, {rows(3, pl::INT32), rows(3)}, 3),
      "compile error: function 'host', parameter 'x': dtype mismatch: declared FP32, actual INT32");
}

TEST(CompileErrors, WrongArgumentCountAtCompile) {
  const pl::HostFunction host = program_with_kernel(copy_body);
  EXPECT_EQ(compile_error(host, {rows(3)}, 3),
            "compile error: function 'host' takes 2 arguments (x, y), got 1");
  EXPECT_EQ(compile_error(host, {rows(3), rows(3), rows(3)}, 3),
            "compile error: function 'host' takes 2 arguments (x, y), got 3");
}

// ---- derived extents ---------------------------------------------------------------------------

// A host parameter whose extent is derived from NR.
TEST(CompileErrors, DerivedHostParameterExtentNotExact) {
  const pl::HostFunction host = pl::jit::host(
      "host", {pl::In("x", pl::Tensor({NR, 1, SIZE / NR}, pl::FP32))}, [](pl::Value) {});
  EXPECT_EQ(compile_error(host, {anyp::HostTensor::zeros({3, 1, 21}, pl::FP32)}, 3),
            "compile error: function 'host', parameter 'x', dim 2: extent 64 / NR is not a "
            "positive exact integer (64 / 3 is not an exact integer)");
}

// A window view {1, SIZE / NR}: 64 / 3 is not an integer.
TEST(CompileErrors, DerivedWindowExtentNotExact) {
  const auto kernel = pl::jit::incore(
      "kernel", {pl::InOut("part", pld::DistributedTensor({1, 16}, pl::FP32))}, [](pl::Value) {});
  const auto per_rank = pl::jit::orchestration(
      "per_rank", {pl::InOut("part", pld::DistributedTensor({1, 16}, pl::FP32))},
      [kernel](pl::Value part) { kernel(part); });
  const pl::HostFunction host = make_host([per_rank](pl::Value, pl::Value) {
    auto buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      per_rank(pld::window(buf, {1, SIZE / NR}, pl::FP32), pl::device(r));
    });
  });
  EXPECT_EQ(compile_error(host, 4), "compiled without error");
  EXPECT_EQ(compile_error(host, 3),
            "compile error: function 'host' (host), op pld.window of 'data', dim 1: extent 64 / NR "
            "is not a positive exact integer (64 / 3 is not an exact integer)");
}

// A window parameter {1, SIZE / NR} of a kernel.
TEST(CompileErrors, DerivedParameterExtentNotExact) {
  const auto kernel = pl::jit::incore(
      "kernel", {pl::InOut("part", pld::DistributedTensor({1, SIZE / NR}, pl::FP32))},
      [](pl::Value) {});
  const auto per_rank = pl::jit::orchestration(
      "per_rank", {pl::InOut("part", pld::DistributedTensor({1, SIZE / NR}, pl::FP32))},
      [kernel](pl::Value part) { kernel(part); });
  const pl::HostFunction host = make_host([per_rank](pl::Value, pl::Value) {
    auto buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      per_rank(pld::window(buf, {1, SIZE / NR}, pl::FP32), pl::device(r));
    });
  });
  EXPECT_EQ(compile_error(host, 2), "compiled without error");
  EXPECT_EQ(compile_error(host, 3),
            "compile error: function 'per_rank' (orchestration), parameter 'part', dim 1: extent "
            "64 / NR is not a positive exact integer (64 / 3 is not an exact integer)");
}

// A tile shape {1, SIZE / NR}.
TEST(CompileErrors, DerivedTileExtentNotExact) {
  const pl::HostFunction host =
      program_with_kernel([](pl::Value x, pl::Value y, pl::Value, pl::Value) {
        y = pl::store(pl::load(x, {0, 0}, {1, SIZE / NR}), {0, 0}, y);
      });
  EXPECT_EQ(compile_error(host, 2), "compiled without error");
  EXPECT_EQ(compile_error(host, 3),
            "compile error: function 'kernel' (incore), op pl.load, tile shape, dim 1: extent 64 / "
            "NR is not a positive exact integer (64 / 3 is not an exact integer)");
}

TEST(CompileErrors, DerivedTileExtentZero) {
  const pl::HostFunction host =
      program_with_kernel([](pl::Value x, pl::Value y, pl::Value, pl::Value) {
        y = pl::store(pl::load(x, {0, 0}, {1, 8 * (NR - 3)}), {0, 0}, y);
      });
  EXPECT_EQ(compile_error(host, 3),
            "compile error: function 'kernel' (incore), op pl.load, tile shape, dim 1: extent 8 * "
            "(NR - 3) is not a positive exact integer (it is 0)");
}

// ---- indices and regions ----------------------------------------------------------------------

// A constant leading dim larger than P: the extra rows would never be
// dispatched (the seed's pinned rank count, the other way round).
TEST(CompileErrors, RankSlicedConstantDimLargerThanP) {
  const pl::HostFunction host =
      make_host(standard_host_body(make_per_rank(make_kernel(copy_body))), host_params(4));
  EXPECT_EQ(compile_error(host, {rows(4), rows(4)}, 3),
            "compile error: function 'host', parameter 'x', dim 0: declared 4, but the rank loop "
            "over pld::world_size() runs P = 3 ranks and gives rank r the row x[r]: rows 3 .. 3 "
            "would never be dispatched\n  hint: a constant in the host signature pins the rank "
            "count; declare NR = pl::dynamic(\"NR\") and write NR in the host signature");
  EXPECT_EQ(compile_error(host, {rows(4), rows(4)}, 4), "compiled without error");
}

// A window too large to address: its byte size overflows.
TEST(CompileErrors, WindowBufferTooLarge) {
  const pl::Function per_rank = make_per_rank(make_kernel());
  const pl::HostFunction host = make_host([per_rank](pl::Value x, pl::Value y) {
    constexpr std::int64_t kBig = std::int64_t{1} << 31;
    pld::alloc_window_buffer("huge", {kBig, kBig, 8}, pl::FP32);  // refused here
    auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
    auto signal_buf = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      pl::Value xr = x[r];
      pl::Value yr = y[r];
      per_rank(xr, yr, pld::window(data_buf, {1, SIZE}, pl::FP32),
               pld::window(signal_buf, {1, 1}, pl::INT32), pl::device(r));
    });
  });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host' (host): pld.alloc_window_buffer 'huge': [2147483648, "
            "2147483648, 8] FP32 is too large: its size in bytes overflows 64 bits");
}

// A constant leading dim of 2, while the rank loop runs over P = 3.
TEST(CompileErrors, HostIndexOutOfRange) {
  const pl::HostFunction host =
      make_host(standard_host_body(make_per_rank(make_kernel(copy_body))), host_params(2));
  EXPECT_EQ(compile_error(host, {rows(2), rows(2)}, 3),
            "compile error: function 'host' (host): x[r]: index 2 is out of range for dim 0 of "
            "parameter 'x' [2, 1, 64] (extent 2, P = 3)");
}

TEST(CompileErrors, HostIndexPlusOneOutOfRange) {
  const pl::Function per_rank = make_per_rank(make_kernel());
  const pl::HostFunction host = make_host([per_rank](pl::Value x, pl::Value y) {
    auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
    auto signal_buf = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      auto data = pld::window(data_buf, {1, SIZE}, pl::FP32);
      auto signal = pld::window(signal_buf, {1, 1}, pl::INT32);
      pl::Value next = x[r + 1];
      pl::Value yr = y[r];
      per_rank(next, yr, data, signal, pl::device(r));
    });
  });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host' (host): x[r]: index 2 is out of range for dim 0 of "
            "parameter 'x' [2, 1, 64] (extent 2, P = 2)");
}

TEST(CompileErrors, LoadRegionOutOfBounds) {
  const pl::HostFunction host =
      program_with_kernel([](pl::Value, pl::Value y, pl::Value data, pl::Value) {
        y = pl::store(pl::load(data, {0, 32}, {1, SIZE}), {0, 0}, y);
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'kernel' (incore), op pl.load: region out of bounds in dim 1: "
            "offset 32 + extent 64 exceeds the source 'data' [1, 64]");
}

TEST(CompileErrors, StoreRegionOutOfBounds) {
  const pl::HostFunction host =
      program_with_kernel([](pl::Value x, pl::Value y, pl::Value, pl::Value) {
        y = pl::store(pl::load(x, {0, 0}, {1, 32}), {1, 0}, y);
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'kernel' (incore), op pl.store: region out of bounds in dim "
            "0: offset 1 + extent 1 exceeds the target 'y' [1, 64]");
}

TEST(CompileErrors, LoadRegionLargerThanTheTensor) {
  const pl::HostFunction host =
      program_with_kernel([](pl::Value x, pl::Value y, pl::Value, pl::Value) {
        y = pl::store(pl::load(x, {0, 0}, {1, 2 * SIZE}), {0, 0}, y);
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'kernel' (incore), op pl.load: the region [1, 128] is larger "
            "than the source 'x' [1, 64] in dim 1");
}

TEST(CompileErrors, RemoteLoadRegionOutOfBounds) {
  const pl::HostFunction host =
      program_with_kernel([](pl::Value, pl::Value y, pl::Value data, pl::Value) {
        y = pl::store(pld::tile::remote_load(data, 0, {0, 40}, {1, 32}), {0, 0}, y);
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'kernel' (incore), op pld.tile.remote_load: region out of "
            "bounds in dim 1: offset 40 + extent 32 exceeds the source 'data' [1, 64]");
}

// ---- levels -------------------------------------------------------------------------------------

TEST(CompileErrors, WorldSizeAsAValueInAKernel) {
  const pl::HostFunction host =
      program_with_kernel([](pl::Value x, pl::Value y, pl::Value, pl::Value) {
        pl::Scalar n = pld::world_size();
        y = pl::store(pl::add(pl::load(x, {0, 0}, {1, SIZE}), pl::cast(n, pl::FP32)), {0, 0}, y);
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'kernel' (incore): op pld.world_size is not allowed at the "
            "incore level (it is a host op; other levels may use it only in shapes)");
}

// world_size() in a kernel's shape is legal (docs/api.md §3; pld.hpp: "usable in
// shapes at every level").
TEST(CompileErrors, WorldSizeInAKernelShapeIsLegal) {
  const pl::HostFunction host =
      program_with_kernel([](pl::Value x, pl::Value y, pl::Value, pl::Value) {
        y = pl::store(pl::load(x, {0, 0}, {1, SIZE / pld::world_size()}), {0, 0}, y);
      });
  EXPECT_EQ(compile_error(host, 2), "compiled without error");
  EXPECT_EQ(compile_error(host, 4), "compiled without error");
}

TEST(CompileErrors, NotifyInTheHost) {
  const pl::Function per_rank = make_per_rank(make_kernel());
  const pl::HostFunction host = make_host([per_rank](pl::Value x, pl::Value y) {
    auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
    auto signal_buf = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      auto data = pld::window(data_buf, {1, SIZE}, pl::FP32);
      auto signal = pld::window(signal_buf, {1, 1}, pl::INT32);
      pld::system::notify(signal, r, {0, 0}, 1, NotifyOp::AtomicAdd);
      pl::Value xr = x[r];
      pl::Value yr = y[r];
      per_rank(xr, yr, data, signal, pl::device(r));
    });
  });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host' (host): op pld.system.notify is not allowed at the "
            "host level (it is an incore op)");
}

TEST(CompileErrors, RankInTheOrchestration) {
  const pl::Function kernel = make_kernel();
  const auto per_rank =
      pl::jit::orchestration("per_rank", kernel_params(),
                             [kernel](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
                               [[maybe_unused]] pl::Scalar r = pld::rank(pld::get_comm_ctx(data));
                               kernel(x, y, data, signal);
                             });
  EXPECT_EQ(compile_error(make_host(standard_host_body(per_rank)), 2),
            "compile error: function 'per_rank' (orchestration): op pld.rank is not allowed at the "
            "orchestration level (it is an incore op)");
}

TEST(CompileErrors, AllocWindowBufferInAKernel) {
  const pl::HostFunction host =
      program_with_kernel([](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        [[maybe_unused]] auto extra = pld::alloc_window_buffer("extra", {1, SIZE}, pl::FP32);
        copy_body(x, y, data, signal);
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'kernel' (incore): op pld.alloc_window_buffer is not allowed "
            "at the incore level (it is a host op)");
}

// ---- calls and dispatch
// --------------------------------------------------------------------------

// The host dispatches the kernel itself (ladder step 02's fatal pitfall).
TEST(CompileErrors, HostDispatchesAKernelDirectly) {
  const pl::HostFunction host = make_host(standard_host_body(make_kernel()));
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host' (host), op call @kernel: 'kernel' is incore, but the "
            "host may only dispatch orchestration functions (device dispatch of a "
            "non-orchestration function); wrap the kernel in a pl::jit::orchestration function "
            "and dispatch that");
}

TEST(CompileErrors, OrchestrationCallWithADevice) {
  const pl::Function kernel = make_kernel();
  const auto per_rank =
      pl::jit::orchestration("per_rank", kernel_params(),
                             [kernel](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
                               kernel(x, y, data, signal, pl::device(0));
                             });
  EXPECT_EQ(compile_error(make_host(standard_host_body(per_rank)), 2),
            "compile error: function 'per_rank' (orchestration), op call @kernel: the call of "
            "'kernel' passes pl::device(r); only the host dispatches to a device");
}

TEST(CompileErrors, HostDispatchWithoutADevice) {
  const pl::Function per_rank = make_per_rank(make_kernel());
  const pl::HostFunction host = make_host([per_rank](pl::Value x, pl::Value y) {
    auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
    auto signal_buf = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      pl::Value xr = x[r];
      pl::Value yr = y[r];
      per_rank(xr, yr, pld::window(data_buf, {1, SIZE}, pl::FP32),
               pld::window(signal_buf, {1, 1}, pl::INT32));
    });
  });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host' (host): the dispatch of 'per_rank' has no "
            "pl::device(r): the host runs orchestration functions on a device (only a one-rank "
            "run may leave it out, and runs it on rank 0; here P = 2)");
}

TEST(CompileErrors, WrongArgumentCountInACall) {
  const pl::Function per_rank = make_per_rank(make_kernel());
  const pl::HostFunction host = make_host([per_rank](pl::Value x, pl::Value y) {
    auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      pl::Value xr = x[r];
      pl::Value yr = y[r];
      per_rank(xr, yr, pld::window(data_buf, {1, SIZE}, pl::FP32), pl::device(r));
    });
  });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host' (host): call of 'per_rank': expects 4 arguments (x, y, "
            "data, signal), got 3");
}

// A window view passed where a plain tensor is declared, and the reverse.
TEST(CompileErrors, WindowPassedForAPlainTensor) {
  const pl::Function per_rank = make_per_rank(make_kernel());
  const pl::HostFunction host = make_host([per_rank](pl::Value, pl::Value y) {
    auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
    auto signal_buf = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      auto data = pld::window(data_buf, {1, SIZE}, pl::FP32);
      auto signal = pld::window(signal_buf, {1, 1}, pl::INT32);
      pl::Value yr = y[r];
      per_rank(data, yr, data, signal, pl::device(r));
    });
  });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host' (host): call of 'per_rank': argument 0 ('x') must be "
            "Tensor[1, 64] FP32, got DistributedTensor[1, 64] FP32 (a window view and a plain "
            "tensor are distinct types)");
}

TEST(CompileErrors, PlainTensorPassedForAWindow) {
  const pl::Function per_rank = make_per_rank(make_kernel());
  const pl::HostFunction host = make_host([per_rank](pl::Value x, pl::Value y) {
    auto signal_buf = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      auto signal = pld::window(signal_buf, {1, 1}, pl::INT32);
      pl::Value xr = x[r];
      pl::Value yr = y[r];
      per_rank(xr, yr, xr, signal, pl::device(r));
    });
  });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host' (host): call of 'per_rank': argument 2 ('data') must "
            "be DistributedTensor[1, 64] FP32, got Tensor[1, 64] FP32 (a window view and a plain "
            "tensor are distinct types)");
}

// The dispatched window view has the wrong dtype for the parameter.
TEST(CompileErrors, DispatchedWindowDtypeMismatch) {
  const pl::Function per_rank = make_per_rank(make_kernel());
  const pl::HostFunction host = make_host([per_rank](pl::Value x, pl::Value y) {
    auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::INT32);
    auto signal_buf = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      auto data = pld::window(data_buf, {1, SIZE}, pl::INT32);
      auto signal = pld::window(signal_buf, {1, 1}, pl::INT32);
      pl::Value xr = x[r];
      pl::Value yr = y[r];
      per_rank(xr, yr, data, signal, pl::device(r));
    });
  });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host' (host): dispatch of 'per_rank', argument 2 ('data'): "
            "expected DistributedTensor[1, 64] FP32, got DistributedTensor[1, 64] INT32");
}

// ---- tiles and dtypes
// ----------------------------------------------------------------------------

// A [1, 4] FP32 tile row is 16 B: not a whole number of 32-byte units.
TEST(CompileErrors, TileRowNotAWholeNumberOf32ByteUnits) {
  const pl::HostFunction host =
      program_with_kernel([](pl::Value, pl::Value y, pl::Value data, pl::Value) {
        y = pl::store(pl::load(data, {0, 0}, {1, 4}), {0, 0}, y);
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'kernel' (incore), op pl.load: a tile row of 4 x FP32 = 16 B "
            "is not a whole number of 32-byte units (tile [1, 4]); load a tile of a multiple of 8 "
            "elements per row with a valid_shape of the part you need (only that part is read), "
            "or pl::read one element");
}

// A tile load of a narrow INT32 signal window (ladder step 04's reason for pl::read).
TEST(CompileErrors, TileLoadOfANarrowSignal) {
  const pl::HostFunction host =
      program_with_kernel([](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        [[maybe_unused]] pl::Tile s = pld::tile::remote_load(signal, 0, {0, 0}, {1, 1});
        copy_body(x, y, data, signal);
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'kernel' (incore), op pld.tile.remote_load: a column vector "
            "of 1 x INT32 = 4 B is not a whole number of 32-byte units (tile [1, 1]); load a tile "
            "of a multiple of 8 rows with a valid_shape of the part you need (only that part is "
            "read), or pl::read one element");
}

TEST(CompileErrors, StoreFp32TileIntoInt32Tensor) {
  const pl::HostFunction host =
      program_with_kernel([](pl::Value x, pl::Value, pl::Value, pl::Value signal) {
        signal = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, signal);
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'kernel' (incore): pl.store: dtype mismatch: an FP32 tile "
            "stored into an INT32 tensor; convert it with pl::cast");
}

TEST(CompileErrors, AddOfFp32AndInt32Tiles) {
  const pl::HostFunction host =
      program_with_kernel([](pl::Value x, pl::Value y, pl::Value, pl::Value) {
        pl::Tile t = pl::load(x, {0, 0}, {1, SIZE});
        pl::Tile i = pl::cast(t, pl::INT32);
        y = pl::store(pl::add(t, i), {0, 0}, y);
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'kernel' (incore): pl.add: dtype mismatch: FP32 and INT32; "
            "convert one side with pl::cast");
}

TEST(CompileErrors, PutDtypeMismatch) {
  const pl::HostFunction host =
      program_with_kernel([](pl::Value x, pl::Value, pl::Value, pl::Value signal) {
        pld::tensor::put(signal, 0, x, AtomicType::None);
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'kernel' (incore): pld.tensor.put: dtype mismatch: "
            "destination DistributedTensor[1, 1] INT32, source Tensor[1, 64] FP32");
}

// ---- window allocation rules --------------------------------------------------------------------

// Ladder step 01's fatal pitfall: a literal loop bound leaves ranks without a
// dispatch, which would otherwise hang or leave garbage rows at P >= 3.
TEST(CompileErrors, LiteralRankLoopBoundLeavesARankWithoutDispatch) {
  const pl::Function per_rank = make_per_rank(make_kernel());
  const pl::HostFunction host = make_host([per_rank](pl::Value x, pl::Value y) {
    auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
    auto signal_buf = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
    pl::range(2, [&](pl::Scalar r) {
      pl::Value xr = x[r];
      pl::Value yr = y[r];
      per_rank(xr, yr, pld::window(data_buf, {1, SIZE}, pl::FP32),
               pld::window(signal_buf, {1, 1}, pl::INT32), pl::device(r));
    });
  });
  EXPECT_EQ(compile_error(host, 2), "compiled without error");
  EXPECT_EQ(compile_error(host, 3),
            "compile error: function 'host' (host): rank 2 of P = 3 gets no dispatch; the dispatch "
            "of 'per_rank' does not reach it; loop the dispatch over pl::range(pld::world_size()), "
            "never a literal bound");
}

TEST(CompileErrors, AllocationInsideTheRankLoop) {
  const pl::Function per_rank = make_per_rank(make_kernel());
  const pl::HostFunction host = make_host([per_rank](pl::Value x, pl::Value y) {
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
      auto signal_buf = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
      pl::Value xr = x[r];
      pl::Value yr = y[r];
      per_rank(xr, yr, pld::window(data_buf, {1, SIZE}, pl::FP32),
               pld::window(signal_buf, {1, 1}, pl::INT32), pl::device(r));
    });
  });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host' (host): pld.alloc_window_buffer 'data' is inside a "
            "loop: symmetric memory needs one allocation per host call, shared by all ranks; "
            "allocate above the rank loop");
}

TEST(CompileErrors, DeadAllocation) {
  const pl::Function per_rank = make_per_rank(make_kernel());
  const pl::HostFunction host = make_host([per_rank](pl::Value x, pl::Value y) {
    [[maybe_unused]] auto unused = pld::alloc_window_buffer("unused", {1, SIZE}, pl::FP32);
    standard_host_body(per_rank)(x, y);
  });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host' (host): window buffer 'unused' is allocated but never "
            "viewed with pld::window (dead allocation)");
}

TEST(CompileErrors, WindowViewNeverDispatched) {
  const pl::Function per_rank = make_per_rank(make_kernel());
  const pl::HostFunction host = make_host([per_rank](pl::Value x, pl::Value y) {
    auto spare_buf = pld::alloc_window_buffer("spare", {1, SIZE}, pl::FP32);
    [[maybe_unused]] auto spare = pld::window(spare_buf, {1, SIZE}, pl::FP32);
    standard_host_body(per_rank)(x, y);
  });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host' (host): a pld::window view of buffer 'spare' is never "
            "passed to a dispatch");
}

TEST(CompileErrors, WindowViewLargerThanItsBuffer) {
  const pl::Function per_rank = make_per_rank(make_kernel());
  const pl::HostFunction host = make_host([per_rank](pl::Value x, pl::Value y) {
    auto data_buf = pld::alloc_window_buffer("data", {1, SIZE / 2}, pl::FP32);
    auto signal_buf = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      pl::Value xr = x[r];
      pl::Value yr = y[r];
      per_rank(xr, yr, pld::window(data_buf, {1, SIZE}, pl::FP32),
               pld::window(signal_buf, {1, 1}, pl::INT32), pl::device(r));
    });
  });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host' (host): pld.window: a view [1, 64] FP32 (256 B) does "
            "not fit window buffer 'data' (128 B)");
}

// ---- intents
// ----------------------------------------------------------------------------------------

TEST(CompileErrors, StoreIntoAnInParameter) {
  const pl::HostFunction host =
      program_with_kernel([](pl::Value x, pl::Value, pl::Value data, pl::Value) {
        x = pl::store(pl::load(data, {0, 0}, {1, SIZE}), {0, 0}, x);
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'kernel' (incore): pl.store writes parameter 'x', which is "
            "declared pl::In; declare it pl::Out or pl::InOut");
}

TEST(CompileErrors, GetIntoAnInParameter) {
  const pl::HostFunction host = program_with_kernel(
      [](pl::Value x, pl::Value, pl::Value data, pl::Value) { pld::tensor::get(x, 0, data); });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'kernel' (incore): pld.tensor.get writes parameter 'x', which "
            "is declared pl::In; declare it pl::Out or pl::InOut");
}

// ---- errors are sticky
// -----------------------------------------------------------------------------

// A program that failed to trace fails the same way on every compile.
TEST(CompileErrors, TraceErrorRepeatsOnEveryCompile) {
  const pl::HostFunction host = make_host(standard_host_body(make_kernel()));
  const std::string first = compile_error(host, 2);
  EXPECT_EQ(compile_error(host, 3), first);
  EXPECT_EQ(
      first.rfind("compile error: function 'host' (host), op call @kernel: 'kernel' is incore", 0),
      0u)
      << first;
}

// ---- the compile cache
// ------------------------------------------------------------------------------

// Regression: plans were cached by the host function's address, so a new
// function allocated where a destroyed one lived compiled to the old plan: a
// broken program "compiled without error", a different one ran stale code.
TEST(CompileCache, NewFunctionAtAReusedAddressGetsItsOwnPlan) {
  for (int round = 0; round < 10; ++round) {
    {
      const pl::HostFunction valid = program_with_kernel(copy_body);
      EXPECT_EQ(compile_error(valid, 2), "compiled without error") << "round " << round;
    }
    {
      const pl::HostFunction broken =
          program_with_kernel([](pl::Value, pl::Value y, pl::Value data, pl::Value) {
            y = pl::store(pl::load(data, {0, 32}, {1, SIZE}), {0, 0}, y);
          });
      EXPECT_EQ(compile_error(broken, 2),
                "compile error: function 'kernel' (incore), op pl.load: region out of bounds in "
                "dim 1: offset 32 + extent 64 exceeds the source 'data' [1, 64]")
          << "round " << round;
    }
  }
}

TEST(CompileCache, NewFunctionAtAReusedAddressRunsItsOwnCode) {
  for (int round = 0; round < 10; ++round) {
    for (int add : {1, 2}) {
      const pl::HostFunction host =
          program_with_kernel([add](pl::Value x, pl::Value y, pl::Value, pl::Value) {
            y = pl::store(pl::add(pl::load(x, {0, 0}, {1, SIZE}), add), {0, 0}, y);
          });
      anyp::HostTensor x = rows(2);
      anyp::HostTensor y = rows(2);
      host.compile({x, y}, anyp::RunConfig::for_world_size(2))(x, y);
      EXPECT_EQ(y.at({1, 0, 5}), add) << "round " << round;
    }
  }
}

}  // namespace
