// core/detail/parallel.hpp: parallel_for_ranges covers [0, n) exactly once, also when the system
// refuses to create its threads (a child process under a small address-space limit, which holds
// for root too), where it once ended the process in std::terminate; its workers carry the name
// detail/thread_name.hpp gives them (what a per-thread profile sorts by), the caller keeps its own.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <dirent.h>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "wtmap/core/config.hpp"
#include "wtmap/core/detail/parallel.hpp"

namespace wtmap::detail {
namespace {

// How often each index of [0, n) was visited.
std::vector<int> visits(std::uint64_t n) {
  std::vector<std::atomic<int>> seen(n);
  parallel_for_ranges(n, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) seen[i].fetch_add(1);
  }, 1);
  return std::vector<int>(seen.begin(), seen.end());
}

TEST(ParallelForRanges, EveryIndexOnceForAnyThreadCount) {
  for (const unsigned threads : {1u, 2u, 3u, 8u, 64u}) {
    set_cpu_threads(threads);
    for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{1000}}) {
      EXPECT_EQ(visits(n), std::vector<int>(n, 1)) << threads << " threads, n = " << n;
    }
  }
  set_cpu_threads(0);
}

// Callers on several threads at once, each range calling the loop again (the gapped mapper's
// threads do both): every (outer, inner) index once, no deadlock, for thread counts below, at and
// above the pool's size.
TEST(ParallelForRanges, NestedCallsFromManyThreadsVisitEveryIndexOnce) {
  constexpr std::uint64_t kOuter = 64, kInner = 300;
  for (const unsigned threads : {2u, 8u, 40u}) {
    set_cpu_threads(threads);
    std::vector<std::atomic<int>> seen(6 * kOuter * kInner);
    std::vector<std::thread> callers;
    for (std::uint64_t c = 0; c < 6; ++c) {
      callers.emplace_back([&, c] {
        parallel_for_ranges(kOuter, [&](std::uint64_t begin, std::uint64_t end) {
          for (std::uint64_t o = begin; o < end; ++o) {
            parallel_for_ranges(kInner, [&](std::uint64_t b, std::uint64_t e) {
              for (std::uint64_t i = b; i < e; ++i) seen[(c * kOuter + o) * kInner + i].fetch_add(1);
            }, 1);
          }
        }, 1);
      });
    }
    for (std::thread& t : callers) t.join();
    std::uint64_t wrong = 0;
    for (const auto& s : seen) wrong += s.load() != 1;
    EXPECT_EQ(wrong, 0u) << threads << " threads";
  }
  set_cpu_threads(0);
}

// kRangesPerThread ranges a thread, of equal size (+-1), fewer where one would hold less than
// min_per_range; while one range stalls (a worker off its core), the other threads take every
// other range: the call waits for the stalled range alone.
TEST(ParallelForRanges, RangesAreSmallAndAStalledOneHoldsUpOnlyItself) {
  set_cpu_threads(4);
  constexpr std::uint64_t kN = 1000;
  const std::uint64_t count = 4 * kRangesPerThread;
  std::atomic<std::uint64_t> visited{0}, calls{0}, smallest{kN}, largest{0};
  std::atomic<bool> stalled{false}, others_done_while_stalled{false};
  parallel_for_ranges(kN, [&](std::uint64_t begin, std::uint64_t end) {
    const std::uint64_t size = end - begin;
    calls.fetch_add(1);
    for (std::uint64_t s = smallest.load(); size < s && !smallest.compare_exchange_weak(s, size);) {
    }
    for (std::uint64_t l = largest.load(); size > l && !largest.compare_exchange_weak(l, size);) {
    }
    if (!stalled.exchange(true)) {  // the first range to start stalls until the others are done
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (visited.load() < kN - size && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      others_done_while_stalled = visited.load() == kN - size;
    }
    visited.fetch_add(size);
  }, 1);
  set_cpu_threads(0);
  EXPECT_EQ(visited.load(), kN);
  EXPECT_EQ(calls.load(), count);
  EXPECT_EQ(smallest.load(), kN / count);
  EXPECT_EQ(largest.load(), (kN + count - 1) / count);
  EXPECT_LE(largest.load(), kN / 8);  // a stalled range holds far less than a thread's quarter
  EXPECT_TRUE(others_done_while_stalled.load());
  // Fewer, larger ranges where min_per_range asks for it.
  std::atomic<std::uint64_t> few{0};
  set_cpu_threads(4);
  parallel_for_ranges(kN, [&](std::uint64_t, std::uint64_t) { few.fetch_add(1); }, kN / 3);
  set_cpu_threads(0);
  EXPECT_EQ(few.load(), 3u);
}

// The process's virtual size in bytes (/proc/self/statm, first field, in pages).
std::uint64_t virtual_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

// In a fresh process (a "threadsafe" death test re-executes this binary), so that glibc holds no
// cached thread stack to reuse: room for the vectors, none for a thread's 8 MiB stack.
void run_under_a_limit_that_refuses_threads() {
  set_cpu_threads(1);
  const std::vector<int> warm = visits(100);  // pages in what the loop needs, on this thread only
  const rlim_t limit = virtual_bytes() + (std::uint64_t{4} << 20);
  const struct rlimit rl = {limit, limit};
  if (setrlimit(RLIMIT_AS, &rl) != 0) std::_Exit(2);
  try {
    std::thread t([] {});
    t.join();
    std::_Exit(3);  // the limit did not bite: the test would prove nothing
  } catch (const std::system_error&) {
  }
  set_cpu_threads(8);
  std::_Exit(visits(10000) == std::vector<int>(10000, 1) && warm.size() == 100 ? 0 : 1);
}

// The names of this process's threads (Linux: /proc/self/task/*/comm).
std::vector<std::string> thread_names() {
  std::vector<std::string> names;
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return names;
  while (const dirent* e = readdir(tasks)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    if (std::getline(comm, name)) names.push_back(name);
  }
  closedir(tasks);
  return names;
}

TEST(ParallelForRanges, WorkersAreNamedAndTheCallerKeepsItsName) {
  if (thread_names().empty()) GTEST_SKIP() << "no /proc/self/task here";
  std::string before;
  std::getline(std::ifstream("/proc/thread-self/comm"), before);
  std::atomic<int> ran{0};
  const unsigned limit = cpu_thread_limit().exchange(4);  // ranges for 4 threads: workers start
  parallel_for_ranges(64, [&](std::uint64_t, std::uint64_t) { ran.fetch_add(1); }, 1);
  cpu_thread_limit().store(limit);
  EXPECT_EQ(ran.load(), static_cast<int>(4 * kRangesPerThread));
  const std::vector<std::string> names = thread_names();
  EXPECT_GE(std::count(names.begin(), names.end(), "wtmap-pool"), 1);
  std::string after;
  std::getline(std::ifstream("/proc/thread-self/comm"), after);
  EXPECT_EQ(after, before);
  EXPECT_NE(after, "wtmap-pool");
}

TEST(ParallelForRanges, ThreadsTheSystemRefusesRunOnTheCallingThread) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_under_a_limit_that_refuses_threads(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace wtmap::detail
