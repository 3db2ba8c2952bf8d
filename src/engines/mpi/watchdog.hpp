// watchdog.hpp — the MPI engine's wall-clock backstop. Deadlocks are found
// by quiescence waves (quiescence.hpp); this catches what they cannot: a
// process stuck inside an MPI call. The rank's loops bump a heartbeat (every
// VM slice, every 64 polls of a wait, every wave tick); when it stands
// still for the limit (ANYP_MPI_BACKSTOP_SECONDS, default 300), the process
// says so on stderr and exits 1, and mpirun ends the others.
//
// It is a POSIX timer, not a thread: a tick every 200 ms raises a real-time
// signal (SIGRTMIN + 5) in the thread that made the Watchdog, whose handler
// compares the heartbeat with the last tick's, and on the limit writes the
// prepared message and _exits. So the process runs no thread of anyp's, and
// MPI runs at MPI_THREAD_SINGLE, where Open MPI's one-sided calls take no
// locks (mpi_world.hpp). The timer ticks only while a Watchdog is alive (one
// run); one Watchdog at a time.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>

namespace anyp::mpi {

class Watchdog {
 public:
  // Arms the timer for `heartbeat`, which must outlive this object.
  Watchdog(const std::atomic<std::uint64_t>& heartbeat, int rank);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  // Disarms it.
  ~Watchdog();

  // The limit in seconds: ANYP_MPI_BACKSTOP_SECONDS, or 300.
  static int limit_seconds();

 private:
  timer_t timer_{};
};

}  // namespace anyp::mpi
