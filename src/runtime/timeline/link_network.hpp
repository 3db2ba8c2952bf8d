// link_network.hpp — the links of the modeled fabric, shared by the
// transfers on them (docs/timeline.md §2b). A link (a device's port in or
// out) carries `capacity` bytes per ns; a flow is a transfer's payload
// crossing two links. Whenever the set of flows changes, the rates are the
// max-min fair allocation (progressive filling: raise every flow's rate
// together; a link that fills freezes the flows through it at its fair
// share; the rest go on rising), so an incast of k equal flows into one
// port gets capacity / k each and finishes k times later than one alone.
// Rates are piecewise constant between changes.
//
// The cost of a change is that of the flows it can affect, not of the
// network: the max-min allocation splits over the connected components of
// the flow-link graph, so share() refills only the components whose links
// changed; a flow's remaining bytes and a link's figures are brought up to
// date lazily (only when its rate changes or it is read); and the flows'
// finish times are kept in a heap. advance() only moves the clock.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <vector>

namespace anyp::runtime {

class LinkNetwork {
 public:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

  // One link per entry: its capacity in bytes per ns (+infinity: never
  // full, a flow through only such links finishes at once).
  explicit LinkNetwork(std::vector<double> capacities);

  // Moves the clock to `now` (it never goes back); every flow moves on at
  // its current rate.
  void advance(double now);
  // A flow of `bytes` through links `links` (two, or the same one twice)
  // from the current time on; its id. The rates are stale until share().
  std::size_t add(std::array<std::size_t, 2> links, double bytes);
  // Ends flow `id` (it must be active).
  void remove(std::size_t id);
  // Recomputes the max-min fair rates of the active flows (those of the
  // components whose flow set changed since the last share()).
  void share();

  // The active flow that finishes first at the current rates and when
  // (kNone and +infinity when no flow is active).
  // Ties go to the lowest id.
  std::pair<std::size_t, double> next_finish() const;
  double remaining(std::size_t id) const;
  double rate(std::size_t id) const { return flows_[id].rate; }
  bool active(std::size_t id) const { return flows_[id].active; }
  // Changes of the flow set so far (a stamp for stale finish events).
  std::uint64_t version() const { return version_; }

  // Link figures up to the current time: bytes carried, and the time with at
  // least one flow on the link.
  double bytes_carried(std::size_t link) const;
  double busy_ns(std::size_t link) const;
  std::size_t links() const { return links_.size(); }

 private:
  struct Flow {
    std::array<std::size_t, 2> links{};
    double remaining = 0, rate = 0;
    double stamp = 0;         // the time `remaining` is for
    std::uint64_t epoch = 0;  // its finish entries of an older epoch are stale
    bool active = false;
  };
  struct Link {
    double capacity = 0;
    std::vector<std::size_t> flows;  // active flows through it
    double carried = 0, busy = 0;    // up to `stamp`
    double rate_sum = 0;             // of its flows' finite rates
    double stamp = 0;
    bool changed = false;  // its flow set changed since the last share()
  };
  struct Finish {
    double at;
    std::size_t id;
    std::uint64_t epoch;
    bool operator>(const Finish& o) const { return at != o.at ? at > o.at : id > o.id; }
  };
  void settle_flow(Flow& f) const;
  void settle_link(Link& l) const;
  // The links and flows of the components of the changed links, each in
  // ascending order.
  void collect_components(std::vector<std::size_t>& links, std::vector<std::size_t>& flows);
  void fill(const std::vector<std::size_t>& links, const std::vector<std::size_t>& flows);

  std::vector<Flow> flows_;
  std::vector<Link> links_;
  std::vector<std::size_t> free_ids_;
  std::vector<std::size_t> changed_;  // links with changed == true
  // Scratch of share(), indexed by link or flow, all zero between calls.
  std::vector<char> link_seen_, flow_seen_;
  std::vector<double> left_;
  std::vector<std::size_t> open_;
  mutable std::priority_queue<Finish, std::vector<Finish>, std::greater<>> finishes_;
  double now_ = 0;
  std::uint64_t version_ = 0;
};

}  // namespace anyp::runtime
