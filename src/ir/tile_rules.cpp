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

std::string reshape_count_error(const std::string& from_shape, std::int64_t from_elements,
                                const std::string& to_shape, std::int64_t to_elements) {
  if (from_elements == to_elements) return "";
  return "pl.reshape: the tile " + from_shape + " has " + std::to_string(from_elements) +
         " elements, but the new shape " + to_shape + " has " + std::to_string(to_elements) +
         "; a reshape keeps the element count";
}

}  // namespace anyp::ir
