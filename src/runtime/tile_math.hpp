// tile_math.hpp — elementwise tile arithmetic on typed element storage: one
// switch on (op, dtype) per call, then a tight loop over contiguous
// elements. Integers wrap modulo 2^width (two's complement; division
// truncates toward zero, MIN / -1 wraps to MIN; shr is arithmetic); FP32
// computes in float; FP16/BF16 compute in float and round to nearest even
// once per result (float's 24 bits make that the correctly rounded result
// for + - * / and max/min). Max/min keep the first operand unless the second is strictly
// greater/smaller (so a NaN first operand survives).
#pragma once

#include <cstddef>
#include <optional>

#include "anyp/dtype.hpp"
#include "ir/op_attrs.hpp"
#include "runtime/compute_class.hpp"

namespace anyp::runtime {

// How the cost model prices one (tiles and the tensor-level ops alike).
ComputeClass compute_class_of(ir::BinaryOp op);

// The first element of b (one, when b_is_scalar) that `op` refuses on an
// integer tile: a zero divisor, a shift count outside [0, width). nullopt
// when every element is valid (always, for floating tiles).
std::optional<std::size_t> invalid_operand(ir::BinaryOp op, DType dtype, const std::byte* b,
                                           bool b_is_scalar, std::size_t n);

// out[i] = a[i] <op> b[i] for n elements of dtype; with b_is_scalar,
// out[i] = a[i] <op> b[0]. out is a (in place) or disjoint from it; b is
// disjoint from out (it may be a when out is not).
void tile_elementwise(ir::BinaryOp op, DType dtype, const std::byte* a, const std::byte* b,
                      bool b_is_scalar, std::byte* out, std::size_t n);

}  // namespace anyp::runtime
