// order_dispatches.hpp — the order of host dispatches across ranks: PyPTO's
// task dependencies, inferred from the arguments as its runtime infers them.
//
// Every dispatch is a task on its rank; a rank runs its own tasks in host
// order (PyPTO chains every task that touches a window with a per-rank
// ordering token, and a device runs one task at a time). Across ranks a task
// waits only for the tasks its host-tensor arguments depend on, by the rule
// of PyPTO's runtime (its TensorMap: a tensor is keyed by the view's start
// address, no overlap test; one producer per key):
//
//   In     the task waits for the last writer of the key    (read after write)
//   InOut  it waits for the last writer, then is the writer (and write after write)
//   Out    it becomes the writer, waiting for nobody
//
// A host worker (anyp/host_worker.hpp) is stricter, since the host runs it
// between its dispatches: it waits for every earlier dispatch whose
// host-tensor bytes overlap its own where one of the two writes, and every
// later such dispatch waits for it (read after write, write after read and
// write after write, by overlap, not by key).
//
// Windows order dispatch groups. A group is what one host call dispatches in
// one run of its innermost loop (the rank loop: `for r in pl.range(NR):
// f(..., device=r)` is one group), or the per-rank dispatches of one host
// collective. Its members run together (they may handshake through the
// windows). Groups that pass the same window buffer run in host order: each
// rank's first dispatch of the later group waits until every dispatch of the
// earlier group on the other ranks has ended, so a round that reads a peer's
// window is over before the next round writes it (PyPTO orders dispatches
// that touch a window in program order). A group waits only for the last
// earlier group of each of its buffers; that one waited for its own.
//
// Requires: specialize_host (dispatches with their issue order and group).
// Guarantees: every cross-rank dependency as a DispatchWait on the waiter and
// a DispatchRelease on the source, with one order cell per (source, waiter)
// pair; every group edge as one cell index on every rank (after the pairs'),
// a DispatchWait on each waiting rank and an edge release on each source;
// the number of cells a rank needs (0: no buffer).
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/specialize_host.hpp"
#include "runtime/lowered_code.hpp"

namespace anyp::compiler {

struct DispatchOrder {
  // ranks[r][i]: what dispatch i of rank r waits for and releases.
  std::vector<std::vector<std::vector<runtime::DispatchWait>>> waits;
  std::vector<std::vector<std::vector<runtime::DispatchRelease>>> releases;
  std::vector<std::vector<std::vector<std::int64_t>>> edge_releases;  // into edges
  std::vector<runtime::OrderEdge> edges;
  std::int64_t cells = 0;  // order cells per rank (the most any rank needs)
};

DispatchOrder order_dispatches(const std::vector<std::vector<HostDispatch>>& ranks);

}  // namespace anyp::compiler
