// watchdog.cpp — the backstop timer and its signal handler (which only
// loads atomics, and on the limit calls write(2) and _exit: all
// async-signal-safe).
#include "engines/mpi/watchdog.hpp"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace anyp::mpi {
namespace {

constexpr long kTickMs = 200;
const int kSignal = SIGRTMIN + 5;

// What the handler reads; set by the armed Watchdog.
std::atomic<const std::atomic<std::uint64_t>*> watched{nullptr};
std::atomic<std::uint64_t> last_seen{0};
std::atomic<long> still_ticks{0};
long limit_ticks = 0;
char message[256];
std::size_t message_length = 0;

std::once_flag handler_installed;

static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "the handler needs lock-free atomics");

extern "C" void on_tick(int) {
  const std::atomic<std::uint64_t>* heartbeat = watched.load(std::memory_order_acquire);
  if (heartbeat == nullptr) return;
  const std::uint64_t now = heartbeat->load(std::memory_order_relaxed);
  if (now != last_seen.load(std::memory_order_relaxed)) {
    last_seen.store(now, std::memory_order_relaxed);
    still_ticks.store(0, std::memory_order_relaxed);
    return;
  }
  if (still_ticks.fetch_add(1, std::memory_order_relaxed) + 1 < limit_ticks) return;
  [[maybe_unused]] const ssize_t written = write(STDERR_FILENO, message, message_length);
  _exit(1);
}

void install_handler() {
  struct sigaction action {};
  action.sa_handler = on_tick;
  action.sa_flags = SA_RESTART;  // a tick never fails a system call
  sigemptyset(&action.sa_mask);
  sigaction(kSignal, &action, nullptr);
}

// A timer whose ticks go to the calling thread (the one running the rank),
// not to any thread of the process (Open MPI's, PMIx's): their system
// calls are never interrupted, and the handler runs where the Watchdog is
// destroyed, never concurrently with it.
timer_t create_timer() {
  struct sigevent event {};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = kSignal;
  event._sigev_un._tid = static_cast<pid_t>(gettid());  // glibc 2.36 has no sigev_notify_thread_id
  timer_t timer{};
  if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) {
    std::perror("anyp mpi engine: timer_create (the backstop)");
    std::exit(1);
  }
  return timer;
}

void set_interval(timer_t timer, long ms) {
  struct itimerspec spec {};
  spec.it_interval.tv_sec = ms / 1000;
  spec.it_interval.tv_nsec = ms % 1000 * 1000000;
  spec.it_value = spec.it_interval;
  timer_settime(timer, 0, &spec, nullptr);
}

}  // namespace

int Watchdog::limit_seconds() {
  const char* text = std::getenv("ANYP_MPI_BACKSTOP_SECONDS");
  if (text == nullptr) return 300;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && v > 0 && v < 1000000 ? static_cast<int>(v) : 300;
}

Watchdog::Watchdog(const std::atomic<std::uint64_t>& heartbeat, int rank) {
  std::call_once(handler_installed, install_handler);
  const int limit = limit_seconds();
  const int n =
      std::snprintf(message, sizeof message,
                    "run error: rank %d made no progress for %d s (stuck inside an MPI "
                    "call?); ending the run (ANYP_MPI_BACKSTOP_SECONDS sets this limit)\n",
                    rank, limit);
  message_length = n > 0 ? static_cast<std::size_t>(n) : 0;
  limit_ticks = limit * 1000L / kTickMs;
  last_seen.store(heartbeat.load(std::memory_order_relaxed), std::memory_order_relaxed);
  still_ticks.store(0, std::memory_order_relaxed);
  watched.store(&heartbeat, std::memory_order_release);
  timer_ = create_timer();
  set_interval(timer_, kTickMs);
}

Watchdog::~Watchdog() {
  timer_delete(timer_);  // disarmed: no more ticks
  watched.store(nullptr, std::memory_order_release);
}

}  // namespace anyp::mpi
