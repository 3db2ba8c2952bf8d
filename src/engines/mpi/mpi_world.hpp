// mpi_world.hpp — the MPI processes the MPI engine runs on. MPI is started
// once per process on first use (MPI_Init_thread, MPI_THREAD_SINGLE: anyp
// runs no thread of its own in an MPI process) and finalised when the
// process exits. On one node with more processes than cores (and no osc
// component chosen by the user), it asks Open MPI for the sm component. The
// engine's own traffic (quiescence waves, end-of-run exchanges) goes over a
// private duplicate of MPI_COMM_WORLD, and its windows over another, so it
// never matches a user's messages.
#pragma once

#include <mpi.h>

#include <string>

namespace anyp::mpi {

class World {
 public:
  // Starts MPI on the first call (unless the program already did).
  static World& get();

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm control() const { return control_; }  // waves and exchanges
  MPI_Comm windows() const { return windows_; }  // the communicator windows span
  // More processes on this node than it has cores: pollers yield the CPU.
  bool oversubscribed() const { return oversubscribed_; }
  int node_cores() const { return node_cores_; }
  // "Open MPI v4.1.4" (the first part of MPI_Get_library_version).
  const std::string& library() const { return library_; }

  // Dies with an MPI error's text: the engine's MPI calls are checked, and a
  // failing one is an environment problem, not the program's.
  [[noreturn]] static void fatal(const char* call, int code);

 private:
  World();
  int rank_ = 0, size_ = 1;
  MPI_Comm control_ = MPI_COMM_NULL;
  MPI_Comm windows_ = MPI_COMM_NULL;
  bool oversubscribed_ = false;
  int node_cores_ = 1;
  std::string library_;
};

// Checks an MPI call's return code (the engine sets MPI_ERRORS_RETURN on
// its communicators and windows).
inline void check_mpi(int code, const char* call) {
  if (code != MPI_SUCCESS) World::fatal(call, code);
}

}  // namespace anyp::mpi
