// worker_pool.cpp — process-wide worker threads (see worker_pool.hpp).
#include "engines/threads/worker_pool.hpp"

#include <deque>
#include <mutex>
#include <system_error>
#include <thread>

namespace anyp::threads {

class WorkerPool {
 public:
  static WorkerPool& instance() {
    // Never destroyed: pool threads may still be asleep in it at exit.
    static WorkerPool* pool = new WorkerPool;
    return *pool;
  }

  int offer(PoolJob& job, int extra) {
    std::unique_lock<std::mutex> lock(mutex_);
    int taken = 0;
    for (; taken < extra; ++taken) {
      if (idle_ == static_cast<int>(queue_.size()) && !start_thread()) break;
      queue_.push_back(&job);
      ++job.unfinished_;
    }
    job.offered_ += taken;
    if (taken == 1) {
      wake_.notify_one();
    } else if (taken > 1) {
      wake_.notify_all();
    }
    return taken;
  }

  // The calling thread's call returned, so the work is done (a task
  // returns when its run has stopped): threads that have not taken the job
  // yet need not start it. Waits only for those that did.
  int finish(PoolJob& job) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (*it == &job) {
        it = queue_.erase(it);
        --job.unfinished_;
      } else {
        ++it;
      }
    }
    job.done_.wait(lock, [&] { return job.unfinished_ == 0; });
    return 1 + job.offered_;
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
      PoolJob* job = queue_.front();
      queue_.pop_front();
      --idle_;
      lock.unlock();
      job->task_();
      lock.lock();
      ++idle_;
      if (--job->unfinished_ == 0) job->done_.notify_one();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<PoolJob*> queue_;  // one entry per pool thread a job still wants
  int idle_ = 0;                // started threads not running a task
};

int PoolJob::offer(int extra) { return extra > 0 ? WorkerPool::instance().offer(*this, extra) : 0; }

int PoolJob::run() {
  task_();
  return WorkerPool::instance().finish(*this);
}

}  // namespace anyp::threads
