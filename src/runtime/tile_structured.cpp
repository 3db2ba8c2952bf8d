// tile_structured.cpp — reductions, broadcasts, compare/select and layout
// ops on tiles (see tile_structured.hpp).
#include "runtime/tile_structured.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "common/dtype_traits.hpp"
#include "common/element_codec.hpp"
#include "common/internal_check.hpp"
#include "runtime/tile_math.hpp"

namespace anyp::runtime {
namespace {

using dtype_traits::load_as;
using dtype_traits::store_as;

// The running value of a reduction, in the dtype's Math type (float for
// FP16/BF16): sums wrap for integers; max/min keep a NaN once seen.
template <class T, ir::ReduceKind kind>
typename T::Math combine(typename T::Math acc, typename T::Math x) {
  using M = typename T::Math;
  if constexpr (kind == ir::ReduceKind::Sum) {
    if constexpr (T::is_float) {
      return acc + x;
    } else {
      using U = std::conditional_t<(sizeof(M) >= 4), std::make_unsigned_t<M>, std::uint32_t>;
      return static_cast<M>(static_cast<U>(acc) + static_cast<U>(x));
    }
  }
  const bool take = kind == ir::ReduceKind::Max ? x > acc : x < acc;  // Max or Min
  if constexpr (T::is_float) return take || x != x ? x : acc;
  return take ? x : acc;
}

template <class T, ir::ReduceKind kind>
void reduce(bool along_rows, Matrices m, const std::byte* a, std::byte* out) {
  using S = typename T::Storage;
  using M = typename T::Math;
  constexpr std::size_t z = sizeof(S);
  const auto at = [&](std::int64_t b, std::int64_t i, std::int64_t j) {
    return T::to_math(load_as<S>(a + static_cast<std::size_t>((b * m.rows + i) * m.cols + j) * z));
  };
  std::vector<M> acc;
  for (std::int64_t b = 0; b < m.batch; ++b) {
    if (along_rows) {
      // Eight rows at a time, each still summed left to right: the eight
      // running values sit side by side, so the loop over a column runs
      // eight lanes wide instead of one latency-bound chain per row.
      constexpr std::int64_t kRows = 8;
      for (std::int64_t i0 = 0; i0 < m.rows; i0 += kRows) {
        const std::int64_t h = std::min(kRows, m.rows - i0);
        M v[kRows] = {};
        for (std::int64_t r = 0; r < h; ++r) v[r] = at(b, i0 + r, 0);
        if (h == kRows) {
          for (std::int64_t j = 1; j < m.cols; ++j)
            for (std::int64_t r = 0; r < kRows; ++r)
              v[r] = combine<T, kind>(v[r], at(b, i0 + r, j));
        } else {
          for (std::int64_t j = 1; j < m.cols; ++j)
            for (std::int64_t r = 0; r < h; ++r) v[r] = combine<T, kind>(v[r], at(b, i0 + r, j));
        }
        for (std::int64_t r = 0; r < h; ++r)
          store_as<S>(out + static_cast<std::size_t>(b * m.rows + i0 + r) * z, T::from_math(v[r]));
      }
    } else {
      // Column by column, top to bottom, the row loop outside (contiguous).
      acc.resize(static_cast<std::size_t>(m.cols));
      for (std::int64_t j = 0; j < m.cols; ++j) acc[static_cast<std::size_t>(j)] = at(b, 0, j);
      for (std::int64_t i = 1; i < m.rows; ++i)
        for (std::int64_t j = 0; j < m.cols; ++j)
          acc[static_cast<std::size_t>(j)] =
              combine<T, kind>(acc[static_cast<std::size_t>(j)], at(b, i, j));
      for (std::int64_t j = 0; j < m.cols; ++j)
        store_as<S>(out + static_cast<std::size_t>(b * m.cols + j) * z,
                    T::from_math(acc[static_cast<std::size_t>(j)]));
    }
  }
}

template <class T>
bool compare(ir::CmpKind kind, typename T::Math x, typename T::Math y) {
  switch (kind) {
    case ir::CmpKind::Eq:
      return x == y;
    case ir::CmpKind::Ne:
      return x != y;
    case ir::CmpKind::Lt:
      return x < y;
    case ir::CmpKind::Le:
      return x <= y;
    case ir::CmpKind::Gt:
      return x > y;
    case ir::CmpKind::Ge:
      return x >= y;
  }
  return false;
}

}  // namespace

Matrices Matrices::of(std::span<const std::int64_t> shape) {
  Matrices m;
  const std::size_t r = shape.size();
  m.cols = r >= 1 ? shape[r - 1] : 1;
  m.rows = r >= 2 ? shape[r - 2] : 1;
  for (std::size_t d = 0; d + 2 < r; ++d) m.batch *= shape[d];
  return m;
}

void tile_reduce(ir::ReduceKind kind, bool along_rows, DType dtype, Matrices in, const std::byte* a,
                 std::byte* out) {
  dtype_traits::visit_dtype(dtype, [&]<class T>(T) {
    switch (kind) {
      case ir::ReduceKind::Sum:
        return reduce<T, ir::ReduceKind::Sum>(along_rows, in, a, out);
      case ir::ReduceKind::Max:
        return reduce<T, ir::ReduceKind::Max>(along_rows, in, a, out);
      case ir::ReduceKind::Min:
        return reduce<T, ir::ReduceKind::Min>(along_rows, in, a, out);
      case ir::ReduceKind::Prod:
        break;
    }
    ANYP_UNREACHABLE("a tile reduction of kind Prod");
  });
}

void tile_expand(ir::ExpandKind kind, bool row, DType dtype, Matrices m, const std::byte* t,
                 const std::byte* vec, std::byte* out) {
  const std::size_t z = dtype_bytes(dtype);
  const std::size_t n = static_cast<std::size_t>(m.cols);
  for (std::int64_t b = 0; b < m.batch; ++b) {
    for (std::int64_t i = 0; i < m.rows; ++i) {
      const std::size_t r = static_cast<std::size_t>(b * m.rows + i);
      const std::byte* v = row ? vec + r * z : vec + static_cast<std::size_t>(b * m.cols) * z;
      std::byte* o = out + r * n * z;
      if (kind == ir::ExpandKind::Broadcast) {
        if (row) {
          for (std::size_t j = 0; j < n; ++j) std::memcpy(o + j * z, v, z);
        } else {
          std::memcpy(o, v, n * z);
        }
      } else {
        tile_elementwise(ir::expand_binary_op(kind), dtype, t + r * n * z, v, row, o, n);
      }
    }
  }
}

void tile_compare(ir::CmpKind kind, DType dtype, const std::byte* a, const std::byte* b,
                  bool b_is_scalar, DType mask_dtype, std::byte* mask, std::size_t n) {
  const std::size_t mz = dtype_bytes(mask_dtype);
  dtype_traits::visit_dtype(dtype, [&]<class T>(T) {
    using S = typename T::Storage;
    constexpr std::size_t z = sizeof(S);
    const auto y0 = T::to_math(load_as<S>(b));
    for (std::size_t i = 0; i < n; ++i) {
      const auto x = T::to_math(load_as<S>(a + i * z));
      const auto y = b_is_scalar ? y0 : T::to_math(load_as<S>(b + i * z));
      encode_integer(mask + i * mz, mask_dtype, compare<T>(kind, x, y) ? 1 : 0);
    }
  });
}

void tile_select(DType mask_dtype, const std::byte* mask, std::size_t width, const std::byte* a,
                 const std::byte* b, std::byte* out, std::size_t n) {
  const std::size_t mz = dtype_bytes(mask_dtype);
  for (std::size_t i = 0; i < n; ++i) {
    const bool pick_a = decode_integer(mask + i * mz, mask_dtype) != 0;
    std::memcpy(out + i * width, (pick_a ? a : b) + i * width, width);
  }
}

void tile_transpose(std::span<const std::int64_t> shape, std::size_t width, int axis1, int axis2,
                    const std::byte* in, std::byte* out) {
  const std::size_t r = shape.size();
  // Strides of `out` (the swapped shape), then permuted to in's dim order:
  // in's dim axis1 steps out's dim axis1 (which has in's axis2 extent).
  std::vector<std::int64_t> out_shape(shape.begin(), shape.end());
  std::swap(out_shape[static_cast<std::size_t>(axis1)], out_shape[static_cast<std::size_t>(axis2)]);
  std::vector<std::int64_t> out_stride(r, 1);
  for (std::size_t d = r - 1; d-- > 0;) out_stride[d] = out_stride[d + 1] * out_shape[d + 1];
  std::swap(out_stride[static_cast<std::size_t>(axis1)],
            out_stride[static_cast<std::size_t>(axis2)]);
  std::vector<std::int64_t> idx(r, 0);
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t o = 0;
    for (std::size_t d = 0; d < r; ++d) o += idx[d] * out_stride[d];
    std::memcpy(out + static_cast<std::size_t>(o) * width, in + static_cast<std::size_t>(k) * width,
                width);
    for (std::size_t d = r; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

namespace {

// For each row of the block `part` placed at `offsets` in a tile of
// `shape` (row-major): f(k, e), k the row's index in the contiguous block,
// e the element index of its first element in the tile.
template <class F>
void for_each_block_row(std::span<const std::int64_t> shape, std::span<const std::int64_t> offsets,
                        std::span<const std::int64_t> part, F f) {
  const std::size_t r = shape.size();
  std::vector<std::int64_t> stride(r, 1);
  for (std::size_t d = r - 1; d-- > 0;) stride[d] = stride[d + 1] * shape[d + 1];
  std::int64_t rows = 1;
  for (std::size_t d = 0; d + 1 < r; ++d) rows *= part[d];
  std::vector<std::int64_t> idx(r, 0);  // over part's leading dims
  for (std::int64_t k = 0; k < rows; ++k) {
    std::int64_t e = offsets.empty() ? 0 : offsets[r - 1];
    for (std::size_t d = 0; d + 1 < r; ++d)
      e += ((offsets.empty() ? 0 : offsets[d]) + idx[d]) * stride[d];
    f(static_cast<std::size_t>(k), static_cast<std::size_t>(e));
    for (std::size_t d = r - 1; d-- > 0;) {
      if (++idx[d] < part[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

void tile_slice(std::span<const std::int64_t> shape, std::size_t width,
                std::span<const std::int64_t> offsets, std::span<const std::int64_t> part,
                const std::byte* in, std::byte* out) {
  const std::size_t row_bytes = static_cast<std::size_t>(part.back()) * width;
  for_each_block_row(shape, offsets, part, [&](std::size_t k, std::size_t e) {
    std::memcpy(out + k * row_bytes, in + e * width, row_bytes);
  });
}

void tile_embed(std::span<const std::int64_t> shape, std::size_t width,
                std::span<const std::int64_t> part, const std::byte* in, std::byte* out) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  std::memset(out, 0, static_cast<std::size_t>(n) * width);
  const std::size_t row_bytes = static_cast<std::size_t>(part.back()) * width;
  for_each_block_row(shape, {}, part, [&](std::size_t k, std::size_t e) {
    std::memcpy(out + e * width, in + k * row_bytes, row_bytes);
  });
}

void tile_concat(std::int64_t rows, std::int64_t a_cols, std::int64_t b_cols, std::size_t width,
                 const std::byte* a, const std::byte* b, std::byte* out) {
  const std::size_t ab = static_cast<std::size_t>(a_cols) * width;
  const std::size_t bb = static_cast<std::size_t>(b_cols) * width;
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::size_t r = static_cast<std::size_t>(i);
    std::memcpy(out + r * (ab + bb), a + r * ab, ab);
    std::memcpy(out + r * (ab + bb) + ab, b + r * bb, bb);
  }
}

std::optional<std::int64_t> tile_arange(DType dtype, std::int64_t start, bool descending,
                                        std::byte* out, std::int64_t n) {
  const std::size_t z = dtype_bytes(dtype);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t v = 0;
    if (descending ? __builtin_sub_overflow(start, i, &v) : __builtin_add_overflow(start, i, &v))
      return i;
    std::byte* p = out + static_cast<std::size_t>(i) * z;
    encode_integer(p, dtype, v);
    // Integers must fit; floats must hold the value exactly (FP16 rounds
    // 2049 to 2048: a ramp with a repeated value is refused).
    if (dtype_is_float(dtype) ? decode_element(p, dtype) != static_cast<double>(v)
                              : decode_integer(p, dtype) != v)
      return i;
  }
  return std::nullopt;
}

}  // namespace anyp::runtime
