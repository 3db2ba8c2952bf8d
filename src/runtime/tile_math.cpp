// tile_math.cpp — elementwise tile arithmetic (see tile_math.hpp).
#include "runtime/tile_math.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>

#include "common/dtype_traits.hpp"
#include "common/internal_check.hpp"
#include "runtime/loop_clones.hpp"
#include "runtime/tile_math_avx.hpp"

namespace anyp::runtime {
namespace {

using dtype_traits::load_as;
using dtype_traits::store_as;

// Bits of an integer Math type M.
template <class M>
constexpr int bits_of() {
  return static_cast<int>(sizeof(M)) * 8;
}

template <class T, ir::BinaryOp Op>
typename T::Math apply(typename T::Math x, typename T::Math y) {
  using M = typename T::Math;
  if constexpr (!T::is_float) {
    // Two's complement wrap-around, computed unsigned: in the type's own
    // width from 32 bits up (which vectorizes), in uint32 below (a narrow
    // unsigned type would promote back to int, and overflow).
    using U = std::conditional_t<(sizeof(M) >= 4), std::make_unsigned_t<M>, std::uint32_t>;
    if constexpr (Op == ir::BinaryOp::Add)
      return static_cast<M>(static_cast<U>(x) + static_cast<U>(y));
    if constexpr (Op == ir::BinaryOp::Sub)
      return static_cast<M>(static_cast<U>(x) - static_cast<U>(y));
    if constexpr (Op == ir::BinaryOp::Mul)
      return static_cast<M>(static_cast<U>(x) * static_cast<U>(y));
    // y != 0 (checked before the loop); MIN / -1 wraps to MIN.
    if constexpr (Op == ir::BinaryOp::Div)
      return y == -1 ? static_cast<M>(U{0} - static_cast<U>(x)) : static_cast<M>(x / y);
    if constexpr (Op == ir::BinaryOp::BitAnd) return static_cast<M>(x & y);
    if constexpr (Op == ir::BinaryOp::BitOr) return static_cast<M>(x | y);
    if constexpr (Op == ir::BinaryOp::BitXor) return static_cast<M>(x ^ y);
    // 0 <= y < width (checked before the loop); shr is arithmetic.
    if constexpr (Op == ir::BinaryOp::Shl) return static_cast<M>(static_cast<U>(x) << y);
    if constexpr (Op == ir::BinaryOp::Shr) return static_cast<M>(x >> y);
  } else {
    if constexpr (Op == ir::BinaryOp::Add) return x + y;
    if constexpr (Op == ir::BinaryOp::Sub) return x - y;
    if constexpr (Op == ir::BinaryOp::Mul) return x * y;
    if constexpr (Op == ir::BinaryOp::Div) return x / y;
  }
  if constexpr (Op == ir::BinaryOp::Max) return std::max(x, y);
  if constexpr (Op == ir::BinaryOp::Min) return std::min(x, y);
  ANYP_UNREACHABLE(std::string("tile operator ") + ir::binary_op_name(Op));
}

// On x86-64 each loop is compiled twice, for the baseline and for x86-64-v3
// (AVX2; loop_clones.hpp): FP32 and integer tiles then run 8 lanes wide
// (1.4-1.5x the -O3 baseline loop at 4 Ki elements, bench/tile_math_bench).
// FP16/BF16 on such a machine take tile_math_avx.hpp instead; these loops
// serve them elsewhere.

// out[i] = a[i] <Op> b[i or 0]: a, b and out are disjoint, or a is out
// (kInPlace: then out is read and written, and a is not used). restrict on
// every pointer lets the compiler vectorize the loop (this file is built
// with the vectorizer's dynamic cost model, see CMakeLists.txt).
template <class T, ir::BinaryOp Op, bool kInPlace, bool kScalar>
ANYP_LOOP_CLONES_V3 void loop(const std::byte* __restrict a, const std::byte* __restrict b,
                              std::byte* __restrict out, std::size_t n) {
  using S = typename T::Storage;
  constexpr std::size_t z = sizeof(S);
  const std::byte* __restrict x = kInPlace ? out : a;
  for (std::size_t i = 0; i < n; ++i) {
    const auto left = T::to_math(load_as<S>(x + i * z));
    const auto right = T::to_math(load_as<S>(b + (kScalar ? 0 : i * z)));
    store_as<S>(out + i * z, T::from_math(apply<T, Op>(left, right)));
  }
}

template <class T, ir::BinaryOp Op>
void loop(const std::byte* a, const std::byte* b, bool b_is_scalar, std::byte* out, std::size_t n) {
  const bool in_place = a == out;
  if (b_is_scalar) {
    // The scalar, copied: `b` may point into `out` no more.
    alignas(8) std::byte y[sizeof(typename T::Storage)];
    std::memcpy(y, b, sizeof y);
    return in_place ? loop<T, Op, true, true>(nullptr, y, out, n)
                    : loop<T, Op, false, true>(a, y, out, n);
  }
  return in_place ? loop<T, Op, true, false>(nullptr, b, out, n)
                  : loop<T, Op, false, false>(a, b, out, n);
}

}  // namespace

std::optional<std::size_t> invalid_operand(ir::BinaryOp op, DType dtype, const std::byte* b,
                                           bool b_is_scalar, std::size_t n) {
  if (dtype_is_float(dtype)) return std::nullopt;
  const bool shift = op == ir::BinaryOp::Shl || op == ir::BinaryOp::Shr;
  if (op != ir::BinaryOp::Div && !shift) return std::nullopt;
  return dtype_traits::visit_dtype(dtype, [&]<class T>(T) -> std::optional<std::size_t> {
    using S = typename T::Storage;
    const std::int64_t bits = static_cast<std::int64_t>(sizeof(S)) * 8;
    const std::size_t count = b_is_scalar ? 1 : n;
    for (std::size_t i = 0; i < count; ++i) {
      const std::int64_t y = T::to_int(load_as<S>(b + i * sizeof(S)));
      if (shift ? (y < 0 || y >= bits) : y == 0) return i;
    }
    return std::nullopt;
  });
}

void tile_elementwise(ir::BinaryOp op, DType dtype, const std::byte* a, const std::byte* b,
                      bool b_is_scalar, std::byte* out, std::size_t n) {
  if ((dtype == DType::FP16 || dtype == DType::BF16) &&
      half_elementwise_avx(op, dtype, a, b, b_is_scalar, out, n))
    return;
  dtype_traits::visit_dtype(dtype, [&]<class T>(T) {
#define ANYP_CASE(name)    \
  case ir::BinaryOp::name: \
    return loop<T, ir::BinaryOp::name>(a, b, b_is_scalar, out, n);
    switch (op) {
      ANYP_CASE(Add)
      ANYP_CASE(Sub)
      ANYP_CASE(Mul)
      ANYP_CASE(Div)
      ANYP_CASE(Max)
      ANYP_CASE(Min)
      default:
        break;
    }
    if constexpr (!T::is_float) {
      switch (op) {
        ANYP_CASE(BitAnd)
        ANYP_CASE(BitOr)
        ANYP_CASE(BitXor)
        ANYP_CASE(Shl)
        ANYP_CASE(Shr)
        default:
          break;
      }
    }
#undef ANYP_CASE
    ANYP_UNREACHABLE(std::string("tile operator ") + ir::binary_op_name(op) + " on " +
                     std::string(dtype_name(dtype)));
  });
}

ComputeClass compute_class_of(ir::BinaryOp op) {
  switch (op) {
    case ir::BinaryOp::Add:
    case ir::BinaryOp::Sub:
      return ComputeClass::Add;
    case ir::BinaryOp::Mul:
      return ComputeClass::Mul;
    case ir::BinaryOp::Div:
      return ComputeClass::Div;
    case ir::BinaryOp::Max:
    case ir::BinaryOp::Min:
      return ComputeClass::MinMax;
    case ir::BinaryOp::BitAnd:
    case ir::BinaryOp::BitOr:
    case ir::BinaryOp::BitXor:
    case ir::BinaryOp::Shl:
    case ir::BinaryOp::Shr:
      return ComputeClass::Bitwise;
    default:
      ANYP_UNREACHABLE(std::string("a tile operator the cost model has no class for: ") +
                       ir::binary_op_name(op));
  }
}

}  // namespace anyp::runtime
