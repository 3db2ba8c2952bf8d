// simulation.hpp — the state of simulate_timeline()'s discrete-event
// simulation, shared by its two halves: simulate.cpp (ranks, notifies,
// waits, the figures) and simulate_transfers.cpp (remote transfers on DMA
// engines and shared links, when the model has them). Internal to the
// timeline; simulate.hpp is the interface.
#pragma once

#include <array>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "anyp/timeline.hpp"
#include "runtime/cell_index.hpp"
#include "runtime/executable.hpp"
#include "runtime/timeline/arrival_history.hpp"
#include "runtime/timeline/cost_model.hpp"
#include "runtime/timeline/event_queue.hpp"
#include "runtime/timeline/in_flight_touches.hpp"
#include "runtime/timeline/link_network.hpp"
#include "runtime/timeline/timeline_recorder.hpp"

namespace anyp::runtime::timeline_sim {

inline constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// Per op, another op's index (kNone: none) in 32 bits. Empty (not
// allocated) when the simulation does not follow the critical path: then
// set() does nothing and every op reads kNone.
class OpIndexArray {
 public:
  void assign(std::size_t ops) { v_.assign(ops, kEmpty); }
  std::size_t operator[](std::size_t op) const {
    return v_.empty() || v_[op] == kEmpty ? kNone : v_[op];
  }
  void set(std::size_t op, std::size_t to) {
    if (!v_.empty()) v_[op] = to == kNone ? kEmpty : static_cast<std::uint32_t>(to);
  }

 private:
  static constexpr std::uint32_t kEmpty = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> v_;
};

// The same for the few ops that have one: a map, empty until set.
class SparseOpIndex {
 public:
  void enable() { enabled_ = true; }
  std::size_t operator[](std::size_t op) const {
    const auto it = v_.find(static_cast<std::uint32_t>(op));
    return it == v_.end() ? kNone : it->second;
  }
  void set(std::size_t op, std::size_t to) {
    if (!enabled_) return;
    if (to == kNone) {
      v_.erase(static_cast<std::uint32_t>(op));
    } else {
      v_[static_cast<std::uint32_t>(op)] = static_cast<std::uint32_t>(to);
    }
  }

 private:
  bool enabled_ = false;
  std::unordered_map<std::uint32_t, std::uint32_t> v_;
};

// A notify (or a data write into a signal cell) applied to its cell.
struct Arrival {
  Cell cell;
  bool data = false;  // a data write: the cell's value is unknown to the model
  ir::NotifyKind kind = ir::NotifyKind::AtomicAdd;
  std::int32_t value = 0;
  std::size_t op = kNone;  // the notify's op
  std::int64_t from = -1;  // its agent
  std::int64_t depth = 0;  // its agent's round count when it was issued
};

// What the model knows of one signal cell (P² of them for an [NR, 1]
// signal: 24 bytes). Its waiters and its name, which few cells have at
// once, are in side tables (Simulation::waiters_, cell_names_).
struct CellState {
  static constexpr std::uint8_t kDataWritten = 1;  // a data write landed in it
  static constexpr std::uint8_t kWaiters = 2;      // agents are blocked on it
  std::int32_t value = 0;
  // Its newest arrival (op max: none); its value after it is `value`.
  std::uint32_t op = std::numeric_limits<std::uint32_t>::max();
  std::int32_t from = 0, depth = 0;
  // The arrivals before it, newest first: a chain in Simulation::history_.
  std::uint32_t older = 0;
  std::uint16_t older_count = 0;
  std::uint8_t flags = 0;
  bool has_newest() const { return op != std::numeric_limits<std::uint32_t>::max(); }
  Applied newest() const { return Applied{op, value, from, depth}; }
};
static_assert(sizeof(CellState) == 24, "a signal cell's modeled state is 24 bytes");

// The agents blocked on one cell, in the order they blocked: a list
// through AgentState::next_waiter (agent + 1; 0: none).
struct Waiters {
  std::uint32_t first = 0, last = 0;
};

struct AgentState {
  std::int64_t rank = 0, block = 0;  // the agent's (no division per op)
  std::size_t next = 0;
  double t = 0;
  std::int64_t depth = 0;
  bool blocked = false;           // in a wait on a cell
  std::uint32_t next_waiter = 0;  // the next agent blocked on that cell (+ 1; 0: none)
  double wait_start = 0;
  // Held back by a transfer of its own (a read or write of memory a
  // transfer in flight touches, or a transfer whose data it needs): since
  // when (negative: not held).
  double stall_start = -1;
  bool stalled = false;           // held by a transfer in flight; its completion steps the agent
  std::size_t awaiting = kNone;   // the blocking transfer it waits for
  std::size_t early_next = 0;     // its next put_async to issue (AgentTransfers::early)
  std::size_t early_due = kNone;  // the event it is issued before (kNone: none left)
  // Without keep_ops: its op in progress (a blocked wait's, or the one
  // being stepped).
  TimelineOp op;
  // Its figures from its finished ops on its own clock.
  double busy_ns = 0, wait_ns = 0;
  // For the critical path: its latest op on its own clock, and the
  // transfer op whose end let a held agent go on (consumed by its next op).
  std::size_t last_clock_op = kNone;
  std::size_t released_by = kNone;
};

// What an event is to the transfer half of the simulation.
enum class Role : std::uint8_t {
  Op,        // on the agent's own clock (local accesses, math, notify, wait)
  Transfer,  // the first (or only) access of a remote transfer
  Tail,      // the second access of a put or get pair, carried with the first
};

inline bool is_write(const TimelineEvent& e) {
  return static_cast<AccessKind>(e.sub) != AccessKind::Read;
}
inline Footprint footprint(const TimelineEvent& e) {
  return Footprint{e.space, e.id, e.owner, e.first, e.end, is_write(e)};
}

struct Transfer {
  std::size_t agent = 0;
  std::int64_t rank = 0;
  std::size_t event = 0;  // its first event, in the agent's list
  std::size_t events = 1;
  std::size_t seq = 0;    // the agent's transfer number
  bool blocking = false;  // the agent waits for it (a remote read into a tile; no engines)
  double local_ns = 0;    // its local side (the source read or the landing write)
  double fixed_ns = 0;    // before its payload moves: local side + message latency
  double bytes = 0;       // the payload through the links (0 when links are not shared)
  std::array<std::size_t, 2> links{};
  std::array<Footprint, 2> touches{};
  std::size_t touch_count = 0;
  std::array<InFlightTouches::Handle, 2> touch_handles{};  // in Simulation::touches_
  double issued = 0, started = 0;
  double stall_ns = 0;   // the agent held back before issuing it
  double held_from = 0;  // since when (its issue time when not held)
  std::int32_t engine = -1;
  // Its ops while in flight, without keep_ops (Simulation::transfer_op).
  std::array<TimelineOp, 2> ops;
};

struct PendingNotify {
  std::size_t arrival;  // index into arrivals_
  double earliest;      // its issue + notify latency
  std::size_t fence;    // the agent's transfers issued before it
};

struct AgentTransfers {
  // put_asyncs, issued before event `at` though recorded at their
  // wait_async (first event `head`), in the order of `at`; and the
  // transfer of each head issued so far.
  struct Early {
    std::size_t at, head;
  };
  std::vector<Early> early;
  // Per head issued so far: its transfer (its record is reused once it is
  // done, so whether it is done and its event count are kept here).
  struct Issued {
    std::size_t transfer;
    std::size_t events;
    bool done = false;
  };
  std::map<std::size_t, Issued> early_issued;
  std::size_t in_flight = 0;    // its transfers in flight (their touches: Simulation::touches_)
  std::vector<char> completed;  // by seq
  std::size_t watermark = 0;    // every seq below it has completed
  std::deque<PendingNotify> notifies;  // issued, held until their fence
  // Its transfers' share of its figures (transfer_figures): the time busy
  // issuing and held back before issuing, summed as they are issued, and
  // the end of its last one.
  double issue_ns = 0, stall_ns = 0, last_done = 0;
};

struct DeviceEngines {
  std::vector<char> busy;  // per engine
  std::deque<std::size_t> queue;
};

// Without keep_ops an op is a value until it is done (op_done); the ops to
// collect (a second run's critical path) are marked in `collect`.
struct OpStorage {
  bool keep_ops = true;
  bool follow_path = true;                     // the critical path's 8 bytes per op
  const std::vector<char>* collect = nullptr;  // per op; null: none
};

class Simulation {
 public:
  Simulation(const Executable& exec, const std::vector<EventStream>& events, const CostModel& model,
             OpStorage storage);
  Timeline run();
  // Without keep_ops and with `collect`: the collected ops, by index.
  std::vector<std::pair<std::size_t, TimelineOp>>& collected() { return collected_; }

 private:
  // simulate.cpp
  void push(double time, ItemKind kind, std::size_t what);
  std::uint32_t intern(const std::string& s);
  std::uint32_t memory_name(const TimelineEvent& e);
  void advance(std::size_t r);
  bool step(std::size_t r);
  void begin_op(std::size_t r, std::size_t index, TimelineOp& op, const TimelineEvent& e);
  // Agent r's op `index` (not a transfer's) while it is in progress.
  TimelineOp& agent_op(std::size_t r, std::size_t index) {
    return storage_.keep_ops ? t_.ops[index] : states_[r].op;
  }
  // Whether op `index` gets its names (function, op, memory): a kept or
  // collected op.
  bool named(std::size_t index) const {
    return storage_.keep_ops || (storage_.collect != nullptr && (*storage_.collect)[index]);
  }
  // Op `index` of agent r has its final times: its share of the figures.
  void op_done(std::size_t r, std::size_t index, const TimelineOp& op);
  void data_written(const Footprint& f, double at);
  void arrive(const Arrival& a, double at);
  std::optional<Applied> enabler_of(const CellState& cell, ir::WaitKind cmp,
                                    std::int64_t expected) const;
  // (applied: the arrival that released it; none: a data write, or stuck)
  void release(std::size_t r, double at, const std::optional<Applied>& applied);
  // Agent r joins (or leaves) the waiters of the cell in `slot`.
  void add_waiter(std::uint32_t slot, std::size_t r);
  void remove_waiter(std::uint32_t slot, std::size_t r);
  void link(std::size_t wait_op, AgentState& st, const Applied& a);
  bool release_stuck();
  void assumed(const std::string& what);
  void finish();
  void critical_path();

  // simulate_transfers.cpp
  bool transfers_modeled() const { return fabric_; }
  void plan_roles();
  // Holds agent r back while its next op touches memory a transfer of its
  // own has in flight; true when it may go on.
  bool clear_of_transfers(std::size_t r);
  // Issues the remote transfer that starts at agent r's next event; false
  // when the agent now waits for it.
  bool issue_transfer(std::size_t r);
  // Creates and queues the transfer whose first event is `event`, issued by
  // agent r now; its index.
  std::size_t make_transfer(std::size_t r, std::size_t event);
  // Issues the put_asyncs due before agent r's next event; false when one
  // must wait for a transfer in flight (the agent is held).
  bool issue_early(std::size_t r);
  bool held_by_transfers(std::size_t r, std::size_t event);
  // Queues a notify's arrival behind the agent's transfers issued before it.
  void notify_after_transfers(std::size_t r, std::size_t arrival, double earliest);
  void on_transfer_event(const Item& item);
  // `freed_by`: the op of the transfer whose end freed an engine (kNone: none).
  void start_transfer(std::size_t t, double now, std::size_t freed_by = kNone);
  void transfer_moving(std::size_t t, double now);
  void check_flows(std::uint64_t version, double now);
  // The flows changed at `now`: share the links once all of now's
  // arrivals and transfer events are done.
  void share_links(double now);
  void complete_transfer(std::size_t t, double now);
  void schedule_flow_check();
  std::int64_t node_of(std::int64_t rank) const;
  // The transfers' share of the figures, per agent: time busy issuing,
  // time held back before issuing, and the end of its last transfer.
  void transfer_figures(std::vector<double>& busy_ns, std::vector<double>& wait_ns,
                        std::vector<double>& last_done) const;
  void link_figures();  // Timeline::links from the network
  double issue_cost() const { return async_ ? model_.dma_issue_ns : 0; }

  const Executable& exec_;
  const std::vector<EventStream>& events_;
  const CostModel& model_;
  OpStorage storage_;
  std::vector<std::pair<std::size_t, TimelineOp>> collected_;
  // Op k of transfer x.
  TimelineOp& transfer_op(Transfer& x, std::size_t k) {
    return storage_.keep_ops ? t_.ops[first_op_[x.agent] + x.event + k] : x.ops[k];
  }
  std::vector<AgentState> states_;
  std::vector<std::size_t> first_op_;
  // Per op, for the critical path: the op before it on its agent's clock
  // (a transfer's: the op before its issue; a pair's second half: the
  // first), and the op whose end released it when something else decided
  // its end or start (a blocked wait's notify, or the transfer that held
  // that notify back; the transfer that held an access; the transfer that
  // freed the engine it queued for).
  // (Ops are numbered in 32 bits here: four billion ops would need far
  // more memory for their events than a machine has.) 8 bytes per op.
  OpIndexArray prev_;
  OpIndexArray released_by_;
  // Per notify op delivered late: the transfer its delivery waited for.
  SparseOpIndex fenced_by_;
  // The op that ends last (the critical path's end) and when; ties go to
  // the lower op.
  std::size_t last_op_ = kNone;
  double last_end_ = -1;
  // Arrivals on their way; a slot is reused once its arrival is applied.
  std::vector<Arrival> arrivals_;
  std::vector<std::size_t> free_arrivals_;
  std::size_t new_arrival(const Arrival& a);
  // The state of a signal cell: its slot in the index (0: not touched yet,
  // else an index + 1 into cell_states_).
  std::uint32_t cell_slot(const Cell& c);
  CellState& cell_at(std::uint32_t slot) { return cell_states_[slot - 1]; }
  CellState& cell_state(const Cell& c) { return cell_at(cell_slot(c)); }
  CellIndex cell_index_;
  std::deque<CellState> cell_states_;
  ArrivalPool history_;
  std::unordered_map<std::uint32_t, Waiters> waiters_;           // by slot, while any
  std::unordered_map<std::uint32_t, std::uint32_t> cell_names_;  // by slot, once named
  EventQueue queue_;
  std::unordered_map<std::string, std::uint32_t> name_index_;
  // Keyed by space, buffer or host argument, and owner (region_key()).
  std::unordered_map<std::uint64_t, std::uint32_t> region_names_;
  // Per code, per site: its function's and op's names (0, 0: not yet interned).
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> site_names_;
  std::size_t notes_ = 0;
  Timeline t_;

  // Transfers (only when the model has engines or links: fabric_).
  bool fabric_ = false;
  bool async_ = false;
  std::vector<std::vector<Role>> roles_;  // per agent, per event
  // The transfers in flight (a done one's slot is reused: free_transfers_).
  std::vector<Transfer> transfers_;
  std::vector<std::size_t> free_transfers_;
  InFlightTouches touches_;
  std::vector<AgentTransfers> agent_transfers_;
  std::vector<DeviceEngines> engines_;  // per rank
  std::optional<LinkNetwork> network_;
  std::vector<std::size_t> flow_transfer_;  // flow id -> transfer
  bool share_queued_ = false;
};

}  // namespace anyp::runtime::timeline_sim
