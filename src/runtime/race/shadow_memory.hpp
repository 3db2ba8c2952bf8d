// shadow_memory.hpp — the race checker's record of past accesses, FastTrack
// style (Flanagan & Freund, PLDI 2009): per granule of memory (the smallest
// element size any view of the buffer uses, so ranks that split rows
// unevenly never share a granule), the last write, the last reads and the
// last atomic adds, each as an epoch plus the op (global site id) that made
// it. Reads and atomic adds keep one epoch while they are ordered; when two
// are concurrent the slot becomes an index into a set of (rank, clock, site)
// entries, which shrinks back to an epoch once a later access is ordered
// after all of them. 36 bytes per granule, allocated on first access, or
// 44 bytes per page of 64 granules while the page's words are equal.
#pragma once

#include <algorithm>
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

inline bool operator==(const Stamp& a, const Stamp& b) {
  return a.epoch == b.epoch && a.site == b.site;
}
inline bool operator==(const ShadowWord& a, const ShadowWord& b) {
  return a.write == b.write && a.read == b.read && a.atomic == b.atomic;
}

// The shadow of one memory: a window buffer on one rank, or a host
// argument, in pages of kPage words. A page whose words are all equal (a
// tile's row written or read whole, by the same op at the same epoch) is
// one word; it gets its own words when an access covers part of it, and
// is one word again when an access leaves them all equal.
struct Shadow {
  static constexpr std::int64_t kPage = 64;
  std::int64_t granule = 1;                          // bytes per word
  std::int64_t size = 0;                             // words
  std::vector<ShadowWord> uniform;                   // per page, while its words are equal
  std::vector<std::unique_ptr<ShadowWord[]>> words;  // per page, once they differ (else null)

  static std::int64_t pages_for(std::int64_t size) { return (size + kPage - 1) / kPage; }
  void resize(std::int64_t n) {
    size = n;
    uniform.assign(static_cast<std::size_t>(pages_for(n)), ShadowWord{});
    words.resize(static_cast<std::size_t>(pages_for(n)));
  }
  std::int64_t page_begin(std::int64_t page) const { return page * kPage; }
  std::int64_t page_end(std::int64_t page) const { return std::min(size, (page + 1) * kPage); }
};

// Concurrent read / atomic sets, by index. Sets are immutable and shared by
// reference count, so the words of one tile that saw the same accesses can
// share one set (the checker handles such runs of equal words at once).
// A set whose count drops to zero is freed only at flush(), so an index is
// never reused within one access and equal indices mean equal sets.
class SetPool {
 public:
  std::uint32_t make(ConcurrentSet set) {
    std::uint32_t i;
    if (!free_.empty()) {
      i = free_.back();
      free_.pop_back();
    } else {
      i = static_cast<std::uint32_t>(sets_.size());
      sets_.emplace_back();
    }
    sets_[i] = Entry{std::move(set), 1};
    return i;
  }
  const ConcurrentSet& at(std::uint32_t i) const { return sets_[i].set; }
  void retain(std::uint32_t i) { ++sets_[i].refs; }
  void release(std::uint32_t i) {
    if (--sets_[i].refs == 0) pending_.push_back(i);
  }
  // Retains / releases every set a word refers to, `n` times (for n
  // copies of the word).
  void retain(const ShadowWord& w, std::uint32_t n = 1) {
    for (const Stamp* s : {&w.read, &w.atomic})
      if (s->is_set()) sets_[s->epoch.clock].refs += n;
  }
  void release(const ShadowWord& w, std::uint32_t n = 1) {
    for (const Stamp* s : {&w.read, &w.atomic}) {
      if (!s->is_set() || n == 0) continue;
      Entry& e = sets_[s->epoch.clock];
      e.refs -= n;
      if (e.refs == 0) pending_.push_back(s->epoch.clock);
    }
  }
  void flush() {
    for (std::uint32_t i : pending_) {
      if (sets_[i].refs == 0) {
        sets_[i].set = ConcurrentSet{};
        free_.push_back(i);
      }
    }
    pending_.clear();
  }
  std::size_t live() const { return sets_.size() - free_.size(); }
  std::int64_t entries() const {
    std::int64_t n = 0;
    for (const auto& e : sets_) n += static_cast<std::int64_t>(e.set.size());
    return n;
  }

 private:
  struct Entry {
    ConcurrentSet set;
    std::uint32_t refs = 0;
  };
  std::vector<Entry> sets_;
  std::vector<std::uint32_t> free_, pending_;
};

}  // namespace anyp::runtime::race
