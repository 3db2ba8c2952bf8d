// tile_unary.cpp — elementwise functions of one tile (see tile_unary.hpp).
// Each loop is compiled for x86-64-v4, v3 and the baseline
// (loop_clones.hpp) and vectorizes: sqrt, rsqrt and recip are IEEE
// operations (this file is built with -fno-math-errno, so sqrt is the
// instruction), exp and log the branch-free float_math.hpp (built with
// -ffp-contract=off), so every path gives the same bits.
#include "runtime/tile_unary.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "common/dtype_traits.hpp"
#include "common/internal_check.hpp"
#include "runtime/float_math.hpp"
#include "runtime/loop_clones.hpp"
#include "runtime/tile_math_avx.hpp"

namespace anyp::runtime {
namespace {

using dtype_traits::load_as;
using dtype_traits::store_as;

// Inlined into each clone of the loop (compiled for that clone's ISA: the
// fused multiply-adds of exp and log are then the instruction).
template <class T, ir::UnaryOp Op>
[[gnu::always_inline]] inline typename T::Math apply(typename T::Math x) {
  using M = typename T::Math;
  if constexpr (T::is_float) {
    if constexpr (Op == ir::UnaryOp::Neg) return -x;
    if constexpr (Op == ir::UnaryOp::Abs) return std::fabs(x);
    if constexpr (Op == ir::UnaryOp::Relu) return x > 0 || x != x ? x : M{0};
    if constexpr (Op == ir::UnaryOp::Exp) return exp_float(x);
    if constexpr (Op == ir::UnaryOp::Log) return log_float(x);
    if constexpr (Op == ir::UnaryOp::Sqrt) return std::sqrt(x);
    if constexpr (Op == ir::UnaryOp::Rsqrt) return M{1} / std::sqrt(x);
    if constexpr (Op == ir::UnaryOp::Recip) return M{1} / x;
  } else {
    using U = std::conditional_t<(sizeof(M) >= 4), std::make_unsigned_t<M>, std::uint32_t>;
    if constexpr (Op == ir::UnaryOp::Neg) return static_cast<M>(U{0} - static_cast<U>(x));
    if constexpr (Op == ir::UnaryOp::Abs)
      return x < 0 ? static_cast<M>(U{0} - static_cast<U>(x)) : x;
    if constexpr (Op == ir::UnaryOp::Relu) return x > 0 ? x : M{0};
    if constexpr (Op == ir::UnaryOp::Not) return static_cast<M>(~x);
  }
  ANYP_UNREACHABLE(std::string(ir::unary_op_name(Op)) + " on this dtype");
}

// out[i] = Op(a[i]): a and out disjoint, or a is out (kInPlace: then out
// is read and written, and a is not used), as in tile_math.cpp; restrict
// on every pointer lets the compiler vectorize.
template <class T, ir::UnaryOp Op, bool kInPlace>
ANYP_LOOP_CLONES_V4 void loop(const std::byte* __restrict a, std::byte* __restrict out,
                              std::size_t n) {
  using S = typename T::Storage;
  constexpr std::size_t z = sizeof(S);
  const std::byte* __restrict x = kInPlace ? out : a;
  for (std::size_t i = 0; i < n; ++i)
    store_as<S>(out + i * z, T::from_math(apply<T, Op>(T::to_math(load_as<S>(x + i * z)))));
}

// FP16 through float blocks: GCC does not vectorize the portable FP16
// conversions (16-bit lanes widened to float), so with F16C each block is
// widened exactly, runs the FP32 loop, and is rounded back as
// float_to_fp16_bits rounds (tile_math_avx.hpp): the same bits, at FP32
// speed. False (nothing done) without F16C.
template <ir::UnaryOp Op>
bool fp16_by_blocks(const std::byte* a, std::byte* out, std::size_t n) {
  constexpr std::size_t kBlock = 512;
  alignas(64) float block[kBlock];
  for (std::size_t i = 0; i < n; i += kBlock) {
    const std::size_t m = std::min(kBlock, n - i);
    if (!widen_half_avx(DType::FP16, a + 2 * i, block, m)) return false;
    auto* bytes = reinterpret_cast<std::byte*>(block);
    loop<dtype_traits::Fp32Traits, Op, true>(nullptr, bytes, m);
    narrow_fp16_avx(block, out + 2 * i, m);
  }
  return true;
}

template <class T, ir::UnaryOp Op>
void loop(const std::byte* a, std::byte* out, std::size_t n) {
  if constexpr (std::is_same_v<T, dtype_traits::Fp16Traits>) {
    if (fp16_by_blocks<Op>(a, out, n)) return;
  }
  return a == out ? loop<T, Op, true>(nullptr, out, n) : loop<T, Op, false>(a, out, n);
}

}  // namespace

void tile_unary(ir::UnaryOp op, DType dtype, const std::byte* a, std::byte* out, std::size_t n) {
  dtype_traits::visit_dtype(dtype, [&]<class T>(T) {
#define ANYP_CASE(name)   \
  case ir::UnaryOp::name: \
    return loop<T, ir::UnaryOp::name>(a, out, n);
    switch (op) {
      ANYP_CASE(Neg)
      ANYP_CASE(Abs)
      ANYP_CASE(Relu)
      default:
        break;
    }
    if constexpr (T::is_float) {
      switch (op) {
        ANYP_CASE(Exp)
        ANYP_CASE(Log)
        ANYP_CASE(Sqrt)
        ANYP_CASE(Rsqrt)
        ANYP_CASE(Recip)
        default:
          break;
      }
    } else {
      if (op == ir::UnaryOp::Not) return loop<T, ir::UnaryOp::Not>(a, out, n);
    }
#undef ANYP_CASE
    ANYP_UNREACHABLE(std::string(ir::unary_op_name(op)) + " on " + std::string(dtype_name(dtype)));
  });
}

}  // namespace anyp::runtime
