// half_float.cpp — FP16/BF16 <-> float/double conversions (see half_float.hpp).
//
// One routine rounds a double into any small binary format with E exponent
// bits and M explicit mantissa bits (FP16: 5/10, BF16: 8/7), ties to even.
// (The float overloads are inline in the header.)
#include "common/half_float.hpp"

#include <bit>
#include <cmath>
#include <cstdint>

namespace anyp {
namespace {

// Rounds `value` to the format with `exp_bits` exponent bits and `mant_bits`
// mantissa bits (sign bit on top); returns the encoding in the low bits.
std::uint16_t round_double_to_small_float(double value, int exp_bits, int mant_bits) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(value);
  const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 63) << (exp_bits + mant_bits);
  const int exp_field = static_cast<int>((bits >> 52) & 0x7ff);
  const std::uint64_t frac = bits & ((std::uint64_t{1} << 52) - 1);
  const std::uint32_t inf = ((std::uint32_t{1} << exp_bits) - 1) << mant_bits;

  if (exp_field == 0x7ff) {
    if (frac == 0) return static_cast<std::uint16_t>(sign | inf);
    // NaN: keep the top payload bits, force the quiet bit.
    const std::uint32_t payload = static_cast<std::uint32_t>(frac >> (52 - mant_bits));
    const std::uint32_t quiet = std::uint32_t{1} << (mant_bits - 1);
    return static_cast<std::uint16_t>(sign | inf | quiet | payload);
  }
  // Zero, and double subnormals (< 2^-1022): far below half of either
  // format's smallest subnormal, so they round to signed zero.
  if (exp_field == 0) return static_cast<std::uint16_t>(sign);

  const int bias = (1 << (exp_bits - 1)) - 1;
  const int emin = 1 - bias;  // exponent of the smallest normal
  const int e = exp_field - 1023;
  const std::uint64_t significand = (std::uint64_t{1} << 52) | frac;  // value = sig * 2^(e-52)

  // Bits of `significand` below the target's unit in the last place.
  const int shift = e >= emin ? 52 - mant_bits : 52 - mant_bits + (emin - e);
  if (shift >= 64) return static_cast<std::uint16_t>(sign);  // far below half the min subnormal

  std::uint64_t rounded = significand >> shift;
  const std::uint64_t rest = significand & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  if (rest > half || (rest == half && (rounded & 1) != 0)) ++rounded;

  // Normal: `rounded` includes the implicit bit, so adding it to the biased
  // exponent minus one carries correctly when rounding reaches 2^(M+1).
  // Subnormal: `rounded` is the encoding itself (and 2^M is the min normal).
  std::uint64_t magnitude =
      e >= emin ? (static_cast<std::uint64_t>(e - emin) << mant_bits) + rounded : rounded;
  if (magnitude >= inf) magnitude = inf;  // overflow rounds to infinity
  return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(magnitude));
}

}  // namespace

std::uint16_t double_to_fp16_bits(double value) {
  return round_double_to_small_float(value, 5, 10);
}

std::uint16_t double_to_bf16_bits(double value) { return round_double_to_small_float(value, 8, 7); }

}  // namespace anyp
