// window.cpp — allocating, opening and freeing the run's MPI window.
#include "engines/mpi/window.hpp"

#include <algorithm>
#include <cstring>

#include "engines/mpi/mpi_world.hpp"

namespace anyp::mpi {

namespace {

// The kept window. A plain pointer, not a static with a destructor: it is
// freed inside MPI_Finalize, which first deletes MPI_COMM_SELF's attributes
// (release_kept_window), while MPI is whole, whoever finalizes (anyp at
// exit, or a program that initialized MPI itself); exit-time destructors
// run in an order that could come after MPI_Finalize.
Window* kept = nullptr;

int release_kept_window(MPI_Comm, int, void*, void*) {
  delete kept;
  kept = nullptr;
  return MPI_SUCCESS;
}

}  // namespace

Window& Window::for_run(MPI_Comm comm, std::int64_t bytes) {
  static const bool release_at_finalize = [] {
    int keyval = MPI_KEYVAL_INVALID;
    check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_kept_window, &keyval, nullptr),
              "MPI_Comm_create_keyval");
    check_mpi(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr), "MPI_Comm_set_attr");
    return true;
  }();
  (void)release_at_finalize;
  if (kept != nullptr && bytes <= kept->capacity()) {
    kept->zero(comm, bytes);
  } else {
    delete kept;  // collective, as the allocation below
    kept = nullptr;
    kept = new Window(comm, bytes);
  }
  return *kept;
}

Window::Window(MPI_Comm comm, std::int64_t bytes) {
  const auto size = static_cast<MPI_Aint>(std::max<std::int64_t>(bytes, 8));
  void* base = nullptr;
  check_mpi(MPI_Win_allocate(size, 1, MPI_INFO_NULL, comm, &base, &win_), "MPI_Win_allocate");
  MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
  base_ = static_cast<std::byte*>(base);
  capacity_ = static_cast<std::int64_t>(size);
  int* model = nullptr;
  int found = 0;
  MPI_Win_get_attr(win_, MPI_WIN_MODEL, &model, &found);
  unified_ = found && *model == MPI_WIN_UNIFIED;
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
  zero(comm, capacity_);
}

void Window::zero(MPI_Comm comm, std::int64_t bytes) {
  std::memset(base_, 0, static_cast<std::size_t>(bytes));
  check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");
}

Window::~Window() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;  // the program finalised MPI itself
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
}

std::string Window::component() const {
  // Open MPI names its windows after the component ("rdma window 3"); the
  // sm component leaves the name empty but reports its own info keys.
  char name[MPI_MAX_OBJECT_NAME] = {};
  int len = 0;
  MPI_Win_get_name(win_, name, &len);
  std::string text(name, static_cast<std::size_t>(len));
  if (!text.empty()) return text.substr(0, text.find(' '));
  MPI_Info info = MPI_INFO_NULL;
  if (MPI_Win_get_info(win_, &info) != MPI_SUCCESS) return "unknown";
  char value[MPI_MAX_INFO_VAL + 1] = {};
  int flag = 0;
  MPI_Info_get(info, "alloc_shared_noncontig", MPI_MAX_INFO_VAL, value, &flag);
  MPI_Info_free(&info);
  return flag ? "sm" : "unknown";
}

}  // namespace anyp::mpi
