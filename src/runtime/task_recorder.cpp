// task_recorder.cpp — per rank and dispatch, the tasks and their bytes.
#include "runtime/task_recorder.hpp"

#include <algorithm>
#include <tuple>

namespace anyp::runtime {
namespace {

// Adds r to ranges, merged into the last range when it extends it (a task's
// rows in order); the rest waits for coalesce().
void add(std::vector<ByteRange>& ranges, const ByteRange& r) {
  if (r.first == r.end) return;
  if (!ranges.empty()) {
    ByteRange& last = ranges.back();
    if (last.same_memory(r) && r.first <= last.end && last.first <= r.end) {
      last.first = std::min(last.first, r.first);
      last.end = std::max(last.end, r.end);
      return;
    }
  }
  ranges.push_back(r);
}

// Sorted by memory and first byte, overlapping and adjacent ranges merged.
void coalesce(std::vector<ByteRange>& ranges) {
  auto key = [](const ByteRange& r) { return std::tuple(r.space, r.id, r.owner, r.first); };
  std::sort(ranges.begin(), ranges.end(),
            [&](const ByteRange& a, const ByteRange& b) { return key(a) < key(b); });
  std::vector<ByteRange> out;
  for (const ByteRange& r : ranges) {
    if (!out.empty() && out.back().same_memory(r) && r.first <= out.back().end)
      out.back().end = std::max(out.back().end, r.end);
    else
      out.push_back(r);
  }
  ranges = std::move(out);
}

bool any_overlap(const std::vector<ByteRange>& a, const std::vector<ByteRange>& b) {
  for (const ByteRange& x : a)
    for (const ByteRange& y : b)
      if (x.overlaps(y)) return true;
  return false;
}

}  // namespace

TaskRecorder::TaskRecorder(const Executable& exec)
    : exec_(exec), start_(std::chrono::steady_clock::now()) {
  for (std::int64_t r = 0; r < exec.world_size; ++r) ranks_.push_back(std::make_unique<Rank>());
}

std::int64_t TaskRecorder::now() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              start_)
      .count();
}

void TaskRecorder::on_dispatch(std::int64_t rank, std::size_t index) {
  Rank& r = *ranks_[static_cast<std::size_t>(rank)];
  const std::lock_guard lock(r.mutex);
  DispatchRecord d;
  d.index = index;
  d.code = exec_.ranks[static_cast<std::size_t>(rank)][index].code;
  d.start_ns = d.end_ns = now();
  r.dispatches.push_back(std::move(d));
  r.in_task = false;
}

void TaskRecorder::on_task(std::int64_t agent, SiteRef site, bool begin) {
  Rank& r = *ranks_[static_cast<std::size_t>(exec_.rank_of_agent(agent))];
  const std::lock_guard lock(r.mutex);
  if (r.dispatches.empty()) return;
  DispatchRecord& d = r.dispatches.back();
  const std::int64_t t = now();
  d.end_ns = t;
  if (begin) {
    TaskRecord task;
    task.site = site;
    task.start_ns = task.end_ns = t;
    d.tasks.push_back(std::move(task));
    r.in_task = true;
    return;
  }
  if (!r.in_task || d.tasks.empty()) return;
  TaskRecord& task = d.tasks.back();
  task.end_ns = t;
  coalesce(task.reads);
  coalesce(task.writes);
  r.in_task = false;
}

void TaskRecorder::on_access(const Access& a) {
  Rank& r = *ranks_[static_cast<std::size_t>(exec_.rank_of_agent(a.agent))];
  const std::lock_guard lock(r.mutex);
  if (r.dispatches.empty()) return;
  DispatchRecord& d = r.dispatches.back();
  d.end_ns = now();
  if (!r.in_task) return;  // the orchestration function's own access
  if (own_tensor(d.tasks.back(), a.region)) return;
  const ByteRange range{a.region.space, a.region.id, a.region.owner, a.region.first, a.region.end};
  TaskRecord& task = d.tasks.back();
  add(a.kind == AccessKind::Read ? task.reads : task.writes, range);
}

bool TaskRecorder::own_tensor(const TaskRecord& task, const Region& region) const {
  if (region.space != Space::Window) return false;
  const WindowBuffer& b = exec_.buffers[static_cast<std::size_t>(region.id)];
  if (!b.local) return false;
  const std::string& callee = exec_.codes[static_cast<std::size_t>(task.site.code)]
                                  .sites[static_cast<std::size_t>(task.site.site)]
                                  .function;
  return b.name.size() > callee.size() && b.name.compare(0, callee.size(), callee) == 0 &&
         b.name[callee.size()] == '.';
}

std::vector<std::vector<DispatchRecord>> TaskRecorder::take() {
  std::vector<std::vector<DispatchRecord>> out;
  for (auto& r : ranks_) {
    const std::lock_guard lock(r->mutex);
    out.push_back(std::move(r->dispatches));
  }
  return out;
}

std::vector<std::size_t> TaskRecorder::dependencies(const DispatchRecord& d, std::size_t j) {
  std::vector<std::size_t> deps;
  const TaskRecord& later = d.tasks[j];
  for (std::size_t i = 0; i < j; ++i) {
    const TaskRecord& earlier = d.tasks[i];
    if (any_overlap(earlier.writes, later.reads) || any_overlap(earlier.writes, later.writes) ||
        any_overlap(earlier.reads, later.writes))
      deps.push_back(i);
  }
  return deps;
}

}  // namespace anyp::runtime
