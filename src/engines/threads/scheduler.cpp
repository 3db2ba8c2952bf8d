// scheduler.cpp — worker pool, signal cells, parking and deadlock detection.
#include "engines/threads/scheduler.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <thread>

namespace anyp::threads {

Scheduler::Scheduler(std::vector<runtime::RankVm*> ranks, std::unique_ptr<SchedulePolicy> policy,
                     int workers, std::int64_t budget, const std::byte* heap,
                     std::int64_t heap_bytes, ReportExtra report_extra)
    : ranks_(std::move(ranks)),
      policy_(std::move(policy)),
      workers_(std::max(1, workers)),
      budget_(budget),
      report_extra_(std::move(report_extra)),
      done_(ranks_.size(), 0),
      parked_(ranks_.size()),
      is_parked_(ranks_.size(), 0),
      heap_(heap),
      first_notifier_(static_cast<std::int32_t*>(std::calloc(
                          static_cast<std::size_t>(std::max<std::int64_t>(1, heap_bytes / 4)),
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

void Scheduler::note_data_writer(const std::int32_t* cell, std::int64_t rank) {
  auto& writers = data_writers_[cell];
  if (std::find(writers.begin(), writers.end(), rank) == writers.end()) writers.push_back(rank);
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
  const int workers = policy_->op_by_op() ? 1 : workers_;
  std::vector<std::thread> threads;
  for (int i = 1; i < workers; ++i) {
    try {
      threads.emplace_back([this] { worker(); });
    } catch (const std::system_error&) {
      break;  // the system refuses more threads: run with the workers started so far
    }
  }
  worker();
  for (auto& t : threads) t.join();
  return failure_;
}

void Scheduler::worker() {
  const bool op_by_op = policy_->op_by_op();
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
    const std::int64_t rank = policy_->pick(ready_);
    ++running_;
    lock.unlock();
    const runtime::RankVm::Outcome outcome = ranks_[rank]->run(budget_, op_by_op);
    lock.lock();
    --running_;
    policy_->after_slice(rank);
    switch (outcome) {
      case runtime::RankVm::Outcome::Done:
        done_[rank] = 1;
        if (++finished_ == static_cast<std::int64_t>(ranks_.size())) {
          stop_ = true;
          cv_.notify_all();
        }
        break;
      case runtime::RankVm::Outcome::Yield:
        ++preemptions_;
        ready_.push_back(rank);
        break;
      case runtime::RankVm::Outcome::Parked:
        ++parks_;
        break;
      case runtime::RankVm::Outcome::Failed:
        if (failure_.empty()) failure_ = ranks_[rank]->error();
        stop_ = true;
        cv_.notify_all();
        break;
    }
    if (idle_ > 0 && (!ready_.empty() || (running_ == 0 && !stop_))) cv_.notify_one();
  }
}

void Scheduler::park(std::int64_t rank, std::int32_t* cell, ir::WaitKind cmp, std::int64_t expected,
                     std::string where) {
  parked_[rank] = Parked{cell, cmp, expected, std::move(where)};
  waiters_[cell].push_back(rank);
  is_parked_[rank] = 1;
}

void Scheduler::wake_cell(std::int32_t* cell) {
  auto it = waiters_.find(cell);
  if (it == waiters_.end()) return;
  if (wake_satisfied(it->second, cell) && idle_ > 0) cv_.notify_one();
  if (it->second.empty()) waiters_.erase(it);
}

bool Scheduler::wake_satisfied(std::vector<std::int64_t>& list, const std::int32_t* cell) {
  bool woke = false;
  for (std::size_t i = 0; i < list.size();) {
    const std::int64_t r = list[i];
    if (runtime::compare(parked_[r].cmp, *cell, parked_[r].expected)) {
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

void Scheduler::on_signal_write_locked(std::int64_t writer, std::int64_t owner,
                                       const std::byte* begin, const std::byte* end) {
  // Every cell the write touches (even in part) records its writer.
  const auto first = (begin - heap_) / 4, last = (end - heap_ + 3) / 4;
  for (auto word = first; word < last; ++word)
    note_data_writer(reinterpret_cast<const std::int32_t*>(heap_ + word * 4), writer);
  if (!is_parked_[owner]) return;
  std::int32_t* cell = parked_[owner].cell;
  const auto* at = reinterpret_cast<const std::byte*>(cell);
  if (at + 4 <= begin || at >= end) return;  // the write does not touch the cell
  wake_cell(cell);
}

std::string Scheduler::deadlock_report() const {
  std::vector<runtime::ParkedWait> waits(ranks_.size());
  std::vector<const runtime::ParkedWait*> parked(ranks_.size(), nullptr);
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    if (done_[r]) continue;
    const Parked& p = parked_[r];
    waits[r] = runtime::ParkedWait{p.where, p.cmp, p.expected, *p.cell, notifiers(p.cell), {}};
    auto it = data_writers_.find(p.cell);
    if (it != data_writers_.end()) {
      waits[r].data_writers = it->second;
      std::sort(waits[r].data_writers.begin(), waits[r].data_writers.end());
    }
    parked[r] = &waits[r];
  }
  return runtime::deadlock_report(parked, report_extra_ ? report_extra_(done_) : std::string());
}

}  // namespace anyp::threads
