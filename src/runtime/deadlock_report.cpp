// deadlock_report.cpp — formats a deadlock report (see deadlock_report.hpp).
#include "runtime/deadlock_report.hpp"

#include "runtime/diagnostic_text.hpp"

namespace anyp::runtime {

std::string deadlock_report(std::span<const ParkedWait* const> parked,
                            const std::string& unfinished_collectives) {
  std::int64_t waiting = 0;
  for (const ParkedWait* p : parked) waiting += p != nullptr;
  std::string s = "deadlock: no rank can make progress (" + std::to_string(waiting) + " of " +
                  std::to_string(parked.size()) + " ranks waiting)\n";
  for (std::size_t r = 0; r < parked.size(); ++r) {
    s += "  rank " + std::to_string(r) + ": ";
    const ParkedWait* p = parked[r];
    if (p == nullptr) {
      s += "finished\n";
      continue;
    }
    s += p->where + " " + ir::wait_name(p->cmp) + " " + std::to_string(p->expected) +
         "; current value " + std::to_string(p->current);
    if (p->notifiers.empty()) {
      s += "; never notified";
    } else {
      s += "; notified by " + ranks_text(p->notifiers);
    }
    if (!p->data_writers.empty()) s += "; written as data by " + ranks_text(p->data_writers);
    s += "\n";
    if (p->cmp == ir::WaitKind::Eq && p->expected > 0 && p->current > p->expected) {
      s += "    hint: the cell is already past " + std::to_string(p->expected) +
           "; if it counts AtomicAdd credits it only grows, so Eq can never hold again: "
           "wait with Ge, or use a fresh cell (row) per round\n";
    }
  }
  if (!unfinished_collectives.empty()) {
    s += "builtin collective calls not entered by every rank:\n" + unfinished_collectives;
  }
  return s;
}

}  // namespace anyp::runtime
