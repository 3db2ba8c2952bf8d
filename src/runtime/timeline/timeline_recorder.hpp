// timeline_recorder.hpp — the modeled timeline's observer: what each rank
// did, in its program order (every data access, tile op, notify and
// satisfied wait, with its size and cell), for simulate_timeline() to put
// on the model's clock after the run. A rank's events are appended only by
// the thread running that rank, so recording takes no lock. On the MPI
// engine a process records its own rank; the processes then exchange the
// streams (serialize / merge) so that every one simulates all ranks alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/access_observer.hpp"
#include "runtime/executable.hpp"
#include "runtime/timeline/event_stream.hpp"

namespace anyp::runtime {

class TimelineRecorder final : public AccessObserver {
 public:
  explicit TimelineRecorder(std::int64_t world_size);

  void on_access(const Access& access) override;
  void on_notify(std::int64_t agent, SiteRef site, const Cell& cell, ir::NotifyKind kind,
                 std::int32_t value, std::optional<std::int32_t> result) override;
  void on_wait(std::int64_t agent, SiteRef site, const Cell& cell, ir::WaitKind cmp,
               std::int64_t expected, std::int32_t value) override;
  void on_compute(std::int64_t agent, SiteRef site, ComputeClass cls, DType dtype,
                  std::int64_t elements) override;
  void on_async_put(std::int64_t agent, std::int64_t event, bool issued) override;

  const std::vector<EventStream>& events() const { return events_; }
  // The ranks that recorded anything, as bytes; merge() takes another
  // process's bytes in.
  std::string serialize() const;
  void merge(const std::string& bytes);

 private:
  std::vector<EventStream> events_;  // per agent
  // Per agent: where each put_async in flight was issued (its event ->
  // the agent's event count then), and the issue point of the put being
  // carried out (its two accesses take it; 0: none).
  struct AsyncPuts {
    std::vector<std::pair<std::int64_t, std::uint32_t>> in_flight;
    std::uint32_t tag = 0;
    int tagged = 0;
  };
  std::vector<AsyncPuts> async_;
};

}  // namespace anyp::runtime
