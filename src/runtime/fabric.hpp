// fabric.hpp — the one door. A rank VM does every window and signal access
// through a Fabric, its own window included: read a region, write a region
// (plain or atomic add), copy a region to a region (put/get, both sides),
// notify a cell, wait on a cell. Memory is named, never pointed to
// (region.hpp). An engine implements the do_* calls on its memory (the
// threads engine on one symmetric heap, the MPI engine on RMA windows);
// the public calls tell the attached observers (access_observer.hpp) and
// cost one branch when none is attached.
//
// Guarantees an engine gives (docs/ladder-steps.md §7): every write a rank makes is
// visible to any rank whose wait a later notify of that rank satisfies;
// atomic adds into one element are atomic; a data write into a signal cell
// can satisfy a wait on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "ir/op_attrs.hpp"
#include "runtime/access_observer.hpp"
#include "runtime/region.hpp"

namespace anyp::runtime {

class Fabric {
 public:
  virtual ~Fabric() = default;

  void set_observers(const Observers& observers) { observers_ = observers; }

  void begin_dispatch(std::int64_t rank, std::size_t index) {
    if (!observers_.empty()) observers_.dispatch(rank, index);
  }
  // `out` receives the region's elements, contiguous, row-major.
  void read(std::int64_t agent, SiteRef site, const Region& src, std::byte* out) {
    if (!observers_.empty()) observers_.access(Access{agent, site, AccessKind::Read, src});
    do_read(src, out);
  }
  // `in` holds the region's elements, contiguous, row-major. atomic_add adds
  // them element by element (in the region's dtype) instead of storing.
  void write(std::int64_t agent, SiteRef site, const Region& dst, const std::byte* in,
             bool atomic_add) {
    if (!observers_.empty()) observers_.access(Access{agent, site, write_kind(atomic_add), dst});
    do_write(agent, dst, in, atomic_add);
  }
  // dst and src have the same extent and dtype; one of them is on `agent`'s rank.
  void copy(std::int64_t agent, SiteRef site, const Region& dst, const Region& src,
            bool atomic_add) {
    if (!observers_.empty()) {
      observers_.access(Access{agent, site, AccessKind::Read, src});
      observers_.access(Access{agent, site, write_kind(atomic_add), dst});
    }
    do_copy(agent, dst, src, atomic_add);
  }
  // Tile math: no memory, only the observers hear of it.
  void compute(std::int64_t agent, SiteRef site, ComputeClass cls, DType dtype,
               std::int64_t elements) {
    if (!observers_.empty()) observers_.compute(agent, site, cls, dtype, elements);
  }
  // A put_async issued, or about to be carried out at its wait_async
  // (only the observers hear of it; the copy itself is copy()).
  void async_put(std::int64_t agent, std::int64_t event, bool issued) {
    if (!observers_.empty()) observers_.async_put(agent, event, issued);
  }
  // A task begins or ends (only the observers hear of it).
  void task(std::int64_t agent, SiteRef site, bool begin) {
    if (!observers_.empty()) observers_.task(agent, site, begin);
  }
  void notify(std::int64_t agent, SiteRef site, const Cell& cell, ir::NotifyKind kind,
              std::int32_t value) {
    do_notify(agent, site, cell, kind, value);
  }
  // True when the cell compares true now. False: the engine has parked the
  // rank, which must stop and retry the wait when it is resumed (threads
  // engine); an engine whose ranks can block returns only true. `describe`
  // names the wait for a deadlock report.
  bool wait(std::int64_t agent, SiteRef site, const Cell& cell, ir::WaitKind cmp,
            std::int64_t expected, const std::function<std::string()>& describe) {
    return do_wait(agent, site, cell, cmp, expected, describe);
  }

 protected:
  virtual void do_read(const Region& src, std::byte* out) = 0;
  virtual void do_write(std::int64_t agent, const Region& dst, const std::byte* in,
                        bool atomic_add) = 0;
  virtual void do_copy(std::int64_t agent, const Region& dst, const Region& src,
                       bool atomic_add) = 0;
  // Must call observe_notify inside the critical section that applies it.
  virtual void do_notify(std::int64_t agent, SiteRef site, const Cell& cell, ir::NotifyKind kind,
                         std::int32_t value) = 0;
  // Must call observe_wait inside the critical section of a satisfying check.
  virtual bool do_wait(std::int64_t agent, SiteRef site, const Cell& cell, ir::WaitKind cmp,
                       std::int64_t expected, const std::function<std::string()>& describe) = 0;

  void observe_notify(std::int64_t agent, SiteRef site, const Cell& cell, ir::NotifyKind kind,
                      std::int32_t value, std::optional<std::int32_t> result) const {
    if (!observers_.empty()) observers_.notify(agent, site, cell, kind, value, result);
  }
  void observe_wait(std::int64_t agent, SiteRef site, const Cell& cell, ir::WaitKind cmp,
                    std::int64_t expected, std::int32_t value) const {
    if (!observers_.empty()) observers_.wait(agent, site, cell, cmp, expected, value);
  }
  void observe_wait_blocked(std::int64_t agent, SiteRef site, const Cell& cell, ir::WaitKind cmp,
                            std::int64_t expected, std::int32_t value) const {
    if (!observers_.empty()) observers_.wait_blocked(agent, site, cell, cmp, expected, value);
  }

 private:
  static AccessKind write_kind(bool atomic_add) {
    return atomic_add ? AccessKind::AtomicAdd : AccessKind::Write;
  }
  Observers observers_;
};

}  // namespace anyp::runtime
