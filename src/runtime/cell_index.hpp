// cell_index.hpp — a map from a signal cell to a slot (an index into its
// owner's array of cell states: the timeline simulation's, the race
// checker's credits). A buffer whose words over all ranks are few (at most 2^22) gets a
// flat array of slots, a slot per word of every rank's window (direct,
// and neighbours stay neighbours); a larger one (a [P, 1] signal at large
// P: P^2 words) an open-addressing table (linear probing, at most half
// full), in memory proportional to the cells touched, keyed by the cell
// packed in 64 bits (owner < 2^22, buffer < 2^10, word < 2^32); a cell
// that does not pack, an ordered map.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "runtime/executable.hpp"
#include "runtime/region.hpp"
#include "runtime/u64_table.hpp"

namespace anyp::runtime {

class CellIndex {
 public:
  // world ranks; words[b]: the 4-byte words of buffer b in one window.
  CellIndex(std::int64_t world, const std::vector<std::int64_t>& words) : world_(world) {
    for (const std::int64_t w : words) words_.push_back(world * w <= kFlatWords ? w : -1);
    flat_.resize(words.size());
  }
  // For the window buffers of a plan.
  explicit CellIndex(const Executable& exec) : CellIndex(exec.world_size, buffer_words(exec)) {}

  // The slot of `c`, 0 when it has none, without adding it.
  std::uint32_t find(const Cell& c) const {
    const std::uint64_t word = static_cast<std::uint64_t>(c.offset) / 4;
    const auto b = static_cast<std::size_t>(c.buffer);
    if (b < words_.size() && words_[b] >= 0 && c.owner >= 0 && c.owner < world_ &&
        static_cast<std::int64_t>(word) < words_[b]) {
      const std::vector<std::uint32_t>& flat = flat_[b];
      return flat.empty() ? 0 : flat[static_cast<std::size_t>(c.owner * words_[b]) + word];
    }
    if (c.owner < 0 || c.owner >= (1 << 22) || c.buffer < 0 || c.buffer >= (1 << 10) ||
        word >= (std::uint64_t{1} << 32)) {
      const auto it = overflow_.find(c);
      return it == overflow_.end() ? 0 : it->second;
    }
    return table_.find(packed(c, word));
  }

  // The slot of `c`: 0 when it is new, and then the caller sets it before
  // the next call (a later call may move it).
  std::uint32_t& slot(const Cell& c) {
    const std::uint64_t word = static_cast<std::uint64_t>(c.offset) / 4;
    const auto b = static_cast<std::size_t>(c.buffer);
    if (b < words_.size() && words_[b] >= 0 && c.owner >= 0 && c.owner < world_ &&
        static_cast<std::int64_t>(word) < words_[b]) {
      std::vector<std::uint32_t>& flat = flat_[b];
      if (flat.empty()) flat.assign(static_cast<std::size_t>(world_ * words_[b]), 0);
      return flat[static_cast<std::size_t>(c.owner * words_[b]) + word];
    }
    if (c.owner < 0 || c.owner >= (1 << 22) || c.buffer < 0 || c.buffer >= (1 << 10) ||
        word >= (std::uint64_t{1} << 32)) {
      return overflow_[c];
    }
    return table_.slot(packed(c, word));
  }

 private:
  static constexpr std::int64_t kFlatWords = std::int64_t{1} << 22;
  static std::vector<std::int64_t> buffer_words(const Executable& exec) {
    std::vector<std::int64_t> words;
    for (const WindowBuffer& b : exec.buffers) words.push_back(b.bytes / 4);
    return words;
  }
  // A cell that packs (owner < 2^22, buffer < 2^10, word < 2^32) as its key.
  static std::uint64_t packed(const Cell& c, std::uint64_t word) {
    return (word << 32) | (static_cast<std::uint64_t>(c.buffer) << 22) |
           static_cast<std::uint64_t>(c.owner);
  }
  std::int64_t world_;
  std::vector<std::int64_t> words_;  // per buffer; -1: in the table
  std::vector<std::vector<std::uint32_t>> flat_;
  U64Table table_{1024};
  std::map<Cell, std::uint32_t> overflow_;
};

}  // namespace anyp::runtime
