// exchange.cpp — allgather of byte strings, agreement checks.
#include "engines/mpi/exchange.hpp"

#include <algorithm>
#include <cstring>

#include "engines/mpi/mpi_world.hpp"

namespace anyp::mpi {

std::vector<std::string> allgather(MPI_Comm comm, const std::string& mine) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  const auto n = static_cast<std::int64_t>(mine.size());
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(size));
  check_mpi(MPI_Allgather(&n, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T, comm), "MPI_Allgather");
  // Large exchanges (host tensor outputs) go in rounds whose total fits an
  // int count.
  const std::int64_t kChunk = std::max<std::int64_t>(1, (std::int64_t{1} << 30) / size);
  std::vector<std::string> all(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) all[static_cast<std::size_t>(r)].resize(sizes[r]);
  for (std::int64_t done = 0;; done += kChunk) {
    std::vector<int> counts(static_cast<std::size_t>(size)), displs(counts.size());
    std::int64_t total = 0;
    bool more = false;
    for (int r = 0; r < size; ++r) {
      const std::int64_t left = std::max<std::int64_t>(0, sizes[r] - done);
      counts[r] = static_cast<int>(std::min(left, kChunk));
      more = more || left > kChunk;
      displs[r] = static_cast<int>(total);
      total += counts[r];
    }
    std::string buffer(static_cast<std::size_t>(total), '\0');
    const std::int64_t my_left = std::max<std::int64_t>(0, n - done);
    check_mpi(
        MPI_Allgatherv(mine.data() + std::min(done, n), static_cast<int>(std::min(my_left, kChunk)),
                       MPI_BYTE, buffer.data(), counts.data(), displs.data(), MPI_BYTE, comm),
        "MPI_Allgatherv");
    for (int r = 0; r < size; ++r) {
      if (counts[r] == 0) continue;  // this rank's bytes ended in an earlier round
      std::memcpy(all[r].data() + done, buffer.data() + displs[r],
                  static_cast<std::size_t>(counts[r]));
    }
    if (!more) break;
  }
  return all;
}

bool same_everywhere(MPI_Comm comm, std::uint64_t value) {
  std::uint64_t mine[2] = {value, ~value}, max[2] = {0, 0};
  check_mpi(MPI_Allreduce(mine, max, 2, MPI_UINT64_T, MPI_MAX, comm), "MPI_Allreduce");
  return max[0] == value && max[1] == ~value;
}

}  // namespace anyp::mpi
