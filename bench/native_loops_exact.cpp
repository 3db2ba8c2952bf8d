// native_loops_exact.cpp — sqrt, rsqrt and recip as an expert's loops
// (native_loops.hpp), built with -O3 -march=native -fno-math-errno.
#include <cmath>

#include "native_loops.hpp"

namespace bench {

void native_sqrt(const float* __restrict x, float* __restrict out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = std::sqrt(x[i]);
}

void native_rsqrt(const float* __restrict x, float* __restrict out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = 1.0f / std::sqrt(x[i]);
}

void native_recip(const float* __restrict x, float* __restrict out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = 1.0f / x[i];
}

}  // namespace bench
