// access_observer.hpp — what an analysis sees of a run: every window and
// host-tensor access and every signal operation, as it passes the door
// (fabric.hpp), and the tile math between them. Counting for the cost card
// (cost_counter.hpp), the race checker (race/race_checker.hpp) and the
// modeled timeline's recorder (timeline/timeline_recorder.hpp) are
// observers. An observer is one new file, never an edit of the VM.
//
// Contract of the calls (`agent`: the issuing VM, Executable::agents; a rank
// in a one-block program):
//   on_dispatch  a rank enters its index-th dispatch (host order).
//   on_access    a data access, before it is performed, on the issuing agent's
//                thread (an agent: a rank, or one block of a rank's launch). A put/get is two
//                accesses: a read of its source, then a write (or atomic add) of its destination.
//   on_notify    a notify, called by the engine inside the critical section
//                that applies it to the cell; `result` is the cell's new value
//                where the engine applies the notify itself (threads), and
//                empty where the target's memory applies it (MPI: an
//                MPI_Accumulate, whose result the issuer never sees).
//   on_wait      a satisfied wait, inside the same critical section as the
//                check that satisfied it, with the comparison and the value
//                that satisfied it. So notifies and waits reach the
//                observers in the order the cells saw them.
//   on_wait_blocked a wait that does not hold when checked: the agent parks
//                (the threads engine only; it re-checks when the cell changes).
//   on_async_put a pld::tensor::put_async's event: `issued` at the put_async,
//                then not issued at its wait_async, right before the put's
//                two accesses (the door carries the put out there).
//   on_task      a task (an orchestration function's call of an incore
//                function: site names the callee and where it is called)
//                begins or ends, on block 0's thread: between the two, the
//                accesses of every agent of the rank are the task's.
//   on_compute   tile math (no memory access): its class, dtype and element
//                count, on the issuing agent's thread (the modeled timeline
//                prices it).
// Calls may come from several worker threads at once; an observer that keeps
// shared state synchronises it itself.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/op_attrs.hpp"
#include "runtime/compute_class.hpp"
#include "runtime/region.hpp"

namespace anyp::runtime {

enum class AccessKind : std::uint8_t { Read, Write, AtomicAdd };
const char* access_kind_name(AccessKind k);  // "read", "write", "atomic add"

struct Access {
  std::int64_t agent = -1;  // the issuing agent (a rank, or a block of one)
  SiteRef site;
  AccessKind kind = AccessKind::Read;
  const Region& region;
};

class AccessObserver {
 public:
  virtual ~AccessObserver() = default;
  virtual void on_dispatch(std::int64_t /*rank*/, std::size_t /*index*/) {}
  virtual void on_access(const Access& /*access*/) {}
  virtual void on_notify(std::int64_t /*agent*/, SiteRef /*site*/, const Cell& /*cell*/,
                         ir::NotifyKind /*kind*/, std::int32_t /*value*/,
                         std::optional<std::int32_t> /*result*/) {}
  // `value`: the cell's value that satisfied `cmp expected`.
  virtual void on_wait(std::int64_t /*agent*/, SiteRef /*site*/, const Cell& /*cell*/,
                       ir::WaitKind /*cmp*/, std::int64_t /*expected*/, std::int32_t /*value*/) {}
  // `value`: the cell's value that failed `cmp expected`.
  virtual void on_wait_blocked(std::int64_t /*agent*/, SiteRef /*site*/, const Cell& /*cell*/,
                               ir::WaitKind /*cmp*/, std::int64_t /*expected*/,
                               std::int32_t /*value*/) {}
  virtual void on_compute(std::int64_t /*agent*/, SiteRef /*site*/, ComputeClass /*cls*/,
                          DType /*dtype*/, std::int64_t /*elements*/) {}
  virtual void on_async_put(std::int64_t /*agent*/, std::int64_t /*event*/, bool /*issued*/) {}
  virtual void on_task(std::int64_t /*agent*/, SiteRef /*site*/, bool /*begin*/) {}
};

// The observers attached to one run, called in order.
class Observers {
 public:
  void attach(AccessObserver* o) { list_.push_back(o); }
  bool empty() const { return list_.empty(); }
  void dispatch(std::int64_t rank, std::size_t index) const {
    for (auto* o : list_) o->on_dispatch(rank, index);
  }
  void access(const Access& a) const {
    for (auto* o : list_) o->on_access(a);
  }
  void notify(std::int64_t agent, SiteRef site, const Cell& cell, ir::NotifyKind kind,
              std::int32_t value, std::optional<std::int32_t> result) const {
    for (auto* o : list_) o->on_notify(agent, site, cell, kind, value, result);
  }
  void wait(std::int64_t agent, SiteRef site, const Cell& cell, ir::WaitKind cmp,
            std::int64_t expected, std::int32_t value) const {
    for (auto* o : list_) o->on_wait(agent, site, cell, cmp, expected, value);
  }
  void wait_blocked(std::int64_t agent, SiteRef site, const Cell& cell, ir::WaitKind cmp,
                    std::int64_t expected, std::int32_t value) const {
    for (auto* o : list_) o->on_wait_blocked(agent, site, cell, cmp, expected, value);
  }
  void compute(std::int64_t agent, SiteRef site, ComputeClass cls, DType dtype,
               std::int64_t elements) const {
    for (auto* o : list_) o->on_compute(agent, site, cls, dtype, elements);
  }
  void async_put(std::int64_t agent, std::int64_t event, bool issued) const {
    for (auto* o : list_) o->on_async_put(agent, event, issued);
  }
  void task(std::int64_t agent, SiteRef site, bool begin) const {
    for (auto* o : list_) o->on_task(agent, site, begin);
  }

 private:
  std::vector<AccessObserver*> list_;
};

}  // namespace anyp::runtime
