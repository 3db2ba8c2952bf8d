// scalar_math.cpp — scalar arithmetic semantics (see scalar_math.hpp).
#include "runtime/scalar_math.hpp"

#include <algorithm>
#include <cmath>

#include "common/element_codec.hpp"
#include "common/internal_check.hpp"

namespace anyp::runtime {

ScalarValue scalar_cast(ScalarValue v, DType dtype) {
  // Through the element codec: one rounding, and integers never pass
  // through double.
  std::byte element[8];
  if (v.is_float) {
    encode_element(element, dtype, v.f);
  } else {
    encode_integer(element, dtype, v.i);
  }
  return dtype_is_float(dtype) ? float_scalar(decode_element(element, dtype))
                               : int_scalar(decode_integer(element, dtype));
}

std::optional<ScalarValue> scalar_binary(ir::BinaryOp op, ScalarValue a, ScalarValue b,
                                         DType result, std::string* error) {
  using ir::BinaryOp;
  const bool fp = a.is_float || b.is_float;
  auto cmp = [&](bool v) { return int_scalar(v ? 1 : 0); };
  if (fp) {
    const double x = a.as_double(), y = b.as_double();
    switch (op) {
      case BinaryOp::Lt:
        return cmp(x < y);
      case BinaryOp::Le:
        return cmp(x <= y);
      case BinaryOp::Gt:
        return cmp(x > y);
      case BinaryOp::Ge:
        return cmp(x >= y);
      case BinaryOp::Eq:
        return cmp(x == y);
      case BinaryOp::Ne:
        return cmp(x != y);
      case BinaryOp::And:
        return cmp(x != 0 && y != 0);
      case BinaryOp::Or:
        return cmp(x != 0 || y != 0);
      case BinaryOp::Add:
        return scalar_cast(float_scalar(x + y), result);
      case BinaryOp::Sub:
        return scalar_cast(float_scalar(x - y), result);
      case BinaryOp::Mul:
        return scalar_cast(float_scalar(x * y), result);
      case BinaryOp::Div:
        return scalar_cast(float_scalar(x / y), result);
      case BinaryOp::Max:
        return scalar_cast(float_scalar(std::max(x, y)), result);
      case BinaryOp::Min:
        return scalar_cast(float_scalar(std::min(x, y)), result);
      case BinaryOp::Mod:
      case BinaryOp::FloorDiv:
      case BinaryOp::FloorMod:
        break;
      default:
        ANYP_UNREACHABLE(std::string("scalar operator ") + ir::binary_op_name(op));
    }
    if (error)
      *error = op == BinaryOp::FloorDiv ? "// needs integer operands" : "% needs integer operands";
    return std::nullopt;
  }
  if (const std::optional<std::int64_t> v = integer_binary(op, a.i, b.i, result))
    return int_scalar(*v);
  ANYP_CHECK(op == BinaryOp::Div || op == BinaryOp::Mod || op == BinaryOp::FloorDiv ||
                 op == BinaryOp::FloorMod,
             std::string("scalar operator ") + ir::binary_op_name(op));
  const char* spelled = op == BinaryOp::Div ? " / 0" : op == BinaryOp::FloorDiv ? " // 0" : " % 0";
  if (error) *error = std::to_string(a.i) + spelled + " divides by zero";
  return std::nullopt;
}

}  // namespace anyp::runtime
