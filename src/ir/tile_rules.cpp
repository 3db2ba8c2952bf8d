// tile_rules.cpp — messages of the pl.full value and pl.reshape count checks.
#include "ir/tile_rules.hpp"

#include <cstdint>

namespace anyp::ir {

std::pair<std::int64_t, std::int64_t> integer_range(DType dtype) {
  const int bits = static_cast<int>(dtype_bytes(dtype)) * 8;
  if (bits >= 64) return {INT64_MIN, INT64_MAX};
  return {-(std::int64_t{1} << (bits - 1)), (std::int64_t{1} << (bits - 1)) - 1};
}

std::string full_value_error(DType dtype, std::int64_t value) {
  if (dtype_is_float(dtype)) return "";
  const auto [lo, hi] = integer_range(dtype);
  if (value >= lo && value <= hi) return "";
  return "pl.full: the value " + std::to_string(value) + " does not fit " +
         std::string(dtype_name(dtype)) + " (range [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "])";
}

namespace {

// "an INT8 tile".
std::string tile_of(DType dtype) {
  return std::string(dtype == DType::BF16 ? "a " : "an ") + std::string(dtype_name(dtype)) +
         " tile";
}

}  // namespace

std::string constant_operand_error(const std::string& op_name, DType dtype, std::int64_t value) {
  if (dtype_is_float(dtype)) return "";
  const auto [lo, hi] = integer_range(dtype);
  if (value >= lo && value <= hi) return "";
  return op_name + ": the constant " + std::to_string(value) + " does not fit " + tile_of(dtype) +
         " (range [" + std::to_string(lo) + ", " + std::to_string(hi) +
         "]); tiles are typed: pl::cast the tile to a wider dtype first";
}

std::string binary_constant_error(BinaryOp op, DType dtype, std::int64_t value) {
  if (dtype_is_float(dtype)) return "";
  const std::string name = tile_binary_name(op);
  const std::int64_t bits = static_cast<std::int64_t>(dtype_bytes(dtype)) * 8;
  if ((op == BinaryOp::Shl || op == BinaryOp::Shr) && (value < 0 || value >= bits)) {
    return name + ": shift count " + std::to_string(value) + " is outside [0, " +
           std::to_string(bits) + ") for " + tile_of(dtype);
  }
  if (const std::string fit = constant_operand_error(name, dtype, value); !fit.empty()) return fit;
  if (op == BinaryOp::Div && value == 0)
    return name + ": division of " + tile_of(dtype) + " by the constant 0";
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
