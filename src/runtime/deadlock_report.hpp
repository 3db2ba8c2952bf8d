// deadlock_report.hpp — the text of a deadlock report, for any engine: every
// rank, either finished or its parked wait (function, op, signal, cell,
// comparison, expected and current value, who notified the cell), a hint
// when an Eq wait can never hold again, and the builtin collective calls
// that some ranks never entered.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/op_attrs.hpp"

namespace anyp::runtime {

struct ParkedWait {
  std::string where;  // "function 'f', op pld.system.wait: waits for signal 'sig' cell [0, 0]"
  ir::WaitKind cmp = ir::WaitKind::Eq;
  std::int64_t expected = 0;
  std::int32_t current = 0;
  std::vector<std::int64_t> notifiers;     // sorted; empty: never notified
  std::vector<std::int64_t> data_writers;  // sorted: ranks that wrote the cell as data
};

// parked[r] is rank r's wait, or nullptr if rank r finished.
// `unfinished_collectives`: CollectiveTracker::unfinished_calls (may be "").
std::string deadlock_report(std::span<const ParkedWait* const> parked,
                            const std::string& unfinished_collectives);

}  // namespace anyp::runtime
