// memory_access.cpp — typed element loads and stores.
#include "runtime/memory_access.hpp"

#include <cstring>

#include "host/half_float.hpp"

namespace anyp::runtime {
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
}  // namespace

double load_element(const std::byte* p, DType dtype) {
  switch (dtype) {
    case DType::FP32:
      return read_as<float>(p);
    case DType::FP16:
      return fp16_bits_to_float(read_as<std::uint16_t>(p));
    case DType::BF16:
      return bf16_bits_to_float(read_as<std::uint16_t>(p));
    case DType::INT8:
      return read_as<std::int8_t>(p);
    case DType::INT16:
      return read_as<std::int16_t>(p);
    case DType::INT32:
      return read_as<std::int32_t>(p);
    case DType::INT64:
      return static_cast<double>(read_as<std::int64_t>(p));
  }
  return 0;
}

void store_element(std::byte* p, DType dtype, double value) {
  switch (dtype) {
    case DType::FP32:
      write_as(p, static_cast<float>(value));
      return;
    case DType::FP16:
      write_as(p, float_to_fp16_bits(static_cast<float>(value)));
      return;
    case DType::BF16:
      write_as(p, float_to_bf16_bits(static_cast<float>(value)));
      return;
    case DType::INT8:
      write_as(p, static_cast<std::int8_t>(value));
      return;
    case DType::INT16:
      write_as(p, static_cast<std::int16_t>(value));
      return;
    case DType::INT32:
      write_as(p, static_cast<std::int32_t>(value));
      return;
    case DType::INT64:
      write_as(p, static_cast<std::int64_t>(value));
      return;
  }
}

}  // namespace anyp::runtime
