// scheduler.cpp — worker pool, signal cells, parking and deadlock detection.
#include "engines/threads/scheduler.hpp"

#include <algorithm>
#include <bit>
#include <chrono>

#include "common/internal_check.hpp"
#include "common/machine.hpp"
#include "engines/threads/worker_pool.hpp"

namespace anyp::threads {

Scheduler::Scheduler(std::vector<runtime::RankVm*> ranks, std::int64_t world,
                     std::unique_ptr<SchedulePolicy> policy, int workers, std::int64_t budget,
                     const std::byte* heap, std::int64_t window_bytes, std::uint32_t* notify_slots,
                     ReportExtra report_extra)
    : ranks_(std::move(ranks)),
      world_(world),
      policy_(std::move(policy)),
      workers_(std::max(1, workers)),
      // Polling for work pays only when every worker has a core of its own.
      may_spin_(workers_ > 1 && workers_ <= machine_cores()),
      budget_(budget),
      report_extra_(std::move(report_extra)),
      heap_(heap),
      window_bytes_(window_bytes),
      notify_slots_(notify_slots),
      stripes_(
          std::bit_ceil(std::clamp<std::size_t>(static_cast<std::size_t>(world), 1, kMaxStripes))),
      stripe_mask_(stripes_.size() - 1),
      parked_(ranks_.size()),
      is_parked_(ranks_.size(), 0),
      done_(ranks_.size(), 0) {
  // A notify slot keeps a rank in 30 bits.
  ANYP_CHECK(ranks_.size() < (std::size_t{1} << 30), "too many ranks for the notify record");
  for (std::size_t r = 0; r < ranks_.size(); ++r) ready_.push_back(static_cast<std::int64_t>(r));
  ready_size_.store(ready_.size(), std::memory_order_relaxed);
  // Local queues only where a poller can take a rank over (and never under
  // a policy that picks every rank itself).
  if (may_spin_ && !policy_->op_by_op()) local_.resize(static_cast<std::size_t>(workers_));
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

std::size_t Scheduler::TallyIndex::slot(std::uint64_t key) const {
  const std::size_t mask = entries.size() - 1;
  std::size_t i = (key * 0x9E3779B97F4A7C15ull) >> shift;
  while (entries[i].key != key && entries[i].key != 0) i = (i + 1) & mask;
  return i;
}

std::uint32_t Scheduler::TallyIndex::find(std::uint64_t key) const {
  return entries.empty() ? 0 : entries[slot(key)].tally;
}

void Scheduler::TallyIndex::insert(std::uint64_t key, std::uint32_t tally) {
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

void Scheduler::note_notify(Stripe& stripe, const std::int32_t* cell, std::int64_t from_rank,
                            ir::NotifyKind op, std::int32_t value) {
  std::vector<Tally>& tallies_ = stripe.tallies;
  TallyIndex& tally_index_ = stripe.tally_index;
  const auto word =
      static_cast<std::uint64_t>((reinterpret_cast<const std::byte*>(cell) - heap_) / 4);
  std::uint32_t& slot = notify_slots_[word];
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

std::vector<runtime::NotifierTally> Scheduler::notifiers(std::int64_t owner,
                                                         const std::int32_t* cell) const {
  const std::vector<Tally>& tallies_ = stripe_of(owner).tallies;
  std::vector<runtime::NotifierTally> all;
  const std::uint32_t slot = notify_slots_[(reinterpret_cast<const std::byte*>(cell) - heap_) / 4];
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

std::string Scheduler::run() {
  const int workers = policy_->op_by_op() ? 1 : workers_;
  workers_used_ = run_on_workers(workers - 1, [this] { worker(); });
  return failure_;
}

namespace {

// The scheduler and worker index of the worker running on this thread (so
// a wake knows whose local queue to use).
thread_local const void* current_scheduler = nullptr;
thread_local int current_worker = -1;

using Clock = std::chrono::steady_clock;
// An idle worker polls this long before it sleeps: longer than a futex
// round trip, short enough that an idle worker soon costs nothing.
constexpr auto kPollFor = std::chrono::microseconds(50);
// A rank in another worker's local queue is taken over after this long:
// the owner usually finishes its slice and runs it sooner, on a warm cache
// (Go's runnext uses 3 µs the same way).
constexpr auto kStealAfter = std::chrono::microseconds(3);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

Scheduler::Poll Scheduler::poll_for_work() const {
  const auto start = Clock::now();
  auto local_seen = Clock::time_point::max();  // when a local rank was first seen
  for (;;) {
    if (ready_size_.load(std::memory_order_relaxed) > 0 || stopped_.load(std::memory_order_relaxed))
      return Poll::Ready;
    const auto now = Clock::now();
    if (local_size_.load(std::memory_order_relaxed) > 0) {
      if (local_seen == Clock::time_point::max()) local_seen = now;
      if (now - local_seen >= kStealAfter) return Poll::Steal;
    } else {
      local_seen = Clock::time_point::max();
    }
    if (now - start >= kPollFor) return Poll::Nothing;
    for (int i = 0; i < 16; ++i) cpu_relax();
  }
}

std::int64_t Scheduler::take_local(int worker) {
  std::deque<std::int64_t>& local = local_[static_cast<std::size_t>(worker)].ranks;
  const std::int64_t rank = local.front();
  local.pop_front();
  local_size_.store(--local_count_, std::memory_order_relaxed);
  return rank;
}

void Scheduler::worker() {
  const bool op_by_op = policy_->op_by_op();
  const int me = next_worker_.fetch_add(1, std::memory_order_relaxed);
  const bool has_local = me < static_cast<int>(local_.size());
  current_scheduler = this;
  current_worker = has_local ? me : -1;
  struct Leave {
    ~Leave() {
      current_scheduler = nullptr;
      current_worker = -1;
    }
  } leave;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    std::int64_t rank = -1;
    // Ranks this worker woke run here first, on a warm cache.
    if (has_local && !local_[static_cast<std::size_t>(me)].ranks.empty()) rank = take_local(me);
    while (rank < 0 && !stop_ && ready_.empty()) {
      if (running_ == 0 && local_count_ == 0) {
        stop_ = true;
        stopped_.store(true, std::memory_order_relaxed);
        if (finished_ < static_cast<std::int64_t>(ranks_.size())) {
          deadlocked_ = true;
          failure_ = deadlock_report();
        }
        cv_.notify_all();
        break;
      }
      if (may_spin_) {
        lock.unlock();
        const Poll poll = poll_for_work();
        lock.lock();
        if (poll == Poll::Steal && ready_.empty() && !stop_) {
          for (std::size_t w = 0; w < local_.size() && rank < 0; ++w)
            if (!local_[w].ranks.empty()) rank = take_local(static_cast<int>(w));
          if (rank >= 0) break;
        }
        // Re-check under the lock: a rank made ready, or the run stopped,
        // after the last poll would otherwise find this worker asleep with
        // no one left to wake it.
        if (poll != Poll::Nothing || stop_ || !ready_.empty() || local_count_ > 0 || running_ == 0)
          continue;
      }
      ++idle_;
      cv_.wait(lock);
      --idle_;
    }
    if (stop_) return;
    if (rank < 0) {
      rank = policy_->pick(ready_);
      ready_size_.store(ready_.size(), std::memory_order_relaxed);
    }
    ++running_;
    lock.unlock();
    const runtime::RankVm::Outcome outcome = ranks_[rank]->run(budget_, op_by_op);
    lock.lock();
    --running_;
    policy_->after_slice(rank);
    auto stop_run = [&] {
      stop_ = true;
      stopped_.store(true, std::memory_order_relaxed);
      cv_.notify_all();
    };
    switch (outcome) {
      case runtime::RankVm::Outcome::Done:
        done_[rank] = 1;
        if (++finished_ == static_cast<std::int64_t>(ranks_.size())) stop_run();
        break;
      case runtime::RankVm::Outcome::Yield:
        ++preemptions_;
        ready_.push_back(rank);
        ready_size_.store(ready_.size(), std::memory_order_relaxed);
        break;
      case runtime::RankVm::Outcome::Parked:
        ++parks_;
        break;
      case runtime::RankVm::Outcome::Failed:
        if (failure_.empty()) failure_ = ranks_[rank]->error();
        stop_run();
        break;
    }
    if (idle_ > 0 && (!ready_.empty() || (running_ == 0 && !stop_))) cv_.notify_one();
  }
}

bool Scheduler::release_if_satisfied(std::int64_t agent, const std::int32_t* cell) {
  const auto r = static_cast<std::size_t>(agent);
  if (!is_parked_[r] || parked_[r].cell != cell ||
      !runtime::compare(parked_[r].cmp, *cell, parked_[r].expected))
    return false;
  is_parked_[r] = 0;
  return true;
}

void Scheduler::make_ready(std::int64_t rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Woken by a rank running on one of this run's workers, while no worker
  // sleeps: onto that worker's local queue (the others are busy or
  // polling, and a poller takes the oldest over after kStealAfter).
  if (current_scheduler == this && current_worker >= 0 && idle_ == 0) {
    local_[static_cast<std::size_t>(current_worker)].ranks.push_back(rank);
    local_size_.store(++local_count_, std::memory_order_relaxed);
    return;
  }
  ready_.push_back(rank);
  ready_size_.store(ready_.size(), std::memory_order_relaxed);
  if (idle_ > 0) cv_.notify_one();
}

void Scheduler::on_signal_write_locked(std::int64_t writer, std::int64_t owner,
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
  for (auto agent = static_cast<std::size_t>(owner); agent < ranks_.size();
       agent += static_cast<std::size_t>(world_)) {
    if (!is_parked_[agent]) continue;
    const auto* at = reinterpret_cast<const std::byte*>(parked_[agent].cell);
    if (at + 4 <= begin || at >= end) continue;  // the write does not touch the cell
    if (release_if_satisfied(static_cast<std::int64_t>(agent), parked_[agent].cell))
      make_ready(static_cast<std::int64_t>(agent));
  }
}

std::int64_t Scheduler::release_parked_on(std::int64_t owner, const std::int32_t* cell) {
  if (static_cast<std::int64_t>(ranks_.size()) == world_)  // one agent per rank
    return release_if_satisfied(owner, cell) ? owner : -1;
  std::int64_t first = -1;
  for (auto agent = owner; agent < static_cast<std::int64_t>(ranks_.size()); agent += world_) {
    if (!release_if_satisfied(agent, cell)) continue;
    if (first < 0) {
      first = agent;
    } else {
      make_ready(agent);
    }
  }
  return first;
}

std::string Scheduler::deadlock_report() const {
  std::vector<runtime::ParkedWait> waits(ranks_.size());
  std::vector<const runtime::ParkedWait*> parked(static_cast<std::size_t>(world_), nullptr);
  std::vector<runtime::BlockWait> blocks;
  for (std::size_t a = 0; a < ranks_.size(); ++a) {
    const auto agent = static_cast<std::int64_t>(a);
    const std::int64_t rank = agent % world_, block = agent / world_;
    // A finished agent, or a block idle between launches, waits for nothing.
    if (done_[a] || (block > 0 && ranks_[a]->idle())) continue;
    const Parked& p = parked_[a];
    waits[a] =
        runtime::ParkedWait{p.where, p.cmp, p.expected, *p.cell, notifiers(rank, p.cell), {}};
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
  const std::span<const char> finished(done_.data(), static_cast<std::size_t>(world_));
  return runtime::deadlock_report(parked, report_extra_ ? report_extra_(finished) : std::string(),
                                  blocks);
}

}  // namespace anyp::threads
