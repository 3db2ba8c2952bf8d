// quiescence.cpp — the wave protocol (see quiescence.hpp).
#include "engines/mpi/quiescence.hpp"

#include "engines/mpi/mpi_world.hpp"

namespace anyp::mpi {

Quiescence::Verdict Quiescence::tick(State state, std::uint64_t progress) {
  if (request_ == MPI_REQUEST_NULL) {
    // The first wave a rank joins counts as progress: its history is unknown.
    const bool progressed = !joined_before_ || progress != progress_at_join_;
    joined_before_ = true;
    progress_at_join_ = progress;
    mine_ = {state == State::Done ? 1 : 0, state == State::Failed ? 1 : 0, progressed ? 1 : 0};
    check_mpi(MPI_Iallreduce(mine_.data(), sums_.data(), 3, MPI_INT64_T, MPI_SUM, comm_, &request_),
              "MPI_Iallreduce");
    return Verdict::Continue;
  }
  int complete = 0;
  check_mpi(MPI_Test(&request_, &complete, MPI_STATUS_IGNORE), "MPI_Test");
  if (!complete) return Verdict::Continue;
  const auto [done, failed, progressed] = sums_;
  if (failed > 0) return Verdict::Failed;
  if (done == size_) return Verdict::AllDone;
  quiet_waves_ = progressed == 0 ? quiet_waves_ + 1 : 0;
  return quiet_waves_ >= 2 ? Verdict::Deadlock : Verdict::Continue;
}

}  // namespace anyp::mpi
