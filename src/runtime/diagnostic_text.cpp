// diagnostic_text.cpp — formatters for run-time diagnostics.
#include "runtime/diagnostic_text.hpp"

namespace anyp::runtime {

std::string list_text(std::span<const std::int64_t> values) {
  std::string s = "[";
  for (std::size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

std::string ranks_text(const std::vector<std::int64_t>& ranks) {
  constexpr std::size_t kShown = 8;
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size() && i < kShown; ++i)
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > kShown) s += " and " + std::to_string(ranks.size() - kShown) + " more";
  return s;
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
