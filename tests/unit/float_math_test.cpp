// float_math_test.cpp — exp and log of a float (runtime/float_math.hpp):
// within 1 ulp of the correctly rounded result (the double result rounded
// to float) on a million floats spread over every exponent and on the
// edges (zeros, subnormals, the overflow and underflow thresholds, near
// powers of two and sqrt 2, infinities, NaN); and the tile loops
// (tile_unary: vectorized, compiled once per x86-64 level) give the scalar
// function's bits exactly, in place and not, at every length's tail.
#include "runtime/float_math.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/half_float.hpp"
#include "runtime/tile_unary.hpp"
#include "support/float_ulps.hpp"

namespace anyp::runtime {
namespace {

using anyp_test::ulps_off;

std::vector<float> edge_values() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          0x1p-149f,
                          0x1p-126f,
                          0x1.fffffcp-127f,
                          std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(),
                          88.72283f,
                          88.72284f,
                          89.0f,
                          -87.33654f,
                          -103.2789f,
                          -103.97208f,
                          -104.0f,
                          -200.0f,
                          1.4142135f,
                          1.4142137f,
                          0.70710677f,
                          0.7071068f};
  for (int e = -149; e <= 127; ++e) {
    const float p = std::ldexp(1.0f, e);
    v.insert(v.end(), {p, std::nextafter(p, 0.0f), std::nextafter(p, INFINITY)});
  }
  return v;
}

// Every 4 099th bit pattern (about a million floats of both signs) and the edges.
std::vector<float> sample() {
  std::vector<float> v = edge_values();
  for (std::uint64_t u = 0; u < (std::uint64_t{1} << 32); u += 4099)
    v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(u)));
  return v;
}

// The largest error over the sample; fails at the first beyond one ulp.
template <class F, class Exact>
double worst_ulps(const char* name, F approx, Exact exact) {
  double worst = 0;
  for (const float x : sample()) {
    const double off = ulps_off(approx(x), exact(static_cast<double>(x)));
    EXPECT_LE(off, 1.0) << name << "(" << std::hexfloat << x << ") = " << approx(x);
    if (off > 1.0) break;
    worst = std::max(worst, off);
  }
  return worst;
}

TEST(FloatMath, ExpAndLogAreWithinAnUlpOfTheCorrectlyRoundedResult) {
  // Not correctly rounded everywhere (above half an ulp): the check measures.
  EXPECT_GT(worst_ulps(
                "exp", [](float x) { return exp_float(x); }, [](double x) { return std::exp(x); }),
            0.5);
  EXPECT_GT(worst_ulps(
                "log", [](float x) { return log_float(x); }, [](double x) { return std::log(x); }),
            0.5);
}

TEST(FloatMath, SpecialValuesFollowIeee) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(exp_float(0.0f), 1.0f);
  EXPECT_EQ(exp_float(-0.0f), 1.0f);
  EXPECT_EQ(exp_float(inf), inf);
  EXPECT_EQ(exp_float(-inf), 0.0f);
  EXPECT_EQ(exp_float(89.0f), inf);
  EXPECT_EQ(exp_float(-104.0f), 0.0f);
  EXPECT_TRUE(std::isnan(exp_float(NAN)));
  EXPECT_EQ(log_float(1.0f), 0.0f);
  EXPECT_EQ(log_float(0.0f), -inf);
  EXPECT_EQ(log_float(-0.0f), -inf);
  EXPECT_EQ(log_float(inf), inf);
  EXPECT_TRUE(std::isnan(log_float(-1.0f)));
  EXPECT_TRUE(std::isnan(log_float(-inf)));
  EXPECT_TRUE(std::isnan(log_float(NAN)));
}

// The tile loops against the scalar functions, bit for bit: lengths 1 ... 67
// (every vector tail up to 16 lanes, several times) and the whole sample.
TEST(FloatMath, TheTileLoopsGiveTheScalarBits) {
  const std::vector<float> all = sample();
  for (const auto op : {ir::UnaryOp::Exp, ir::UnaryOp::Log}) {
    auto scalar = [&](float x) { return op == ir::UnaryOp::Exp ? exp_float(x) : log_float(x); };
    const std::string name = op == ir::UnaryOp::Exp ? "exp" : "log";
    std::vector<std::size_t> lengths;
    for (std::size_t n = 1; n <= 67; ++n) lengths.push_back(n);
    lengths.push_back(all.size());
    for (const std::size_t n : lengths) {
      for (const bool in_place : {false, true}) {
        std::vector<float> in(all.begin() + static_cast<std::ptrdiff_t>(all.size() - n), all.end());
        std::vector<float> out = in_place ? in : std::vector<float>(n);
        tile_unary(op, DType::FP32,
                   reinterpret_cast<const std::byte*>(in_place ? out.data() : in.data()),
                   reinterpret_cast<std::byte*>(out.data()), n);
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(std::bit_cast<std::uint32_t>(out[i]),
                    std::bit_cast<std::uint32_t>(scalar(in[i])))
              << name << " n=" << n << (in_place ? " in place" : "") << " i=" << i
              << " x=" << std::hexfloat << in[i];
        }
      }
    }
  }
}

// FP16 tiles (widened, run as FP32 and rounded back in blocks where the
// machine has F16C; element by element elsewhere) against the scalar
// reference — decode, the float function, round once — on every one of the
// 65 536 encodings, laid out so that blocks and tails fall mid-tile, in
// place and not. A NaN's payload is not compared (IEEE 754 leaves it open).
TEST(FloatMath, Fp16TilesGiveTheScalarBitsOnEveryEncoding) {
  std::vector<std::uint16_t> all(65536 + 37);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i * 40503u);
  const ir::UnaryOp ops[] = {ir::UnaryOp::Neg,   ir::UnaryOp::Abs,  ir::UnaryOp::Relu,
                             ir::UnaryOp::Exp,   ir::UnaryOp::Log,  ir::UnaryOp::Sqrt,
                             ir::UnaryOp::Rsqrt, ir::UnaryOp::Recip};
  auto scalar = [](ir::UnaryOp op, float x) {
    switch (op) {
      case ir::UnaryOp::Neg:
        return -x;
      case ir::UnaryOp::Abs:
        return std::fabs(x);
      case ir::UnaryOp::Relu:
        return x > 0 || x != x ? x : 0.0f;
      case ir::UnaryOp::Exp:
        return exp_float(x);
      case ir::UnaryOp::Log:
        return log_float(x);
      case ir::UnaryOp::Sqrt:
        return std::sqrt(x);
      case ir::UnaryOp::Rsqrt:
        return 1.0f / std::sqrt(x);
      default:
        return 1.0f / x;
    }
  };
  auto is_nan = [](std::uint16_t v) { return (v & 0x7fffu) > 0x7c00u; };
  for (const ir::UnaryOp op : ops) {
    for (const std::size_t n : {all.size(), std::size_t{1}, std::size_t{7}, std::size_t{513}}) {
      for (const bool in_place : {false, true}) {
        std::vector<std::uint16_t> in(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
        std::vector<std::uint16_t> out = in_place ? in : std::vector<std::uint16_t>(n);
        tile_unary(op, DType::FP16,
                   reinterpret_cast<const std::byte*>(in_place ? out.data() : in.data()),
                   reinterpret_cast<std::byte*>(out.data()), n);
        for (std::size_t i = 0; i < n; ++i) {
          const std::uint16_t want = float_to_fp16_bits(scalar(op, fp16_bits_to_float(in[i])));
          if (is_nan(want)) {
            ASSERT_TRUE(is_nan(out[i])) << ir::unary_op_name(op) << std::hex << " 0x" << in[i];
          } else {
            ASSERT_EQ(out[i], want)
                << ir::unary_op_name(op) << " n=" << n << (in_place ? " in place" : "") << std::hex
                << " 0x" << in[i] << " -> 0x" << out[i] << ", want 0x" << want;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace anyp::runtime
