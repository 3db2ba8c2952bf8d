// float_ulps.hpp — how far a float result is from the exact one, in ulps,
// for the checks of runtime/float_math.hpp (tests/unit/float_math_test.cpp,
// bench/float_math_check.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace anyp_test {

// |got - exact| in units of the last place of the exact result rounded to
// float (subnormal spacing below 2^-126). Both NaN, or both the same
// infinity or zero: 0. A wrong NaN or infinity: infinity. An exact result
// beyond the largest float, or below half the least subnormal, is measured
// against that edge.
inline double ulps_off(float got, double exact) {
  if (std::isnan(exact)) return std::isnan(got) ? 0 : INFINITY;
  const float rounded = static_cast<float>(exact);
  if (std::isinf(rounded) || rounded == 0) {
    if (got == rounded) return 0;
    const double edge = std::isinf(rounded) ? std::numeric_limits<float>::max() : 0.0;
    const double spacing = std::isinf(rounded) ? 0x1p104 : 0x1p-149;
    return std::isinf(got) ? INFINITY : std::fabs(static_cast<double>(got) - edge) / spacing;
  }
  int e = 0;
  std::frexp(rounded, &e);
  return std::fabs(static_cast<double>(got) - exact) / std::ldexp(1.0, std::max(e - 24, -149));
}

}  // namespace anyp_test
