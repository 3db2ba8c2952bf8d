// shadow_memory.hpp — the race checker's record of past accesses, FastTrack
// style (Flanagan & Freund, PLDI 2009): per granule of memory (the smallest
// element size any view of the buffer uses, so ranks that split rows
// unevenly never share a granule), the last write, the last reads and the
// last atomic adds, each as an epoch plus the op (global site id) that made
// it. Reads and atomic adds keep one epoch while they are ordered; when two
// are concurrent the slot becomes an index into a set of (rank, clock, site)
// entries, which shrinks back to an epoch once a later access is ordered
// after all of them. 36 bytes per granule, allocated on first access.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/race/vector_clock.hpp"

namespace anyp::runtime::race {

inline constexpr std::uint32_t kSharedSet = 0xFFFFFFFFu;  // Epoch::rank_plus1 of a set

struct Stamp {
  Epoch epoch;  // epoch.rank_plus1 == kSharedSet: epoch.clock indexes a ConcurrentSet
  std::uint32_t site = 0;
  bool none() const { return epoch.none(); }
  bool is_set() const { return epoch.rank_plus1 == kSharedSet; }
};

struct ShadowWord {
  Stamp write;
  Stamp read;
  Stamp atomic;
};

struct SetEntry {
  std::uint32_t rank = 0;
  std::uint32_t clock = 0;
  std::uint32_t site = 0;
};
using ConcurrentSet = std::vector<SetEntry>;

// The shadow of one memory: a window buffer on one rank, or a host argument.
struct Shadow {
  std::int64_t granule = 1;  // bytes per word
  std::vector<ShadowWord> words;
};

// Concurrent read / atomic sets, by index, with reuse of freed slots.
class SetPool {
 public:
  std::uint32_t make(ConcurrentSet set) {
    if (!free_.empty()) {
      const std::uint32_t i = free_.back();
      free_.pop_back();
      sets_[i] = std::move(set);
      return i;
    }
    sets_.push_back(std::move(set));
    return static_cast<std::uint32_t>(sets_.size() - 1);
  }
  ConcurrentSet& at(std::uint32_t i) { return sets_[i]; }
  void release(std::uint32_t i) {
    sets_[i].clear();
    free_.push_back(i);
  }

 private:
  std::vector<ConcurrentSet> sets_;
  std::vector<std::uint32_t> free_;
};

}  // namespace anyp::runtime::race
