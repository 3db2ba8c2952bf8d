// memory_available.cpp — MemAvailable, the address-space limit and VmSize,
// read from /proc (see memory_available.hpp).
#include "common/memory_available.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace anyp {
namespace {

// The number after `key` on the first line of `path` that starts with it.
std::optional<std::int64_t> field(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    std::istringstream rest(line.substr(key.size()));
    std::string value;
    rest >> value;
    if (value == "unlimited") return std::nullopt;
    try {
      return std::stoll(value);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<MemoryAvailable> memory_available() {
  std::optional<MemoryAvailable> best;
  if (const auto kb = field("/proc/meminfo", "MemAvailable:"))
    best = MemoryAvailable{*kb * 1024, "available memory (MemAvailable in /proc/meminfo)"};
  const auto limit = field("/proc/self/limits", "Max address space");
  const auto size_kb = field("/proc/self/status", "VmSize:");
  if (limit && size_kb) {
    const std::int64_t left = *limit - *size_kb * 1024;
    if (!best || left < best->bytes) {
      best =
          MemoryAvailable{left < 0 ? 0 : left,
                          "the address-space limit (ulimit -v: " + bytes_text(*limit) +
                              ") less the process's size (" + bytes_text(*size_kb * 1024.0) + ")"};
    }
  }
  return best;
}

std::string bytes_text(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 6) {
    bytes /= 1024;
    ++unit;
  }
  char buf[32];
  if (unit == 0) {
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", bytes, kUnits[unit]);
  }
  return buf;
}

}  // namespace anyp
