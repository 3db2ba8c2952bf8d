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

// --- 512-bit lanes: FP16 with AVX512-FP16's own arithmetic, BF16 with
// AVX512BW. A tail runs under a lane mask (lanes past n load zeros and are
// not stored).
//
// GCC 12's AVX-512 intrinsics start some results from a self-initialised
// "undefined" vector (`__m512i __Y = __Y;`), which -Wmaybe-uninitialized
// reports wherever they are inlined; the value is never read.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define ANYP_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))
#define ANYP_AVX512FP16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512fp16")))

// FP16 arithmetic in FP16 gives the bits of the float path above: float's
// 24 bits are at least 2 × 11 + 2, so rounding the float result of +, -,
// × or ÷ of two FP16 values to FP16 equals rounding the exact result once
// (Figueroa 1995), and comparisons agree. vmaxph/vminph(y, x) keep x
// unless y is strictly greater/smaller, as maxps does. A NaN comes out
// quiet, as the float path's conversions make it.
template <ir::BinaryOp Op>
ANYP_AVX512FP16_TARGET __m512h apply32(__m512h x, __m512h y) {
  if constexpr (Op == ir::BinaryOp::Add) return _mm512_add_ph(x, y);
  if constexpr (Op == ir::BinaryOp::Sub) return _mm512_sub_ph(x, y);
  if constexpr (Op == ir::BinaryOp::Mul) return _mm512_mul_ph(x, y);
  if constexpr (Op == ir::BinaryOp::Div) return _mm512_div_ph(x, y);
  if constexpr (Op == ir::BinaryOp::Max) return _mm512_max_ph(y, x);
  return _mm512_min_ph(y, x);
}

template <ir::BinaryOp Op>
ANYP_AVX512FP16_TARGET void run_fp16_512(const std::byte* a, const std::byte* b, bool b_is_scalar,
                                         std::byte* out, std::size_t n) {
  __m512i scalar = _mm512_setzero_si512();
  if (b_is_scalar) {
    std::uint16_t bits = 0;
    std::memcpy(&bits, b, 2);
    scalar = _mm512_set1_epi16(static_cast<short>(bits));
  }
  const __m512i quiet = _mm512_set1_epi16(0x0200);
  for (std::size_t i = 0; i < n; i += 32) {
    const std::size_t left = n - i;
    const __mmask32 lanes = left >= 32 ? ~__mmask32{0} : (__mmask32{1} << left) - 1;
    const __m512i x = _mm512_maskz_loadu_epi16(lanes, a + 2 * i);
    const __m512i y = b_is_scalar ? scalar : _mm512_maskz_loadu_epi16(lanes, b + 2 * i);
    const __m512h r = apply32<Op>(_mm512_castsi512_ph(x), _mm512_castsi512_ph(y));
    const __mmask32 nan = _mm512_cmp_ph_mask(r, r, _CMP_UNORD_Q);
    _mm512_mask_storeu_epi16(
        out + 2 * i, lanes,
        _mm512_or_si512(_mm512_castph_si512(r), _mm512_maskz_mov_epi16(nan, quiet)));
  }
}

template <ir::BinaryOp Op>
ANYP_AVX512_TARGET __m512 apply16(__m512 x, __m512 y) {
  if constexpr (Op == ir::BinaryOp::Add) return _mm512_add_ps(x, y);
  if constexpr (Op == ir::BinaryOp::Sub) return _mm512_sub_ps(x, y);
  if constexpr (Op == ir::BinaryOp::Mul) return _mm512_mul_ps(x, y);
  if constexpr (Op == ir::BinaryOp::Div) return _mm512_div_ps(x, y);
  if constexpr (Op == ir::BinaryOp::Max) return _mm512_max_ps(y, x);
  return _mm512_min_ps(y, x);
}

// BF16 without shuffles: 32 elements in a 512-bit register are 16 even
// ones (the low halves of its 32-bit lanes) and 16 odd ones (the high
// halves). Each half, moved to the top of its lane, is a float; an
// elementwise op works on the evens and the odds apart, and each result,
// rounded to its lane's high half, goes back where its element came from.
ANYP_AVX512_TARGET __m512 evens(__m512i v) { return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16)); }
ANYP_AVX512_TARGET __m512 odds(__m512i v) {
  return _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32(-65536)));
}
// Sixteen floats rounded to BF16, as store8 rounds them, in the high half
// of each lane (the low half is left over).
ANYP_AVX512_TARGET __m512i round_high(__m512 v) {
  const __m512i x = _mm512_castps_si512(v);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), odd);
  const __m512i nan = _mm512_or_si512(x, _mm512_set1_epi32(0x00400000));
  const __mmask16 is_nan = _mm512_cmpgt_epi32_mask(
      _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
  return _mm512_mask_blend_epi32(is_nan, rounded, nan);
}

template <ir::BinaryOp Op>
ANYP_AVX512_TARGET void run_bf16_512(const std::byte* a, const std::byte* b, bool b_is_scalar,
                                     std::byte* out, std::size_t n) {
  __m512i scalar = _mm512_setzero_si512();
  if (b_is_scalar) {
    std::uint16_t bits = 0;
    std::memcpy(&bits, b, 2);
    scalar = _mm512_set1_epi16(static_cast<short>(bits));
  }
  for (std::size_t i = 0; i < n; i += 32) {
    const std::size_t left = n - i;
    const __mmask32 lanes = left >= 32 ? ~__mmask32{0} : (__mmask32{1} << left) - 1;
    const __m512i x = _mm512_maskz_loadu_epi16(lanes, a + 2 * i);
    const __m512i y = b_is_scalar ? scalar : _mm512_maskz_loadu_epi16(lanes, b + 2 * i);
    const __m512i even = _mm512_srli_epi32(round_high(apply16<Op>(evens(x), evens(y))), 16);
    const __m512i odd =
        _mm512_and_si512(round_high(apply16<Op>(odds(x), odds(y))), _mm512_set1_epi32(-65536));
    _mm512_mask_storeu_epi16(out + 2 * i, lanes, _mm512_or_si512(even, odd));
  }
}

#pragma GCC diagnostic pop

bool machine_has(HalfIsa isa, DType dtype) {
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  static const bool avx512 = __builtin_cpu_supports("avx512f") &&
                             __builtin_cpu_supports("avx512bw") &&
                             __builtin_cpu_supports("avx512vl");
  static const bool avx512fp16 = avx512 && __builtin_cpu_supports("avx512fp16");
  if (isa == HalfIsa::Avx2) return avx2;
  return dtype == DType::FP16 ? avx512fp16 : avx512;
}

// Runs `run<Op>` for the op (false for one it does not cover).
template <template <ir::BinaryOp> class Kernel>
bool dispatch_op(ir::BinaryOp op, const std::byte* a, const std::byte* b, bool b_is_scalar,
                 std::byte* out, std::size_t n) {
  switch (op) {
    case ir::BinaryOp::Add:
      Kernel<ir::BinaryOp::Add>::run(a, b, b_is_scalar, out, n);
      return true;
    case ir::BinaryOp::Sub:
      Kernel<ir::BinaryOp::Sub>::run(a, b, b_is_scalar, out, n);
      return true;
    case ir::BinaryOp::Mul:
      Kernel<ir::BinaryOp::Mul>::run(a, b, b_is_scalar, out, n);
      return true;
    case ir::BinaryOp::Div:
      Kernel<ir::BinaryOp::Div>::run(a, b, b_is_scalar, out, n);
      return true;
    case ir::BinaryOp::Max:
      Kernel<ir::BinaryOp::Max>::run(a, b, b_is_scalar, out, n);
      return true;
    case ir::BinaryOp::Min:
      Kernel<ir::BinaryOp::Min>::run(a, b, b_is_scalar, out, n);
      return true;
    default:
      return false;
  }
}
template <ir::BinaryOp Op>
struct Fp16Avx2 {
  static void run(const std::byte* a, const std::byte* b, bool s, std::byte* o, std::size_t n) {
    anyp::runtime::run<DType::FP16, Op>(a, b, s, o, n);
  }
};
template <ir::BinaryOp Op>
struct Bf16Avx2 {
  static void run(const std::byte* a, const std::byte* b, bool s, std::byte* o, std::size_t n) {
    anyp::runtime::run<DType::BF16, Op>(a, b, s, o, n);
  }
};
template <ir::BinaryOp Op>
struct Fp16Avx512 {
  static void run(const std::byte* a, const std::byte* b, bool s, std::byte* o, std::size_t n) {
    run_fp16_512<Op>(a, b, s, o, n);
  }
};
template <ir::BinaryOp Op>
struct Bf16Avx512 {
  static void run(const std::byte* a, const std::byte* b, bool s, std::byte* o, std::size_t n) {
    run_bf16_512<Op>(a, b, s, o, n);
  }
};

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

ANYP_AVX_TARGET void narrow_fp16(const float* in, std::byte* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) store8<DType::FP16>(out + 2 * i, _mm256_loadu_ps(in + i));
  if (i == n) return;
  alignas(32) float wide[8] = {};
  alignas(16) std::byte tail[16];
  std::memcpy(wide, in + i, sizeof(float) * (n - i));
  store8<DType::FP16>(tail, _mm256_load_ps(wide));
  std::memcpy(out + 2 * i, tail, 2 * (n - i));
}

}  // namespace

bool narrow_fp16_avx(const float* in, std::byte* out, std::size_t n) {
  if (!machine_has(HalfIsa::Avx2, DType::FP16)) return false;
  narrow_fp16(in, out, n);
  return true;
}

bool widen_half_avx(DType dtype, const std::byte* a, float* out, std::size_t n) {
  if (!machine_has(HalfIsa::Avx2, dtype)) return false;
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

std::vector<HalfIsa> half_isas(DType dtype) {
  std::vector<HalfIsa> isas;
  if (dtype != DType::FP16 && dtype != DType::BF16) return isas;
  for (const HalfIsa isa : {HalfIsa::Avx512, HalfIsa::Avx2})
    if (machine_has(isa, dtype)) isas.push_back(isa);
  return isas;
}

bool half_elementwise_with(HalfIsa isa, ir::BinaryOp op, DType dtype, const std::byte* a,
                           const std::byte* b, bool b_is_scalar, std::byte* out, std::size_t n) {
  if (!machine_has(isa, dtype)) return false;
  if (dtype == DType::FP16) {
    return isa == HalfIsa::Avx512 ? dispatch_op<Fp16Avx512>(op, a, b, b_is_scalar, out, n)
                                  : dispatch_op<Fp16Avx2>(op, a, b, b_is_scalar, out, n);
  }
  if (dtype == DType::BF16) {
    return isa == HalfIsa::Avx512 ? dispatch_op<Bf16Avx512>(op, a, b, b_is_scalar, out, n)
                                  : dispatch_op<Bf16Avx2>(op, a, b, b_is_scalar, out, n);
  }
  return false;
}

bool half_elementwise_avx(ir::BinaryOp op, DType dtype, const std::byte* a, const std::byte* b,
                          bool b_is_scalar, std::byte* out, std::size_t n) {
  static const std::vector<HalfIsa> fp16 = half_isas(DType::FP16), bf16 = half_isas(DType::BF16);
  const std::vector<HalfIsa>& isas = dtype == DType::FP16 ? fp16 : bf16;
  return !isas.empty() && (dtype == DType::FP16 || dtype == DType::BF16) &&
         half_elementwise_with(isas.front(), op, dtype, a, b, b_is_scalar, out, n);
}

#else

std::vector<HalfIsa> half_isas(DType) { return {}; }

bool half_elementwise_with(HalfIsa, ir::BinaryOp, DType, const std::byte*, const std::byte*, bool,
                           std::byte*, std::size_t) {
  return false;
}

bool half_elementwise_avx(ir::BinaryOp, DType, const std::byte*, const std::byte*, bool, std::byte*,
                          std::size_t) {
  return false;
}

bool widen_half_avx(DType, const std::byte*, float*, std::size_t) { return false; }

bool narrow_fp16_avx(const float*, std::byte*, std::size_t) { return false; }

#endif

}  // namespace anyp::runtime
