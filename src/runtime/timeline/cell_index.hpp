// cell_index.hpp — the timeline's map from a signal cell to its state's
// slot, in memory proportional to the cells touched: an open-addressing
// table (linear probing, at most half full) keyed by the cell packed in 64
// bits (owner < 2^22, buffer < 2^10, word < 2^32), and an ordered map for
// a cell that does not pack.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "runtime/region.hpp"

namespace anyp::runtime::timeline_sim {

class CellIndex {
 public:
  // The slot of `c`: 0 when it is new, and then the caller sets it before
  // the next call (a later call may move it).
  std::uint32_t& slot(const Cell& c) {
    const std::uint64_t word = static_cast<std::uint64_t>(c.offset) / 4;
    if (c.owner < 0 || c.owner >= (1 << 22) || c.buffer < 0 || c.buffer >= (1 << 10) ||
        word >= (std::uint64_t{1} << 32)) {
      return overflow_[c];
    }
    const std::uint64_t key = (word << 32) | (static_cast<std::uint64_t>(c.buffer) << 22) |
                              static_cast<std::uint64_t>(c.owner);
    if (2 * (used_ + 1) > entries_.size()) grow();
    std::size_t at = hash(key) & (entries_.size() - 1);
    while (entries_[at].value != 0 && entries_[at].key != key)
      at = (at + 1) & (entries_.size() - 1);
    if (entries_[at].value == 0) {
      entries_[at].key = key;
      ++used_;
    }
    return entries_[at].value;
  }

 private:
  struct Entry {
    std::uint64_t key = 0;
    std::uint32_t value = 0;  // 0: empty (slots are indices + 1)
  };
  static std::uint64_t hash(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
  }
  void grow() {
    std::vector<Entry> old = std::move(entries_);
    entries_.assign(old.empty() ? 1024 : 2 * old.size(), Entry{});
    for (const Entry& e : old) {
      if (e.value == 0) continue;
      std::size_t at = hash(e.key) & (entries_.size() - 1);
      while (entries_[at].value != 0) at = (at + 1) & (entries_.size() - 1);
      entries_[at] = e;
    }
  }
  std::vector<Entry> entries_;
  std::size_t used_ = 0;
  std::map<Cell, std::uint32_t> overflow_;
};

}  // namespace anyp::runtime::timeline_sim
