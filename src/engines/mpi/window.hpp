// window.hpp — the one MPI window of a run: every symmetric buffer and
// signal of a rank, in the compiler's layout (the same on every rank),
// allocated with MPI_Win_allocate (disp_unit 1), zeroed, and opened for the
// whole run with one passive-target epoch, MPI_Win_lock_all(MPI_MODE_NOCHECK).
// Flush, sync and lock are per window, which is why there is one, not one
// per buffer (OSHMPI does the same).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace anyp::mpi {

class Window {
 public:
  // The window of a run of `bytes` per rank, collective over `comm` (the
  // same communicator every run). The process keeps its window between runs
  // (MPI_Win_allocate and the first touch of its pages cost far more than
  // a run of a small program): a run that fits reuses it, zeroing only
  // the `bytes` it uses; a larger one frees it and allocates its own. Every
  // process makes the same choice, since every run's size is the same on
  // every process. The window is freed when MPI is finalized (a delete
  // callback of an MPI_COMM_SELF attribute).
  static Window& for_run(MPI_Comm comm, std::int64_t bytes);

  // Collective over `comm`: a window of `bytes`, zeroed, its epoch open.
  Window(MPI_Comm comm, std::int64_t bytes);
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;
  // Collective: closes the epoch and frees the window.
  ~Window();

  MPI_Win win() const { return win_; }
  std::int64_t capacity() const { return capacity_; }
  std::byte* base() const { return base_; }
  // MPI_WIN_UNIFIED: the window's public and private copies are one memory,
  // so a rank may poll its own cells with plain loads.
  bool unified() const { return unified_; }
  // The Open MPI one-sided component serving the window: "rdma", "sm", ...
  std::string component() const;
  // Collective: zeroes [0, bytes) of this rank's window, then a barrier
  // (no rank writes into a peer's window before the peer has zeroed it).
  void zero(MPI_Comm comm, std::int64_t bytes);

 private:
  MPI_Win win_ = MPI_WIN_NULL;
  std::byte* base_ = nullptr;
  std::int64_t capacity_ = 0;
  bool unified_ = false;
};

}  // namespace anyp::mpi
