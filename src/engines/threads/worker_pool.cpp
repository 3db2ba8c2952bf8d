// worker_pool.cpp — process-wide worker threads (see worker_pool.hpp).
#include "engines/threads/worker_pool.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>

namespace anyp::threads {
namespace {

// One run's share of the pool: the task, and how many pool threads took it
// and have not returned yet.
struct Job {
  const std::function<void()>* task = nullptr;
  int unfinished = 0;
  std::condition_variable done;
};

class WorkerPool {
 public:
  static WorkerPool& instance() {
    // Never destroyed: pool threads may still be asleep in it at exit.
    static WorkerPool* pool = new WorkerPool;
    return *pool;
  }

  int run(int extra, const std::function<void()>& task) {
    Job job;
    job.task = &task;
    int taken = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      for (; taken < extra; ++taken) {
        if (idle_ == static_cast<int>(queue_.size()) && !start_thread()) break;
        queue_.push_back(&job);
        ++job.unfinished;
      }
      if (taken > 0) {
        if (taken == 1) {
          wake_.notify_one();
        } else {
          wake_.notify_all();
        }
      }
    }
    task();
    // The calling thread's call returned, so the work is done (a task
    // returns when its run has stopped): threads that have not taken the
    // job yet need not start it. Wait only for those that did.
    std::unique_lock<std::mutex> lock(mutex_);
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (*it == &job) {
        it = queue_.erase(it);
        --job.unfinished;
      } else {
        ++it;
      }
    }
    job.done.wait(lock, [&] { return job.unfinished == 0; });
    return 1 + taken;
  }

 private:
  // Under mutex_: one more thread, which starts idle. False if refused.
  bool start_thread() {
    try {
      std::thread([this] { serve(); }).detach();
    } catch (const std::system_error&) {
      return false;
    }
    ++idle_;
    return true;
  }

  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return !queue_.empty(); });
      Job* job = queue_.front();
      queue_.pop_front();
      --idle_;
      lock.unlock();
      (*job->task)();
      lock.lock();
      ++idle_;
      if (--job->unfinished == 0) job->done.notify_one();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job*> queue_;  // one entry per pool thread a job still wants
  int idle_ = 0;            // started threads not running a task
};

}  // namespace

int run_on_workers(int extra, const std::function<void()>& task) {
  return WorkerPool::instance().run(extra, task);
}

}  // namespace anyp::threads
