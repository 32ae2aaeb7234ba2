// wtmap core (internal): host memory for data read at random over tens of MB to GB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "wtmap/core/detail/default_init_allocator.hpp"

namespace wtmap::detail {

// `bytes` of host memory, 128-byte aligned, to be released with std::free; null when there is
// none. From 2 MiB up it is aligned to 2 MiB and asked for in huge pages (Linux transparent huge
// pages, whose mode is `madvise` on the GPU hosts): read at random, with 4 KiB pages nearly each
// access also misses the TLB. Serves the CPU backend's index buffers (Buffer), the coordinate
// sorter's runs (aligner/bam_sorter.cpp) and the gapped mapper's reference (mapper_reference).
void* allocate_host_pages(std::size_t bytes);

// `bytes` of zero-filled host memory, 128-byte aligned, to be released with
// free_zeroed_host_pages(p, bytes); null when there is none. From 2 MiB up it comes straight from
// the kernel (an anonymous mapping, aligned to 2 MiB, in huge pages), whose pages read zero until
// first written: a buffer sized for the worst case then costs only the pages it uses, each zeroed
// once. Filling fresh pages with memset instead faulted in every page of the CPU backend's DP
// scratch (then 64 MiB an aligner, two aligners a mapper) on its first batches. Serves Buffer on
// the CPU backend.
void* allocate_zeroed_host_pages(std::size_t bytes);
void free_zeroed_host_pages(void* p, std::size_t bytes);

// Owns allocate_host_pages' memory.
struct FreeHostPages {
  void operator()(void* p) const { std::free(p); }
};
using HostPageBytes = std::unique_ptr<std::uint8_t[], FreeHostPages>;

// `bytes` from allocate_host_pages, owned; null when there is none.
inline HostPageBytes allocate_host_page_bytes(std::size_t bytes) {
  return HostPageBytes(static_cast<std::uint8_t*>(allocate_host_pages(bytes)));
}

// std::allocator's interface over allocate_host_pages.
template <class T>
struct HostPageAllocator {
  using value_type = T;
  HostPageAllocator() = default;
  template <class U>
  HostPageAllocator(const HostPageAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    void* p = allocate_host_pages(n * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) noexcept { std::free(p); }
  template <class U>
  bool operator==(const HostPageAllocator<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const HostPageAllocator<U>&) const noexcept { return false; }
};
// A vector in allocate_host_pages' memory whose resize leaves new items default-initialised
// (default_init_allocator.hpp). For the large rooms that a batch step rewrites whole each time and
// that live as long as their owner (the gapped mapper's codes, seeds, occurrences and CIGAR rooms,
// some 200 MB a mapper for 50000 reads of 150 bases): their first batch then faults in some
// hundred 2 MiB pages instead of some 5*10^4 4 KiB ones, each zeroed by the kernel and again by
// resize. On an H200 host, the mappers' faults were 72 % of a gapped run's 6.5*10^5 (perf), their
// threads contending for the address space's lock.
template <class T>
using HostPageVector = std::vector<T, DefaultInitialising<HostPageAllocator<T>>>;

}  // namespace wtmap::detail
