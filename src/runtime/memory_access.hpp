// memory_access.hpp — typed element access and region copies between tiles
// and row-major memory (host tensors and windows), with dtype conversion.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "anyp/dtype.hpp"

namespace anyp::runtime {

double load_element(const std::byte* p, DType dtype);
void store_element(std::byte* p, DType dtype, double value);

// Visits every row of the region [offsets, offsets + extent) of a row-major
// tensor of `shape`: f(element index of the row start, row length, row number).
// Tensors have at most kMaxRank dims (checked by the compiler).
inline constexpr std::size_t kMaxRank = 8;

template <class F>
void for_each_region_row(const std::vector<std::int64_t>& shape,
                         const std::vector<std::int64_t>& offsets,
                         const std::vector<std::int64_t>& extent, F&& f) {
  const std::size_t n = shape.size();
  if (n == 0 || n > kMaxRank) {
    if (n == 0) f(0, 1, 0);
    return;
  }
  std::array<std::int64_t, kMaxRank> strides{}, at{};
  strides[n - 1] = 1;
  for (std::size_t d = n - 1; d > 0; --d) strides[d - 1] = strides[d] * shape[d];
  std::int64_t rows = 1;
  for (std::size_t d = 0; d + 1 < n; ++d) rows *= extent[d];
  for (std::int64_t row = 0; row < rows; ++row) {
    std::int64_t start = offsets[n - 1];
    for (std::size_t d = 0; d + 1 < n; ++d) start += (offsets[d] + at[d]) * strides[d];
    f(start, extent[n - 1], row);
    for (std::size_t d = n - 1; d-- > 0;) {
      if (++at[d] < extent[d]) break;
      at[d] = 0;
    }
  }
}

}  // namespace anyp::runtime
