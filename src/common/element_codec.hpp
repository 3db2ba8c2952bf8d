// element_codec.hpp — the one conversion between an element's bytes in
// memory (host tensors, windows) and the double a tile or HostTensor::get
// holds. Used by HostTensor and by the runtime, so a value written on the
// host and a value stored by a kernel are encoded the same way:
//   FP32           static_cast<float> (round to nearest even);
//   FP16, BF16     round to nearest even straight from double (one rounding);
//   INT8 … INT64   truncate toward zero, then wrap modulo 2^width (NaN and
//                  infinities give 0) — like a C cast, but never undefined.
// The batched forms switch on the dtype once, outside the loop.
#pragma once

#include <cstddef>
#include <cstdint>

#include "anyp/dtype.hpp"

namespace anyp {

double decode_element(const std::byte* p, DType dtype);
void encode_element(std::byte* p, DType dtype, double value);

// n contiguous elements.
void decode_elements(const std::byte* src, DType dtype, double* out, std::size_t n);
void encode_elements(std::byte* dst, DType dtype, const double* in, std::size_t n);

// value, truncated toward zero and wrapped modulo 2^64 (NaN, inf: 0); the
// caller's narrowing cast wraps further.
std::uint64_t truncate_and_wrap(double value);

}  // namespace anyp
