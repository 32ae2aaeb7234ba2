// wtmap core: a std::vector allocator whose memory is page-locked when asked to be.
#pragma once

#include <cstddef>
#include <type_traits>

namespace wtmap {

namespace detail {
// `bytes` of host memory: page-locked (cudaMallocHost) if `pinned`, else operator new. Throws
// std::bad_alloc when neither can be had.
void* allocate_host(std::size_t bytes, bool pinned);
void free_host(void* p, bool pinned) noexcept;
}  // namespace detail

// An allocator for host buffers that go to and from the GPU. Pinned, the GPU's copy engines read
// and write them directly (46 GB/s on the H100 host), where pageable memory takes a second copy
// through a staging buffer first (6.5 GB/s for a plain pageable cudaMemcpy); the batch API
// (wtmap/core/detail/batch.cuh) checks which it was given. Unpinned, it is operator new and
// touches no CUDA API, so a CPU-only run never starts the CUDA runtime. Page-locking costs more
// than allocating (cudaMallocHost maps and locks every page), so pinned vectors are for buffers
// that are reused, and counts against the host's lockable memory.
template <class T>
class PinnableAllocator {
 public:
  using value_type = T;
  // Containers move and swap their allocator with their storage, so that a pinned buffer stays
  // with the allocator that can free it.
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;

  PinnableAllocator() noexcept = default;
  explicit PinnableAllocator(bool pinned) noexcept : pinned_(pinned) {}
  template <class U>
  PinnableAllocator(const PinnableAllocator<U>& other) noexcept : pinned_(other.pinned()) {}

  T* allocate(std::size_t n) { return static_cast<T*>(detail::allocate_host(n * sizeof(T), pinned_)); }
  void deallocate(T* p, std::size_t) noexcept { detail::free_host(p, pinned_); }
  bool pinned() const noexcept { return pinned_; }

  friend bool operator==(const PinnableAllocator& a, const PinnableAllocator& b) noexcept { return a.pinned_ == b.pinned_; }
  friend bool operator!=(const PinnableAllocator& a, const PinnableAllocator& b) noexcept { return !(a == b); }

 private:
  bool pinned_ = false;
};

}  // namespace wtmap
