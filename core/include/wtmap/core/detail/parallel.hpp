// wtmap core (internal): a minimal static-partition parallel loop for the CPU backend.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

namespace wtmap::detail {

inline std::atomic<unsigned>& cpu_thread_limit() {
  static std::atomic<unsigned> limit{0};
  return limit;
}

inline unsigned cpu_threads() {
  const unsigned limit = cpu_thread_limit().load();
  if (limit != 0) return limit;
  const unsigned t = std::thread::hardware_concurrency();
  return t == 0 ? 1 : t;
}

// Calls body(begin, end) on disjoint ranges covering [0, n), one range per thread.
// Small inputs run on the calling thread, and so do the ranges of threads the system will not
// create.
template <class Body>
void parallel_for_ranges(std::uint64_t n, Body body, std::uint64_t min_per_thread = 1 << 14) {
  const std::uint64_t threads = std::min<std::uint64_t>(cpu_threads(), std::max<std::uint64_t>(1, n / min_per_thread));
  if (threads <= 1) {
    body(std::uint64_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  std::uint64_t started = 0;
  try {
    pool.reserve(threads);
    for (; started < threads; ++started) {
      pool.emplace_back([=] { body(n * started / threads, n * (started + 1) / threads); });
    }
  } catch (const std::system_error&) {  // the system refused a thread (ulimit -u, ulimit -v)
  } catch (const std::bad_alloc&) {
  }
  // The ranges no thread took run here: slower, but the work is done and nothing aborts.
  for (std::uint64_t t = started; t < threads; ++t) body(n * t / threads, n * (t + 1) / threads);
  for (auto& th : pool) th.join();
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
