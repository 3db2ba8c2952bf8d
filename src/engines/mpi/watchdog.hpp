// watchdog.hpp — the MPI engine's wall-clock backstop. Deadlocks are found
// by quiescence waves (quiescence.hpp); this catches what they cannot: a
// process stuck inside an MPI call. The rank's loops bump a heartbeat (every
// VM slice, every 64 polls of a wait, every wave tick); when it stands
// still for the limit (ANYP_MPI_BACKSTOP_SECONDS, default 300), the process
// says so on stderr and exits 1, and mpirun ends the others.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace anyp::mpi {

class Watchdog {
 public:
  Watchdog(const std::atomic<std::uint64_t>& heartbeat, int rank);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog();

  // The limit in seconds: ANYP_MPI_BACKSTOP_SECONDS, or 300.
  static int limit_seconds();

 private:
  void watch();
  const std::atomic<std::uint64_t>& heartbeat_;
  int rank_;
  std::chrono::seconds limit_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace anyp::mpi
