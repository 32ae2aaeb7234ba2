#include "wtmap/core/buffer.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "wtmap/core/detail/cuda_check.hpp"
#include "wtmap/core/detail/host_pages.hpp"
#include "wtmap/core/device_memory.hpp"

namespace wtmap {
namespace detail {

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
std::size_t whole_huge_pages(std::size_t size) { return (size + kHugePage - 1) / kHugePage * kHugePage; }
}  // namespace

// The CPU backend searched 2 * 10^5 reads on a 268 MB index in 1.51-1.57 s with huge pages
// instead of 1.55-1.91 s (16 threads; bench/history/RESULTS-2026-11-26.md).
void* allocate_host_pages(std::size_t size) {
  if (size < kHugePage) return std::aligned_alloc(128, (size + 127) / 128 * 128);
  if (size > SIZE_MAX - kHugePage) return nullptr;  // rounding up would wrap around to a small block
  const std::size_t rounded = whole_huge_pages(size);
  void* p = std::aligned_alloc(kHugePage, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p != nullptr) madvise(p, rounded, MADV_HUGEPAGE);  // a hint: failure leaves small pages
#endif
  return p;
}

void* allocate_zeroed_host_pages(std::size_t size) {
#if defined(__linux__)
  if (size >= kHugePage) {
    if (size > SIZE_MAX - 2 * kHugePage) return nullptr;
    // A huge page more than needed, then the ends outside the 2 MiB boundaries given back (mmap
    // aligns to 4 KiB only, and a huge page needs its 2 MiB alignment).
    const std::size_t used = whole_huge_pages(size), mapped = used + kHugePage;
    void* m = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    const auto start = reinterpret_cast<std::uintptr_t>(m);
    const std::uintptr_t first = (start + kHugePage - 1) / kHugePage * kHugePage, end = first + used;
    if (first > start) munmap(m, first - start);
    if (start + mapped > end) munmap(reinterpret_cast<void*>(end), start + mapped - end);
#if defined(MADV_HUGEPAGE)
    madvise(reinterpret_cast<void*>(first), used, MADV_HUGEPAGE);  // a hint, as above
#endif
    return reinterpret_cast<void*>(first);
  }
#endif
  void* p = allocate_host_pages(size);
  if (p != nullptr) std::memset(p, 0, size);
  return p;
}

void free_zeroed_host_pages(void* p, std::size_t size) {
  if (p == nullptr) return;
#if defined(__linux__)
  if (size >= kHugePage) {
    munmap(p, whole_huge_pages(size));
    return;
  }
#endif
  std::free(p);
}

}  // namespace detail

Buffer::~Buffer() {
  if (data_ == nullptr) return;
  if (backend_ == Backend::gpu) {
    detail::device_free(data_);
  } else {
    detail::free_zeroed_host_pages(data_, size_);
  }
}

Status Buffer::grow_to(Backend backend, std::size_t size, const char* what) {
  return grow_with_slack(backend, size, what, size);  // no more than `size`: no slack
}

namespace detail {

std::size_t size_with_slack(std::size_t size, std::size_t most) {
  const std::size_t quarter = size / 4;
  const bool overflows = size > std::numeric_limits<std::size_t>::max() - quarter;
  return size > most || overflows ? size : std::min(most, size + quarter);
}

bool short_of_memory(const Status& s) {
  return s.code() == StatusCode::out_of_memory || s.code() == StatusCode::device_out_of_memory;
}

}  // namespace detail

Status Buffer::grow_with_slack(Backend backend, std::size_t size, const char* what, std::size_t most) {
  if (size_ >= size && data_ != nullptr) return {};
  const std::size_t padded = detail::size_with_slack(size, most);
  *this = Buffer{};
  Result<Buffer> fresh = allocate(backend, std::max<std::size_t>(padded, 16), what);
  if (!fresh.ok() && detail::short_of_memory(fresh.status()) && padded > size) {
    return grow_with_slack(backend, size, what, size);  // the exact size
  }
  if (!fresh.ok()) return fresh.status();
  *this = std::move(fresh.value());
  return {};
}

Result<Buffer> Buffer::allocate(Backend backend, std::size_t size, const char* what) {
  Buffer b;
  b.backend_ = backend;
  b.size_ = size;
  if (size == 0) return std::move(b);
  if (backend == Backend::cpu) {
    void* p = detail::allocate_zeroed_host_pages(size);
    if (p == nullptr) {
      return Status{StatusCode::out_of_memory, std::string("cannot allocate ") + std::to_string(size) +
                                                   " bytes of host memory for " + what};
    }
    b.data_ = static_cast<std::byte*>(p);
    return std::move(b);
  }
  void* p = nullptr;
  WTMAP_TRY(detail::device_allocate(&p, size, what));  // within the free memory and the limit
  b.data_ = static_cast<std::byte*>(p);
  // The fill runs on the legacy default stream, which the non-blocking streams of the batch API
  // do not wait for: data copied into a fresh buffer on one of them could be zeroed after the
  // copy (a whole batch of reads on an H100 under load, bench/history/RESULTS-2026-11-26.md). So it is
  // waited for.
  WTMAP_CUDA_TRY(cudaMemsetAsync(p, 0, size, cudaStreamLegacy));
  WTMAP_CUDA_TRY(cudaStreamSynchronize(cudaStreamLegacy));
  return std::move(b);
}

Status Buffer::copy_from_host(std::size_t offset, const void* src, std::size_t count) {
  if (count == 0) return {};
  if (backend_ == Backend::cpu) {
    std::memcpy(data_ + offset, src, count);
    return {};
  }
  // From pageable memory cudaMemcpy returns once the bytes are staged, before the DMA on the
  // legacy default stream is done, and the batch API's non-blocking streams do not wait for it.
  WTMAP_CUDA_TRY(cudaMemcpy(data_ + offset, src, count, cudaMemcpyHostToDevice));
  WTMAP_CUDA_TRY(cudaStreamSynchronize(cudaStreamLegacy));
  return {};
}

Status Buffer::copy_to_host(std::size_t offset, void* dst, std::size_t count) const {
  if (count == 0) return {};
  if (backend_ == Backend::cpu) {
    std::memcpy(dst, data_ + offset, count);
    return {};
  }
  WTMAP_CUDA_TRY(cudaMemcpy(dst, data_ + offset, count, cudaMemcpyDeviceToHost));
  return {};
}

}  // namespace wtmap
