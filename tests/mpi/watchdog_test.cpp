// watchdog_test.cpp — the MPI engine's wall-clock backstop
// (src/engines/mpi/watchdog.hpp), without MPI: a process whose heartbeat
// stands still for ANYP_MPI_BACKSTOP_SECONDS says so and exits 1; one whose
// heartbeat moves lives on; a bad setting falls back to 300 s.
#include "engines/mpi/watchdog.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

namespace {

using anyp::mpi::Watchdog;

TEST(MpiWatchdog, AStillHeartbeatEndsTheProcessWithExit1) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("ANYP_MPI_BACKSTOP_SECONDS", "1", 1);
        std::atomic<std::uint64_t> heartbeat{0};
        Watchdog watchdog(heartbeat, 3);
        std::this_thread::sleep_for(std::chrono::seconds(5));
        std::exit(0);
      },
      testing::ExitedWithCode(1),
      "^run error: rank 3 made no progress for 1 s \\(stuck inside an MPI call\\?\\); ending the "
      "run \\(ANYP_MPI_BACKSTOP_SECONDS sets this limit\\)\n$");
}

TEST(MpiWatchdog, AMovingHeartbeatKeepsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("ANYP_MPI_BACKSTOP_SECONDS", "1", 1);
        std::atomic<std::uint64_t> heartbeat{0};
        {
          Watchdog watchdog(heartbeat, 0);
          for (int i = 0; i < 25; ++i) {  // 2.5 s, beating every 100 ms
            heartbeat.fetch_add(1);
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
          }
        }
        std::exit(0);
      },
      testing::ExitedWithCode(0), "");
}

TEST(MpiWatchdog, LimitComesFromTheEnvironmentOrIs300Seconds) {
  unsetenv("ANYP_MPI_BACKSTOP_SECONDS");
  EXPECT_EQ(Watchdog::limit_seconds(), 300);
  setenv("ANYP_MPI_BACKSTOP_SECONDS", "42", 1);
  EXPECT_EQ(Watchdog::limit_seconds(), 42);
  for (const char* bad : {"", "abc", "0", "-5", "12x"}) {
    setenv("ANYP_MPI_BACKSTOP_SECONDS", bad, 1);
    EXPECT_EQ(Watchdog::limit_seconds(), 300) << "'" << bad << "'";
  }
  unsetenv("ANYP_MPI_BACKSTOP_SECONDS");
}

}  // namespace
