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
#include <cstring>
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

// Zero offsets for any view (a whole-view region's).
inline constexpr std::array<std::int64_t, kMaxRank> kZeroOffsets{};

struct Region {
  Region(Space space_, std::int32_t id_, std::int64_t owner_, std::int64_t base_, DType dtype_,
         std::span<const std::int64_t> shape_, std::span<const std::int64_t> offsets_,
         std::span<const std::int64_t> extent_);
  // The whole view (offsets 0, extent = shape), of `elements` elements.
  static Region whole(Space space, std::int32_t id, std::int64_t owner, std::int64_t base,
                      DType dtype, std::span<const std::int64_t> shape, std::int64_t elements);
  // Elements [offset[0], offset[0] + length[0]) of a view seen flat, with
  // `flat_shape` = {its element count} (the three one-element arrays must
  // outlive the region).
  static Region flat(Space space, std::int32_t id, std::int64_t owner, std::int64_t base,
                     DType dtype, std::span<const std::int64_t, 1> flat_shape,
                     std::span<const std::int64_t, 1> offset,
                     std::span<const std::int64_t, 1> length);

 private:
  struct Contiguous {};
  // A contiguous region of `nbytes` from byte `first_` (its layout is known).
  Region(Contiguous, Space space_, std::int32_t id_, std::int64_t owner_, std::int64_t base_,
         DType dtype_, std::span<const std::int64_t> shape_, std::span<const std::int64_t> offsets_,
         std::span<const std::int64_t> extent_, std::int64_t first_, std::int64_t nbytes_)
      : space(space_),
        id(id_),
        owner(owner_),
        base(base_),
        dtype(dtype_),
        shape(shape_),
        offsets(offsets_),
        extent(extent_),
        nbytes(nbytes_),
        first(first_),
        end(first_ + nbytes_) {}

 public:
  Space space = Space::Window;
  std::int32_t id = -1;     // window buffer index, or host argument index
  std::int64_t owner = -1;  // Window: the rank whose copy; Host: -1
  std::int64_t base = 0;    // bytes from the buffer/argument start to the view's first element
  DType dtype = DType::FP32;
  std::span<const std::int64_t> shape;    // the view's shape
  std::span<const std::int64_t> offsets;  // first element of the region, view coordinates
  std::span<const std::int64_t> extent;   // the region's extent per dim

  // Its layout, derived once by the constructor (every consumer of a region
  // needs some of it): the region's bytes; the bytes [first, end) from the
  // buffer/argument start that bound it (first = end when it is empty); and
  // whether it is exactly those bytes (its rows are adjacent).
  std::int64_t nbytes = 0;
  std::int64_t first = 0;
  std::int64_t end = 0;
  bool contiguous = true;

  std::int64_t bytes() const { return nbytes; }
  std::int64_t elements() const { return nbytes / static_cast<std::int64_t>(dtype_bytes(dtype)); }
  bool same_memory(const Region& o) const {
    return space == o.space && id == o.id && owner == o.owner;
  }

  // f(byte offset from the buffer/argument start, byte count) for the
  // region's bytes in row-major order: once for a contiguous region, else
  // once per row.
  template <class F>
  void for_each_row(F&& f) const;
};

inline Region::Region(Space space_, std::int32_t id_, std::int64_t owner_, std::int64_t base_,
                      DType dtype_, std::span<const std::int64_t> shape_,
                      std::span<const std::int64_t> offsets_, std::span<const std::int64_t> extent_)
    : space(space_),
      id(id_),
      owner(owner_),
      base(base_),
      dtype(dtype_),
      shape(shape_),
      offsets(offsets_),
      extent(extent_) {
  const auto esize = static_cast<std::int64_t>(dtype_bytes(dtype));
  std::int64_t start = 0, last = 0, stride = 1, elements = 1;
  bool inner_whole = true;
  for (std::size_t d = shape.size(); d-- > 0;) {
    start += offsets[d] * stride;
    last += (offsets[d] + extent[d] - 1) * stride;
    contiguous = contiguous && (inner_whole || extent[d] <= 1);
    inner_whole = inner_whole && extent[d] == shape[d];
    elements *= extent[d];
    stride *= shape[d];
  }
  nbytes = elements * esize;
  first = base + start * esize;
  end = elements == 0 ? first : base + (last + 1) * esize;
  contiguous = contiguous || elements == 0;
}

// Walks the rows of a region one at a time (two regions of the same extent
// have the same rows, so two cursors walk a copy in lockstep, whether or not
// either is contiguous).
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

inline Region Region::whole(Space space, std::int32_t id, std::int64_t owner, std::int64_t base,
                            DType dtype, std::span<const std::int64_t> shape,
                            std::int64_t elements) {
  const std::int64_t nbytes = elements * static_cast<std::int64_t>(dtype_bytes(dtype));
  return Region(Contiguous{}, space, id, owner, base, dtype, shape,
                std::span<const std::int64_t>(kZeroOffsets.data(), shape.size()), shape, base,
                nbytes);
}

inline Region Region::flat(Space space, std::int32_t id, std::int64_t owner, std::int64_t base,
                           DType dtype, std::span<const std::int64_t, 1> flat_shape,
                           std::span<const std::int64_t, 1> offset,
                           std::span<const std::int64_t, 1> length) {
  const auto esize = static_cast<std::int64_t>(dtype_bytes(dtype));
  return Region(Contiguous{}, space, id, owner, base, dtype, flat_shape, offset, length,
                base + offset[0] * esize, length[0] * esize);
}

template <class F>
void Region::for_each_row(F&& f) const {
  if (contiguous) {
    if (nbytes > 0) f(first, nbytes);
    return;
  }
  RowCursor rows(*this);
  std::int64_t offset = 0;
  while (rows.next(offset)) f(offset, rows.row_bytes());
}

// Copies region src of the memory at sbase to region dst (same extent) of
// the memory at dbase: one memcpy when both are contiguous, else row by row.
inline void copy_region(std::byte* dbase, const Region& dst, const std::byte* sbase,
                        const Region& src) {
  if (dst.contiguous && src.contiguous) {
    if (src.nbytes > 0)
      std::memcpy(dbase + dst.first, sbase + src.first, static_cast<std::size_t>(src.nbytes));
    return;
  }
  RowCursor drows(dst), srows(src);
  std::int64_t doff = 0, soff = 0;
  while (drows.next(doff) && srows.next(soff))
    std::memcpy(dbase + doff, sbase + soff, static_cast<std::size_t>(drows.row_bytes()));
}

// A signal cell: ordered (std::map) and hashable (CellHash), the one key of
// every table of cells (the race checker's credits, the timeline's cell
// states, the MPI fabric's notify log).
struct Cell {
  std::int64_t owner = -1;   // the rank whose window holds the cell
  std::int32_t buffer = -1;  // window buffer index
  std::int64_t offset = 0;   // bytes from the buffer start
  auto operator<=>(const Cell&) const = default;
};

struct CellHash {
  std::size_t operator()(const Cell& c) const {
    const auto mix = (static_cast<std::uint64_t>(c.owner) << 40) ^
                     (static_cast<std::uint64_t>(c.buffer) << 32) ^
                     static_cast<std::uint64_t>(c.offset);
    return static_cast<std::size_t>(mix * 0x9E3779B97F4A7C15ull >> 17);
  }
};

}  // namespace anyp::runtime
