// tile_valid.hpp — a partial tile's valid region, carried from its load to
// its store (PyPTO's tiles carry a valid_shape: a store writes only the
// valid part). A tile loaded with a valid_shape (pl.load, remote_load), and
// a tile computed from one elementwise (the tile ops that keep the shape:
// binary, unary, cast, compare, select, expand), has that valid region; a
// store or remote store of such a tile that gives no valid_shape of its own
// writes only that region. Only variables defined once (and every variable
// they come from) carry it, so the region never depends on which branch or
// iteration ran. Runs when a function is traced, before the verifier;
// it sets Op::valid on those stores, so the printed IR shows what moves.
#pragma once

#include "ir/function.hpp"

namespace anyp::ir {

void infer_store_valid(Function& fn);

}  // namespace anyp::ir
