// float_math_check.cpp — runtime/float_math.hpp's exp and log on every one
// of the 2^32 floats against the double result (std::exp, std::log: within
// an ulp of double, so rounding them to float is the correctly rounded
// result but for ties closer than 2^-29 of a float ulp): the worst error in
// ulps of the result (subnormal spacing below 2^-126), where it is, and how
// many results are not the correctly rounded one. Exits 1 if an error
// exceeds one ulp or a NaN, infinity or zero is wrong.
//
//   build/bench/bench/float_math_check [STEP]   (every STEP-th bit pattern; default 1)
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "runtime/float_math.hpp"
#include "support/float_ulps.hpp"

namespace {

struct Tally {
  double worst = 0;
  float worst_x = 0;
  std::uint64_t checked = 0, not_nearest = 0, bad = 0;
};

using anyp_test::ulps_off;

template <class F, class G>
Tally check(F approx, G exact, std::uint64_t step) {
  Tally t;
  for (std::uint64_t u = 0; u < (std::uint64_t{1} << 32); u += step) {
    const float x = std::bit_cast<float>(static_cast<std::uint32_t>(u));
    const float got = approx(x);
    const double want = exact(static_cast<double>(x));
    const double off = ulps_off(got, want);
    ++t.checked;
    if (!std::isnan(want) && got != static_cast<float>(want)) ++t.not_nearest;
    if (off > 1.0) ++t.bad;
    if (off > t.worst) {
      t.worst = off;
      t.worst_x = x;
    }
  }
  return t;
}

void print(const char* name, const Tally& t) {
  std::printf(
      "%s: %llu floats, worst %.3f ulp at %a, %llu not correctly rounded (%.4f %%), %llu "
      "beyond 1 ulp\n",
      name, static_cast<unsigned long long>(t.checked), t.worst, static_cast<double>(t.worst_x),
      static_cast<unsigned long long>(t.not_nearest),
      100.0 * static_cast<double>(t.not_nearest) / static_cast<double>(t.checked),
      static_cast<unsigned long long>(t.bad));
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t step = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1;
  if (step == 0) {
    std::fprintf(stderr, "float_math_check: STEP must be a positive integer\n");
    return 2;
  }
  const Tally e = check([](float x) { return anyp::runtime::exp_float(x); },
                        [](double x) { return std::exp(x); }, step);
  print("exp", e);
  const Tally l = check([](float x) { return anyp::runtime::log_float(x); },
                        [](double x) { return std::log(x); }, step);
  print("log", l);
  return e.bad == 0 && l.bad == 0 ? 0 : 1;
}
