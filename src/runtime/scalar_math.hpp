// scalar_math.hpp — the semantics of scalar arithmetic, shared by the host
// evaluator (compile time) and the rank VM (run time): integer ops wrap to
// the result dtype and truncate like C (so (r - 1) % n is -1 at r = 0);
// floating ops round to the result dtype.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "anyp/dtype.hpp"
#include "ir/op_attrs.hpp"

namespace anyp::runtime {

struct ScalarValue {
  std::int64_t i = 0;
  double f = 0;
  bool is_float = false;
  double as_double() const { return is_float ? f : static_cast<double>(i); }
  std::int64_t as_int() const { return is_float ? static_cast<std::int64_t>(f) : i; }
};

inline ScalarValue int_scalar(std::int64_t v) { return ScalarValue{v, 0, false}; }
inline ScalarValue float_scalar(double v) { return ScalarValue{0, v, true}; }

// Wraps an integer to an integer dtype (INT64 and floating dtypes: as is).
inline std::int64_t wrap_integer(std::int64_t v, DType dtype) {
  switch (dtype) {
    case DType::INT8:
      return static_cast<std::int8_t>(v);
    case DType::INT16:
      return static_cast<std::int16_t>(v);
    case DType::INT32:
      return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
    default:
      return v;
  }
}

// Integer arithmetic of scalar_binary (both operands integers), inline for
// the VM's loop: comparisons give 0 or 1; add, sub and mul wrap in two's
// complement, computed without signed overflow; div and mod truncate like C
// (INT_MIN / -1 wraps); nullopt on division by zero (and for the tile-only
// bitwise operators, which no scalar op carries).
[[gnu::always_inline]] inline std::optional<std::int64_t> integer_binary(ir::BinaryOp op,
                                                                         std::int64_t x,
                                                                         std::int64_t y,
                                                                         DType result) {
  using ir::BinaryOp;
  const auto ux = static_cast<std::uint64_t>(x), uy = static_cast<std::uint64_t>(y);
  switch (op) {
    case BinaryOp::Lt:
      return x < y;
    case BinaryOp::Le:
      return x <= y;
    case BinaryOp::Gt:
      return x > y;
    case BinaryOp::Ge:
      return x >= y;
    case BinaryOp::Eq:
      return x == y;
    case BinaryOp::Ne:
      return x != y;
    case BinaryOp::And:
      return x != 0 && y != 0;
    case BinaryOp::Or:
      return x != 0 || y != 0;
    case BinaryOp::Add:
      return wrap_integer(static_cast<std::int64_t>(ux + uy), result);
    case BinaryOp::Sub:
      return wrap_integer(static_cast<std::int64_t>(ux - uy), result);
    case BinaryOp::Mul:
      return wrap_integer(static_cast<std::int64_t>(ux * uy), result);
    case BinaryOp::Max:
      return x > y ? x : y;
    case BinaryOp::Min:
      return x < y ? x : y;
    case BinaryOp::FloorDiv:
    case BinaryOp::FloorMod: {
      if (y == 0) return std::nullopt;
      if (y == -1)
        return wrap_integer(op == BinaryOp::FloorDiv ? static_cast<std::int64_t>(0 - ux) : 0,
                            result);
      std::int64_t q = x / y, r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) {  // round toward negative infinity
        q -= 1;
        r += y;
      }
      return wrap_integer(op == BinaryOp::FloorDiv ? q : r, result);
    }
    case BinaryOp::Div:
    case BinaryOp::Mod:
      if (y == 0) return std::nullopt;
      if (y == -1)
        return wrap_integer(op == BinaryOp::Div ? static_cast<std::int64_t>(0 - ux) : 0, result);
      return wrap_integer(op == BinaryOp::Div ? x / y : x % y, result);
    case BinaryOp::BitAnd:  // tile-only operators: scalars never record them
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
    case BinaryOp::Shl:
    case BinaryOp::Shr:
      break;
  }
  return std::nullopt;
}

// Rounds/wraps v to dtype.
ScalarValue scalar_cast(ScalarValue v, DType dtype);
// nullopt on division by zero (error set).
std::optional<ScalarValue> scalar_binary(ir::BinaryOp op, ScalarValue a, ScalarValue b,
                                         DType result, std::string* error);
inline bool compare(ir::WaitKind cmp, std::int64_t value, std::int64_t expected) {
  switch (cmp) {
    case ir::WaitKind::Eq:
      return value == expected;
    case ir::WaitKind::Ne:
      return value != expected;
    case ir::WaitKind::Gt:
      return value > expected;
    case ir::WaitKind::Ge:
      return value >= expected;
    case ir::WaitKind::Lt:
      return value < expected;
    case ir::WaitKind::Le:
      return value <= expected;
  }
  return false;
}

}  // namespace anyp::runtime
