// diagnostic_text.cpp — formatters for run-time diagnostics.
#include "runtime/diagnostic_text.hpp"

namespace anyp::runtime {

std::string list_text(std::span<const std::int64_t> values) {
  std::string s = "[";
  for (std::size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

std::string rank_ranges_text(std::span<const std::int64_t> ranks, std::size_t max_pieces) {
  std::string s;
  std::size_t pieces = 0;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i + 1;  // ranks[i, j) are consecutive
    while (j < ranks.size() && ranks[j] == ranks[j - 1] + 1) ++j;
    if (j - i == 2) j = i + 1;  // a pair is two single ranks
    if (pieces == max_pieces) {
      s += " and " + std::to_string(ranks.size() - i) + " more";
      break;
    }
    s += (pieces ? ", " : "") + std::to_string(ranks[i]);
    if (j - i > 1) s += "-" + std::to_string(ranks[j - 1]);
    ++pieces;
    i = j;
  }
  return s;
}

std::string rank_set_text(std::span<const std::int64_t> ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + rank_ranges_text(ranks);
}

std::vector<std::int64_t> unflatten(std::int64_t flat, std::span<const std::int64_t> shape) {
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] <= 0) continue;
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

}  // namespace anyp::runtime
