// tile_math.hpp — elementwise tile arithmetic on typed element storage: one
// switch on (op, dtype) per call, then a tight loop over contiguous
// elements. Integers wrap modulo 2^width (two's complement); FP32 computes
// in float; FP16/BF16 compute in float and round to nearest even once per
// result. Max/min keep the first operand unless the second is strictly
// greater/smaller (so a NaN first operand survives).
#pragma once

#include <cstddef>

#include "anyp/dtype.hpp"
#include "ir/op_attrs.hpp"

namespace anyp::runtime {

// True for the ops tile_elementwise computes (add, sub, mul, max, min).
bool is_tile_elementwise_op(ir::BinaryOp op);

// out[i] = a[i] <op> b[i] for n elements of dtype; with b_is_scalar,
// out[i] = a[i] <op> b[0]. out is a (in place) or disjoint from it; b is
// disjoint from out (it may be a when out is not).
void tile_elementwise(ir::BinaryOp op, DType dtype, const std::byte* a, const std::byte* b,
                      bool b_is_scalar, std::byte* out, std::size_t n);

}  // namespace anyp::runtime
