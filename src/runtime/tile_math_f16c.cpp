// tile_math_f16c.cpp — FP16 tile math through F16C (see tile_math_f16c.hpp).
#include "runtime/tile_math_f16c.hpp"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace anyp::runtime {

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

// std::max(x, y) keeps x unless y is strictly greater (a NaN x survives);
// maxps(y, x) returns y when y > x and x otherwise, so it is the same.
// Likewise std::min(x, y) and minps(y, x).
template <ir::BinaryOp Op>
__attribute__((target("avx,f16c"))) __m256 apply8(__m256 x, __m256 y) {
  if constexpr (Op == ir::BinaryOp::Add) return _mm256_add_ps(x, y);
  if constexpr (Op == ir::BinaryOp::Sub) return _mm256_sub_ps(x, y);
  if constexpr (Op == ir::BinaryOp::Mul) return _mm256_mul_ps(x, y);
  if constexpr (Op == ir::BinaryOp::Max) return _mm256_max_ps(y, x);
  return _mm256_min_ps(y, x);
}

__attribute__((target("avx,f16c"))) __m256 load8(const std::byte* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

__attribute__((target("avx,f16c"))) void store8(std::byte* p, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                   _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

template <ir::BinaryOp Op>
__attribute__((target("avx,f16c"))) void run(const std::byte* a, const std::byte* b,
                                             bool b_is_scalar, std::byte* out, std::size_t n) {
  __m256 scalar = _mm256_setzero_ps();
  if (b_is_scalar) {
    alignas(16) std::byte lanes[16] = {};
    std::memcpy(lanes, b, 2);
    scalar = _mm256_set1_ps(
        _mm_cvtss_f32(_mm_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(lanes)))));
  }
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 y = b_is_scalar ? scalar : load8(b + 2 * i);
    store8(out + 2 * i, apply8<Op>(load8(a + 2 * i), y));
  }
  if (i == n) return;
  // The tail, through eight-lane buffers (the same instructions, so the
  // same rounding).
  alignas(16) std::byte ta[16] = {}, tb[16] = {}, to[16];
  const std::size_t bytes = 2 * (n - i);
  std::memcpy(ta, a + 2 * i, bytes);
  if (!b_is_scalar) std::memcpy(tb, b + 2 * i, bytes);
  store8(to, apply8<Op>(load8(ta), b_is_scalar ? scalar : load8(tb)));
  std::memcpy(out + 2 * i, to, bytes);
}

bool machine_has_f16c() {
  static const bool has = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return has;
}

}  // namespace

bool fp16_elementwise_f16c(ir::BinaryOp op, const std::byte* a, const std::byte* b,
                           bool b_is_scalar, std::byte* out, std::size_t n) {
  if (!machine_has_f16c()) return false;
  switch (op) {
    case ir::BinaryOp::Add:
      run<ir::BinaryOp::Add>(a, b, b_is_scalar, out, n);
      return true;
    case ir::BinaryOp::Sub:
      run<ir::BinaryOp::Sub>(a, b, b_is_scalar, out, n);
      return true;
    case ir::BinaryOp::Mul:
      run<ir::BinaryOp::Mul>(a, b, b_is_scalar, out, n);
      return true;
    case ir::BinaryOp::Max:
      run<ir::BinaryOp::Max>(a, b, b_is_scalar, out, n);
      return true;
    case ir::BinaryOp::Min:
      run<ir::BinaryOp::Min>(a, b, b_is_scalar, out, n);
      return true;
    default:
      return false;
  }
}

#else

bool fp16_elementwise_f16c(ir::BinaryOp, const std::byte*, const std::byte*, bool, std::byte*,
                           std::size_t) {
  return false;
}

#endif

}  // namespace anyp::runtime
