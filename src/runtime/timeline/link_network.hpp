// link_network.hpp — the links of the modeled fabric, shared by the
// transfers on them (docs/timeline.md §2b). A link (a device's port in or
// out) carries `capacity` bytes per ns; a flow is a transfer's payload
// crossing two links. Whenever the set of flows changes, the rates are the
// max-min fair allocation (progressive filling: raise every flow's rate
// together; a link that fills freezes the flows through it at its fair
// share; the rest go on rising), so an incast of k equal flows into one
// port gets capacity / k each and finishes k times later than one alone.
// Rates are piecewise constant between changes: advance() moves every flow
// on at its rate, next_finish() says which flow ends first.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace anyp::runtime {

class LinkNetwork {
 public:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

  // One link per entry: its capacity in bytes per ns (+infinity: never
  // full, a flow through only such links finishes at once).
  explicit LinkNetwork(std::vector<double> capacities);

  // Moves every flow on to `now` at its current rate (now never goes back).
  void advance(double now);
  // A flow of `bytes` through links `links` (two, or the same one twice)
  // from the current time on; its id. The rates are stale until share().
  std::size_t add(std::array<std::size_t, 2> links, double bytes);
  // Ends flow `id` (it must be active).
  void remove(std::size_t id);
  // Recomputes the max-min fair rates of the active flows.
  void share();

  // The active flow that finishes first at the current rates and when
  // (kNone and +infinity when no flow is active).
  std::pair<std::size_t, double> next_finish() const;
  double remaining(std::size_t id) const { return flows_[id].remaining; }
  double rate(std::size_t id) const { return flows_[id].rate; }
  bool active(std::size_t id) const { return flows_[id].active; }
  // Changes of the flow set so far (a stamp for stale finish events).
  std::uint64_t version() const { return version_; }

  // Link figures up to the current time: bytes carried, and the time with at
  // least one flow on the link.
  double bytes_carried(std::size_t link) const { return links_[link].carried; }
  double busy_ns(std::size_t link) const { return links_[link].busy; }
  std::size_t links() const { return links_.size(); }

 private:
  struct Flow {
    std::array<std::size_t, 2> links{};
    double remaining = 0, rate = 0;
    bool active = false;
  };
  struct Link {
    double capacity = 0;
    std::vector<std::size_t> flows;  // active flows through it
    double carried = 0, busy = 0;
  };
  std::vector<Flow> flows_;
  std::vector<Link> links_;
  std::vector<std::size_t> free_ids_;
  double now_ = 0;
  std::uint64_t version_ = 0;
};

}  // namespace anyp::runtime
