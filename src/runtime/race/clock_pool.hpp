// clock_pool.hpp — vector clocks shared by the signal cells that hold them.
//
// A notify used to copy its issuer's whole clock (A entries) into the cell
// it notified, so a mesh of P ranks notifying P − 1 peers held P³ entries.
// Here a release publishes a *snapshot*: a reference to an immutable base
// clock of its agent plus the agent's own entry (the epoch it released).
// An agent's releases between two acquires share one base — they differ
// only in the own entry — so the mesh holds about one base per rank.
//
// A cell's join of several releases (`JoinedClock`) keeps the latest
// snapshot of each of up to two agents (an agent's later snapshot covers
// its earlier ones: its clock only grows); a third agent folds them into
// one materialized clock, joined in place while only that cell holds it.
//
// Clocks are reference counted by their holders (the agents' current bases
// and the cells' joins), freed at zero and reused; bytes() is what they
// take, for the checker's memory budget.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "runtime/race/vector_clock.hpp"

namespace anyp::runtime::race {

// One release: base clock `id` with entry `agent(id)` raised to `own`;
// a materialized join (agent −1) ignores `own`. id 0 is "no clock".
struct ClockRef {
  std::uint32_t id = 0;
  std::uint32_t own = 0;
  bool none() const { return id == 0; }
};

class ClockPool {
 public:
  explicit ClockPool(std::size_t width) : width_(width), entries_(1) {}

  // A new clock holding a copy of `clock` (one reference, the caller's).
  std::uint32_t make(const Clock& clock, std::int32_t agent);
  void retain(std::uint32_t id) {
    if (id != 0) ++entries_[id].refs;
  }
  void release(std::uint32_t id);
  std::int32_t agent(std::uint32_t id) const { return entries_[id].agent; }
  std::uint32_t refs(std::uint32_t id) const { return entries_[id].refs; }
  const Clock& clock(std::uint32_t id) const { return entries_[id].clock; }
  // The clock to join into in place: only when refs(id) == 1.
  Clock& owned_clock(std::uint32_t id) { return entries_[id].clock; }

  // into ⊔= the clock `ref` stands for; true if `into` changed.
  bool join_into(Clock& into, ClockRef ref) const;
  // Clocks made and not freed, and made at all (freed ones keep their
  // storage for reuse).
  std::size_t live() const { return live_; }
  std::size_t allocated() const { return entries_.size() - 1; }
  // The bytes the pool takes: every allocated clock, live or free.
  double bytes() const {
    return static_cast<double>(allocated()) *
           (static_cast<double>(width_) * sizeof(std::uint32_t) + sizeof(Entry));
  }

 private:
  struct Entry {
    Clock clock;
    std::uint32_t refs = 0;
    std::int32_t agent = -1;
  };
  std::size_t width_;
  std::vector<Entry> entries_;  // [0] unused: id 0 is "no clock"
  std::vector<std::uint32_t> free_;
  std::size_t live_ = 0;
};

// The join of some releases into one cell (or one run of its credits).
// Holds references in `pool`; the owner calls clear() before dropping it.
class JoinedClock {
 public:
  // this ⊔= `ref` (a release of its agent, or a materialized join).
  void join(ClockPool& pool, ClockRef ref);
  void join(ClockPool& pool, const JoinedClock& other) {
    for (const ClockRef& r : other.parts_)
      if (!r.none()) join(pool, r);
  }
  // this := `ref`; clear(): nothing.
  void assign(ClockPool& pool, ClockRef ref) {
    pool.retain(ref.id);  // alive across clear() if only this held it
    clear(pool);
    join(pool, ref);
    pool.release(ref.id);
  }
  void clear(ClockPool& pool) {
    for (ClockRef& r : parts_) {
      pool.release(r.id);
      r = ClockRef{};
    }
  }
  // into ⊔= this; true if `into` changed.
  bool acquire_into(const ClockPool& pool, Clock& into) const {
    bool changed = false;
    for (const ClockRef& r : parts_)
      if (!r.none()) changed |= pool.join_into(into, r);
    return changed;
  }

 private:
  std::array<ClockRef, 2> parts_{};  // parts_[1] set only with parts_[0]
};

}  // namespace anyp::runtime::race
