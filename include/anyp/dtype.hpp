// dtype.hpp — the element types anyp knows, with their sizes and names.
//
// Shared by the public API (pl::FP32, ...), the IR, the compiler and the
// runtime. Signals are INT32; data in the examples is FP32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace anyp {

enum class DType : std::uint8_t { FP32, FP16, BF16, INT8, INT16, INT32, INT64 };

// Bytes of one element.
constexpr std::size_t dtype_bytes(DType t) {
  switch (t) {
    case DType::FP32:
      return 4;
    case DType::FP16:
      return 2;
    case DType::BF16:
      return 2;
    case DType::INT8:
      return 1;
    case DType::INT16:
      return 2;
    case DType::INT32:
      return 4;
    case DType::INT64:
      return 8;
  }
  return 0;
}

constexpr bool dtype_is_float(DType t) {
  return t == DType::FP32 || t == DType::FP16 || t == DType::BF16;
}

// The spelling used in IR text and in diagnostics: "FP32", "INT32", ...
constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::FP32:
      return "FP32";
    case DType::FP16:
      return "FP16";
    case DType::BF16:
      return "BF16";
    case DType::INT8:
      return "INT8";
    case DType::INT16:
      return "INT16";
    case DType::INT32:
      return "INT32";
    case DType::INT64:
      return "INT64";
  }
  return "?";
}

}  // namespace anyp
