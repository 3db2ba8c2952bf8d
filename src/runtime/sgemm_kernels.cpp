// sgemm_kernels.cpp — the FP32 matrix product (see sgemm_kernels.hpp):
// packing, blocking, and one register-blocked micro-kernel per x86 vector
// width, chosen once per process from the CPU's features.
#include "runtime/sgemm_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ANYP_SGEMM_X86 1
#endif

namespace anyp::runtime {
namespace {

constexpr std::int64_t kBlockK = 256;

// 64-byte aligned float scratch, kept per thread across calls.
struct Scratch {
  float* data = nullptr;
  std::size_t size = 0;
  ~Scratch() { ::operator delete (data, std::align_val_t{64}); }
  float* get(std::size_t n) {
    if (n > size) {
      ::operator delete (data, std::align_val_t{64});
      data = static_cast<float*>(::operator new (n * sizeof(float), std::align_val_t{64}));
      size = n;
    }
    return data;
  }
};

// A [mr x nr] block of C at c (row stride ldc) from packed a [kc][mr] and b
// [kc][nr]: every chain starts at 0 or at C (load) and runs k = 0 .. kc-1.
using MicroKernel = void (*)(std::int64_t kc, const float* a, const float* b, float* c,
                             std::int64_t ldc, bool load);

#ifdef ANYP_SGEMM_X86
template <int MR>
__attribute__((target("avx512f"))) void micro_avx512(std::int64_t kc, const float* a,
                                                     const float* b, float* c, std::int64_t ldc,
                                                     bool load) {
  __m512 c0[MR], c1[MR];
  for (int r = 0; r < MR; ++r) {
    c0[r] = load ? _mm512_loadu_ps(c + r * ldc) : _mm512_setzero_ps();
    c1[r] = load ? _mm512_loadu_ps(c + r * ldc + 16) : _mm512_setzero_ps();
  }
  for (std::int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_load_ps(b + k * 32), b1 = _mm512_load_ps(b + k * 32 + 16);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(a[k * MR + r]);
      c0[r] = _mm512_fmadd_ps(x, b0, c0[r]);
      c1[r] = _mm512_fmadd_ps(x, b1, c1[r]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    _mm512_storeu_ps(c + r * ldc, c0[r]);
    _mm512_storeu_ps(c + r * ldc + 16, c1[r]);
  }
}

template <int MR>
__attribute__((target("avx2,fma"))) void micro_avx2(std::int64_t kc, const float* a, const float* b,
                                                    float* c, std::int64_t ldc, bool load) {
  __m256 c0[MR], c1[MR];
  for (int r = 0; r < MR; ++r) {
    c0[r] = load ? _mm256_loadu_ps(c + r * ldc) : _mm256_setzero_ps();
    c1[r] = load ? _mm256_loadu_ps(c + r * ldc + 8) : _mm256_setzero_ps();
  }
  for (std::int64_t k = 0; k < kc; ++k) {
    const __m256 b0 = _mm256_load_ps(b + k * 16), b1 = _mm256_load_ps(b + k * 16 + 8);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256 x = _mm256_broadcast_ss(a + k * MR + r);
      c0[r] = _mm256_fmadd_ps(x, b0, c0[r]);
      c1[r] = _mm256_fmadd_ps(x, b1, c1[r]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    _mm256_storeu_ps(c + r * ldc, c0[r]);
    _mm256_storeu_ps(c + r * ldc + 8, c1[r]);
  }
}
#endif

// The blocked product with an (MR x NR) micro-kernel.
void blocked(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b,
             float* c, bool accumulate, int mr, int nr, MicroKernel micro) {
  static thread_local Scratch packed_b, packed_a;
  const std::int64_t panels = (n + nr - 1) / nr;
  float edge[16 * 32] = {};  // a partial C block (mr <= 16, nr <= 32); rows and
                             // columns past it are computed, then dropped
  for (std::int64_t k0 = 0; k0 < k; k0 += kBlockK) {
    const std::int64_t kc = std::min(kBlockK, k - k0);
    const bool load = accumulate || k0 > 0;
    // B[k0 .. k0+kc, :] as panels of nr columns, [kc][nr] each, zero padded.
    float* pb = packed_b.get(static_cast<std::size_t>(panels * kc * nr));
    for (std::int64_t p = 0; p < panels; ++p) {
      const std::int64_t j0 = p * nr, w = std::min<std::int64_t>(nr, n - j0);
      float* d = pb + p * kc * nr;
      for (std::int64_t kk = 0; kk < kc; ++kk) {
        std::memcpy(d + kk * nr, b + (k0 + kk) * n + j0, static_cast<std::size_t>(w) * 4);
        std::fill(d + kk * nr + w, d + (kk + 1) * nr, 0.0f);
      }
    }
    float* pa = packed_a.get(static_cast<std::size_t>(kc * mr));
    for (std::int64_t i0 = 0; i0 < m; i0 += mr) {
      const std::int64_t h = std::min<std::int64_t>(mr, m - i0);
      for (std::int64_t r = 0; r < mr; ++r)
        for (std::int64_t kk = 0; kk < kc; ++kk)
          pa[kk * mr + r] = r < h ? a[(i0 + r) * k + k0 + kk] : 0.0f;
      for (std::int64_t p = 0; p < panels; ++p) {
        const std::int64_t j0 = p * nr, w = std::min<std::int64_t>(nr, n - j0);
        float* cb = c + i0 * n + j0;
        if (h == mr && w == nr) {
          micro(kc, pa, pb + p * kc * nr, cb, n, load);
          continue;
        }
        for (std::int64_t r = 0; r < h; ++r)
          std::memcpy(edge + r * nr, cb + r * n, static_cast<std::size_t>(w) * 4);
        micro(kc, pa, pb + p * kc * nr, edge, nr, load);
        for (std::int64_t r = 0; r < h; ++r)
          std::memcpy(cb + r * n, edge + r * nr, static_cast<std::size_t>(w) * 4);
      }
    }
  }
}

void portable(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b,
              float* c, bool accumulate) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float v = accumulate ? c[i * n + j] : 0.0f;
      for (std::int64_t kk = 0; kk < k; ++kk) v = std::fma(a[i * k + kk], b[kk * n + j], v);
      c[i * n + j] = v;
    }
}

// Small products (issue 52: a 16 x 16 matmul paid more in packing than in
// arithmetic): no packing; blocks of 4 rows x 16 columns of C kept in
// registers while k runs, each element still one fused chain in k order
// from 0 or from C, so the bits are the blocked kernels'. Compiled for
// AVX-512 and for AVX2 + FMA, like the micro-kernels (the 16 columns one
// vector or two), and picked with them; the portable loop serves the rest.
constexpr std::int64_t kSmallRows = 4, kSmallCols = 16;

// One block: rows h <= kSmallRows, columns w <= kSmallCols at (i0, j0).
[[gnu::always_inline]] inline void small_block(std::int64_t n, std::int64_t k, const float* a,
                                               const float* b, float* c, bool accumulate,
                                               std::int64_t i0, std::int64_t j0, std::int64_t h,
                                               std::int64_t w) {
  float acc[kSmallRows][kSmallCols] = {};
  for (std::int64_t r = 0; r < h; ++r)
    for (std::int64_t j = 0; j < w; ++j) acc[r][j] = accumulate ? c[(i0 + r) * n + j0 + j] : 0.0f;
  for (std::int64_t kk = 0; kk < k; ++kk) {
    float bv[kSmallCols] = {};
    const float* brow = b + kk * n + j0;
    if (w == kSmallCols) {
#pragma GCC unroll 16
      for (std::int64_t j = 0; j < kSmallCols; ++j) bv[j] = brow[j];
    } else {
      for (std::int64_t j = 0; j < w; ++j) bv[j] = brow[j];
    }
#pragma GCC unroll 4
    for (std::int64_t r = 0; r < kSmallRows; ++r) {
      const float x = r < h ? a[(i0 + r) * k + kk] : 0.0f;
#pragma GCC unroll 16
      for (std::int64_t j = 0; j < kSmallCols; ++j) acc[r][j] = std::fma(x, bv[j], acc[r][j]);
    }
  }
  for (std::int64_t r = 0; r < h; ++r)
    for (std::int64_t j = 0; j < w; ++j) c[(i0 + r) * n + j0 + j] = acc[r][j];
}

// A whole block, every bound a constant: the accumulators stay in registers.
[[gnu::always_inline]] inline void small_full_block(std::int64_t n, std::int64_t k, const float* a,
                                                    const float* b, float* c, bool accumulate,
                                                    std::int64_t i0, std::int64_t j0) {
  float acc[kSmallRows][kSmallCols];
#pragma GCC unroll 4
  for (std::int64_t r = 0; r < kSmallRows; ++r)
#pragma GCC unroll 16
    for (std::int64_t j = 0; j < kSmallCols; ++j)
      acc[r][j] = accumulate ? c[(i0 + r) * n + j0 + j] : 0.0f;
  for (std::int64_t kk = 0; kk < k; ++kk) {
    const float* brow = b + kk * n + j0;
#pragma GCC unroll 4
    for (std::int64_t r = 0; r < kSmallRows; ++r) {
      const float x = a[(i0 + r) * k + kk];
#pragma GCC unroll 16
      for (std::int64_t j = 0; j < kSmallCols; ++j) acc[r][j] = std::fma(x, brow[j], acc[r][j]);
    }
  }
#pragma GCC unroll 4
  for (std::int64_t r = 0; r < kSmallRows; ++r)
#pragma GCC unroll 16
    for (std::int64_t j = 0; j < kSmallCols; ++j) c[(i0 + r) * n + j0 + j] = acc[r][j];
}

[[gnu::always_inline]] inline void small(std::int64_t m, std::int64_t n, std::int64_t k,
                                         const float* __restrict a, const float* __restrict b,
                                         float* __restrict c, bool accumulate) {
  for (std::int64_t i0 = 0; i0 < m; i0 += kSmallRows)
    for (std::int64_t j0 = 0; j0 < n; j0 += kSmallCols) {
      const std::int64_t h = std::min(kSmallRows, m - i0), w = std::min(kSmallCols, n - j0);
      if (h == kSmallRows && w == kSmallCols) {
        small_full_block(n, k, a, b, c, accumulate, i0, j0);
      } else {
        small_block(n, k, a, b, c, accumulate, i0, j0, h, w);
      }
    }
}

#ifdef ANYP_SGEMM_X86
__attribute__((target("avx512f,fma"))) void small_avx512(std::int64_t m, std::int64_t n,
                                                         std::int64_t k, const float* a,
                                                         const float* b, float* c,
                                                         bool accumulate) {
  small(m, n, k, a, b, c, accumulate);
}

__attribute__((target("avx2,fma"))) void small_avx2(std::int64_t m, std::int64_t n, std::int64_t k,
                                                    const float* a, const float* b, float* c,
                                                    bool accumulate) {
  small(m, n, k, a, b, c, accumulate);
}
#endif

// Where small() is faster than packing (bench/compute_bench: n = 16, 32, 64).
constexpr std::int64_t kSmallProduct = 64 * 64 * 64;

enum class Kernel { Avx512, Avx2, Portable };

Kernel machine_kernel() {
#ifdef ANYP_SGEMM_X86
  static const Kernel k = __builtin_cpu_supports("avx512f") ? Kernel::Avx512
                          : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                              ? Kernel::Avx2
                              : Kernel::Portable;
  return k;
#else
  return Kernel::Portable;
#endif
}

}  // namespace

void sgemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float* c,
           bool accumulate) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate) std::fill(c, c + m * n, 0.0f);
    return;
  }
  const bool small_product = m * n * k <= kSmallProduct;
  switch (machine_kernel()) {
#ifdef ANYP_SGEMM_X86
    case Kernel::Avx512:
      if (small_product) return small_avx512(m, n, k, a, b, c, accumulate);
      return blocked(m, n, k, a, b, c, accumulate, 12, 32, micro_avx512<12>);
    case Kernel::Avx2:
      if (small_product) return small_avx2(m, n, k, a, b, c, accumulate);
      return blocked(m, n, k, a, b, c, accumulate, 6, 16, micro_avx2<6>);
#endif
    default:
      return portable(m, n, k, a, b, c, accumulate);
  }
}

const char* sgemm_kernel_name() {
  switch (machine_kernel()) {
    case Kernel::Avx512:
      return "avx512";
    case Kernel::Avx2:
      return "avx2";
    default:
      return "portable";
  }
}

}  // namespace anyp::runtime
