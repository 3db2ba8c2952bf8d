// machine.hpp — facts about the machine that do not change while the
// process runs, read once (std::thread::hardware_concurrency reads
// /sys/devices/system/cpu/online on every call: two file opens per run
// before this was cached).
#pragma once

#include <algorithm>
#include <thread>

namespace anyp {

// Hardware threads (at least 1).
inline int machine_cores() {
  static const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return cores;
}

}  // namespace anyp
