// signal_table.cpp — signal cells, parking, the notify record and the
// deadlock report's data (signal_table.hpp).
#include "engines/threads/signal_table.hpp"

#include <algorithm>
#include <atomic>
#include <bit>

#include "common/internal_check.hpp"

namespace anyp::threads {

SignalTable::SignalTable(std::int64_t world, std::int64_t agents, const std::byte* heap,
                         std::uint32_t* notify_slots, std::uint64_t* slot_lines)
    : world_(world),
      agents_(agents),
      heap_(heap),
      notify_slots_(notify_slots),
      slot_lines_(slot_lines),
      stripes_(
          std::bit_ceil(std::clamp<std::size_t>(static_cast<std::size_t>(world), 1, kMaxStripes))),
      stripe_mask_(stripes_.size() - 1),
      parked_(static_cast<std::size_t>(agents)),
      is_parked_(static_cast<std::size_t>(agents), 0) {
  // A notify slot keeps a rank in 30 bits.
  ANYP_CHECK(agents < (std::int64_t{1} << 30), "too many ranks for the notify record");
}

namespace {

// Adds one notify to a rank's tally of a cell.
template <class T>
void count_notify(T& tally, bool set, std::int32_t value) {
  if (set) {
    ++tally.sets;
    tally.last_set = value;
  } else if (value >= 0) {
    ++tally.adds_up;
    tally.up_total += value;
  } else {
    ++tally.adds_down;
    tally.down_total += value;
  }
}

}  // namespace

std::size_t SignalTable::TallyIndex::slot(std::uint64_t key) const {
  const std::size_t mask = entries.size() - 1;
  std::size_t i = (key * 0x9E3779B97F4A7C15ull) >> shift;
  while (entries[i].key != key && entries[i].key != 0) i = (i + 1) & mask;
  return i;
}

std::uint32_t SignalTable::TallyIndex::find(std::uint64_t key) const {
  return entries.empty() ? 0 : entries[slot(key)].tally;
}

void SignalTable::TallyIndex::insert(std::uint64_t key, std::uint32_t tally) {
  if (2 * (used + 1) > entries.size()) {  // grow: at most half full
    std::vector<Entry> old(std::max<std::size_t>(64, 2 * entries.size()));
    old.swap(entries);
    shift = 64 - std::countr_zero(entries.size());
    for (const Entry& e : old)
      if (e.key != 0) entries[slot(e.key)] = e;
  }
  Entry& e = entries[slot(key)];
  used += e.key == 0;
  e = Entry{key, tally};
}

void SignalTable::note_notify(Stripe& stripe, std::uint64_t word, std::int64_t from_rank,
                              ir::NotifyKind op, std::int32_t value) {
  std::vector<Tally>& tallies_ = stripe.tallies;
  TallyIndex& tally_index_ = stripe.tally_index;
  std::uint32_t& slot = notify_slots_[word];
  // Its line of slots is zeroed after the run (16 slots a line; other
  // stripes' slots may share it).
  {
    const std::uint64_t bit = std::uint64_t{1} << (word / 16 % 64);
    std::atomic_ref<std::uint64_t> lines(slot_lines_[word / 16 / 64]);
    if ((lines.load(std::memory_order_relaxed) & bit) == 0)
      lines.fetch_or(bit, std::memory_order_relaxed);
  }
  const bool set = op == ir::NotifyKind::Set;
  const auto rank = static_cast<std::int32_t>(from_rank);
  if (slot == kNever && value == 1) {  // the cell's first notify, a credit or a flag: inline
    slot = (set ? kOneSetOne : kOneAddOne) | static_cast<std::uint32_t>(rank);
    return;
  }
  // A tally's key in the index: (word, rank) as word * P + rank + 1 (never 0).
  const std::uint64_t key0 = word * static_cast<std::uint64_t>(world_) + 1;
  // Puts a new tally for `r` at the head of the cell's chain. The one that
  // this pushes to depth kScanned enters the index.
  auto push_tally = [&](std::int32_t r) -> Tally& {
    ANYP_CHECK(tallies_.size() + 1 < (1u << 30), "too many notify tallies");
    tallies_.push_back(Tally{r, slot == kNever ? 0 : slot & ~kStateMask});
    const auto index = static_cast<std::uint32_t>(tallies_.size());  // index + 1
    slot = kTallied | index;
    std::uint32_t deep = index;
    for (int d = 0; d < kScanned && deep != 0; ++d) deep = tallies_[deep - 1].next;
    if (deep != 0)
      tally_index_.insert(key0 + static_cast<std::uint64_t>(tallies_[deep - 1].rank), deep);
    return tallies_.back();
  };
  if (slot != kNever && (slot & kStateMask) != kTallied) {  // the inline notify becomes a tally
    const auto first = static_cast<std::int32_t>(slot & ~kStateMask);
    const bool first_set = (slot & kStateMask) == kOneSetOne;
    slot = kNever;
    count_notify(push_tally(first), first_set, 1);
  }
  // The rank's tally: among the first kScanned of the chain, or in the index.
  std::uint32_t t = slot & ~kStateMask;
  for (int d = 0; d < kScanned && t != 0 && tallies_[t - 1].rank != rank; ++d)
    t = tallies_[t - 1].next;
  if (t != 0 && tallies_[t - 1].rank != rank)
    t = tally_index_.find(key0 + static_cast<std::uint64_t>(rank));
  count_notify(t != 0 ? tallies_[t - 1] : push_tally(rank), set, value);
}

std::vector<runtime::NotifierTally> SignalTable::notifiers(std::int64_t owner,
                                                           std::uint64_t word) const {
  const std::vector<Tally>& tallies_ = stripe_of(owner).tallies;
  std::vector<runtime::NotifierTally> all;
  const std::uint32_t slot = notify_slots_[word];
  const std::uint32_t state = slot & kStateMask;
  if (slot == kNever) return all;
  if (state != kTallied) {
    all.push_back(runtime::NotifierTally{.rank = slot & ~kStateMask});
    count_notify(all.back(), state == kOneSetOne, 1);
    return all;
  }
  for (std::uint32_t i = slot & ~kStateMask; i != 0; i = tallies_[i - 1].next) {
    const Tally& t = tallies_[i - 1];
    all.push_back(runtime::NotifierTally{t.rank, t.adds_up, t.up_total, t.adds_down, t.down_total,
                                         t.sets, t.last_set});
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  return all;
}

bool SignalTable::release_if_satisfied(std::int64_t agent, const std::int32_t* cell) {
  const auto r = static_cast<std::size_t>(agent);
  if (!is_parked_[r] || parked_[r].cell != cell ||
      !runtime::compare(parked_[r].cmp, *cell, parked_[r].expected))
    return false;
  is_parked_[r] = 0;
  return true;
}

void SignalTable::on_signal_write_locked(std::int64_t writer, std::int64_t owner,
                                         const std::byte* begin, const std::byte* end) {
  // Every cell the write touches (even in part) records its writer.
  Stripe& stripe = stripe_of(owner);
  writer %= world_;  // the rank, in reports
  const auto first = (begin - heap_) / 4, last = (end - heap_ + 3) / 4;
  for (auto word = first; word < last; ++word) {
    auto& writers = stripe.data_writers[reinterpret_cast<const std::int32_t*>(heap_ + word * 4)];
    if (std::find(writers.begin(), writers.end(), writer) == writers.end())
      writers.push_back(writer);
  }
  for (auto agent = static_cast<std::size_t>(owner); agent < static_cast<std::size_t>(agents_);
       agent += static_cast<std::size_t>(world_)) {
    if (!is_parked_[agent]) continue;
    const auto* at = reinterpret_cast<const std::byte*>(parked_[agent].cell);
    if (at + 4 <= begin || at >= end) continue;  // the write does not touch the cell
    if (release_if_satisfied(static_cast<std::int64_t>(agent), parked_[agent].cell))
      ready_->make_ready(static_cast<std::int64_t>(agent));
  }
}

std::int64_t SignalTable::release_parked_on(std::int64_t owner, const std::int32_t* cell) {
  if (agents_ == world_)  // one agent per rank
    return release_if_satisfied(owner, cell) ? owner : -1;
  std::int64_t first = -1;
  for (auto agent = owner; agent < agents_; agent += world_) {
    if (!release_if_satisfied(agent, cell)) continue;
    if (first < 0) {
      first = agent;
    } else {
      ready_->make_ready(agent);
    }
  }
  return first;
}

std::string SignalTable::deadlock_report(const std::function<bool(std::int64_t agent)>& waits_for,
                                         const std::string& extra) const {
  std::vector<runtime::ParkedWait> waits(static_cast<std::size_t>(agents_));
  std::vector<const runtime::ParkedWait*> parked(static_cast<std::size_t>(world_), nullptr);
  std::vector<runtime::BlockWait> blocks;
  for (std::size_t a = 0; a < waits.size(); ++a) {
    const auto agent = static_cast<std::int64_t>(a);
    const std::int64_t rank = agent % world_, block = agent / world_;
    // A finished agent, or a block idle between launches, waits for nothing.
    if (!waits_for(agent)) continue;
    const Parked& p = parked_[a];
    waits[a] =
        runtime::ParkedWait{p.where, p.cmp, p.expected, *p.cell, notifiers(rank, p.slot), {}};
    const auto& data_writers = stripe_of(rank).data_writers;
    auto it = data_writers.find(p.cell);
    if (it != data_writers.end()) {
      waits[a].data_writers = it->second;
      std::sort(waits[a].data_writers.begin(), waits[a].data_writers.end());
    }
    if (block == 0) {
      parked[a] = &waits[a];
    } else {
      blocks.push_back(runtime::BlockWait{rank, block, &waits[a]});
    }
  }
  return runtime::deadlock_report(parked, extra, blocks);
}

}  // namespace anyp::threads
