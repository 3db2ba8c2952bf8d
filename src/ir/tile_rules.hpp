// tile_rules.hpp — the checks of tile ops that run twice: at trace time
// when the operands are constants, and after dims are bound
// (check_functions) when they mention NR. One message text for both.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "anyp/dtype.hpp"
#include "ir/op_attrs.hpp"

namespace anyp::ir {

// [lo, hi] of an integer dtype (INT64: the whole int64 range).
std::pair<std::int64_t, std::int64_t> integer_range(DType dtype);

// "" when the integer `value` may fill a tile of `dtype` (any value fits a
// floating dtype; an integer dtype needs it in range), else the message.
std::string full_value_error(DType dtype, std::int64_t value);

// "" when the integer constant `value` can be an operand of op `op_name` on
// a tile of `dtype` (any value for a floating dtype; in range for an
// integer one), else "pl.add: the constant 300 does not fit an INT8 tile
// (range [-128, 127]); ...".
std::string constant_operand_error(const std::string& op_name, DType dtype, std::int64_t value);

// "" when `value`, the constant right operand of tile operator `op` on a
// tile of `dtype`, is valid for any data; else the message: it does not fit
// (constant_operand_error), "pl.div: division of an INT32 tile by the
// constant 0", or a shift count outside [0, width).
std::string binary_constant_error(BinaryOp op, DType dtype, std::int64_t value);

// "" when the counts agree, else the message naming both shapes and counts.
std::string reshape_count_error(const std::string& from_shape, std::int64_t from_elements,
                                const std::string& to_shape, std::int64_t to_elements);

}  // namespace anyp::ir
