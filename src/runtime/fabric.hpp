// fabric.hpp — the simulated interconnect's memory: one symmetric window per
// rank (same layout everywhere, zeroed per run) and the locks that make
// atomic RMA (AtomicType::Add) atomic. Signals are INT32 cells inside the
// windows; their notify/wait protocol lives in the Scheduler, which owns the
// lock that orders every notify before the waits it satisfies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace anyp::runtime {

class Fabric {
 public:
  Fabric(std::int64_t world_size, std::int64_t window_bytes);

  std::int64_t world_size() const { return world_size_; }
  std::int64_t window_bytes() const { return window_bytes_; }
  std::byte* window(std::int64_t rank) const { return heap_.get() + rank * window_bytes_; }
  // Serialises atomic accumulation into `rank`'s window.
  std::mutex& atomic_lock(std::int64_t rank) {
    return atomic_locks_[static_cast<std::size_t>(rank) % atomic_locks_.size()];
  }

 private:
  std::int64_t world_size_;
  std::int64_t window_bytes_;
  std::unique_ptr<std::byte[]> heap_;
  std::vector<std::mutex> atomic_locks_;
};

}  // namespace anyp::runtime
