// tile_unary.hpp — elementwise tile functions of one operand (pl::neg,
// pl::exp, ...; ir::UnaryOp). Floating tiles compute in float: sqrt exactly
// rounded, exp and log by runtime/float_math.hpp (within 1 ulp, the same
// bits on every machine); rsqrt is 1 / sqrt(x) and recip 1 / x, each step
// rounded; FP16/BF16 round to nearest even once at the end. Integers
// wrap (neg and abs of the minimum give the minimum); relu keeps NaN.
#pragma once

#include <cstddef>

#include "anyp/dtype.hpp"
#include "ir/op_attrs.hpp"

namespace anyp::runtime {

// out[i] = op(a[i]) for n elements of dtype; out is a or disjoint from it.
// The op's dtype rule (ir::unary_op_rule) holds: the trace checked it.
void tile_unary(ir::UnaryOp op, DType dtype, const std::byte* a, std::byte* out, std::size_t n);

}  // namespace anyp::runtime
