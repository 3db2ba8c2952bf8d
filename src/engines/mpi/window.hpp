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
  // Collective over `comm`.
  Window(MPI_Comm comm, std::int64_t bytes);
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;
  // Collective: closes the epoch and frees the window.
  ~Window();

  MPI_Win win() const { return win_; }
  std::byte* base() const { return base_; }
  // MPI_WIN_UNIFIED: the window's public and private copies are one memory,
  // so a rank may poll its own cells with plain loads.
  bool unified() const { return unified_; }
  // The Open MPI one-sided component serving the window: "rdma", "sm", ...
  std::string component() const;

 private:
  MPI_Win win_ = MPI_WIN_NULL;
  std::byte* base_ = nullptr;
  bool unified_ = false;
};

}  // namespace anyp::mpi
