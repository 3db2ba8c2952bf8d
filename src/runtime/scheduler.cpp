// scheduler.cpp — worker pool, signal cells, parking and deadlock detection.
#include "runtime/scheduler.hpp"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <new>
#include <thread>

#include "runtime/rank_vm.hpp"
#include "runtime/scalar_math.hpp"

namespace anyp::runtime {

Scheduler::Scheduler(std::vector<RankVm*> ranks, SchedulerOptions options, const std::byte* heap,
                     std::int64_t window_bytes)
    : ranks_(std::move(ranks)),
      options_(options),
      rng_(options.seed),
      done_(ranks_.size(), 0),
      parked_(ranks_.size()),
      is_parked_(ranks_.size(), 0),
      heap_(heap),
      first_notifier_(static_cast<std::int32_t*>(std::calloc(
                          static_cast<std::size_t>(std::max<std::int64_t>(
                              1, static_cast<std::int64_t>(ranks_.size()) * window_bytes / 4)),
                          sizeof(std::int32_t))),
                      std::free) {
  if (!first_notifier_) throw std::bad_alloc();
  for (std::size_t r = 0; r < ranks_.size(); ++r) ready_.push_back(static_cast<std::int64_t>(r));
}

void Scheduler::note_notifier(const std::int32_t* cell, std::int64_t from_rank) {
  std::int32_t& first = first_notifier_[(reinterpret_cast<const std::byte*>(cell) - heap_) / 4];
  if (first == 0) {
    first = static_cast<std::int32_t>(from_rank + 1);
  } else if (first != from_rank + 1) {
    auto& more = more_notifiers_[cell];
    if (std::find(more.begin(), more.end(), from_rank) == more.end()) more.push_back(from_rank);
  }
}

std::vector<std::int64_t> Scheduler::notifiers(const std::int32_t* cell) const {
  std::vector<std::int64_t> all;
  const std::int32_t first =
      first_notifier_[(reinterpret_cast<const std::byte*>(cell) - heap_) / 4];
  if (first == 0) return all;
  all.push_back(first - 1);
  auto it = more_notifiers_.find(cell);
  if (it != more_notifiers_.end()) all.insert(all.end(), it->second.begin(), it->second.end());
  std::sort(all.begin(), all.end());
  return all;
}

std::string Scheduler::run() {
  const int workers = options_.deterministic ? 1 : std::max(1, options_.workers);
  std::vector<std::thread> threads;
  for (int i = 1; i < workers; ++i) threads.emplace_back([this] { worker(); });
  worker();
  for (auto& t : threads) t.join();
  return failure_;
}

void Scheduler::worker() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    while (!stop_ && ready_.empty()) {
      if (running_ == 0) {
        stop_ = true;
        if (finished_ < static_cast<std::int64_t>(ranks_.size())) {
          deadlocked_ = true;
          failure_ = deadlock_report();
        }
        cv_.notify_all();
        break;
      }
      ++idle_;
      cv_.wait(lock);
      --idle_;
    }
    if (stop_) return;
    std::int64_t rank;
    if (options_.deterministic && ready_.size() > 1) {
      std::uniform_int_distribution<std::size_t> pick(0, ready_.size() - 1);
      const std::size_t i = pick(rng_);
      rank = ready_[i];
      ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      rank = ready_.front();
      ready_.pop_front();
    }
    ++running_;
    lock.unlock();
    const RankVm::Outcome outcome = ranks_[rank]->run(options_.budget);
    lock.lock();
    --running_;
    switch (outcome) {
      case RankVm::Outcome::Done:
        done_[rank] = 1;
        if (++finished_ == static_cast<std::int64_t>(ranks_.size())) {
          stop_ = true;
          cv_.notify_all();
        }
        break;
      case RankVm::Outcome::Yield:
        ++preemptions_;
        ready_.push_back(rank);
        break;
      case RankVm::Outcome::Parked:
        ++parks_;
        break;
      case RankVm::Outcome::Failed:
        if (failure_.empty()) failure_ = ranks_[rank]->error();
        stop_ = true;
        cv_.notify_all();
        break;
    }
    if (idle_ > 0 && (!ready_.empty() || (running_ == 0 && !stop_))) cv_.notify_one();
  }
}

void Scheduler::notify(std::int64_t from_rank, std::int32_t* cell, ir::NotifyKind op,
                       std::int32_t value) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (op == ir::NotifyKind::Set) {
    *cell = value;
  } else {
    *cell = static_cast<std::int32_t>(static_cast<std::uint32_t>(*cell) +
                                      static_cast<std::uint32_t>(value));
  }
  note_notifier(cell, from_rank);
  auto it = waiters_.find(cell);
  if (it == waiters_.end()) return;
  if (wake_satisfied(it->second, cell) && idle_ > 0) cv_.notify_one();
  if (it->second.empty()) waiters_.erase(it);
}

bool Scheduler::wake_satisfied(std::vector<std::int64_t>& list, const std::int32_t* cell) {
  bool woke = false;
  for (std::size_t i = 0; i < list.size();) {
    const std::int64_t r = list[i];
    if (compare(parked_[r].cmp, *cell, parked_[r].expected)) {
      ready_.push_back(r);
      is_parked_[r] = 0;
      list[i] = list.back();
      list.pop_back();
      woke = true;
    } else {
      ++i;
    }
  }
  return woke;
}

void Scheduler::on_window_write(std::int64_t owner, const std::byte* begin, const std::byte* end) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!is_parked_[owner]) return;
  std::int32_t* cell = parked_[owner].cell;
  const auto* at = reinterpret_cast<const std::byte*>(cell);
  if (at < begin || at >= end) return;
  auto it = waiters_.find(cell);
  if (it == waiters_.end()) return;
  if (wake_satisfied(it->second, cell) && idle_ > 0) cv_.notify_one();
  if (it->second.empty()) waiters_.erase(it);
}

bool Scheduler::wait_or_park(std::int64_t rank, std::int32_t* cell, ir::WaitKind cmp,
                             std::int64_t expected, const std::function<std::string()>& describe) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (compare(cmp, *cell, expected)) return true;
  parked_[rank] = ParkedWait{cell, cmp, expected, describe()};
  waiters_[cell].push_back(rank);
  is_parked_[rank] = 1;
  return false;
}

std::string Scheduler::deadlock_report() const {
  std::int64_t waiting = 0;
  for (std::size_t r = 0; r < ranks_.size(); ++r) waiting += !done_[r];
  std::string s = "deadlock: no rank can make progress (" + std::to_string(waiting) + " of " +
                  std::to_string(ranks_.size()) + " ranks waiting)\n";
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    s += "  rank " + std::to_string(r) + ": ";
    if (done_[r]) {
      s += "finished\n";
      continue;
    }
    const ParkedWait& p = parked_[r];
    s += p.where + " " + ir::wait_name(p.cmp) + " " + std::to_string(p.expected) +
         "; current value " + std::to_string(*p.cell);
    const std::vector<std::int64_t> w = notifiers(p.cell);
    if (w.empty()) {
      s += "; never notified";
    } else {
      s += "; notified by rank" + std::string(w.size() > 1 ? "s " : " ");
      for (std::size_t i = 0; i < w.size() && i < 8; ++i)
        s += (i ? ", " : "") + std::to_string(w[i]);
      if (w.size() > 8) s += " and " + std::to_string(w.size() - 8) + " more";
    }
    s += "\n";
  }
  return s;
}

}  // namespace anyp::runtime
