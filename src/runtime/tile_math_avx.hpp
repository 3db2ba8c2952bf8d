// tile_math_avx.hpp — FP16 and BF16 elementwise tile math with x86 vector
// instructions, at the widest the machine has:
//   AVX-512  FP16 in FP16 with AVX512-FP16 (vaddph ... on 32 lanes), BF16
//            with AVX512BW (16 lanes, as below);
//   AVX2     eight lanes: FP16 through F16C (vcvtph2ps / vcvtps2ph, round
//            to nearest even), BF16 through AVX2 (a shift to widen;
//            ties-to-even on the top 16 bits with integer ops to narrow).
// Math in float (or, for FP16 on AVX-512, in FP16, which rounds the same),
// one rounding per result: the same bits at every width and as the
// portable loop in tile_math.cpp (tests/unit/tile_math_avx_test.cpp checks
// every op at every width against a scalar reference and against each
// other). GCC does not vectorize the portable conversions well (16-bit
// lanes widened to float), so the half types get this path. (AVX512-BF16's
// own conversion flushes subnormal inputs to zero: not used.)
#pragma once

#include <cstddef>
#include <vector>

#include "anyp/dtype.hpp"
#include "ir/op_attrs.hpp"

namespace anyp::runtime {

// out[i] = a[i] <op> b[i or 0] over n elements of dtype FP16 or BF16
// (tile_elementwise's contract) and true, when this machine has the
// instructions (FP16: AVX and F16C; BF16: AVX2); false (nothing done)
// otherwise, or for another dtype.
bool half_elementwise_avx(ir::BinaryOp op, DType dtype, const std::byte* a, const std::byte* b,
                          bool b_is_scalar, std::byte* out, std::size_t n);

// The vector widths this machine runs FP16 or BF16 elementwise math at,
// widest first (empty: none, or another dtype).
enum class HalfIsa { Avx512, Avx2 };
std::vector<HalfIsa> half_isas(DType dtype);
// half_elementwise_avx at one width (false when the machine lacks it).
bool half_elementwise_with(HalfIsa isa, ir::BinaryOp op, DType dtype, const std::byte* a,
                           const std::byte* b, bool b_is_scalar, std::byte* out, std::size_t n);

// out[i] = a[i] widened (exactly) to float, over n FP16 or BF16 elements,
// and true when this machine has the instructions; false otherwise (the
// matmul's operand widening, tile_matmul.cpp).
bool widen_half_avx(DType dtype, const std::byte* a, float* out, std::size_t n);

// out[i] = in[i] rounded to FP16 (to nearest even; NaN quiet with its top
// payload bits, as float_to_fp16_bits) over n floats with F16C, and true;
// false when the machine lacks it (tile_unary's FP16 path).
bool narrow_fp16_avx(const float* in, std::byte* out, std::size_t n);

}  // namespace anyp::runtime
