// quiescence.hpp — how the MPI engine learns that a run has ended: every
// rank done, a rank failed, or a deadlock. No process sees the whole state,
// so ranks that are blocked in a wait (past a grace period), finished or
// failed join waves: one non-blocking MPI_Iallreduce after another on the
// engine's private communicator, each carrying {done, failed, progressed
// since my last wave}. A wave completes only when every rank has joined it.
//   - any rank failed            -> Failed
//   - every rank done            -> AllDone
//   - two consecutive waves in which no rank progressed, some not done
//                                -> Deadlock
// Sound because a rank flushes every notify and put before it joins a wave
// (so all of them are visible once the wave completes) and polls its cell
// once more after each wave completes before it joins the next one: two
// quiet waves mean no rank's wait can become true. Every rank sees the same
// wave results, so every rank reaches the same verdict at the same wave.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>

namespace anyp::mpi {

class Quiescence {
 public:
  enum class State : std::uint8_t { Blocked, Done, Failed };
  enum class Verdict : std::uint8_t { Continue, AllDone, Failed, Deadlock };

  Quiescence(MPI_Comm comm, int size) : comm_(comm), size_(size) {}
  Quiescence(const Quiescence&) = delete;
  Quiescence& operator=(const Quiescence&) = delete;

  // Called over and over while this rank is in `state`. `progress` is a
  // counter this rank bumps whenever it makes progress (a wait satisfied).
  // Joins the next wave when none is pending, else tests the pending one;
  // returns the verdict once a wave decides it.
  Verdict tick(State state, std::uint64_t progress);

 private:
  MPI_Comm comm_;
  int size_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  std::array<std::int64_t, 3> mine_{}, sums_{};  // {done, failed, progressed}
  bool joined_before_ = false;
  std::uint64_t progress_at_join_ = 0;
  int quiet_waves_ = 0;
};

}  // namespace anyp::mpi
