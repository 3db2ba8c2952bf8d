// tile_valid.hpp — a partial tile's valid region, carried from its load to
// its store (PyPTO's tiles carry a valid_shape: a store writes only the
// valid part). A tile loaded with a valid_shape (pl.load, remote_load), and
// a tile computed from one elementwise (the tile ops that keep the shape:
// binary, unary, cast, compare, select, expand), has that valid region; a
// store or remote store of such a tile that gives no valid_shape of its own
// writes only that region. A tile variable carries it while its value
// comes from such a load along straight-line code; after a branch or loop
// that redefines it (or at the top of a loop body that does) it does not,
// so the region never depends on which branch or iteration ran. A run-time
// extent is the value the load read: a variable assigned more than once is
// first copied into one of its own. Runs when a function is traced, before the verifier;
// it sets Op::valid on those stores, so the printed IR shows what moves.
#pragma once

#include "ir/function.hpp"

namespace anyp::ir {

void infer_store_valid(Function& fn);

}  // namespace anyp::ir
