#include "wtmap/core/pinned_buffer.hpp"

#include <cuda_runtime_api.h>

#include <string>

namespace wtmap {

PinnedBuffer::~PinnedBuffer() {
  if (data_ != nullptr) cudaFreeHost(data_);  // nothing useful to do with an error in a destructor
}

Result<PinnedBuffer> PinnedBuffer::allocate(std::size_t size, const char* what) {
  PinnedBuffer b;
  if (size == 0) return Result<PinnedBuffer>(std::move(b));
  void* p = nullptr;
  const cudaError_t err = cudaMallocHost(&p, size);
  if (err != cudaSuccess) {
    cudaGetLastError();  // an allocation error is not sticky; clear it for the next call
    const StatusCode code = err == cudaErrorMemoryAllocation ? StatusCode::out_of_memory : StatusCode::cuda_error;
    return Status{code, std::string("cannot page-lock ") + std::to_string(size) + " bytes of host memory for " + what +
                            ": " + cudaGetErrorString(err)};
  }
  b.data_ = static_cast<std::byte*>(p);
  b.size_ = size;
  return Result<PinnedBuffer>(std::move(b));
}

}  // namespace wtmap
