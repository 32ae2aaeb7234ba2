// wtmap core: one owning allocation of page-locked host memory, for staging buffers that the GPU
// copies to and from asynchronously.
//
// Space: `size` bytes (cudaMallocHost), not filled: a staging buffer is written before it is read.
// Unlike PinnedVector (pinned_allocator.hpp), it never falls back to ordinary memory: a buffer
// handed to cudaMemcpyAsync as page-locked must be page-locked, so a failed pinning is an error
// (out_of_memory, or cuda_error without a usable device). Allocating locks the pages one by one
// and freeing may wait for the device, so it suits buffers made once and reused. A zero-byte
// buffer holds no memory and calls nothing.
#pragma once

#include <cstddef>
#include <utility>

#include "wtmap/core/status.hpp"

namespace wtmap {

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    PinnedBuffer(std::move(other)).swap(*this);
    return *this;
  }
  ~PinnedBuffer();

  // `what` names the allocation in error messages.
  static Result<PinnedBuffer> allocate(std::size_t size, const char* what);

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void swap(PinnedBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
  }
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace wtmap
