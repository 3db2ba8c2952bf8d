// vector_clock.hpp — happens-before bookkeeping for the race checker: a
// vector clock per rank, and the epoch (rank, clock) that stamps an access.
//
// C_r[q] = the last epoch of rank q that rank r has synchronised with
// (C_r[r] = r's own current epoch, starting at 1). An access stamped with
// epoch (q, k) happened before everything rank r does from the moment
// C_r[q] >= k. Every release (a notify, or a data write into a signal cell)
// ends the issuing rank's epoch: C_r[r] += 1.
#pragma once

#include <cstdint>
#include <vector>

namespace anyp::runtime::race {

using Clock = std::vector<std::uint32_t>;

// into ⊔= from; true if `into` changed. Written so that the compiler
// vectorizes it (no early exit, no branch).
inline bool join_into(Clock& into, const Clock& from) {
  std::uint32_t changed = 0;
  std::uint32_t* out = into.data();
  const std::uint32_t* in = from.data();
  const std::size_t n = into.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t a = out[i], b = in[i];
    changed |= static_cast<std::uint32_t>(b > a);
    out[i] = b > a ? b : a;
  }
  return changed != 0;
}

// (rank + 1, clock); rank_plus1 == 0 means "no access".
struct Epoch {
  std::uint32_t rank_plus1 = 0;
  std::uint32_t clock = 0;
  bool none() const { return rank_plus1 == 0; }
  std::int64_t rank() const { return static_cast<std::int64_t>(rank_plus1) - 1; }
  bool operator==(const Epoch&) const = default;
};

// True when the access stamped `e` happened before the current point of the
// rank whose clock is `c`.
inline bool ordered_before(const Epoch& e, const Clock& c) {
  return e.none() || c[static_cast<std::size_t>(e.rank_plus1 - 1)] >= e.clock;
}

}  // namespace anyp::runtime::race
