// fabric.cpp — symmetric window memory.
#include "runtime/fabric.hpp"

#include <algorithm>

namespace anyp::runtime {

Fabric::Fabric(std::int64_t world_size, std::int64_t window_bytes)
    : world_size_(world_size),
      window_bytes_(window_bytes),
      heap_(new std::byte[static_cast<std::size_t>(
          std::max<std::int64_t>(1, world_size * window_bytes))]()),
      atomic_locks_(static_cast<std::size_t>(std::clamp<std::int64_t>(world_size, 1, 64))) {}

}  // namespace anyp::runtime
