// tile_rules.cpp — messages of the pl.full value and pl.reshape count checks.
#include "ir/tile_rules.hpp"

namespace anyp::ir {

std::string full_value_error(DType dtype, std::int64_t value) {
  if (dtype_is_float(dtype)) return "";
  const int bits = static_cast<int>(dtype_bytes(dtype)) * 8;
  if (bits >= 64) return "";
  const std::int64_t lo = -(std::int64_t{1} << (bits - 1)),
                     hi = (std::int64_t{1} << (bits - 1)) - 1;
  if (value >= lo && value <= hi) return "";
  return "pl.full: the value " + std::to_string(value) + " does not fit " +
         std::string(dtype_name(dtype)) + " (range [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "])";
}

std::string binary_constant_error(BinaryOp op, DType dtype, std::int64_t value) {
  if (dtype_is_float(dtype)) return "";
  const std::string tile = std::string(dtype == DType::INT8 || dtype == DType::INT16 ||
                                               dtype == DType::INT32 || dtype == DType::INT64
                                           ? "an "
                                           : "a ") +
                           std::string(dtype_name(dtype)) + " tile";
  const std::int64_t bits = static_cast<std::int64_t>(dtype_bytes(dtype)) * 8;
  if (op == BinaryOp::Div && value == 0)
    return std::string(tile_binary_name(op)) + ": division of " + tile + " by the constant 0";
  if ((op == BinaryOp::Shl || op == BinaryOp::Shr) && (value < 0 || value >= bits)) {
    return std::string(tile_binary_name(op)) + ": shift count " + std::to_string(value) +
           " is outside [0, " + std::to_string(bits) + ") for " + tile;
  }
  return "";
}

std::string reshape_count_error(const std::string& from_shape, std::int64_t from_elements,
                                const std::string& to_shape, std::int64_t to_elements) {
  if (from_elements == to_elements) return "";
  return "pl.reshape: the tile " + from_shape + " has " + std::to_string(from_elements) +
         " elements, but the new shape " + to_shape + " has " + std::to_string(to_elements) +
         "; a reshape keeps the element count";
}

}  // namespace anyp::ir
