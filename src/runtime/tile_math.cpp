// tile_math.cpp — elementwise tile arithmetic (see tile_math.hpp).
#include "runtime/tile_math.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/dtype_traits.hpp"
#include "common/internal_check.hpp"

namespace anyp::runtime {
namespace {

using dtype_traits::load_as;
using dtype_traits::store_as;

template <class T>
typename T::Math apply(ir::BinaryOp op, typename T::Math x, typename T::Math y) {
  using M = typename T::Math;
  if constexpr (!T::is_float) {
    // Two's complement wrap-around, computed in uint64 (no signed overflow,
    // and no promotion of narrow unsigned types back to int).
    using U = std::uint64_t;
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

template <class T, ir::BinaryOp Op>
void loop(const std::byte* a, const std::byte* b, bool b_is_scalar, std::byte* out, std::size_t n) {
  using S = typename T::Storage;
  constexpr std::size_t z = sizeof(S);
  if (b_is_scalar) {
    const auto y = T::to_math(load_as<S>(b));
    for (std::size_t i = 0; i < n; ++i)
      store_as<S>(out + i * z, T::from_math(apply<T>(Op, T::to_math(load_as<S>(a + i * z)), y)));
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    store_as<S>(out + i * z, T::from_math(apply<T>(Op, T::to_math(load_as<S>(a + i * z)),
                                                   T::to_math(load_as<S>(b + i * z)))));
  }
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
