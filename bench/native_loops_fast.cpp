// native_loops_fast.cpp — exp and log as an expert's loops
// (native_loops.hpp), built with -O3 -march=native -ffast-math: GCC
// vectorizes them with glibc's libmvec.
#include <cmath>

#include "native_loops.hpp"

namespace bench {

void native_exp(const float* __restrict x, float* __restrict out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = std::exp(x[i]);
}

void native_log(const float* __restrict x, float* __restrict out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = std::log(x[i]);
}

}  // namespace bench
