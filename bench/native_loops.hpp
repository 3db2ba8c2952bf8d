// native_loops.hpp — the loops an expert writes for this CPU, the baseline
// of issue 52's tile-math targets (compute_bench): out[i] = f(x[i]) over n
// floats, built with -O3 -march=native, the exact ones (sqrt, rsqrt,
// recip) with -fno-math-errno (IEEE results: the same bits as anyp's), exp
// and log with -ffast-math (GCC then calls glibc's vector expf/logf,
// libmvec, within 4 ulp).
#pragma once

#include <cstddef>

namespace bench {

void native_sqrt(const float* x, float* out, std::size_t n);
void native_rsqrt(const float* x, float* out, std::size_t n);
void native_recip(const float* x, float* out, std::size_t n);
void native_exp(const float* x, float* out, std::size_t n);
void native_log(const float* x, float* out, std::size_t n);

}  // namespace bench
