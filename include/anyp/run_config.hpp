// run_config.hpp — how a program is compiled and run: platform, devices,
// engine, scheduling, and where (if anywhere) the artifact is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace anyp {

struct RunConfig {
  // "a2a3sim" (default) or "a5sim"; "a2a3"/"a5" (real hardware) are refused.
  std::string platform = "a2a3sim";
  struct Distributed {
    // Rank r runs on device_ids[r]; P = device_ids.size(). Non-empty,
    // non-negative, distinct.
    std::vector<std::int64_t> device_ids{0, 1};
  } distributed;
  // "threads": every rank a resumable VM on a worker pool in this process.
  std::string engine = "threads";
  // Worker threads; 0 means min(P, hardware threads).
  int workers = 0;
  // One worker; the next rank is picked by a RNG seeded with schedule_seed,
  // so an interleaving can be replayed.
  bool deterministic = false;
  std::uint64_t schedule_seed = 0;
  // Instructions a rank may run before it is preempted.
  std::int64_t preempt_budget = 4096;
  // Non-empty: compile() writes the artifact into this directory.
  std::string output_dir;

  // A config for P ranks on devices first_device, first_device + 1, ...
  static RunConfig for_world_size(std::int64_t world_size, std::int64_t first_device = 0) {
    RunConfig config;
    config.distributed.device_ids.clear();
    for (std::int64_t r = 0; r < world_size; ++r)
      config.distributed.device_ids.push_back(first_device + r);
    return config;
  }
};

}  // namespace anyp
