// cli_lists.hpp — the comma-separated lists the benchmarks' command lines
// take (--ps 2,4,8, --sizes ..., --modes ...), parsed once for all of them.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace anyp_bench {

// The items of "a,b,c".
inline std::vector<std::string> comma_items(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  return out;
}

// "2,4,8" as integers; CLI::ValidationError naming `flag` for an item that
// is not a positive integer, or an empty list.
inline std::vector<std::int64_t> positive_integers(const std::string& text,
                                                   const std::string& flag) {
  std::vector<std::int64_t> out;
  for (const std::string& item : comma_items(text)) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || v < 1)
      throw CLI::ValidationError(flag, "'" + item + "' is not a positive integer");
    out.push_back(v);
  }
  if (out.empty()) throw CLI::ValidationError(flag, "empty list");
  return out;
}

}  // namespace anyp_bench
