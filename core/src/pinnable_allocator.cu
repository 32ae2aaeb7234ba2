#include "wtmap/core/pinnable_allocator.hpp"

#include <cuda_runtime_api.h>

#include <new>

namespace wtmap::detail {

void* allocate_host(std::size_t bytes, bool pinned) {
  if (!pinned) return ::operator new(bytes);
  void* p = nullptr;
  if (cudaMallocHost(&p, bytes) != cudaSuccess) {
    cudaGetLastError();  // not sticky, but leave no error behind for the next check to find
    throw std::bad_alloc();
  }
  return p;
}

void free_host(void* p, bool pinned) noexcept {
  if (p == nullptr) return;
  if (pinned) {
    cudaFreeHost(p);
  } else {
    ::operator delete(p);
  }
}

}  // namespace wtmap::detail
