// tile_op_runner.hpp — runs one tile op on every rank of a real program, for
// the op reference tests: each input is a host tensor [P, 1, n] (rank r's row
// flat), loaded as a [1, n] tile and reshaped to its tile shape; the op's
// result is reshaped to [1, m] and stored into y [P, 1, m]. The references the
// tests compare against are written in the tests, never taken from anyp.
#pragma once

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace anyp_test {

struct TileInput {
  anyp::HostTensor data;            // [P, 1, n]
  std::vector<std::int64_t> shape;  // the tile's shape (n elements)
};

using TileOpBody = std::function<pl::Tile(const std::vector<pl::Tile>& inputs)>;

// The result [P, 1, m] (m = elements of the op's result, of out_dtype).
anyp::HostTensor run_tile_op(const std::vector<TileInput>& inputs, std::int64_t out_elements,
                             pl::DType out_dtype, const TileOpBody& body);

// The run error (anyp::Error text) of run_tile_op, or "no error". It runs on
// one worker, so the lowest failing rank reports.
std::string tile_op_error(const std::vector<TileInput>& inputs, std::int64_t out_elements,
                          pl::DType out_dtype, const TileOpBody& body);

// A [P, 1, n] tensor of dtype with values from `value(rank, i)` (set() rounds
// and wraps: callers pass values the dtype holds).
anyp::HostTensor make_input(std::int64_t P, std::int64_t n, pl::DType dtype,
                            const std::function<double(std::int64_t, std::int64_t)>& value);

}  // namespace anyp_test
