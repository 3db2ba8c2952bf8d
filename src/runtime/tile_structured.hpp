// tile_structured.hpp — tile ops that look at rows and columns: reductions,
// row/column broadcasts, comparisons and select, transpose, slice, concat
// and arange. Tiles are row-major bytes of one dtype; a [.., M, N] tile is
// B = (product of the leading dims) matrices of M rows and N columns.
//
// Rules: sums run in K order (left to right, or top to bottom) in float for
// floating tiles (FP16/BF16 round once at the end) and wrap for integers;
// max/min reductions propagate NaN. A comparison with NaN is false (NE:
// true). The fused broadcasts compute as tile_math's elementwise ops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "anyp/dtype.hpp"
#include "ir/op_attrs.hpp"

namespace anyp::runtime {

// [B, M, N] as the VM sees a tile of rank >= 2 (a 1-D tile is [1, 1, N]).
struct Matrices {
  std::int64_t batch = 1, rows = 1, cols = 1;
  static Matrices of(std::span<const std::int64_t> shape);
};

// out = the row (along_rows: [B, M, 1]) or column ([B, 1, N]) reductions.
void tile_reduce(ir::ReduceKind kind, bool along_rows, DType dtype, Matrices in, const std::byte* a,
                 std::byte* out);

// out [B, M, N] = t <kind> vec, vec [B, M, 1] (row) or [B, 1, N] (column)
// broadcast; Broadcast copies vec (t unused). For an integer Div,
// invalid_operand (tile_math.hpp) on vec first: a zero divisor is an error.
void tile_expand(ir::ExpandKind kind, bool row, DType dtype, Matrices m, const std::byte* t,
                 const std::byte* vec, std::byte* out);

// mask[i] = a[i] <kind> b[i or 0] ? 1 : 0, in mask_dtype.
void tile_compare(ir::CmpKind kind, DType dtype, const std::byte* a, const std::byte* b,
                  bool b_is_scalar, DType mask_dtype, std::byte* mask, std::size_t n);

// out[i] = mask[i] != 0 ? a[i] : b[i].
void tile_select(DType mask_dtype, const std::byte* mask, std::size_t width, const std::byte* a,
                 const std::byte* b, std::byte* out, std::size_t n);

// out = in with dims axis1 < axis2 swapped (out is disjoint from in).
void tile_transpose(std::span<const std::int64_t> shape, std::size_t width, int axis1, int axis2,
                    const std::byte* in, std::byte* out);

// out = the region [offsets, offsets + part) of in (shape `shape`); in bounds.
void tile_slice(std::span<const std::int64_t> shape, std::size_t width,
                std::span<const std::int64_t> offsets, std::span<const std::int64_t> part,
                const std::byte* in, std::byte* out);

// out (shape `shape`, zero-filled) gets the contiguous block in (shape
// `part`) in its top-left corner: the inverse of tile_slice at offsets 0
// (a partial tile's load).
void tile_embed(std::span<const std::int64_t> shape, std::size_t width,
                std::span<const std::int64_t> part, const std::byte* in, std::byte* out);

// out [M, Na + Nb] = rows of a [M, Na], each followed by the row of b [M, Nb].
void tile_concat(std::int64_t rows, std::int64_t a_cols, std::int64_t b_cols, std::size_t width,
                 const std::byte* a, const std::byte* b, std::byte* out);

// out[i] = start + i (start - i when descending) for n elements of dtype;
// nullopt, or the first i whose value an integer dtype cannot hold or a
// floating one cannot hold exactly.
std::optional<std::int64_t> tile_arange(DType dtype, std::int64_t start, bool descending,
                                        std::byte* out, std::int64_t n);

}  // namespace anyp::runtime
