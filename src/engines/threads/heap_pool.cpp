// heap_pool.cpp — the process-wide pool of zeroed blocks (see heap_pool.hpp).
#include "engines/threads/heap_pool.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>
#include <tuple>
#include <utility>
#include <vector>

namespace anyp::threads {
namespace {

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
    const std::size_t capacity = std::max<std::size_t>(bytes, 64);
    auto* data = static_cast<std::byte*>(std::calloc(capacity, 1));
    if (data == nullptr) throw std::bad_alloc();
    return {data, capacity};
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
    std::free(data);
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
