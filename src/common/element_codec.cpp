// element_codec.cpp — element bytes <-> double (see element_codec.hpp).
#include "common/element_codec.hpp"

#include <cmath>
#include <cstring>

#include "common/dtype_traits.hpp"

namespace anyp {

using dtype_traits::load_as;
using dtype_traits::store_as;
using dtype_traits::visit_dtype;

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
  visit_dtype(dtype, [&]<class T>(T) {
    using S = typename T::Storage;
    for (std::size_t i = 0; i < n; ++i) out[i] = T::to_double(load_as<S>(src + i * sizeof(S)));
  });
}

void encode_elements(std::byte* dst, DType dtype, const double* in, std::size_t n) {
  visit_dtype(dtype, [&]<class T>(T) {
    using S = typename T::Storage;
    for (std::size_t i = 0; i < n; ++i) store_as<S>(dst + i * sizeof(S), T::from_double(in[i]));
  });
}

double decode_element(const std::byte* p, DType dtype) {
  double v = 0;
  decode_elements(p, dtype, &v, 1);
  return v;
}

void encode_element(std::byte* p, DType dtype, double value) {
  encode_elements(p, dtype, &value, 1);
}

std::int64_t decode_integer(const std::byte* p, DType dtype) {
  return visit_dtype(dtype, [&]<class T>(T) { return T::to_int(load_as<typename T::Storage>(p)); });
}

void encode_integer(std::byte* p, DType dtype, std::int64_t value) {
  visit_dtype(dtype, [&]<class T>(T) { store_as<typename T::Storage>(p, T::from_int(value)); });
}

void convert_elements(const std::byte* src, DType from, std::byte* dst, DType to, std::size_t n) {
  if (from == to) {
    if (src != dst) std::memmove(dst, src, n * dtype_bytes(from));
    return;
  }
  visit_dtype(from, [&]<class F>(F) {
    visit_dtype(to, [&]<class T>(T) {
      using FS = typename F::Storage;
      using TS = typename T::Storage;
      for (std::size_t i = 0; i < n; ++i) {
        const FS x = load_as<FS>(src + i * sizeof(FS));
        TS y;
        if constexpr (F::is_float) {
          y = T::from_double(F::to_double(x));
        } else {
          y = T::from_int(F::to_int(x));
        }
        store_as<TS>(dst + i * sizeof(TS), y);
      }
    });
  });
}

}  // namespace anyp
