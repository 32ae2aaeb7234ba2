#include "wtmap/core/pinned_allocator.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>

#include "wtmap/core/config.hpp"
#include "wtmap/core/detail/batch.cuh"

namespace wtmap::detail {

void* allocate_host_for_device(std::size_t bytes) noexcept {
  bytes = std::max<std::size_t>(bytes, 1);
  if (gpu_available()) {
    void* p = nullptr;
    if (cudaMallocHost(&p, bytes) == cudaSuccess) return p;
    cudaGetLastError();  // not sticky; ordinary memory still works, only its copies are slower
  }
  // 16-byte alignment, as operator new gives: enough for every element type held here.
  return std::malloc(bytes);
}

void free_host_for_device(void* p) noexcept {
  if (p == nullptr) return;
  if (gpu_available() && is_pinned(p)) {
    cudaFreeHost(p);
  } else {
    std::free(p);
  }
}

}  // namespace wtmap::detail
