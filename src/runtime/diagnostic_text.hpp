// diagnostic_text.hpp — small formatters shared by run-time diagnostics
// (deadlock and race reports, run errors): lists, rank sets, element indices.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace anyp::runtime {

// "[1, 2, 3]"
std::string list_text(std::span<const std::int64_t> values);
// "rank 3", "ranks 0, 1, 2", "ranks 0, 1, 2, 3, 4, 5, 6, 7 and 9 more"
std::string ranks_text(const std::vector<std::int64_t>& ranks);
// The row-major coordinates of flat element `flat` of `shape`: "[1, 0, 5]".
std::vector<std::int64_t> unflatten(std::int64_t flat, std::span<const std::int64_t> shape);

}  // namespace anyp::runtime
