// loop_bounds_test.cpp — pl::range counts in INT64 end to end: kernel loops
// across +2^31 and -2^31 (constant and run-time bounds), stepped loops that
// end next to INT64's limits (the last increment would overflow: the loop
// ends instead of wrapping), the loop variable's INT64 type, host loops that
// pass their INT64 counter to a kernel, and a constant bound that overflows
// INT64 (a compile error naming it). Each kernel writes what it counted into
// an INT64 row: [iterations, first i, last i, sum of (i - first)], at P = 2, 3
// and 5, and the expected values are computed here by hand.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "support/source_locations.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

// The bounds of one loop; `start_plus_rank` adds the rank to start at run time.
struct Loop {
  const char* label;
  std::int64_t start, stop, step;
  bool start_plus_rank = false;
};

// The kernel: y (INT64 [1, 4]) = [count, first, last, sum of (i - first)].
pl::Function counting_kernel(const Loop& loop) {
  return pl::jit::incore(std::string("count_") + loop.label,
                         {pl::Out("y", pl::Tensor({1, 4}, pl::INT64)),
                          pl::InOut("w", pld::DistributedTensor({1, 4}, pl::INT64))},
                         [loop](pl::Value y, pl::Value w) {
                           auto ctx = pld::get_comm_ctx(w);
                           pl::Scalar start = pl::cast(loop.start, pl::INT64);
                           if (loop.start_plus_rank)
                             start = start + pl::cast(pld::rank(ctx), pl::INT64);
                           pl::Scalar count = pl::cast(0, pl::INT64);
                           pl::Scalar first = pl::cast(0, pl::INT64);
                           pl::Scalar last = pl::cast(0, pl::INT64);
                           pl::Scalar sum = pl::cast(0, pl::INT64);
                           auto body = [&](pl::Scalar i) {
                             pl::if_(count == 0, [&] { first = i; });
                             last = i;
                             sum = sum + (i - start);
                             count = count + 1;
                           };
                           if (loop.step == 1) {
                             pl::range(start, loop.stop, body);
                           } else {
                             pl::range(start, loop.stop, loop.step, body);
                           }
                           pl::write(y, {0, 0}, count);
                           pl::write(y, {0, 1}, first);
                           pl::write(y, {0, 2}, last);
                           pl::write(y, {0, 3}, sum);
                         });
}

pl::HostFunction counting_host(const Loop& loop) {
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", counting_kernel(loop));
  return pl::jit::host(std::string("host_") + loop.label,
                       {pl::Out("y", pl::Tensor({NR, 1, 4}, pl::INT64))}, [per_rank](pl::Value y) {
                         auto buf = pld::alloc_window_buffer("w", {1, 4}, pl::INT64);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           auto w = pld::window(buf, {1, 4}, pl::INT64);
                           pl::Value yr = y[r];
                           per_rank(yr, w, pl::device(r));
                         });
                       });
}

// What the loop counts, by hand (with __int128, so nothing here can wrap).
std::vector<std::int64_t> expected(std::int64_t start, std::int64_t stop, std::int64_t step) {
  std::int64_t count = 0, first = 0, last = 0;
  __int128 sum = 0;
  for (__int128 i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (count == 0) first = static_cast<std::int64_t>(i);
    last = static_cast<std::int64_t>(i);
    sum += i - start;
    ++count;
  }
  return {count, first, last, static_cast<std::int64_t>(sum)};
}

class LoopBounds : public ::testing::TestWithParam<Loop> {};

TEST_P(LoopBounds, CountsInInt64) {
  const Loop loop = GetParam();
  const pl::HostFunction host = counting_host(loop);
  for (std::int64_t P : {2, 3, 5}) {
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, 4}, pl::INT64);
    host.compile({y}, anyp::RunConfig::for_world_size(P))(y);
    for (std::int64_t r = 0; r < P; ++r) {
      const std::int64_t start = loop.start + (loop.start_plus_rank ? r : 0);
      const std::vector<std::int64_t> want = expected(start, loop.stop, loop.step);
      for (std::int64_t j = 0; j < 4; ++j) {
        EXPECT_EQ(y.get_int(r * 4 + j), want[static_cast<std::size_t>(j)])
            << loop.label << " P=" << P << " rank " << r << " field " << j;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AcrossTheLimits, LoopBounds,
    ::testing::Values(Loop{"across_int32_max", 2147483646, 2147483649, 1},
                      Loop{"across_int32_max_runtime_start", 2147483640, 2147483650, 1, true},
                      Loop{"across_int32_min", -2147483650LL, -2147483645LL, 1},
                      Loop{"down_across_int32_min", -2147483646LL, -2147483652LL, -2},
                      Loop{"up_to_int64_max", kMax - 10, kMax, 4},
                      Loop{"up_to_int64_max_runtime_start", kMax - 12, kMax, 5, true},
                      Loop{"up_to_int64_max_unit", kMax - 3, kMax, 1},
                      Loop{"down_to_int64_min", kMin + 10, kMin, -4},
                      Loop{"down_to_int64_min_by_max", -1, kMin, -kMax},
                      Loop{"whole_int64_in_two_steps", kMin, kMax, kMax}),
    [](const auto& info) { return std::string(info.param.label); });

TEST(LoopBounds, TheLoopVariableIsInt64) {
  const pl::Function k =
      pl::jit::incore("k", {pl::Out("y", pl::Tensor({1, 4}, pl::INT64))}, [](pl::Value y) {
        pl::range(2147483647, 2147483648, [&](pl::Scalar i) { pl::write(y, {0, 0}, i + 1); });
      });
  EXPECT_EQ(k.ir_text(),
            "incore k(%y: Tensor[1, 4] INT64 out) {\n"
            "  for %1 in range(2147483647, 2147483648) {\n"
            "    %2 = add %1, 1 : Scalar INT64\n"
            "    pl.write %y[0, 0] = %2\n"
            "  }\n"
            "}\n");
}

// A host loop across 2^31 hands its INT64 counter to every rank's kernel.
TEST(LoopBounds, AHostLoopPassesItsInt64CounterToTheKernels) {
  const pl::Function k =
      pl::jit::incore("k", {pl::InOut("y", pl::Tensor({1, 4}, pl::INT64)), pl::In("i", pl::INT64)},
                      [](pl::Value y, pl::Scalar i) {
                        pl::write(y, {0, 0}, pl::read(y, {0, 0}) + i);
                        pl::write(y, {0, 1}, pl::read(y, {0, 1}) + 1);
                      });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", k);
  const pl::HostFunction host = pl::jit::host(
      "host", {pl::InOut("y", pl::Tensor({NR, 1, 4}, pl::INT64))}, [per_rank](pl::Value y) {
        pl::range(2147483646, 2147483649, [&](pl::Scalar i) {
          pl::range(pld::world_size(), [&](pl::Scalar r) {
            pl::Value yr = y[r];
            per_rank(yr, i, pl::device(r));
          });
        });
      });
  for (std::int64_t P : {2, 3}) {
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, 4}, pl::INT64);
    host.compile({y}, anyp::RunConfig::for_world_size(P))(y);
    for (std::int64_t r = 0; r < P; ++r) {
      EXPECT_EQ(y.get_int(r * 4), 3 * 2147483647LL);
      EXPECT_EQ(y.get_int(r * 4 + 1), 3);
    }
  }
}

TEST(LoopBounds, AConstantBoundThatOverflowsInt64IsACompileError) {
  const pl::Function k =
      pl::jit::incore("k", {pl::Out("y", pl::Tensor({1, 4}, pl::INT64))}, [](pl::Value y) {
        pl::range(pl::Dim(kMax - 1) + NR, [&](pl::Scalar i) { pl::write(y, {0, 0}, i); });
      });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", k);
  const pl::HostFunction host = pl::jit::host(
      "host", {pl::Out("y", pl::Tensor({NR, 1, 4}, pl::INT64))}, [per_rank](pl::Value y) {
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          pl::Value yr = y[r];
          per_rank(yr, pl::device(r));
        });
      });
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, 4}, pl::INT64);
  std::string error = "compiled without error";
  try {
    host.compile({y}, anyp::RunConfig::for_world_size(2));
  } catch (const anyp::CompileError& e) {
    error = anyp_test::without_locations(e.what());
  }
  EXPECT_EQ(error,
            "compile error: function 'k' (incore), op pl.range: the stop "
            "9223372036854775806 + NR: 9223372036854775806 + 2 overflows INT64");
}

}  // namespace

namespace {

// A kernel over x [NR * 1073741824 ...]: the bound is an extent of dims,
// an INT32 value, and 2^32 at P = 4 does not fit.
TEST(LoopBounds, AnExtentBoundOutsideInt32IsACompileError) {
  for (const bool cast : {false, true}) {
    const pl::Function k = pl::jit::incore(
        cast ? "k_cast" : "k", {pl::Out("y", pl::Tensor({1, 4}, pl::INT64))}, [cast](pl::Value y) {
          const pl::Dim huge = NR * 1073741824;
          pl::Scalar stop = cast ? pl::cast(huge, pl::INT64) : pl::Scalar(huge);
          pl::range(stop - 2, stop, [&](pl::Scalar i) { pl::write(y, {0, 0}, i); });
        });
    const pl::Function per_rank = pl::jit::orchestration_for("per_rank", k);
    const pl::HostFunction host = pl::jit::host(
        "host", {pl::Out("y", pl::Tensor({NR, 1, 4}, pl::INT64))}, [per_rank](pl::Value y) {
          pl::range(pld::world_size(), [&](pl::Scalar r) {
            pl::Value yr = y[r];
            per_rank(yr, pl::device(r));
          });
        });
    anyp::HostTensor y = anyp::HostTensor::zeros({4, 1, 4}, pl::INT64);
    std::string error = "compiled without error";
    try {
      host.compile({y}, anyp::RunConfig::for_world_size(4))(y);
    } catch (const anyp::CompileError& e) {
      error = anyp_test::without_locations(e.what());
    }
    if (cast) {
      EXPECT_EQ(error, "compiled without error");
      EXPECT_EQ(y.get_int(3 * 4), 4294967295LL);
    } else {
      EXPECT_EQ(error,
                "compile error: function 'k' (incore), op const: operand 0 NR * 1073741824 is "
                "4294967296 here, outside INT32 (an extent of dims is an INT32 value); make it "
                "INT64 with pl::cast(..., pl::INT64)");
    }
  }
}

}  // namespace
