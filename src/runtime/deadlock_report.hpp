// deadlock_report.hpp — the text of a deadlock report, for any engine: the
// waiting ranks first, then the finished ones, ranks in identical states
// grouped into one line ("ranks 0-3, 7 (5 ranks): finished"). A wait shows
// its function, op, signal, cell, comparison, expected and current value and
// what every notifier did to the cell; a hint follows when an Eq wait can
// never hold again; then the builtin collective calls that some ranks never
// entered.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/op_attrs.hpp"

namespace anyp::runtime {

// What one rank's notifies did to one cell over the run.
struct NotifierTally {
  std::int64_t rank = 0;
  std::int64_t adds_up = 0;     // AtomicAdds of a value >= 0 ...
  std::int64_t up_total = 0;    // ... and their sum
  std::int64_t adds_down = 0;   // AtomicAdds of a negative value ...
  std::int64_t down_total = 0;  // ... and their sum
  std::int64_t sets = 0;        // Sets ...
  std::int32_t last_set = 0;    // ... and the value of the last one
};

struct ParkedWait {
  std::string where;  // "function 'f', op pld.system.wait: waits for signal 'sig' cell [0, 0]"
  ir::WaitKind cmp = ir::WaitKind::Eq;
  std::int64_t expected = 0;
  std::int32_t current = 0;
  std::vector<NotifierTally> notifiers;    // sorted by rank; empty: never notified
  std::vector<std::int64_t> data_writers;  // sorted: ranks that wrote the cell as data
};

// The wait of a block other than 0 of a rank, in a multi-block launch.
struct BlockWait {
  std::int64_t rank = 0;
  std::int64_t block = 0;
  const ParkedWait* wait = nullptr;
};

// parked[r] is rank r's wait (its block 0's), or nullptr if rank r
// finished. `unfinished_collectives`: CollectiveTracker::unfinished_calls
// (may be ""). `blocks`: the waits of other blocks, shown as "rank r: block
// b: ..." after the ranks'. The text has no final newline.
std::string deadlock_report(std::span<const ParkedWait* const> parked,
                            const std::string& unfinished_collectives,
                            std::span<const BlockWait> blocks = {});

// "rank 0 (AtomicAdd -1), rank 1 (AtomicAdd +1)",
// "ranks 0-10 (11 ranks, each AtomicAdd +1)": ranks whose notifies did the
// same are grouped; after 8 groups the rest is "and <n> more ranks".
std::string notifiers_text(const std::vector<NotifierTally>& notifiers);

}  // namespace anyp::runtime
