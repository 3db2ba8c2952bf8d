// heap_pool.hpp — zeroed memory for the threads engine's heap, kept across
// runs. A run takes a block (calloc'd the first time: the kernel hands out
// zero pages, so bytes never touched cost nothing), writes into it, zeroes
// again exactly the bytes it wrote, and gives it back; the next run of a
// program with windows of that size pays no allocation and no page faults.
// Blocks are kept up to kMaxCachedBytes in all; beyond that they are freed.
#pragma once

#include <cstddef>

namespace anyp::threads {

class PooledBlock {
 public:
  static constexpr std::size_t kMaxCachedBytes = std::size_t{1} << 30;

  // A block of at least `bytes`, every byte zero. Throws std::bad_alloc.
  explicit PooledBlock(std::size_t bytes);
  // Returns the block to the pool: the owner must have zeroed every byte it
  // wrote.
  ~PooledBlock();
  PooledBlock(const PooledBlock&) = delete;
  PooledBlock& operator=(const PooledBlock&) = delete;

  std::byte* data() const { return data_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace anyp::threads
