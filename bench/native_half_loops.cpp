// native_half_loops.cpp — the expert's FP16/BF16 loops (native_half_loops.hpp),
// built with -O3 -march=native.
#include "native_half_loops.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#if defined(__AVX512BF16__)
#include <immintrin.h>
// GCC 12's AVX-512 intrinsics start some results from a self-initialised
// "undefined" vector, which -Wmaybe-uninitialized reports where inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace bench {

bool native_fp16(HalfOp op, const std::uint16_t* __restrict a, const std::uint16_t* __restrict b,
                 std::uint16_t* __restrict out, std::size_t n) {
#if defined(__AVX512FP16__)
  const auto* x = reinterpret_cast<const _Float16*>(a);
  const auto* y = reinterpret_cast<const _Float16*>(b);
  auto* o = reinterpret_cast<_Float16*>(out);
  switch (op) {
    case HalfOp::Add:
      for (std::size_t i = 0; i < n; ++i) o[i] = x[i] + y[i];
      break;
    case HalfOp::Mul:
      for (std::size_t i = 0; i < n; ++i) o[i] = x[i] * y[i];
      break;
    case HalfOp::Max:
      for (std::size_t i = 0; i < n; ++i) o[i] = x[i] < y[i] ? y[i] : x[i];
      break;
  }
  return true;
#else
  (void)op, (void)a, (void)b, (void)out, (void)n;
  return false;
#endif
}

namespace {

float widen(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

float apply(HalfOp op, float x, float y) {
  return op == HalfOp::Add ? x + y : op == HalfOp::Mul ? x * y : (x < y ? y : x);
}

}  // namespace

void native_bf16(HalfOp op, const std::uint16_t* __restrict a, const std::uint16_t* __restrict b,
                 std::uint16_t* __restrict out, std::size_t n) {
  std::size_t i = 0;
#if defined(__AVX512BF16__)
  auto load16 = [](const std::uint16_t* p) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  };
  for (; i + 16 <= n; i += 16) {
    const __m512 x = load16(a + i), y = load16(b + i);
    const __m512 r = op == HalfOp::Add   ? _mm512_add_ps(x, y)
                     : op == HalfOp::Mul ? _mm512_mul_ps(x, y)
                                         : _mm512_max_ps(y, x);
    const __m256bh h = _mm512_cvtneps_pbh(r);
    std::memcpy(out + i, &h, 32);
  }
#endif
  for (; i < n; ++i) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(apply(op, widen(a[i]), widen(b[i])));
    out[i] = static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
  }
}

}  // namespace bench
