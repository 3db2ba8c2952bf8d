// check_tile_ops.hpp — the extent checks of tile compute ops, run by
// check_functions once dims are bound (the trace checked kinds, dtypes and
// ranks): elementwise operands agree, matmul's inner dims and accumulator
// or bias shapes, reduction scratch tiles, broadcast vectors, slices in
// bounds, concat rows, and the tile row rule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/function.hpp"

namespace anyp::compiler {

using Shape = std::vector<std::int64_t>;

// "[4, 64]".
std::string shape_text(const Shape& shape);

// "" when `op` (a tile op of `fn`) is consistent; else what is wrong, without
// the "function ..., op ..." prefix. `shapes` holds every bound variable
// shape of fn (by VarId; the result's included).
std::string tile_op_error(const ir::Function& fn, const ir::Op& op,
                          const std::vector<Shape>& shapes, const ir::DimBindings& bindings);

// How an op uses a tile, for the row rule.
enum class TileUse {
  Loaded,    // read from memory (load, remote_load)
  Stored,    // written to memory (store, remote_store)
  Computed,  // the result of a tile op
};

// The tile row rule of the simulated device: "" when a tile of `shape` and
// `dtype` has rows of whole 32-byte units, else the message with the fix
// for its use. A computed tile of one column ([.., M, 1]: a column vector,
// laid out down its column as PyPTO's row reductions make it) needs its
// column to be whole units instead; memory takes whole rows only.
std::string tile_row_error(const Shape& shape, DType dtype, TileUse use);

}  // namespace anyp::compiler
