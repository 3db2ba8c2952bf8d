// device_list.cpp — parsing and checking the example command line's -d
// device lists (device_list.hpp).
#include "cli/device_list.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <string_view>
#include <system_error>

#include "anyp/example_cli.hpp"

namespace anyp::cli {
namespace {

std::string trim(std::string_view s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  const auto end = s.find_last_not_of(" \t");
  return std::string(s.substr(begin, end - begin + 1));
}

// One -d item: an optional '-' and decimal digits that fit in int64.
std::int64_t parse_device_id(const std::string& item) {
  std::int64_t id = 0;
  const char* first = item.data();
  const char* last = item.data() + item.size();
  const bool negative = !item.empty() && item.front() == '-';
  const bool digits_only =
      item.size() > (negative ? 1u : 0u) &&
      std::all_of(first + (negative ? 1 : 0), last, [](char c) { return c >= '0' && c <= '9'; });
  const auto [ptr, ec] = std::from_chars(first, last, id);
  if (!digits_only || ec != std::errc{} || ptr != last) {
    throw UsageError{"-d/--device: '" + item + "' is not a device id (a non-negative integer)"};
  }
  if (id < 0) {
    throw UsageError{"-d/--device: device id " + std::to_string(id) + " is negative"};
  }
  return id;
}

// Devices a -d list may name: a range like 0-99999999999 is refused before
// it allocates (P beyond this is far past what one machine can run anyway).
constexpr std::int64_t kMaxDeviceCount = std::int64_t{1} << 24;

// One -d item: an id, or an inclusive range "first-last" of ids (a leading
// '-' is a negative id, refused by parse_device_id).
void append_device_item(const std::string& item, std::vector<std::int64_t>& ids) {
  const auto dash = item.find('-', 1);
  if (dash == std::string::npos || item.front() == '-') {
    ids.push_back(parse_device_id(item));
  } else {
    const std::int64_t first = parse_device_id(trim(std::string_view(item).substr(0, dash)));
    const std::int64_t last = parse_device_id(trim(std::string_view(item).substr(dash + 1)));
    if (last < first) {
      throw UsageError{"-d/--device: range '" + item + "' is empty (" + std::to_string(first) +
                       " is above " + std::to_string(last) + ")"};
    }
    if (last - first >= kMaxDeviceCount - static_cast<std::int64_t>(ids.size())) {
      throw UsageError{"-d/--device: range '" + item + "' makes more than " +
                       std::to_string(kMaxDeviceCount) + " devices"};
    }
    for (std::int64_t id = first; id <= last; ++id) ids.push_back(id);
  }
  if (static_cast<std::int64_t>(ids.size()) > kMaxDeviceCount) {
    throw UsageError{"-d/--device: more than " + std::to_string(kMaxDeviceCount) + " devices"};
  }
}

}  // namespace

std::string device_ids_text(const std::vector<std::int64_t>& ids, const char* separator) {
  std::string s;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i != 0) s += separator;
    s += std::to_string(ids[i]);
  }
  return s;
}

std::vector<std::int64_t> parse_device_list(const std::string& text) {
  if (trim(text).empty()) throw UsageError{"-d/--device: empty device list"};
  std::vector<std::int64_t> ids;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const auto end = comma == std::string::npos ? text.size() : comma;
    append_device_item(trim(std::string_view(text).substr(start, end - start)), ids);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return ids;
}

void check_device_ids(const std::vector<std::int64_t>& ids) {
  std::set<std::int64_t> seen;
  for (std::int64_t id : ids) {
    if (!seen.insert(id).second) {
      throw UsageError{"-d/--device: device " + std::to_string(id) + " is listed twice"};
    }
  }
  if (ids.size() < 2) {
    throw UsageError{"need at least 2 devices, got [" + device_ids_text(ids) + "]"};
  }
}

std::vector<std::int64_t> world_device_list(const std::string& text, int world_size) {
  const std::string run = "mpirun -n " + std::to_string(world_size);
  if (text.empty()) {
    std::vector<std::int64_t> ids;
    for (int r = 0; r < world_size; ++r) ids.push_back(r);
    return ids;
  }
  std::vector<std::int64_t> ids = parse_device_list(text);
  if (static_cast<int>(ids.size()) != world_size) {
    throw UsageError{"-d/--device: " + std::to_string(ids.size()) +
                     " devices given, but the MPI world has " + std::to_string(world_size) +
                     " processes (" + run + "); give " + std::to_string(world_size) +
                     " devices, or none"};
  }
  return ids;
}

}  // namespace anyp::cli
