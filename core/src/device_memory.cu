#include "wtmap/core/device_memory.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "wtmap/core/detail/cuda_check.hpp"

namespace wtmap {
namespace {

// Each live allocation's bytes and device; the bytes held on each device (the limit is per
// device: a run on several GPUs holds an index on each), their sum over devices and its peak.
struct Ledger {
  struct Entry {
    std::size_t bytes;
    int device;
  };
  std::mutex mutex;
  std::unordered_map<void*, Entry> sizes;
  std::vector<std::size_t> held_on, peak_on;  // by device ordinal
  std::size_t held = 0, peak = 0;

  std::size_t& held_on_device(int device) {
    const auto d = static_cast<std::size_t>(device);
    if (held_on.size() <= d) {
      held_on.resize(d + 1, 0);
      peak_on.resize(d + 1, 0);
    }
    return held_on[d];
  }
  // Bytes counted in or out on a device and in the total, together (the caller holds the lock).
  void count(int device, std::size_t bytes) {
    held_on_device(device) += bytes;
    held += bytes;
  }
  void uncount(int device, std::size_t bytes) {
    held_on_device(device) -= bytes;
    held -= bytes;
  }
};

Ledger& ledger() {
  static Ledger* l = new Ledger;  // never destroyed: buffers may be freed during static destruction
  return *l;
}

Result<std::size_t> read_limit() {
  const char* text = std::getenv(kDeviceMemoryLimitVariable);
  if (text == nullptr) return std::numeric_limits<std::size_t>::max();
  const std::optional<std::size_t> bytes = parse_byte_count(text);
  if (!bytes) {
    return invalid_argument(std::string(kDeviceMemoryLimitVariable) + "='" + text +
                            "' is not a byte count (digits, optionally followed by K, M or G)");
  }
  return *bytes;
}

Status free_device_bytes(std::size_t& free_bytes) {
  std::size_t total_bytes = 0;
  WTMAP_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  return {};
}

Status current_device(int& device) {
  WTMAP_CUDA_TRY(cudaGetDevice(&device));
  return {};
}

std::string bytes_text(std::size_t bytes) { return std::to_string(bytes) + " bytes"; }

}  // namespace

std::optional<std::size_t> parse_byte_count(const std::string& text) {
  std::size_t digits = 0;
  std::uint64_t value = 0;
  constexpr std::uint64_t kMost = std::numeric_limits<std::uint64_t>::max();
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    const auto d = static_cast<std::uint64_t>(text[digits] - '0');
    if (value > (kMost - d) / 10) return std::nullopt;
    value = value * 10 + d;
    ++digits;
  }
  if (digits == 0 || text.size() > digits + 1) return std::nullopt;
  unsigned shift = 0;
  if (text.size() == digits + 1) {
    const char unit = text[digits];
    if (unit == 'K' || unit == 'k') {
      shift = 10;
    } else if (unit == 'M' || unit == 'm') {
      shift = 20;
    } else if (unit == 'G' || unit == 'g') {
      shift = 30;
    } else {
      return std::nullopt;
    }
  }
  if (value > (kMost >> shift)) return std::nullopt;
  return static_cast<std::size_t>(value << shift);
}

Result<std::size_t> device_memory_limit() {
  static const Result<std::size_t> limit = read_limit();
  return limit;
}

std::size_t device_memory_held() {
  std::lock_guard<std::mutex> lock(ledger().mutex);
  return ledger().held;
}

std::size_t device_memory_peak() {
  std::lock_guard<std::mutex> lock(ledger().mutex);
  return ledger().peak;
}

void reset_device_memory_peak() {
  std::lock_guard<std::mutex> lock(ledger().mutex);
  ledger().peak = ledger().held;
  ledger().peak_on = ledger().held_on;
}

std::size_t device_memory_held_on_busiest() {
  std::lock_guard<std::mutex> lock(ledger().mutex);
  const std::vector<std::size_t>& on = ledger().held_on;
  return on.empty() ? 0 : *std::max_element(on.begin(), on.end());
}

std::size_t device_memory_peak_on_busiest() {
  std::lock_guard<std::mutex> lock(ledger().mutex);
  const std::vector<std::size_t>& on = ledger().peak_on;
  return on.empty() ? 0 : *std::max_element(on.begin(), on.end());
}

Result<std::size_t> device_memory_available() {
  Result<std::size_t> limit = device_memory_limit();
  if (!limit.ok()) return limit.status();
  std::size_t free_bytes = 0;
  WTMAP_TRY(free_device_bytes(free_bytes));
  int device = 0;
  WTMAP_TRY(current_device(device));
  Ledger& l = ledger();
  std::lock_guard<std::mutex> lock(l.mutex);
  const std::size_t held = l.held_on_device(device);
  return std::min(free_bytes, *limit > held ? *limit - held : 0);
}

namespace detail {

Status device_allocate(void** p, std::size_t bytes, const char* what) {
  *p = nullptr;
  Result<std::size_t> limit = device_memory_limit();
  if (!limit.ok()) return limit.status();
  int device = 0;
  WTMAP_TRY(current_device(device));
  Ledger& l = ledger();
  // The bytes are counted as held before cudaMalloc, under the lock, so that two threads cannot
  // both pass the limit's check; the lock is not held across the CUDA calls. Held across them
  // (as it was), every thread's allocation waited behind another's cudaFree, which waits for the
  // whole device: a paired run's mapping threads, growing their buffers over the first batches,
  // were switched out most often on this lock (perf, sched_switch, H200).
  {
    std::lock_guard<std::mutex> lock(l.mutex);
    const std::size_t held_here = l.held_on_device(device);
    if (bytes > *limit || held_here > *limit - bytes) {
      return {StatusCode::device_out_of_memory,
              std::string(what) + " needs " + bytes_text(bytes) + " of device memory, but " +
                  kDeviceMemoryLimitVariable + " (" + bytes_text(*limit) + ") leaves " +
                  bytes_text(*limit - std::min(*limit, held_here))};
    }
    l.count(device, bytes);
  }
  auto unreserve = [&l, device, bytes] {
    std::lock_guard<std::mutex> lock(l.mutex);
    l.uncount(device, bytes);
  };
  std::size_t free_bytes = 0;
  if (Status s = free_device_bytes(free_bytes); !s.ok()) {
    unreserve();
    return s;
  }
  if (bytes > free_bytes) {
    unreserve();
    return {StatusCode::device_out_of_memory, std::string(what) + " needs " + bytes_text(bytes) +
                                                  " of device memory but only " + bytes_text(free_bytes) +
                                                  " are free"};
  }
  const cudaError_t err = cudaMalloc(p, bytes);
  if (err != cudaSuccess) {
    *p = nullptr;
    unreserve();
    cudaGetLastError();  // a failed cudaMalloc leaves its error for the next launch check to find
    const Status why = cuda_status(err, "cudaMalloc", __FILE__, __LINE__);
    if (err != cudaErrorMemoryAllocation) return why;
    return {StatusCode::device_out_of_memory, std::string(what) + " (" + bytes_text(bytes) + "): " + why.message()};
  }
  std::lock_guard<std::mutex> lock(l.mutex);
  l.sizes[*p] = {bytes, device};
  const std::size_t held_here = l.held_on_device(device);
  l.peak_on[static_cast<std::size_t>(device)] = std::max(l.peak_on[static_cast<std::size_t>(device)], held_here);
  l.peak = std::max(l.peak, l.held);
  return {};
}

void device_free(void* p) {
  if (p == nullptr) return;
  Ledger& l = ledger();
  {
    // Out of the ledger before cudaFree: once freed, the address may come back from another
    // thread's cudaMalloc, whose entry must not be the one erased here.
    std::lock_guard<std::mutex> lock(l.mutex);
    const auto it = l.sizes.find(p);
    if (it != l.sizes.end()) {
      l.uncount(it->second.device, it->second.bytes);
      l.sizes.erase(it);
    }
  }
  cudaFree(p);  // nothing useful to do with an error here (destructors call this)
}

}  // namespace detail
}  // namespace wtmap
