// tile_math.cpp — elementwise tile arithmetic (see tile_math.hpp).
#include "runtime/tile_math.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/dtype_traits.hpp"
#include "common/internal_check.hpp"
#include "runtime/tile_math_avx.hpp"

namespace anyp::runtime {
namespace {

using dtype_traits::load_as;
using dtype_traits::store_as;

template <class T>
typename T::Math apply(ir::BinaryOp op, typename T::Math x, typename T::Math y) {
  using M = typename T::Math;
  if constexpr (!T::is_float) {
    // Two's complement wrap-around, computed unsigned: in the type's own
    // width from 32 bits up (which vectorizes), in uint32 below (a narrow
    // unsigned type would promote back to int, and overflow).
    using U = std::conditional_t<(sizeof(M) >= 4), std::make_unsigned_t<M>, std::uint32_t>;
    switch (op) {
      case ir::BinaryOp::Add:
        return static_cast<M>(static_cast<U>(x) + static_cast<U>(y));
      case ir::BinaryOp::Sub:
        return static_cast<M>(static_cast<U>(x) - static_cast<U>(y));
      case ir::BinaryOp::Mul:
        return static_cast<M>(static_cast<U>(x) * static_cast<U>(y));
      default:
        break;
    }
  } else {
    switch (op) {
      case ir::BinaryOp::Add:
        return x + y;
      case ir::BinaryOp::Sub:
        return x - y;
      case ir::BinaryOp::Mul:
        return x * y;
      default:
        break;
    }
  }
  return op == ir::BinaryOp::Max ? std::max(x, y) : std::min(x, y);
}

// On x86-64 each loop is compiled twice, for the baseline and for x86-64-v3
// (AVX2), and the loader picks one for the machine (GCC's target_clones):
// FP32 and integer tiles then run 8 lanes wide (1.4-1.5x the -O3 baseline
// loop at 4 Ki elements, bench/tile_math_bench). FP16/BF16 on such a
// machine take tile_math_avx.hpp instead; these loops serve them elsewhere.
// (Not under TSan: the loader runs the clones' resolvers before TSan's
// runtime is up, and an instrumented resolver crashes the process.)
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define ANYP_TILE_LOOP_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define ANYP_TILE_LOOP_CLONES
#endif

// out[i] = a[i] <Op> b[i or 0]: a, b and out are disjoint, or a is out
// (kInPlace: then out is read and written, and a is not used). restrict on
// every pointer lets the compiler vectorize the loop (this file is built
// with the vectorizer's dynamic cost model, see CMakeLists.txt).
template <class T, ir::BinaryOp Op, bool kInPlace, bool kScalar>
ANYP_TILE_LOOP_CLONES void loop(const std::byte* __restrict a, const std::byte* __restrict b,
                                std::byte* __restrict out, std::size_t n) {
  using S = typename T::Storage;
  constexpr std::size_t z = sizeof(S);
  const std::byte* __restrict x = kInPlace ? out : a;
  for (std::size_t i = 0; i < n; ++i) {
    const auto left = T::to_math(load_as<S>(x + i * z));
    const auto right = T::to_math(load_as<S>(b + (kScalar ? 0 : i * z)));
    store_as<S>(out + i * z, T::from_math(apply<T>(Op, left, right)));
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

bool is_tile_elementwise_op(ir::BinaryOp op) {
  switch (op) {
    case ir::BinaryOp::Add:
    case ir::BinaryOp::Sub:
    case ir::BinaryOp::Mul:
    case ir::BinaryOp::Max:
    case ir::BinaryOp::Min:
      return true;
    default:
      return false;
  }
}

void tile_elementwise(ir::BinaryOp op, DType dtype, const std::byte* a, const std::byte* b,
                      bool b_is_scalar, std::byte* out, std::size_t n) {
  if ((dtype == DType::FP16 || dtype == DType::BF16) &&
      half_elementwise_avx(op, dtype, a, b, b_is_scalar, out, n))
    return;
  dtype_traits::visit_dtype(dtype, [&]<class T>(T) {
    switch (op) {
      case ir::BinaryOp::Add:
        return loop<T, ir::BinaryOp::Add>(a, b, b_is_scalar, out, n);
      case ir::BinaryOp::Sub:
        return loop<T, ir::BinaryOp::Sub>(a, b, b_is_scalar, out, n);
      case ir::BinaryOp::Mul:
        return loop<T, ir::BinaryOp::Mul>(a, b, b_is_scalar, out, n);
      case ir::BinaryOp::Max:
        return loop<T, ir::BinaryOp::Max>(a, b, b_is_scalar, out, n);
      case ir::BinaryOp::Min:
        return loop<T, ir::BinaryOp::Min>(a, b, b_is_scalar, out, n);
      default:
        ANYP_UNREACHABLE(std::string("tile operator ") + ir::binary_op_name(op));
    }
  });
}

}  // namespace anyp::runtime
