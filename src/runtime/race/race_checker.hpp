// race_checker.hpp — the happens-before race checker, an observer of the
// door (RunConfig::check_races, --check-races).
//
// Happens-before: program order on each rank; a notify releases the
// notifier's clock into the cell (AtomicAdd joins it, so a chain of adds is
// one release sequence; Set replaces it); a satisfied wait acquires the
// clocks of the credits its comparison needs (cell_credits.hpp); a data
// write into a signal cell (a buffer some notify or wait uses) releases like
// a Set, since a wait polls memory. Builtin
// collectives are checked through the notifies and waits they lower to.
//
// Accesses: every element of every window and host tensor, by every op on
// every rank (loads and stores, both sides of put/get, remote loads and
// stores, flat collective moves, notifies as atomic adds). Two accesses to
// one element from different ranks, at least one a write, not ordered by
// happens-before, are a race; atomic adds (and notifies) never race with
// each other, but do with an unordered plain access.
//
// Cost: O(elements accessed) per access with FastTrack epochs
// (shadow_memory.hpp), O(A) per satisfied wait that acquires (A agents: P
// ranks times their blocks) and per first release after one, O(1) per other
// notify; memory 36 bytes per element touched (44 per page of 64 while
// they are equal), A^2 clock entries, a small fixed record per notified
// cell, and the shared clocks the cells refer to (clock_pool.hpp: about
// one per agent that released since it last acquired, plus the joins that
// folded three agents' releases).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "runtime/access_observer.hpp"
#include "runtime/cell_index.hpp"
#include "runtime/executable.hpp"
#include "runtime/footprint.hpp"
#include "runtime/race/cell_credits.hpp"
#include "runtime/race/shadow_memory.hpp"
#include "runtime/race/vector_clock.hpp"

namespace anyp::runtime::race {

class RaceChecker final : public AccessObserver {
 public:
  // `budget`: the bytes the checker may hold (0: no limit); past it, the
  // access that needed more throws OutOfMemory (a run error naming it).
  explicit RaceChecker(const Executable& exec, double budget = 0);
  // What a checked run of `exec` adds to its footprint: the agents' clocks,
  // the shadow words of every window buffer on every rank and of the host
  // arguments, and the cell credits (about one cell per peer in each
  // signal buffer, and about two shared clocks of A entries per agent).
  static void add_footprint(const Executable& exec, Footprint& out);

  void on_access(const Access& access) override;
  void on_notify(std::int64_t agent, SiteRef site, const Cell& cell, ir::NotifyKind kind,
                 std::int32_t value, std::optional<std::int32_t> result) override;
  void on_wait(std::int64_t agent, SiteRef site, const Cell& cell, ir::WaitKind cmp,
               std::int64_t expected, std::int32_t value) override;

  bool found() const { return !races_.empty(); }
  std::size_t race_count() const { return races_.size(); }
  // The report (race_report.cpp): the first few op pairs, in detection
  // order, and the count.
  std::string report() const;

 private:
  struct Stamped {
    std::int64_t rank = -1;
    std::uint32_t site = 0;
    AccessKind kind = AccessKind::Read;
  };
  // One race per op pair: the first conflict found, its element range, and
  // how many granules conflicted in all.
  struct Race {
    Stamped first, second;
    Space space = Space::Window;
    std::int32_t id = -1;
    std::int64_t owner = -1;
    std::int64_t granule = 1;
    std::int64_t lo = 0, hi = 0;  // granules of the first conflicting access
    std::uint32_t synced = 0;     // C_second[first.rank] when found
    std::int64_t conflicts = 0;
    std::uint64_t access_serial = 0;
  };
  using RaceKey = std::tuple<std::uint32_t, int, std::uint32_t, int>;

  Shadow& shadow(Space space, std::int32_t id, std::int64_t owner);
  // Per window buffer: its granule (the smallest element any view uses).
  static std::vector<std::int64_t> granules(const Executable& exec);
  // Adds `bytes` (clocks, shadow words) to what the checker holds and
  // checks the budget.
  void hold(double bytes);
  // Throws OutOfMemory when what the checker holds (held_, the cells and
  // the pool's clocks) passes the budget.
  void check_budget() const;
  // The cell's slot, made (fresh) on first use.
  CellSlot& slot_of(const Cell& key);
  // The cell's CellCredits, made from its slot (which then refers to it)
  // on its first change that is not a fresh cell's AtomicAdd of v > 0.
  CellCredits& credits_of(CellSlot& slot);
  // A release of `agent` now: its current base clock (made when it has
  // none) and its own entry.
  ClockRef snapshot(std::int64_t agent);
  std::uint32_t global_site(SiteRef s) const {
    if (s.code < 0) return no_site_;
    return site_base_[static_cast<std::size_t>(s.code)] + static_cast<std::uint32_t>(s.site);
  }
  // Checks and records one access of `rank` to granules [lo, hi) of `sh`.
  void access_words(Shadow& sh, std::int64_t lo, std::int64_t hi, std::int64_t rank,
                    std::uint32_t site, AccessKind kind, const Region& where);
  void check_stamp(const Stamp& prior, AccessKind prior_kind, const Stamped& now,
                   const Clock& clock, std::int64_t granule_index, const Region& where,
                   std::int64_t granule);
  void conflict(const Stamped& first, const Stamped& second, std::int64_t granule_index,
                const Region& where, std::int64_t granule);
  // More conflicts of race `index`, at granules [from, to).
  void note_again(std::size_t index, std::int64_t from, std::int64_t to, const Region& where);
  // Checks and records access `now` (at epoch `e`, clock `clock`) to word
  // `w` of granule k; the races it finds are in word_races_.
  void check_word(ShadowWord& w, std::int64_t k, const Stamped& now, const Epoch& e,
                  const Clock& clock, const Region& where, std::int64_t g);
  // A uniform page gets its own words (counted against the budget), and
  // back when they are all equal.
  void expand_page(Shadow& sh, std::int64_t page);
  void compact_page(Shadow& sh, std::int64_t page);
  void add_to_slot(Stamp& slot, std::int64_t rank, std::uint32_t site, const Clock& clock);
  void clear_slot(Stamp& slot);
  void release(std::int64_t rank, std::uint32_t site);  // ends rank's epoch
  std::string site_text(std::uint32_t site) const;
  std::string memory_text(const Race& r) const;
  std::string missing_edge_text(const Race& r) const;

  const Executable& exec_;
  const std::int64_t world_;
  // Clocks are per agent (Executable::agents: a rank's blocks run
  // concurrently and race like ranks); memory is per rank.
  const std::int64_t agents_;
  mutable std::mutex mutex_;
  std::vector<Clock> clocks_;                         // per agent
  std::vector<std::vector<std::uint32_t>> releases_;  // per agent: site of its k-th release
  ClockPool pool_;                                    // the clocks the cells hold
  // Per agent: the pool clock its releases share until its clock next
  // changes other than in its own entry (0: none yet).
  std::vector<std::uint32_t> current_base_;
  // The signal cells' credits: an index per cell touched (cell_index.hpp)
  // into its CellSlot, and the few that need them their CellCredits (in
  // deques: never moved, so references last).
  CellIndex cell_index_;
  std::deque<CellSlot> cells_;
  std::deque<CellCredits> full_cells_;
  std::vector<std::int64_t> window_granule_;            // per buffer
  std::vector<std::unique_ptr<Shadow>> window_shadow_;  // buffer * P + owner
  std::vector<std::unique_ptr<Shadow>> host_shadow_;    // per host argument
  SetPool sets_;
  std::vector<std::uint32_t> site_base_;                      // per code: first global site id
  std::vector<std::pair<std::int32_t, std::int32_t>> sites_;  // global id -> (code, site)
  std::uint32_t no_site_ = 0;  // the id of "no instruction" (code -1)
  std::vector<Race> races_;
  std::map<RaceKey, std::size_t> race_index_;
  std::uint64_t access_serial_ = 0;
  std::vector<std::size_t> word_races_;  // races found at the word being checked
  const double budget_;                  // 0: no limit
  double held_ = 0;                      // the agents' clocks and the shadow words
};

}  // namespace anyp::runtime::race
