// region.hpp — how the rank VM names memory at the door (fabric.hpp): never
// a pointer, always (space, id, owner) plus an element range.
//
//   Region  a rectangular part of a view: a window buffer on one rank, or a
//           host argument. The view starts `base` bytes into the buffer or
//           argument and has `shape`; the region is [offsets, offsets +
//           extent) of it, in view coordinates, with the view's dtype.
//   Cell    one INT32 signal cell: (owner rank, buffer, byte offset).
//   SiteRef the instruction's site (code index, site index), for observers
//           and diagnostics.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "anyp/dtype.hpp"

namespace anyp::runtime {

// Views have at most kMaxRank dims (checked by the compiler).
inline constexpr std::size_t kMaxRank = 8;

enum class Space : std::uint8_t { Window, Host };

struct SiteRef {
  std::int32_t code = -1;  // index into Executable::codes
  std::int32_t site = -1;  // index into that code's sites
};

struct Region {
  Space space = Space::Window;
  std::int32_t id = -1;     // window buffer index, or host argument index
  std::int64_t owner = -1;  // Window: the rank whose copy; Host: -1
  std::int64_t base = 0;    // bytes from the buffer/argument start to the view's first element
  DType dtype = DType::FP32;
  std::span<const std::int64_t> shape;    // the view's shape
  std::span<const std::int64_t> offsets;  // first element of the region, view coordinates
  std::span<const std::int64_t> extent;   // the region's extent per dim

  std::int64_t elements() const {
    std::int64_t n = 1;
    for (auto e : extent) n *= e;
    return n;
  }
  std::int64_t bytes() const { return elements() * static_cast<std::int64_t>(dtype_bytes(dtype)); }
  bool same_memory(const Region& o) const {
    return space == o.space && id == o.id && owner == o.owner;
  }

  // f(byte offset from the buffer/argument start, byte count) for every
  // contiguous row of the region, in row-major order.
  template <class F>
  void for_each_row(F&& f) const;
};

// Walks the rows of a region one at a time (two regions of the same extent
// have the same rows, so two cursors walk a copy in lockstep).
class RowCursor {
 public:
  explicit RowCursor(const Region& r) : r_(r) {
    const std::size_t n = r.shape.size();
    esize_ = static_cast<std::int64_t>(dtype_bytes(r.dtype));
    if (n == 0) {
      rows_ = 1;
      row_bytes_ = esize_;
      return;
    }
    strides_[n - 1] = 1;
    for (std::size_t d = n - 1; d > 0; --d) strides_[d - 1] = strides_[d] * r.shape[d];
    for (std::size_t d = 0; d + 1 < n; ++d) rows_ *= r.extent[d];
    row_bytes_ = r.extent[n - 1] * esize_;
    if (row_bytes_ == 0) rows_ = 0;
  }
  std::int64_t row_bytes() const { return row_bytes_; }
  // The next row's byte offset from the buffer/argument start; false at the end.
  bool next(std::int64_t& offset) {
    if (row_ >= rows_) return false;
    const std::size_t n = r_.shape.size();
    if (n == 0) {
      offset = r_.base;
      ++row_;
      return true;
    }
    std::int64_t start = r_.offsets[n - 1];
    for (std::size_t d = 0; d + 1 < n; ++d) start += (r_.offsets[d] + at_[d]) * strides_[d];
    offset = r_.base + start * esize_;
    ++row_;
    for (std::size_t d = n - 1; d-- > 0;) {
      if (++at_[d] < r_.extent[d]) break;
      at_[d] = 0;
    }
    return true;
  }

 private:
  const Region& r_;
  std::array<std::int64_t, kMaxRank> strides_{}, at_{};
  std::int64_t esize_ = 1, rows_ = 1, row_ = 0, row_bytes_ = 0;
};

template <class F>
void Region::for_each_row(F&& f) const {
  RowCursor rows(*this);
  std::int64_t offset = 0;
  while (rows.next(offset)) f(offset, rows.row_bytes());
}

struct Cell {
  std::int64_t owner = -1;   // the rank whose window holds the cell
  std::int32_t buffer = -1;  // window buffer index
  std::int64_t offset = 0;   // bytes from the buffer start
};

}  // namespace anyp::runtime
