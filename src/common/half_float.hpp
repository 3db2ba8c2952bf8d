// half_float.hpp — FP16 (IEEE binary16) and BF16 (bfloat16) encodings:
// conversion to and from their 16-bit patterns with round-to-nearest-even.
//
// Used by HostTensor (FP16/BF16 storage) and by the runtime. The double
// overloads round once, straight from double; converting through float first
// could round twice and differ in the last bit.
//
// NaN stays NaN (quiet, sign kept), infinities stay infinite, values beyond
// the largest finite encoding round to infinity, and values below half the
// smallest subnormal round to (signed) zero.
#pragma once

#include <cstdint>

namespace anyp {

std::uint16_t float_to_fp16_bits(float value);
std::uint16_t double_to_fp16_bits(double value);
float fp16_bits_to_float(std::uint16_t bits);

std::uint16_t float_to_bf16_bits(float value);
std::uint16_t double_to_bf16_bits(double value);
float bf16_bits_to_float(std::uint16_t bits);

}  // namespace anyp
