// dtype_traits.hpp — compile-time traits of each element type, and
// visit_dtype(), which turns a run-time DType into one of them. The one
// place that says how an element is stored (Storage), how it converts to
// and from an exact int64 or a double, and in what type tile math computes
// (Math). element_codec.cpp and runtime/tile_math.cpp instantiate their
// loops from these, switching on the dtype once per loop, never per element.
//
// Conversion rules (element_codec.hpp states them for users):
//   integer -> integer   wrap modulo 2^width (two's complement)
//   double  -> integer   truncate toward zero, then wrap (NaN, inf: 0)
//   double  -> float     round to nearest even, once
//   int64   -> float     round to nearest even, once (FP16/BF16 through a
//                        round-to-odd double, which cannot round twice)
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "anyp/dtype.hpp"
#include "common/element_codec.hpp"
#include "common/half_float.hpp"

namespace anyp::dtype_traits {

using anyp::truncate_and_wrap;

// v as a double rounded to odd: exact when |v| < 2^53, otherwise the 53-bit
// truncation with its last bit set when bits were dropped. Rounding that to
// any format of at most 51 significant bits gives v correctly rounded.
inline double int_to_double_round_to_odd(std::int64_t v) {
  const bool negative = v < 0;
  std::uint64_t m = negative ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  const int width = std::bit_width(m);
  if (width > 53) {
    const int shift = width - 53;
    const std::uint64_t dropped = m & ((std::uint64_t{1} << shift) - 1);
    m = (m >> shift) | (dropped != 0 ? 1 : 0);
    const double d = std::ldexp(static_cast<double>(m), shift);
    return negative ? -d : d;
  }
  const double d = static_cast<double>(m);
  return negative ? -d : d;
}

template <class T>
T load_as(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
void store_as(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// Integers: Math is the storage type; arithmetic wraps (computed unsigned).
template <class S>
struct IntTraits {
  using Storage = S;
  using Math = S;
  static constexpr bool is_float = false;
  static std::int64_t to_int(S v) { return v; }
  static double to_double(S v) { return static_cast<double>(v); }
  static S from_int(std::int64_t v) {
    return static_cast<S>(static_cast<std::make_unsigned_t<S>>(static_cast<std::uint64_t>(v)));
  }
  static S from_double(double v) {
    return from_int(static_cast<std::int64_t>(truncate_and_wrap(v)));
  }
  static Math to_math(S v) { return v; }
  static S from_math(Math v) { return v; }
};

struct Fp32Traits {
  using Storage = float;
  using Math = float;
  static constexpr bool is_float = true;
  static std::int64_t to_int(float v) {
    return static_cast<std::int64_t>(truncate_and_wrap(static_cast<double>(v)));
  }
  static double to_double(float v) { return v; }
  static float from_int(std::int64_t v) { return static_cast<float>(v); }  // one rounding
  static float from_double(double v) { return static_cast<float>(v); }
  static Math to_math(float v) { return v; }
  static float from_math(Math v) { return v; }
};

// FP16/BF16: stored as their 16-bit patterns, computed in float (float's 24
// bits are more than 2 * 11 + 2, so float math then one rounding equals the
// exactly rounded result for + - * and max/min).
template <float (*ToFloat)(std::uint16_t), std::uint16_t (*FromFloat)(float),
          std::uint16_t (*FromDouble)(double)>
struct HalfTraits {
  using Storage = std::uint16_t;
  using Math = float;
  static constexpr bool is_float = true;
  static std::int64_t to_int(std::uint16_t v) {
    return static_cast<std::int64_t>(truncate_and_wrap(ToFloat(v)));
  }
  static double to_double(std::uint16_t v) { return ToFloat(v); }
  static std::uint16_t from_int(std::int64_t v) {
    return FromDouble(int_to_double_round_to_odd(v));
  }
  static std::uint16_t from_double(double v) { return FromDouble(v); }
  static Math to_math(std::uint16_t v) { return ToFloat(v); }
  static std::uint16_t from_math(Math v) { return FromFloat(v); }
};

using Fp16Traits = HalfTraits<fp16_bits_to_float, float_to_fp16_bits, double_to_fp16_bits>;
using Bf16Traits = HalfTraits<bf16_bits_to_float, float_to_bf16_bits, double_to_bf16_bits>;

// Calls f(Traits{}) for dtype t.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::FP32:
      return f(Fp32Traits{});
    case DType::FP16:
      return f(Fp16Traits{});
    case DType::BF16:
      return f(Bf16Traits{});
    case DType::INT8:
      return f(IntTraits<std::int8_t>{});
    case DType::INT16:
      return f(IntTraits<std::int16_t>{});
    case DType::INT32:
      return f(IntTraits<std::int32_t>{});
    case DType::INT64:
      break;
  }
  return f(IntTraits<std::int64_t>{});
}

}  // namespace anyp::dtype_traits
