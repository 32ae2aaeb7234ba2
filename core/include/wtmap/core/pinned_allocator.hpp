// wtmap core: a std allocator of page-locked host memory, for host buffers that a GPU reads or
// writes with asynchronous copies.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace wtmap {

namespace detail {

// `bytes` of page-locked host memory (cudaMallocHost) when a CUDA device is usable, else -- no
// device, or the pinning failed -- ordinary host memory; nullptr when neither is to be had.
void* allocate_host_for_device(std::size_t bytes) noexcept;
// Frees what allocate_host_for_device returned, whichever kind it was.
void free_host_for_device(void* p) noexcept;

}  // namespace detail

// Page-locked host memory through the std allocator interface. A copy between the GPU and such
// memory runs at the bus's speed without a staging copy through the driver's own pinned buffer,
// and cudaMemcpyAsync returns at once instead of when its bytes are staged (on the H100 host,
// host-to-device 46 GB/s pinned against 6.5 GB/s pageable). Allocating and freeing it is slow
// (the pages are locked one by one; freeing may wait for the device), so it suits buffers that
// are made once and reused. Without a GPU it hands out ordinary memory: the same code then runs
// on a machine without CUDA devices. Free it before any cudaDeviceReset: the reset frees the
// pinned pages itself, and the deallocation could then no longer tell them from ordinary memory.
template <class T>
struct PinnedAllocator {
  using value_type = T;

  PinnedAllocator() noexcept = default;
  template <class U>
  PinnedAllocator(const PinnedAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    void* p = detail::allocate_host_for_device(n * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) noexcept { detail::free_host_for_device(p); }

  template <class U>
  bool operator==(const PinnedAllocator<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const PinnedAllocator<U>&) const noexcept { return false; }
};

template <class T>
using PinnedVector = std::vector<T, PinnedAllocator<T>>;

}  // namespace wtmap
