// element_codec.cpp — element bytes <-> double (see element_codec.hpp).
#include "common/element_codec.hpp"

#include <cmath>
#include <cstring>

#include "common/half_float.hpp"

namespace anyp {
namespace {

template <class T>
T read_as(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class T>
void write_as(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

template <class T, class F>
void decode_loop(const std::byte* src, double* out, std::size_t n, F&& convert) {
  for (std::size_t i = 0; i < n; ++i) out[i] = convert(read_as<T>(src + i * sizeof(T)));
}

template <class T, class F>
void encode_loop(std::byte* dst, const double* in, std::size_t n, F&& convert) {
  for (std::size_t i = 0; i < n; ++i) write_as<T>(dst + i * sizeof(T), convert(in[i]));
}

template <class T>
T to_int(double v) {
  return static_cast<T>(truncate_and_wrap(v));
}

}  // namespace

std::uint64_t truncate_and_wrap(double value) {
  if (!std::isfinite(value)) return 0;
  const double t = std::trunc(value);
  constexpr double two63 = 9223372036854775808.0;
  constexpr double two64 = 18446744073709551616.0;
  if (t >= -two63 && t < two63) return static_cast<std::uint64_t>(static_cast<std::int64_t>(t));
  // |t| >= 2^63: t is a multiple of 2^11, and fmod is exact.
  double m = std::fmod(t, two64);  // in (-2^64, 2^64)
  if (m >= two63) return static_cast<std::uint64_t>(m);
  if (m >= -two63) return static_cast<std::uint64_t>(static_cast<std::int64_t>(m));
  return static_cast<std::uint64_t>(m + two64);  // exact: a multiple of 2^11 below 2^63
}

void decode_elements(const std::byte* src, DType dtype, double* out, std::size_t n) {
  switch (dtype) {
    case DType::FP32:
      return decode_loop<float>(src, out, n, [](float v) { return static_cast<double>(v); });
    case DType::FP16:
      return decode_loop<std::uint16_t>(
          src, out, n, [](std::uint16_t b) { return double{fp16_bits_to_float(b)}; });
    case DType::BF16:
      return decode_loop<std::uint16_t>(
          src, out, n, [](std::uint16_t b) { return double{bf16_bits_to_float(b)}; });
    case DType::INT8:
      return decode_loop<std::int8_t>(src, out, n,
                                      [](std::int8_t v) { return static_cast<double>(v); });
    case DType::INT16:
      return decode_loop<std::int16_t>(src, out, n,
                                       [](std::int16_t v) { return static_cast<double>(v); });
    case DType::INT32:
      return decode_loop<std::int32_t>(src, out, n,
                                       [](std::int32_t v) { return static_cast<double>(v); });
    case DType::INT64:
      return decode_loop<std::int64_t>(src, out, n,
                                       [](std::int64_t v) { return static_cast<double>(v); });
  }
}

void encode_elements(std::byte* dst, DType dtype, const double* in, std::size_t n) {
  switch (dtype) {
    case DType::FP32:
      return encode_loop<float>(dst, in, n, [](double v) { return static_cast<float>(v); });
    case DType::FP16:
      return encode_loop<std::uint16_t>(dst, in, n, double_to_fp16_bits);
    case DType::BF16:
      return encode_loop<std::uint16_t>(dst, in, n, double_to_bf16_bits);
    case DType::INT8:
      return encode_loop<std::int8_t>(dst, in, n, to_int<std::int8_t>);
    case DType::INT16:
      return encode_loop<std::int16_t>(dst, in, n, to_int<std::int16_t>);
    case DType::INT32:
      return encode_loop<std::int32_t>(dst, in, n, to_int<std::int32_t>);
    case DType::INT64:
      return encode_loop<std::int64_t>(dst, in, n, to_int<std::int64_t>);
  }
}

double decode_element(const std::byte* p, DType dtype) {
  double v = 0;
  decode_elements(p, dtype, &v, 1);
  return v;
}

void encode_element(std::byte* p, DType dtype, double value) {
  encode_elements(p, dtype, &value, 1);
}

}  // namespace anyp
