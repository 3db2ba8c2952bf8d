// diagnostic_text.hpp — small formatters shared by run-time diagnostics
// (deadlock and race reports, run errors): lists, rank sets, rank ranges,
// element indices.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace anyp::runtime {

// "[1, 2, 3]"
std::string list_text(std::span<const std::int64_t> values);
// Sorted, distinct ranks as ranges: "0-3, 5, 7-9". A run of three or more
// consecutive ranks is one range; a run of two is "4, 5". After `max_pieces`
// pieces (a range or a single rank) the rest is cut: "0, 2, 4 and 97 more".
std::string rank_ranges_text(std::span<const std::int64_t> ranks, std::size_t max_pieces = 16);
// "rank 3", "ranks 0-3, 5" (rank_ranges_text with the word in front).
std::string rank_set_text(std::span<const std::int64_t> ranks);
// The row-major coordinates of flat element `flat` of `shape`: "[1, 0, 5]".
std::vector<std::int64_t> unflatten(std::int64_t flat, std::span<const std::int64_t> shape);

}  // namespace anyp::runtime
