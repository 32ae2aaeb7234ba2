// wtmap core (internal): a minimal parallel loop for the CPU backend and the host steps of the GPU
// backend, over one process-wide pool of worker threads.
//
// A call splits [0, n) into up to kRangesPerThread ranges per thread and hands them to the pool;
// the calling thread takes ranges too, every thread claims the next unclaimed range as it comes
// free, and the call returns when all are done. Several ranges a thread, not one: where more
// threads are runnable than there are cores (a GPU run's mapping threads and the output's
// compression beside the pool), a worker the system takes off its core holds up the call by one
// small range, which it finishes once back, while the other threads take the rest. The pool's
// threads live as long as the process: starting threads per call (as this loop once did) cost a
// mapper of the gapped aligner some 50 calls a batch of thread creation and fresh stacks' page
// faults.
//
// Nested calls (a range that calls parallel_for_ranges again, or several threads calling at once)
// cannot deadlock: a caller waits only for ranges another thread has already started, and runs
// every range nobody has taken itself.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

#include "wtmap/core/detail/thread_name.hpp"

namespace wtmap::detail {

inline std::atomic<unsigned>& cpu_thread_limit() {
  static std::atomic<unsigned> limit{0};
  return limit;
}

inline unsigned cpu_threads() {
  const unsigned limit = cpu_thread_limit().load();
  if (limit != 0) return limit;
  // Asked once: glibc's hardware_concurrency reads /sys/devices/system/cpu/online on every call,
  // which cost a build from small chunks most of its time in the kernel.
  static const unsigned hardware = [] {
    const unsigned t = std::thread::hardware_concurrency();
    return t == 0 ? 1u : t;
  }();
  return hardware;
}

// One call's ranges: claimed one at a time by the caller and the workers (next), counted when done.
// A worker holds the job as a visitor from taking it off the pool's list until it has left it, so
// the caller's wait() (all ranges done, no visitor left) is what ends the job's life.
struct ParallelJob {
  void (*run)(const void* body, std::uint64_t range) = nullptr;
  const void* body = nullptr;
  std::uint64_t ranges = 0;
  std::atomic<std::uint64_t> next{0};
  std::uint64_t finished = 0, visitors = 0;  // under mutex
  std::mutex mutex;
  std::condition_variable done;

  // Runs unclaimed ranges until none is left.
  void work() {
    for (std::uint64_t r; (r = next.fetch_add(1)) < ranges;) {
      run(body, r);
      std::lock_guard<std::mutex> lock(mutex);
      if (++finished == ranges && visitors == 0) done.notify_all();
    }
  }
  void leave() {
    std::lock_guard<std::mutex> lock(mutex);
    if (--visitors == 0 && finished == ranges) done.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [&] { return finished == ranges && visitors == 0; });
  }
};

// The worker threads, started when a call first needs them and kept (never joined: they sleep on
// a condition variable between jobs, and the process's exit ends them).
class ParallelPool {
 public:
  static ParallelPool& shared() {
    static ParallelPool* pool = new ParallelPool;  // never destroyed: workers may outlive main()
    return *pool;
  }

  // Runs job on this thread and on up to `workers` workers (as many as the system gives).
  void run(ParallelJob& job, std::uint64_t workers) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      grow_to(workers);
      jobs_.push_back(&job);
    }
    wake_.notify_all();
    job.work();
    {  // every range is claimed: no worker takes the job up after this
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.erase(std::remove(jobs_.begin(), jobs_.end(), &job), jobs_.end());
    }
    job.wait();
  }

 private:
  // Starts workers up to `wanted` (at most kMaxWorkers); a thread the system refuses is left out
  // (its ranges then run on the threads there are).
  void grow_to(std::uint64_t wanted) {
    constexpr std::uint64_t kMaxWorkers = 1024;
    wanted = std::min(wanted, kMaxWorkers);
    while (workers_ < wanted) {
      try {
        std::thread worker([this] { serve(); });
        name_thread(worker, "wtmap-pool");
        worker.detach();
      } catch (const std::system_error&) {  // the system refused a thread (ulimit -u, ulimit -v)
        return;
      } catch (const std::bad_alloc&) {
        return;
      }
      ++workers_;
    }
  }

  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return !jobs_.empty(); });
      ParallelJob* job = jobs_.front();
      {
        std::lock_guard<std::mutex> visit(job->mutex);
        ++job->visitors;
      }
      // Rotate, so that several callers' jobs share the workers.
      jobs_.pop_front();
      jobs_.push_back(job);
      lock.unlock();
      job->work();
      lock.lock();
      // Every range is claimed: off the list while this visitor keeps the job alive.
      jobs_.erase(std::remove(jobs_.begin(), jobs_.end(), job), jobs_.end());
      lock.unlock();
      job->leave();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<ParallelJob*> jobs_;  // jobs that may still have unclaimed ranges
  std::uint64_t workers_ = 0;
};

// Ranges a call makes per thread at most (see the top of this file).
constexpr std::uint64_t kRangesPerThread = 4;

// Calls body(begin, end) on disjoint ranges covering [0, n) of equal size (+-1): kRangesPerThread
// per thread (cpu_threads()), fewer where a range would hold less than min_per_range, on at most
// cpu_threads() threads at once. Small inputs run on the calling thread, and so do the ranges of
// threads the system will not create.
template <class Body>
void parallel_for_ranges(std::uint64_t n, Body body, std::uint64_t min_per_range = 1 << 14) {
  const std::uint64_t threads = cpu_threads();
  const std::uint64_t count =
      std::min<std::uint64_t>(threads * kRangesPerThread, std::max<std::uint64_t>(1, n / min_per_range));
  if (threads <= 1 || count <= 1) {
    body(std::uint64_t{0}, n);
    return;
  }
  struct Ranges {
    Body& body;
    std::uint64_t n, count;
  } ranges{body, n, count};
  ParallelJob job;
  job.run = [](const void* p, std::uint64_t t) {
    const Ranges& r = *static_cast<const Ranges*>(p);
    r.body(r.n * t / r.count, r.n * (t + 1) / r.count);
  };
  job.body = &ranges;
  job.ranges = count;
  ParallelPool::shared().run(job, std::min(threads, count) - 1);
}

// memcpy spread over the CPU threads: one core copies pageable memory at a fraction of what
// the PCIe link and the memory system take (staging of pageable query batches).
inline void parallel_copy(void* dst, const void* src, std::uint64_t bytes) {
  constexpr std::uint64_t kPiece = std::uint64_t{1} << 20;
  parallel_for_ranges((bytes + kPiece - 1) / kPiece, [&](std::uint64_t begin, std::uint64_t end) {
    const std::uint64_t first = begin * kPiece, last = std::min(end * kPiece, bytes);
    std::memcpy(static_cast<char*>(dst) + first, static_cast<const char*>(src) + first, last - first);
  }, 4);
}

}  // namespace wtmap::detail
