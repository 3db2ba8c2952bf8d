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
// Window views are keyed per rank (a window is device memory of its rank),
// so they never order tasks of two ranks: a protocol across ranks in window
// memory needs its own notify/wait (a barrier), as on PyPTO.
//
// Requires: specialize_host (dispatches with their issue order). Guarantees:
// every cross-rank dependency as a DispatchWait on the waiter and a
// DispatchRelease on the source, with one order cell per (source, waiter)
// pair; the number of cells a rank needs (0: no buffer).
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
  std::int64_t cells = 0;  // order cells per rank (the most any rank needs)
};

DispatchOrder order_dispatches(const std::vector<std::vector<HostDispatch>>& ranks);

}  // namespace anyp::compiler
