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

namespace anyp::runtime {

struct TimelineEvent {
  enum class Kind : std::uint8_t { Access, Compute, Notify, Wait };
  Kind kind = Kind::Access;
  std::uint8_t sub = 0;  // AccessKind, ComputeClass, NotifyKind or WaitKind
  DType dtype = DType::FP32;
  Space space = Space::Window;  // Access
  SiteRef site;
  std::int32_t id = -1;     // Access: buffer or host argument; Notify/Wait: buffer
  std::int32_t owner = -1;  // Access: the window's rank (-1: host); Notify/Wait: the cell's
  // Access of a put_async: k + 1 when the put was issued before the
  // agent's event k (it is recorded where the door carried it out, at its
  // wait_async); 0 otherwise.
  std::uint32_t issued_before = 0;
  std::int64_t first = 0;   // Access: first byte in the buffer; Notify/Wait: the cell's byte
  std::int64_t end = 0;     // Access: one past the last byte it bounds
  std::int64_t amount = 0;  // Access: bytes; Compute: elements; Notify: value; Wait: expected
};
static_assert(sizeof(TimelineEvent) == 48, "an event record is 48 bytes");

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

  const std::vector<std::vector<TimelineEvent>>& events() const { return events_; }
  // The ranks that recorded anything, as bytes; merge() takes another
  // process's bytes in.
  std::string serialize() const;
  void merge(const std::string& bytes);

 private:
  std::vector<std::vector<TimelineEvent>> events_;  // per rank
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
