// source_locations.cpp — diagnostics without their source locations
// (source_locations.hpp).
#include "support/source_locations.hpp"

#include <regex>

namespace anyp_test {

std::string without_locations(std::string_view text) {
  static const std::regex location(R"( at [A-Za-z0-9_.+-]+\.(cpp|py):[0-9]+)");
  return std::regex_replace(std::string(text), location, "");
}

}  // namespace anyp_test
