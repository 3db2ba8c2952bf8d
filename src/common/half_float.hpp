// half_float.hpp — FP16 (IEEE binary16) and BF16 (bfloat16) encodings:
// conversion to and from their 16-bit patterns with round-to-nearest-even.
//
// Used by HostTensor (FP16/BF16 storage) and by the runtime. The double
// overloads round once, straight from double; converting through float first
// could round twice and differ in the last bit.
//
// NaN stays NaN (quiet, sign kept), infinities stay infinite, values beyond
// the largest finite encoding round to infinity, and values below half the
// smallest subnormal round to (signed) zero.
//
// The float overloads are inline and branch-free (every case computed, one
// selected), so tile loops over FP16/BF16 elements vectorize; the double
// overloads are the reference they are tested against
// (tests/unit/half_float_test.cpp checks them bit for bit).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

namespace anyp {

std::uint16_t double_to_fp16_bits(double value);
std::uint16_t double_to_bf16_bits(double value);

inline float fp16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t h = bits;
  const std::uint32_t sign = (h & 0x8000u) << 16;
  const std::uint32_t magnitude = h & 0x7fffu;
  // Normal: rebias the exponent (15 -> 127). Infinity/NaN: exponent all
  // ones, payload widened. Subnormal: mantissa * 2^-24, computed exactly as
  // 2^-14 * (1 + mantissa / 2^10) - 2^-14 (a float subtraction, which
  // vectorizes where an int -> float conversion of 16-bit lanes does not).
  const std::uint32_t normal = (magnitude << 13) + (112u << 23);
  const std::uint32_t special = (magnitude << 13) | 0x7f800000u;
  const std::uint32_t subnormal = std::bit_cast<std::uint32_t>(
      std::bit_cast<float>((magnitude << 13) + (113u << 23)) - 0x1p-14f);
  const std::uint32_t out =
      magnitude >= 0x7c00u ? special : (magnitude < 0x0400u ? subnormal : normal);
  return std::bit_cast<float>(out | sign);
}

inline std::uint16_t float_to_fp16_bits(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t a = x & 0x7fffffffu;
  // NaN: quiet, the top 10 payload bits kept.
  const std::uint32_t nan = 0x7e00u | ((a >> 13) & 0x03ffu);
  // Normal (|value| >= 2^-14): drop 13 mantissa bits, ties to even, rebias
  // (127 -> 15); a carry rounds into the exponent, and up to infinity.
  const std::uint32_t normal =
      std::min(((a + 0x0fffu + ((a >> 13) & 1u)) >> 13) - (112u << 10), 0x7c00u);
  // Subnormal (|value| < 2^-14): the significand shifted right until its
  // unit is 2^-24, ties to even (0x400 when it rounds up to the smallest
  // normal). All-integer, so it vectorizes with 16-bit results; a shift
  // past 24 leaves 0 and a remainder below half, i.e. zero.
  const std::uint32_t exponent = a >> 23;
  const std::uint32_t significand = (a & 0x7fffffu) | (exponent != 0 ? 0x800000u : 0u);
  // (Clamped to [1, 31] so every shift is defined; normal values, where
  // the clamp bites, do not use this result.)
  const std::uint32_t shift = std::clamp(126u - std::min(exponent, 126u), 1u, 31u);
  const std::uint32_t kept = significand >> shift;
  const std::uint32_t rest = significand & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1u);
  const std::uint32_t subnormal =
      kept + ((rest > half || (rest == half && (kept & 1u) != 0)) ? 1u : 0u);
  const std::uint32_t out = a > 0x7f800000u ? nan : (a >= 0x38800000u ? normal : subnormal);
  return static_cast<std::uint16_t>(out | sign);
}

inline float bf16_bits_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

inline std::uint16_t float_to_bf16_bits(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  // Ties to even on the top 16 bits (a carry reaches the exponent, and
  // infinity); NaN quiet with its top payload bits.
  const std::uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const std::uint32_t nan = (x >> 16) | 0x0040u;
  return static_cast<std::uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

}  // namespace anyp
