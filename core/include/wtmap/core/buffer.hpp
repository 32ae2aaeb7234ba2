// wtmap core: one owning allocation of host or device memory, zero-filled, 128-byte aligned.
#pragma once

#include <cstddef>
#include <cstdint>

#include "wtmap/core/config.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap {

// Move-only owner of `size` bytes on the CPU (aligned host memory) or the GPU (cudaMalloc).
// Device allocations are checked against the free device memory and the limit first
// (device_memory.hpp) and never use managed memory, so an oversized request fails with
// device_out_of_memory instead of oversubscribing the card.
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& other) noexcept { swap(other); }
  Buffer& operator=(Buffer&& other) noexcept { Buffer(std::move(other)).swap(*this); return *this; }
  ~Buffer();

  // `what` names the allocation in error messages ("wavelet tree levels", ...). The zero fill is
  // complete when it returns, so any stream may write the buffer at once.
  static Result<Buffer> allocate(Backend backend, std::size_t size, const char* what);
  // Makes this a buffer of at least `size` bytes (16 at least) on `backend`: kept if it is one,
  // else freed first (so that the old and the new one need not fit at once) and allocated anew,
  // zero-filled, of exactly `size` bytes (a buffer reused from call to call).
  Status grow_to(Backend backend, std::size_t size, const char* what);
  // As grow_to, but a buffer made anew gets a quarter more than `size` (no more than `most`,
  // unless `size` is; the exact size where the larger one does not fit), so that the slightly
  // larger batches that follow keep it. For buffers sized by each batch of a stream: on the GPU
  // each replacement is a cudaFree (which waits for the whole device), a cudaMalloc and a waited
  // zero fill, under the lock every thread's device allocations take. A gapped run of 10^6
  // reads replaced its buffers 107 times, in the 5 mapping threads' first batches and then all
  // through the run; with the slack 55 times, all in the first batches (H100 host).
  Status grow_with_slack(Backend backend, std::size_t size, const char* what,
                         std::size_t most = static_cast<std::size_t>(-1));

  Backend backend() const { return backend_; }
  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }

  // Copies `count` bytes at `offset` between this buffer and host memory; done when they return
  // (a GPU buffer's new bytes are there for a kernel on any stream).
  Status copy_from_host(std::size_t offset, const void* src, std::size_t count);
  Status copy_to_host(std::size_t offset, void* dst, std::size_t count) const;

 private:
  void swap(Buffer& o) noexcept {
    std::swap(backend_, o.backend_);
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
  }
  Backend backend_ = Backend::cpu;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

namespace detail {

// grow_with_slack's size for a request of `size`: a quarter more, no more than `most` unless
// `size` is (then `size`), and `size` where a quarter more would overflow. The rule of every
// buffer reused batch after batch (QueryWorkspace's pairs too).
std::size_t size_with_slack(std::size_t size, std::size_t most = static_cast<std::size_t>(-1));

// Whether an allocation failed for want of host or device memory, so that a smaller one may fit.
bool short_of_memory(const Status& s);

}  // namespace detail
}  // namespace wtmap
