// race_checker.cpp — vector clocks, shadow words and race detection (the
// report's text is in race_report.cpp).
#include "runtime/race/race_checker.hpp"

#include <algorithm>

#include "common/memory_available.hpp"
#include "runtime/footprint.hpp"
#include "runtime/out_of_memory.hpp"

namespace anyp::runtime::race {

namespace {

constexpr double kClockEntry = sizeof(std::uint32_t);
// A cell's index entry (4 bytes in a flat index; in a hashed one 16 per
// entry at a quarter to half full: 32 to 64) and its CellSlot; its clocks
// are in the pool.
constexpr double kCellIndex = 32;
constexpr double kCellNode = kCellIndex + sizeof(CellSlot);
// A cell that needs its CellCredits: those (in a deque) and their first
// run (24, 32 with the allocator's overhead).
constexpr double kFullCell = sizeof(CellCredits) + 32;
// Live shared clocks per agent, as the plan estimates them: its current
// base and about one join that folded three releases.
constexpr double kPooledClocksPerAgent = 2;
// A shadow page while its words are equal: one word and the pointer to
// the words it gets when they differ.
constexpr double kUniformPage = sizeof(ShadowWord) + sizeof(std::unique_ptr<ShadowWord[]>);

}  // namespace

std::vector<std::int64_t> RaceChecker::granules(const Executable& exec) {
  std::vector<std::int64_t> g(exec.buffers.size());
  for (std::size_t b = 0; b < exec.buffers.size(); ++b)
    g[b] = static_cast<std::int64_t>(dtype_bytes(exec.buffers[b].dtype));
  for (const auto& rank : exec.ranks) {
    for (const auto& d : rank) {
      for (const auto& a : d.args) {
        if (a.kind != ArgBinding::Kind::Window) continue;
        auto& gb = g[static_cast<std::size_t>(a.buffer)];
        gb = std::min(gb, static_cast<std::int64_t>(dtype_bytes(a.dtype)));
      }
    }
  }
  return g;
}

void RaceChecker::add_footprint(const Executable& exec, Footprint& out) {
  const double agents = static_cast<double>(exec.agents());
  const double P = static_cast<double>(exec.world_size);
  out.add(
      "race checker: clocks", agents * agents * kClockEntry,
      std::to_string(exec.agents()) + " agents × " + std::to_string(exec.agents()) + " entries");
  const std::vector<std::int64_t> g = granules(exec);
  double pages = 0, cells = 0;
  for (std::size_t b = 0; b < exec.buffers.size(); ++b) {
    const WindowBuffer& buf = exec.buffers[b];
    const std::int64_t words = (buf.bytes + g[b] - 1) / g[b];
    // A signal's cells are touched one by one: its pages get their words.
    pages += P * (buf.signal ? static_cast<double>(words) * sizeof(ShadowWord) / kUniformPage
                             : static_cast<double>(Shadow::pages_for(words)));
    if (!buf.signal) continue;
    const double group =
        buf.domain < 0
            ? P
            : static_cast<double>(exec.domains[static_cast<std::size_t>(buf.domain)].group_size);
    cells += P * std::min(static_cast<double>(buf.used) / 4, group);
  }
  for (const HostArgSpec& a : exec.host_args) {
    if (!a.is_tensor) continue;
    std::int64_t n = 1;
    for (auto e : a.shape) n *= e;
    pages += static_cast<double>(Shadow::pages_for(n));
  }
  out.add("race checker: shadow", pages * kUniformPage,
          "44 B per page of 64 granules of every window on every rank and of the host "
          "tensors, 36 B per granule of the signals");
  if (cells > 0) {
    out.add("race checker: cell credits",
            cells * kCellNode + kPooledClocksPerAgent * agents * agents * kClockEntry,
            "about one cell per peer in each signal buffer, and 2 shared clocks of " +
                std::to_string(exec.agents()) + " entries per agent");
  }
}

void RaceChecker::hold(double bytes) {
  held_ += bytes;
  check_budget();
}

void RaceChecker::check_budget() const {
  const double cells = static_cast<double>(cells_.size()) * kCellNode +
                       static_cast<double>(full_cells_.size()) * kFullCell;
  if (budget_ <= 0 || held_ + cells + pool_.bytes() <= budget_) return;
  throw OutOfMemory(
      "out of memory: the race checker's clocks, shadow words and cell credits need more than " +
      bytes_text(budget_) + " (what is available to the run beside its windows); it holds " +
      std::to_string(cells_.size()) + " signal cells in use and " +
      std::to_string(pool_.allocated()) + " shared vector clocks of " + std::to_string(agents_) +
      " entries (one per agent), which grow with P: check the program at a smaller P");
}

CellSlot& RaceChecker::slot_of(const Cell& key) {
  std::uint32_t& slot = cell_index_.slot(key);
  if (slot == 0) {
    cells_.emplace_back();
    slot = static_cast<std::uint32_t>(cells_.size());
  }
  return cells_[slot - 1];
}

CellCredits& RaceChecker::credits_of(CellSlot& slot) {
  if (slot.full == 0) {
    full_cells_.emplace_back();
    slot.full = static_cast<std::uint32_t>(full_cells_.size());
    if (!slot.clock.none()) {  // what it held: one AtomicAdd's credits
      full_cells_.back().add(pool_, slot.clock, slot.count);
      pool_.release(slot.clock.id);
      slot.clock = ClockRef{};
    }
  }
  return full_cells_[slot.full - 1];
}

ClockRef RaceChecker::snapshot(std::int64_t agent) {
  const auto a = static_cast<std::size_t>(agent);
  if (current_base_[a] == 0)
    current_base_[a] = pool_.make(clocks_[a], static_cast<std::int32_t>(agent));
  return ClockRef{current_base_[a], clocks_[a][a]};
}

RaceChecker::RaceChecker(const Executable& exec, double budget)
    : exec_(exec),
      world_(exec.world_size),
      agents_(exec.agents()),
      clocks_(static_cast<std::size_t>(agents_), Clock(static_cast<std::size_t>(agents_), 0)),
      releases_(static_cast<std::size_t>(agents_)),
      pool_(static_cast<std::size_t>(agents_)),
      current_base_(static_cast<std::size_t>(agents_), 0),
      cell_index_(exec),
      window_granule_(granules(exec)),
      window_shadow_(exec.buffers.size() * static_cast<std::size_t>(exec.world_size)),
      host_shadow_(exec.host_args.size()),
      budget_(budget) {
  for (std::size_t r = 0; r < clocks_.size(); ++r) clocks_[r][r] = 1;
  hold(static_cast<double>(agents_) * static_cast<double>(agents_) * kClockEntry);
  std::uint32_t base = 0;
  for (std::size_t c = 0; c < exec.codes.size(); ++c) {
    site_base_.push_back(base);
    for (std::size_t s = 0; s < exec.codes[c].sites.size(); ++s)
      sites_.emplace_back(static_cast<std::int32_t>(c), static_cast<std::int32_t>(s));
    base += static_cast<std::uint32_t>(exec.codes[c].sites.size());
  }
  no_site_ = base;  // the block launch protocol's own notifies and waits
  sites_.emplace_back(-1, -1);
}

Shadow& RaceChecker::shadow(Space space, std::int32_t id, std::int64_t owner) {
  std::unique_ptr<Shadow>& slot =
      space == Space::Window
          ? window_shadow_[static_cast<std::size_t>(id) * static_cast<std::size_t>(world_) +
                           static_cast<std::size_t>(owner)]
          : host_shadow_[static_cast<std::size_t>(id)];
  if (!slot) {
    slot = std::make_unique<Shadow>();
    std::int64_t bytes = 0;
    if (space == Space::Window) {
      slot->granule = window_granule_[static_cast<std::size_t>(id)];
      bytes = exec_.buffers[static_cast<std::size_t>(id)].bytes;
    } else {
      const HostArgSpec& a = exec_.host_args[static_cast<std::size_t>(id)];
      slot->granule = static_cast<std::int64_t>(dtype_bytes(a.dtype));
      bytes = slot->granule;
      for (auto e : a.shape) bytes *= e;
    }
    const std::int64_t words = (bytes + slot->granule - 1) / slot->granule;
    hold(static_cast<double>(Shadow::pages_for(words)) * kUniformPage);
    slot->resize(words);
  }
  return *slot;
}

void RaceChecker::note_again(std::size_t index, std::int64_t from, std::int64_t to,
                             const Region& where) {
  if (from >= to) return;
  Race& r = races_[index];
  r.conflicts += to - from;
  if (r.access_serial == access_serial_ && r.space == where.space && r.id == where.id &&
      r.owner == where.owner) {
    r.lo = std::min(r.lo, from);
    r.hi = std::max(r.hi, to);
  }
}

void RaceChecker::conflict(const Stamped& first, const Stamped& second, std::int64_t granule_index,
                           const Region& where, std::int64_t granule) {
  const RaceKey key{first.site, static_cast<int>(first.kind), second.site,
                    static_cast<int>(second.kind)};
  auto it = race_index_.find(key);
  if (it == race_index_.end()) {
    Race r;
    r.first = first;
    r.second = second;
    r.space = where.space;
    r.id = where.id;
    r.owner = where.owner;
    r.granule = granule;
    r.lo = granule_index;
    r.hi = granule_index + 1;
    r.synced = clocks_[static_cast<std::size_t>(second.rank)][static_cast<std::size_t>(first.rank)];
    r.conflicts = 1;
    r.access_serial = access_serial_;
    race_index_.emplace(key, races_.size());
    races_.push_back(r);
    word_races_.push_back(races_.size() - 1);
    return;
  }
  note_again(it->second, granule_index, granule_index + 1, where);
  word_races_.push_back(it->second);
}

void RaceChecker::check_stamp(const Stamp& prior, AccessKind prior_kind, const Stamped& now,
                              const Clock& clock, std::int64_t granule_index, const Region& where,
                              std::int64_t granule) {
  if (prior.none()) return;
  if (!prior.is_set()) {
    if (!ordered_before(prior.epoch, clock))
      conflict(Stamped{prior.epoch.rank(), prior.site, prior_kind}, now, granule_index, where,
               granule);
    return;
  }
  for (const SetEntry& e : sets_.at(prior.epoch.clock)) {
    if (clock[e.rank] < e.clock)
      conflict(Stamped{e.rank, e.site, prior_kind}, now, granule_index, where, granule);
  }
}

void RaceChecker::add_to_slot(Stamp& slot, std::int64_t rank, std::uint32_t site,
                              const Clock& clock) {
  const auto r = static_cast<std::uint32_t>(rank);
  const Epoch e{r + 1, clock[r]};
  if (slot.none() || (!slot.is_set() && ordered_before(slot.epoch, clock))) {
    slot = Stamp{e, site};
    return;
  }
  ConcurrentSet set;
  if (!slot.is_set()) {
    set = {{slot.epoch.rank_plus1 - 1, slot.epoch.clock, slot.site}};
  } else {
    // Keep the accesses not ordered before this one (the others are covered by it).
    for (const SetEntry& x : sets_.at(slot.epoch.clock))
      if (clock[x.rank] < x.clock) set.push_back(x);
    sets_.release(slot.epoch.clock);
  }
  if (set.empty()) {
    slot = Stamp{e, site};
    return;
  }
  set.push_back(SetEntry{r, e.clock, site});
  slot = Stamp{Epoch{kSharedSet, sets_.make(std::move(set))}, 0};
}

void RaceChecker::clear_slot(Stamp& slot) {
  if (slot.is_set()) sets_.release(slot.epoch.clock);
  slot = Stamp{};
}

void RaceChecker::check_word(ShadowWord& w, std::int64_t k, const Stamped& now, const Epoch& e,
                             const Clock& clock, const Region& where, std::int64_t g) {
  switch (now.kind) {
    case AccessKind::Read:
      if (!w.read.is_set() && w.read.epoch == e) break;
      check_stamp(w.write, AccessKind::Write, now, clock, k, where, g);
      check_stamp(w.atomic, AccessKind::AtomicAdd, now, clock, k, where, g);
      add_to_slot(w.read, now.rank, now.site, clock);
      break;
    case AccessKind::Write:
      if (w.write.epoch == e) break;
      check_stamp(w.write, AccessKind::Write, now, clock, k, where, g);
      check_stamp(w.read, AccessKind::Read, now, clock, k, where, g);
      check_stamp(w.atomic, AccessKind::AtomicAdd, now, clock, k, where, g);
      w.write = Stamp{e, now.site};
      clear_slot(w.read);
      clear_slot(w.atomic);
      break;
    case AccessKind::AtomicAdd:
      if (!w.atomic.is_set() && w.atomic.epoch == e) break;
      check_stamp(w.write, AccessKind::Write, now, clock, k, where, g);
      check_stamp(w.read, AccessKind::Read, now, clock, k, where, g);
      add_to_slot(w.atomic, now.rank, now.site, clock);
      break;
  }
}

void RaceChecker::expand_page(Shadow& sh, std::int64_t page) {
  const std::int64_t n = sh.page_end(page) - sh.page_begin(page);
  hold(static_cast<double>(n) * sizeof(ShadowWord));
  const ShadowWord& u = sh.uniform[static_cast<std::size_t>(page)];
  auto words = std::make_unique<ShadowWord[]>(static_cast<std::size_t>(n));
  std::fill(words.get(), words.get() + n, u);
  sets_.retain(u, static_cast<std::uint32_t>(n - 1));
  sh.words[static_cast<std::size_t>(page)] = std::move(words);
}

void RaceChecker::compact_page(Shadow& sh, std::int64_t page) {
  const std::int64_t n = sh.page_end(page) - sh.page_begin(page);
  const ShadowWord* words = sh.words[static_cast<std::size_t>(page)].get();
  if (!std::all_of(words + 1, words + n, [&](const ShadowWord& w) { return w == words[0]; }))
    return;
  sh.uniform[static_cast<std::size_t>(page)] = words[0];
  sets_.release(words[0], static_cast<std::uint32_t>(n - 1));
  sh.words[static_cast<std::size_t>(page)].reset();
  held_ -= static_cast<double>(n) * sizeof(ShadowWord);
}

void RaceChecker::access_words(Shadow& sh, std::int64_t lo, std::int64_t hi, std::int64_t rank,
                               std::uint32_t site, AccessKind kind, const Region& where) {
  const Clock& clock = clocks_[static_cast<std::size_t>(rank)];
  const auto r = static_cast<std::uint32_t>(rank);
  const Epoch e{r + 1, clock[r]};
  const Stamped now{rank, site, kind};
  const std::int64_t g = sh.granule;
  // A word whose history equals the previous word's (the usual case inside
  // one tile) gets the same outcome: its new state and its races are
  // copied. A uniform page the access covers is checked as one word that
  // stands for all of its granules [k, end).
  ShadowWord before{}, after{};
  bool have_previous = false;
  std::vector<std::size_t> previous_races;
  auto visit = [&](ShadowWord& w, std::int64_t k, std::int64_t end) {
    if (have_previous && w == before) {
      sets_.release(w);
      w = after;
      sets_.retain(w);
      for (std::size_t i : previous_races) note_again(i, k, end, where);
      return;
    }
    before = w;
    word_races_.clear();
    check_word(w, k, now, e, clock, where, g);
    for (std::size_t i : word_races_) note_again(i, k + 1, end, where);
    after = w;
    previous_races = word_races_;
    have_previous = true;
  };
  for (std::int64_t page = lo / Shadow::kPage; page * Shadow::kPage < hi; ++page) {
    const std::int64_t begin = sh.page_begin(page), end = sh.page_end(page);
    const std::int64_t from = std::max(lo, begin), to = std::min(hi, end);
    const auto p = static_cast<std::size_t>(page);
    const bool whole = from == begin && to == end;
    if (!sh.words[p]) {
      if (whole) {
        visit(sh.uniform[p], from, to);
        continue;
      }
      expand_page(sh, page);
    }
    ShadowWord* words = sh.words[p].get();
    for (std::int64_t k = from; k < to; ++k) visit(words[k - begin], k, k + 1);
    if (whole) compact_page(sh, page);
  }
}

void RaceChecker::release(std::int64_t rank, std::uint32_t site) {
  releases_[static_cast<std::size_t>(rank)].push_back(site);
  ++clocks_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(rank)];
}

void RaceChecker::on_access(const Access& a) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++access_serial_;
  const Region& region = a.region;
  Shadow& sh = shadow(region.space, region.id, region.owner);
  const std::uint32_t site = global_site(a.site);
  const std::int64_t g = sh.granule;
  region.for_each_row([&](std::int64_t offset, std::int64_t bytes) {
    access_words(sh, offset / g, (offset + bytes + g - 1) / g, a.agent, site, a.kind, region);
  });
  sets_.flush();
  if (a.kind == AccessKind::Read || region.space != Space::Window ||
      !exec_.buffers[static_cast<std::size_t>(region.id)].signal)
    return;
  // A data write into signal cells releases like a Set of unknown value
  // (an atomic add like an AtomicAdd of unknown value).
  const ClockRef mine = snapshot(a.agent);
  region.for_each_row([&](std::int64_t offset, std::int64_t bytes) {
    for (std::int64_t at = offset / 4 * 4; at < offset + bytes; at += 4)
      credits_of(slot_of(Cell{region.owner, region.id, at}))
          .data_write(pool_, mine, a.kind == AccessKind::Write);
  });
  release(a.agent, site);
  check_budget();
}

void RaceChecker::on_notify(std::int64_t agent, SiteRef site, const Cell& cell, ir::NotifyKind kind,
                            std::int32_t value, std::optional<std::int32_t>) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++access_serial_;
  Shadow& sh = shadow(Space::Window, cell.buffer, cell.owner);
  const std::uint32_t gsite = global_site(site);
  const std::int64_t g = sh.granule;
  const Region where{Space::Window, cell.buffer, cell.owner, 0, DType::INT32, {}, {}, {}};
  access_words(sh, cell.offset / g, (cell.offset + 4 + g - 1) / g, agent, gsite,
               AccessKind::AtomicAdd, where);
  sets_.flush();
  CellSlot& slot = slot_of(cell);
  const ClockRef mine = snapshot(agent);
  if (kind == ir::NotifyKind::AtomicAdd && value > 0 && slot.full == 0 && slot.clock.none()) {
    pool_.retain(mine.id);  // the slot's reference
    slot.clock = mine;
    slot.count = static_cast<std::uint32_t>(value);
  } else if (kind == ir::NotifyKind::Set) {
    credits_of(slot).set(pool_, mine, value);
  } else {
    credits_of(slot).add(pool_, mine, value);
  }
  release(agent, gsite);
  check_budget();
}

void RaceChecker::on_wait(std::int64_t agent, SiteRef, const Cell& cell, ir::WaitKind cmp,
                          std::int64_t expected, std::int32_t) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint32_t index = cell_index_.find(cell);
  if (index == 0) return;
  const CellSlot& slot = cells_[index - 1];
  const auto a = static_cast<std::size_t>(agent);
  if (slot.full != 0 ? full_cells_[slot.full - 1].acquire(pool_, cmp, expected, clocks_[a])
                     : slot.acquire(pool_, cmp, expected, clocks_[a])) {
    // The agent's clock moved: its later releases need a new base.
    pool_.release(current_base_[a]);
    current_base_[a] = 0;
  }
}

}  // namespace anyp::runtime::race
