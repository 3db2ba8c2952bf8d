// half_float_test.cpp — the inline, branch-free float <-> FP16/BF16
// conversions (common/half_float.hpp) bit for bit against references: the
// double-rounding routine for float -> half (a float widens to double
// exactly, so rounding that double once is the correctly rounded result),
// and a direct decoding written here for half -> float. Every one of the
// 65 536 half patterns is decoded; float -> half is checked on every float
// whose low bits sit at or next to a rounding boundary (ties, one below,
// one above), over all exponents and signs.
#include "common/half_float.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace anyp {
namespace {

// IEEE binary16 decoded by its definition.
float reference_fp16_to_float(std::uint16_t bits) {
  const bool negative = (bits & 0x8000u) != 0;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0x1f) {
    return std::bit_cast<float>((negative ? 0x80000000u : 0u) | 0x7f800000u |
                                (static_cast<std::uint32_t>(mantissa) << 13));
  }
  const double magnitude =
      exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
  return static_cast<float>(negative ? -magnitude : magnitude);
}

std::uint32_t float_bits(float f) { return std::bit_cast<std::uint32_t>(f); }

TEST(HalfFloat, EveryFp16PatternDecodes) {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    ASSERT_EQ(float_bits(fp16_bits_to_float(bits)), float_bits(reference_fp16_to_float(bits)))
        << "fp16 0x" << std::hex << h;
  }
}

TEST(HalfFloat, EveryBf16PatternDecodes) {
  for (std::uint32_t h = 0; h < 0x10000u; ++h) {
    ASSERT_EQ(float_bits(bf16_bits_to_float(static_cast<std::uint16_t>(h))), h << 16);
  }
}

// Every float whose top 19 bits are anything and whose low 13 bits (the
// bits FP16 drops) are one of `lows`.
template <class F>
void for_boundary_floats(std::initializer_list<std::uint32_t> lows, int low_bits, F&& check) {
  for (std::uint32_t top = 0; top < (1u << (32 - low_bits)); ++top)
    for (const std::uint32_t low : lows) check(std::bit_cast<float>(top << low_bits | low));
}

TEST(HalfFloat, FloatToFp16RoundsLikeTheReference) {
  // 0x1000 is the tie; 0x0fff / 0x1001 either side; 0 and 0x1fff the ends.
  for_boundary_floats(
      {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x0800, 0x1800}, 13, [](float f) {
        ASSERT_EQ(float_to_fp16_bits(f), double_to_fp16_bits(static_cast<double>(f)))
            << "float 0x" << std::hex << float_bits(f);
      });
}

TEST(HalfFloat, FloatToBf16RoundsLikeTheReference) {
  for_boundary_floats(
      {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff, 0x4000, 0xc000}, 16, [](float f) {
        ASSERT_EQ(float_to_bf16_bits(f), double_to_bf16_bits(static_cast<double>(f)))
            << "float 0x" << std::hex << float_bits(f);
      });
}

TEST(HalfFloat, NamedValues) {
  EXPECT_EQ(float_to_fp16_bits(65504.0f), 0x7bffu);  // the largest finite
  EXPECT_EQ(float_to_fp16_bits(65520.0f), 0x7c00u);  // halfway to 2^16: infinity
  EXPECT_EQ(float_to_fp16_bits(0x1p-24f), 0x0001u);  // the smallest subnormal
  EXPECT_EQ(float_to_fp16_bits(0x1p-25f), 0x0000u);  // half of it: ties to even, zero
  EXPECT_EQ(float_to_fp16_bits(-0.0f), 0x8000u);
  EXPECT_EQ(float_to_fp16_bits(std::nanf("")), 0x7e00u);
  EXPECT_EQ(float_to_bf16_bits(1.00390625f), 0x3f80u);  // 1 + 2^-8: a tie, to even
  EXPECT_EQ(float_to_bf16_bits(-INFINITY), 0xff80u);
  EXPECT_EQ(float_to_bf16_bits(std::bit_cast<float>(0x7f800001u)), 0x7fc0u);  // quiet NaN
}

}  // namespace
}  // namespace anyp
