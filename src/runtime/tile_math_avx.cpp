// tile_math_avx.cpp — FP16/BF16 tile math with x86 vectors (see tile_math_avx.hpp).
#include "runtime/tile_math_avx.hpp"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace anyp::runtime {

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

#define ANYP_AVX_TARGET __attribute__((target("avx2,f16c")))

// std::max(x, y) keeps x unless y is strictly greater (a NaN x survives);
// maxps(y, x) returns y when y > x and x otherwise, so it is the same.
// Likewise std::min(x, y) and minps(y, x).
template <ir::BinaryOp Op>
ANYP_AVX_TARGET __m256 apply8(__m256 x, __m256 y) {
  if constexpr (Op == ir::BinaryOp::Add) return _mm256_add_ps(x, y);
  if constexpr (Op == ir::BinaryOp::Sub) return _mm256_sub_ps(x, y);
  if constexpr (Op == ir::BinaryOp::Mul) return _mm256_mul_ps(x, y);
  if constexpr (Op == ir::BinaryOp::Div) return _mm256_div_ps(x, y);
  if constexpr (Op == ir::BinaryOp::Max) return _mm256_max_ps(y, x);
  return _mm256_min_ps(y, x);
}

// Eight FP16 or BF16 elements at p, widened to float.
template <DType D>
ANYP_AVX_TARGET __m256 load8(const std::byte* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if constexpr (D == DType::FP16) return _mm256_cvtph_ps(h);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// Eight floats rounded to FP16 or BF16 (ties to even) at p. BF16 as
// float_to_bf16_bits (common/half_float.hpp): a NaN keeps its top payload
// bits and turns quiet.
template <DType D>
ANYP_AVX_TARGET void store8(std::byte* p, __m256 v) {
  __m128i h;
  if constexpr (D == DType::FP16) {
    h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  } else {
    const __m256i x = _mm256_castps_si256(v);
    const __m256i high = _mm256_srli_epi32(x, 16);
    const __m256i odd = _mm256_and_si256(high, _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), odd), 16);
    const __m256i nan = _mm256_or_si256(high, _mm256_set1_epi32(0x40));
    const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)),
                                              _mm256_set1_epi32(0x7f800000));
    const __m256i bits = _mm256_blendv_epi8(rounded, nan, is_nan);
    // Pack the eight 32-bit lanes (each <= 0xffff) to 16 bits: packus works
    // per 128-bit half, so gather the two halves' results afterwards.
    const __m256i packed = _mm256_packus_epi32(bits, bits);
    h = _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08));
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
}

template <DType D, ir::BinaryOp Op>
ANYP_AVX_TARGET void run(const std::byte* a, const std::byte* b, bool b_is_scalar, std::byte* out,
                         std::size_t n) {
  __m256 scalar = _mm256_setzero_ps();
  if (b_is_scalar) {
    alignas(16) std::byte lanes[16] = {};
    std::memcpy(lanes, b, 2);
    scalar = _mm256_set1_ps(_mm256_cvtss_f32(load8<D>(lanes)));
  }
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 y = b_is_scalar ? scalar : load8<D>(b + 2 * i);
    store8<D>(out + 2 * i, apply8<Op>(load8<D>(a + 2 * i), y));
  }
  if (i == n) return;
  // The tail, through eight-lane buffers (the same instructions, so the
  // same rounding).
  alignas(16) std::byte ta[16] = {}, tb[16] = {}, to[16];
  const std::size_t bytes = 2 * (n - i);
  std::memcpy(ta, a + 2 * i, bytes);
  if (!b_is_scalar) std::memcpy(tb, b + 2 * i, bytes);
  store8<D>(to, apply8<Op>(load8<D>(ta), b_is_scalar ? scalar : load8<D>(tb)));
  std::memcpy(out + 2 * i, to, bytes);
}

bool machine_has_avx2_f16c() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return has;
}

template <DType D>
bool run_op(ir::BinaryOp op, const std::byte* a, const std::byte* b, bool b_is_scalar,
            std::byte* out, std::size_t n) {
  switch (op) {
    case ir::BinaryOp::Add:
      run<D, ir::BinaryOp::Add>(a, b, b_is_scalar, out, n);
      return true;
    case ir::BinaryOp::Sub:
      run<D, ir::BinaryOp::Sub>(a, b, b_is_scalar, out, n);
      return true;
    case ir::BinaryOp::Mul:
      run<D, ir::BinaryOp::Mul>(a, b, b_is_scalar, out, n);
      return true;
    case ir::BinaryOp::Div:
      run<D, ir::BinaryOp::Div>(a, b, b_is_scalar, out, n);
      return true;
    case ir::BinaryOp::Max:
      run<D, ir::BinaryOp::Max>(a, b, b_is_scalar, out, n);
      return true;
    case ir::BinaryOp::Min:
      run<D, ir::BinaryOp::Min>(a, b, b_is_scalar, out, n);
      return true;
    default:
      return false;
  }
}

template <DType D>
ANYP_AVX_TARGET void widen(const std::byte* a, float* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, load8<D>(a + 2 * i));
  if (i == n) return;
  alignas(16) std::byte tail[16] = {};
  alignas(32) float wide[8];
  std::memcpy(tail, a + 2 * i, 2 * (n - i));
  _mm256_store_ps(wide, load8<D>(tail));
  std::memcpy(out + i, wide, sizeof(float) * (n - i));
}

}  // namespace

bool widen_half_avx(DType dtype, const std::byte* a, float* out, std::size_t n) {
  if (!machine_has_avx2_f16c()) return false;
  if (dtype == DType::FP16) {
    widen<DType::FP16>(a, out, n);
    return true;
  }
  if (dtype == DType::BF16) {
    widen<DType::BF16>(a, out, n);
    return true;
  }
  return false;
}

bool half_elementwise_avx(ir::BinaryOp op, DType dtype, const std::byte* a, const std::byte* b,
                          bool b_is_scalar, std::byte* out, std::size_t n) {
  if (!machine_has_avx2_f16c()) return false;
  if (dtype == DType::FP16) return run_op<DType::FP16>(op, a, b, b_is_scalar, out, n);
  if (dtype == DType::BF16) return run_op<DType::BF16>(op, a, b, b_is_scalar, out, n);
  return false;
}

#else

bool half_elementwise_avx(ir::BinaryOp, DType, const std::byte*, const std::byte*, bool, std::byte*,
                          std::size_t) {
  return false;
}

bool widen_half_avx(DType, const std::byte*, float*, std::size_t) { return false; }

#endif

}  // namespace anyp::runtime
