// watchdog.cpp — the backstop thread (it never calls MPI).
#include "engines/mpi/watchdog.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace anyp::mpi {

int Watchdog::limit_seconds() {
  const char* text = std::getenv("ANYP_MPI_BACKSTOP_SECONDS");
  if (text == nullptr) return 300;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && v > 0 && v < 1000000 ? static_cast<int>(v) : 300;
}

Watchdog::Watchdog(const std::atomic<std::uint64_t>& heartbeat, int rank)
    : heartbeat_(heartbeat), rank_(rank), limit_(limit_seconds()) {
  thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  std::uint64_t seen = heartbeat_.load(std::memory_order_relaxed);
  auto last_change = std::chrono::steady_clock::now();
  while (!cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_; })) {
    const std::uint64_t now_seen = heartbeat_.load(std::memory_order_relaxed);
    const auto now = std::chrono::steady_clock::now();
    if (now_seen != seen) {
      seen = now_seen;
      last_change = now;
    } else if (now - last_change >= limit_) {
      std::fprintf(stderr,
                   "run error: rank %d made no progress for %lld s (stuck inside an MPI call?); "
                   "ending the run (ANYP_MPI_BACKSTOP_SECONDS sets this limit)\n",
                   rank_, static_cast<long long>(limit_.count()));
      std::fflush(stderr);
      std::_Exit(1);
    }
  }
}

}  // namespace anyp::mpi
