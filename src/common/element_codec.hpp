// element_codec.hpp — the one conversion between an element's bytes in
// memory (host tensors, windows, typed tiles) and a value: a double, or an
// exact int64. Used by HostTensor and by the runtime, so a value written on
// the host and a value stored by a kernel are encoded the same way:
//   FP32           round to nearest even (one rounding, from double or int64);
//   FP16, BF16     round to nearest even straight from double or int64;
//   INT8 … INT64   from an integer: wrap modulo 2^width (two's complement);
//                  from a double: truncate toward zero, then wrap (NaN and
//                  infinities give 0) — like a C cast, but never undefined.
// Integers never pass through double on the integer paths, so INT64 is exact
// over its whole range. The batched forms switch on the dtypes once, outside
// the loop.
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

// Integer view of an element: exact for INT8 … INT64; a floating element is
// truncated and wrapped as above.
std::int64_t decode_integer(const std::byte* p, DType dtype);
// Writes an integer: wrapped into INT8 … INT32 (exact for INT64); rounded to
// nearest even (once) for FP32/FP16/BF16.
void encode_integer(std::byte* p, DType dtype, std::int64_t value);

// n elements of dtype `from` at src, converted to dtype `to` at dst (a cast):
// float -> float rounds once; int -> float rounds once, from the exact
// integer; float -> int truncates and wraps; int -> int wraps. src and dst
// may be the same memory only when the dtypes are equal.
void convert_elements(const std::byte* src, DType from, std::byte* dst, DType to, std::size_t n);

// value, truncated toward zero and wrapped modulo 2^64 (NaN, inf: 0); the
// caller's narrowing cast wraps further.
std::uint64_t truncate_and_wrap(double value);

}  // namespace anyp
