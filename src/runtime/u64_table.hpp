// u64_table.hpp — a map from 64-bit keys to non-zero 32-bit values (0
// means absent): open addressing with linear probing, at most half full,
// erase by backward shift (no tombstones). What CellIndex keeps for the
// cells that do not fit its flat arrays, and what the timeline's event
// queue keeps from a pending time to its bucket.
#pragma once

#include <cstdint>
#include <vector>

namespace anyp::runtime {

class U64Table {
 public:
  // `first_size`: the entries it allocates at its first insertion (a power of 2).
  explicit U64Table(std::size_t first_size) : first_size_(first_size) {}

  // The value of `key`, 0 when it has none.
  std::uint32_t find(std::uint64_t key) const {
    if (entries_.empty()) return 0;
    for (std::size_t at = home(key); entries_[at].value != 0; at = next(at))
      if (entries_[at].key == key) return entries_[at].value;
    return 0;
  }

  // The value of `key`, to set: 0 when it is new, and then the caller sets
  // it before the next call (a later call may move it).
  std::uint32_t& slot(std::uint64_t key) {
    if (2 * (used_ + 1) > entries_.size()) grow();
    std::size_t at = home(key);
    while (entries_[at].value != 0 && entries_[at].key != key) at = next(at);
    if (entries_[at].value == 0) {
      entries_[at].key = key;
      ++used_;
    }
    return entries_[at].value;
  }

  // Removes `key` (which has a value).
  void erase(std::uint64_t key) {
    std::size_t at = home(key);
    while (entries_[at].key != key || entries_[at].value == 0) at = next(at);
    for (std::size_t n = next(at); entries_[n].value != 0; n = next(n)) {
      const std::size_t h = home(entries_[n].key);
      // Whether the entry at n may move to the hole at `at`: its home is
      // not in (at, n].
      const bool stays = at <= n ? (at < h && h <= n) : (at < h || h <= n);
      if (stays) continue;
      entries_[at] = entries_[n];
      at = n;
    }
    entries_[at] = Entry{};
    --used_;
  }

 private:
  struct Entry {
    std::uint64_t key = 0;
    std::uint32_t value = 0;  // 0: empty
  };
  static std::uint64_t hash(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
  }
  std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>(hash(key)) & (entries_.size() - 1);
  }
  std::size_t next(std::size_t at) const { return (at + 1) & (entries_.size() - 1); }
  void grow() {
    std::vector<Entry> old = std::move(entries_);
    entries_.assign(old.empty() ? first_size_ : 2 * old.size(), Entry{});
    for (const Entry& e : old) {
      if (e.value == 0) continue;
      std::size_t at = home(e.key);
      while (entries_[at].value != 0) at = next(at);
      entries_[at] = e;
    }
  }

  std::size_t first_size_;
  std::vector<Entry> entries_;
  std::size_t used_ = 0;
};

}  // namespace anyp::runtime
