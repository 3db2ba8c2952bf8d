// task_recorder.hpp — the tasks of every dispatch, as the door sees them
// (PyPTO's DFX records: enable_dep_gen, enable_scope_stats,
// enable_chip_swimlane). An observer (access_observer.hpp): per rank and
// dispatch, each task (an orchestration function's call of an incore
// function) with its wall-clock span and the bytes its agents read and
// wrote; a task depends on every earlier task of its dispatch whose bytes
// conflict with its own (one wrote what the other read or wrote). A tensor
// the task's function creates is its own and not listed. Only the ranks
// this process runs are recorded.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/access_observer.hpp"
#include "runtime/executable.hpp"

namespace anyp::runtime {

// Bytes [first, end) of one memory: a window buffer's copy on `owner`, or a
// host argument (owner -1). A region that is not contiguous is taken whole
// from its first to its last byte.
struct ByteRange {
  Space space = Space::Window;
  std::int32_t id = -1;
  std::int64_t owner = -1;
  std::int64_t first = 0, end = 0;
  bool same_memory(const ByteRange& o) const {
    return space == o.space && id == o.id && owner == o.owner;
  }
  bool overlaps(const ByteRange& o) const {
    return same_memory(o) && first < o.end && o.first < end;
  }
};

struct TaskRecord {
  SiteRef site;                           // the callee, where it is called
  std::int64_t start_ns = 0, end_ns = 0;  // from the recorder's start
  std::vector<ByteRange> reads, writes;   // sorted, disjoint after the task ends
};

struct DispatchRecord {
  std::size_t index = 0;   // the rank's index-th dispatch (host order)
  std::int32_t code = -1;  // Executable::codes
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;  // its last event
  std::vector<TaskRecord> tasks;
};

class TaskRecorder : public AccessObserver {
 public:
  explicit TaskRecorder(const Executable& exec);
  void on_dispatch(std::int64_t rank, std::size_t index) override;
  void on_task(std::int64_t agent, SiteRef site, bool begin) override;
  void on_access(const Access& access) override;

  // Per rank: its dispatches in order (none for a rank another process ran).
  std::vector<std::vector<DispatchRecord>> take();

  // The earlier tasks of `d` that task `j` depends on, in order.
  static std::vector<std::size_t> dependencies(const DispatchRecord& d, std::size_t j);

 private:
  struct Rank {
    std::mutex mutex;  // a launch's blocks access at once
    std::vector<DispatchRecord> dispatches;
    bool in_task = false;
  };
  std::int64_t now() const;
  // A tensor the task's function creates (pl.create_tensor, named
  // "<function>.<variable>"): the task's own, never shared with another.
  bool own_tensor(const TaskRecord& task, const Region& region) const;
  const Executable& exec_;
  std::chrono::steady_clock::time_point start_;
  std::vector<std::unique_ptr<Rank>> ranks_;
};

}  // namespace anyp::runtime
