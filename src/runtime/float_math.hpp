// float_math.hpp — exp and log of one float (and of a float holding an
// FP16 or BF16 value), written for the tile loops GCC vectorizes (tile_unary.cpp):
// no branch, no table, no call but std::fma, every rounding an IEEE
// operation or a fused multiply-add. The same bits come out on every path
// the loader picks (AVX-512, AVX2 + FMA, the baseline, where std::fma is
// the C library's exact fmaf) and at every vector width; the file that
// includes it is built with -ffp-contract=off, so the compiler fuses
// nothing on its own.
//
// Accuracy: within 1 ulp of the correctly rounded result for every float
// (bench/float_math_check.cpp checks all 2^32 inputs against the double
// result rounded to float; docs/performance.md, "Tile math").
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace anyp::runtime {

// e^x. Overflow gives +inf, underflow a subnormal or +0, NaN a NaN.
//
// x = k ln 2 + r with k = round(x log2 e) and |r| <= ln(2) / 2: r in two
// fused steps against ln 2 split in a 16-bit head (k times it is exact, and
// so is x minus that) and a tail; e^r by its Taylor polynomial to r^7
// (truncation below 2^-27 of the result) in Horner form; then times 2^k in
// two exact-power steps, so that the one rounding into the subnormal range
// (or to inf) is the last multiplication's.
[[gnu::always_inline]] inline float exp_float(float x) {
  constexpr float kLog2e = 0x1.715476p+0f;
  constexpr float kLn2Head = 0x1.62e4p-1f;     // 16 significant bits
  constexpr float kLn2Tail = 0x1.7f7d1cp-20f;  // ln 2 - kLn2Head
  constexpr float kRound = 0x1.8p23f;          // adding it rounds to an integer
  // Beyond [-104, 89] the result is +0 or +inf anyway (exp(-104) is below
  // half the least subnormal, exp(89) above the largest float); clamping
  // keeps k in range. A NaN is clamped too, and restored at the end.
  float xc = x > -104.0f ? x : -104.0f;
  xc = xc < 89.0f ? xc : 89.0f;
  const float k = std::fma(xc, kLog2e, kRound) - kRound;
  float r = std::fma(-k, kLn2Head, xc);
  r = std::fma(-k, kLn2Tail, r);
  float p = 0x1.a01a02p-13f;            // 1/7!
  p = std::fma(p, r, 0x1.6c16c2p-10f);  // 1/6!
  p = std::fma(p, r, 0x1.111112p-7f);   // 1/5!
  p = std::fma(p, r, 0x1.555556p-5f);   // 1/4!
  p = std::fma(p, r, 0x1.555556p-3f);   // 1/3!
  p = std::fma(p, r, 0.5f);
  p = std::fma(p, r, 1.0f);
  p = std::fma(p, r, 1.0f);
  const std::int32_t ki = static_cast<std::int32_t>(k);  // in [-150, 129]
  const std::int32_t k1 = ki / 2, k2 = ki - k1;          // each in [-75, 65]
  const float scale1 = std::bit_cast<float>(static_cast<std::uint32_t>(k1 + 127) << 23);
  const float scale2 = std::bit_cast<float>(static_cast<std::uint32_t>(k2 + 127) << 23);
  const float y = p * scale1 * scale2;
  return x == x ? y : x + x;
}

// ln x. ln(+0) = -inf, a negative x or NaN gives a NaN, ln(+inf) = +inf.
//
// x = 2^e m with m in [sqrt(1/2), sqrt(2)) (a subnormal x scaled by 2^23
// first), f = m - 1 exactly; ln(1 + f) = f - f^2/2 + f^3 P(f) with a degree-8
// minimax P (the Cephes logf coefficients), the part after f in float with
// fused steps (at most 0.09 in size, so its rounding is a quarter of the
// result's ulp at most); e ln 2 + f + that part with the head sum kept
// exact, rounded once at the end.
[[gnu::always_inline]] inline float log_float(float x) {
  const bool subnormal = x < 0x1p-126f;
  const float xs = subnormal ? x * 0x1p23f : x;
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(xs);
  std::int32_t e = static_cast<std::int32_t>(bits >> 23) - (subnormal ? 127 + 23 : 127);
  std::uint32_t m_bits = (bits & 0x7fffffu) | 0x3f800000u;  // m in [1, 2)
  const bool above_sqrt2 = m_bits > 0x3fb504f3u;
  m_bits = above_sqrt2 ? m_bits - 0x00800000u : m_bits;  // m / 2
  e = above_sqrt2 ? e + 1 : e;
  const float f = std::bit_cast<float>(m_bits) - 1.0f;
  const float z = f * f;
  float p = 7.0376836292e-2f;
  p = std::fma(p, f, -1.1514610310e-1f);
  p = std::fma(p, f, 1.1676998740e-1f);
  p = std::fma(p, f, -1.2420140846e-1f);
  p = std::fma(p, f, 1.4249322787e-1f);
  p = std::fma(p, f, -1.6668057665e-1f);
  p = std::fma(p, f, 2.0000714765e-1f);
  p = std::fma(p, f, -2.4999993993e-1f);
  p = std::fma(p, f, 3.3333331174e-1f);
  const float tail = std::fma(-0.5f, z, f * z * p);
  // e ln 2 + f + tail: e times ln 2's 16-bit head is exact, its sum with f
  // is kept exactly as s + err (Knuth's two-sum), and the one rounding that
  // matters is the last addition's. (A compiler that fused a product into
  // an addition here would round the same: the products are exact.)
  constexpr float kLn2Head = 0x1.62e4p-1f;
  constexpr float kLn2Tail = 0x1.7f7d1cp-20f;  // ln 2 - kLn2Head
  const float ef = static_cast<float>(e);
  const float head = ef * kLn2Head;
  const float s = head + f;
  const float f_part = s - head;
  const float err = (head - (s - f_part)) + (f - f_part);
  const float y = s + (std::fma(ef, kLn2Tail, tail) + err);
  // Outside (0, inf): -inf at 0 (either sign), NaN below it or for a NaN,
  // x itself at +inf.
  const float special = x == 0.0f ? -INFINITY : x > 0.0f ? x : NAN;
  return x > 0.0f && x < INFINITY ? y : special;
}

}  // namespace anyp::runtime
