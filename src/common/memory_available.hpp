// memory_available.hpp — how many bytes this process may still allocate:
// the smaller of the machine's available memory (MemAvailable in
// /proc/meminfo) and what the address-space limit (ulimit -v, "Max address
// space" in /proc/self/limits) leaves above the process's current size
// (VmSize in /proc/self/status). Read with the standard library only; on a
// system without these files the answer is unknown (nullopt).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace anyp {

struct MemoryAvailable {
  std::int64_t bytes = 0;
  std::string source;  // "available memory (MemAvailable)", or "the address-space limit ..."
};

std::optional<MemoryAvailable> memory_available();

// "1.5 GiB", "12.0 MiB", "640 B": bytes for people (binary units).
std::string bytes_text(double bytes);

}  // namespace anyp
