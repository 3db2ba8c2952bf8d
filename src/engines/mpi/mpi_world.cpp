// mpi_world.cpp — starting and finalising MPI, the engine's communicators.
#include "engines/mpi/mpi_world.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/machine.hpp"

namespace anyp::mpi {
namespace {

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

// The processes mpirun started on this node, and in all (Open MPI's
// environment, readable before MPI_Init); 0 when not started by mpirun.
long launched(const char* variable) {
  const char* text = std::getenv(variable);
  return text != nullptr ? std::strtol(text, nullptr, 10) : 0;
}

// On one node with more processes than cores, choose the sm one-sided
// component unless the user chose one (mpirun --mca osc X sets
// OMPI_MCA_osc): its atomics, our notifies, are done by the origin in
// shared memory, where rdma's are emulated by the target process, which
// must be scheduled to apply them (3-6x slower notifies, docs/mpi.md).
void choose_osc_component() {
  if (std::getenv("OMPI_MCA_osc") != nullptr) return;
  const long local = launched("OMPI_COMM_WORLD_LOCAL_SIZE");
  const long world = launched("OMPI_COMM_WORLD_SIZE");
  const long cores = machine_cores();
  if (local > 0 && local == world && local > cores) setenv("OMPI_MCA_osc", "sm", 0);
}

// MPI_THREAD_SINGLE, or MPI_THREAD_FUNNELED with ANYP_MPI_THREAD_LEVEL=funneled
// (for a program that runs threads of its own beside the engine).
int thread_level() {
  const char* text = std::getenv("ANYP_MPI_THREAD_LEVEL");
  if (text == nullptr || std::strcmp(text, "single") == 0) return MPI_THREAD_SINGLE;
  if (std::strcmp(text, "funneled") == 0) return MPI_THREAD_FUNNELED;
  // Every process gets here before MPI is up: process 0 speaks for all.
  const long rank = launched("OMPI_COMM_WORLD_RANK");
  if (rank == 0) {
    std::fprintf(stderr,
                 "anyp mpi engine: ANYP_MPI_THREAD_LEVEL is '%s'; it must be single (the default) "
                 "or funneled\n",
                 text);
  }
  std::exit(1);
}

}  // namespace

World& World::get() {
  static World world;
  return world;
}

World::World() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    choose_osc_component();
    // MPI_THREAD_SINGLE: the engine runs no thread of its own (the backstop
    // is a timer), and at any higher level Open MPI locks a mutex in every
    // flush (measured: 0.2 -> 0.26 us per 256-byte hop at P = 2).
    int provided = 0;
    check_mpi(MPI_Init_thread(nullptr, nullptr, thread_level(), &provided), "MPI_Init_thread");
    std::atexit(finalize_at_exit);
  }
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &control_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &windows_), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(control_, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(windows_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(control_, &rank_);
  MPI_Comm_size(control_, &size_);

  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(control_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  int node_processes = 1;
  MPI_Comm_size(node, &node_processes);
  MPI_Comm_free(&node);
  node_cores_ = machine_cores();
  oversubscribed_ = node_processes > node_cores_;

  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  library_.assign(version, static_cast<std::size_t>(len));
  library_ = library_.substr(0, library_.find(','));
  while (!library_.empty() && (library_.back() == '\n' || library_.back() == ' '))
    library_.pop_back();
}

void World::fatal(const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  std::fprintf(stderr, "anyp mpi engine: %s failed: %.*s\n", call, len, text);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

}  // namespace anyp::mpi
