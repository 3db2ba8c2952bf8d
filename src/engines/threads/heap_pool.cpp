// heap_pool.cpp — the process-wide pool of zeroed blocks (see heap_pool.hpp).
#include "engines/threads/heap_pool.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>
#include <tuple>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace anyp::threads {
namespace {

// Blocks from this size up are mapped with transparent huge pages where the
// system has them (Linux, madvise mode): a run that touches a large heap
// (P = 256's ring signals are 134 MB) takes one page fault per 2 MiB
// instead of one per 4 KiB, which dominated such a program's first run.
constexpr std::size_t kHugeFrom = std::size_t{4} << 20, kHugePage = std::size_t{2} << 20;

std::size_t rounded_capacity(std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 64);
  return bytes >= kHugeFrom ? (bytes + kHugePage - 1) / kHugePage * kHugePage : bytes;
}

std::byte* allocate_zeroed(std::size_t capacity) {
#if defined(__linux__)
  if (capacity >= kHugeFrom) {
    void* p = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    madvise(p, capacity, MADV_HUGEPAGE);  // advice only: without it, 4 KiB pages
    return static_cast<std::byte*>(p);
  }
#endif
  auto* data = static_cast<std::byte*>(std::calloc(capacity, 1));
  if (data == nullptr) throw std::bad_alloc();
  return data;
}

void release(std::byte* data, std::size_t capacity) {
#if defined(__linux__)
  if (capacity >= kHugeFrom) {
    munmap(data, capacity);
    return;
  }
#endif
  std::free(data);
}

class BlockPool {
 public:
  static BlockPool& instance() {
    // Never destroyed: a run may end during static destruction.
    static BlockPool* pool = new BlockPool;
    return *pool;
  }

  // The smallest cached block of at least `bytes`, or a new zeroed one.
  std::pair<std::byte*, std::size_t> take(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto best = free_.end();
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->first >= bytes && (best == free_.end() || it->first < best->first)) best = it;
      if (best != free_.end()) {
        const auto block = std::make_pair(best->second, best->first);
        cached_ -= best->first;
        free_.erase(best);
        return block;
      }
    }
    const std::size_t capacity = rounded_capacity(bytes);
    return {allocate_zeroed(capacity), capacity};
  }

  void give_back(std::byte* data, std::size_t capacity) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cached_ + capacity <= PooledBlock::kMaxCachedBytes) {
        free_.emplace_back(capacity, data);
        cached_ += capacity;
        return;
      }
    }
    release(data, capacity);
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<std::size_t, std::byte*>> free_;  // (capacity, block)
  std::size_t cached_ = 0;
};

}  // namespace

PooledBlock::PooledBlock(std::size_t bytes) {
  std::tie(data_, capacity_) = BlockPool::instance().take(bytes);
}

PooledBlock::~PooledBlock() { BlockPool::instance().give_back(data_, capacity_); }

}  // namespace anyp::threads
