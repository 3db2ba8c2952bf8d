// tile_math_f16c.hpp — FP16 elementwise tile math with the x86 F16C
// conversions (vcvtph2ps / vcvtps2ph, round to nearest even): eight lanes
// at a time, in float, one rounding per result — the same results as the
// portable loop in tile_math.cpp (tests/runtime/typed_tiles_test.cpp checks
// FP16 math against a reference on whichever path the machine takes), at
// AVX speed. GCC does not vectorize the portable FP16 conversions (16-bit
// lanes widened to float), so FP16 gets this hand-written path.
#pragma once

#include <cstddef>

#include "ir/op_attrs.hpp"

namespace anyp::runtime {

// out[i] = a[i] <op> b[i or 0] over n FP16 elements (tile_elementwise's
// contract) and true, when this machine has AVX and F16C; false (nothing
// done) otherwise.
bool fp16_elementwise_f16c(ir::BinaryOp op, const std::byte* a, const std::byte* b,
                           bool b_is_scalar, std::byte* out, std::size_t n);

}  // namespace anyp::runtime
