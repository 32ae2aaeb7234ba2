#include "wtmap/core/config.hpp"

#include <cuda_runtime_api.h>

#include "wtmap/core/detail/parallel.hpp"

namespace wtmap {

bool gpu_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

void set_cpu_threads(unsigned threads) { detail::cpu_thread_limit().store(threads); }

}  // namespace wtmap
