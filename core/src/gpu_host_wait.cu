#include "wtmap/core/gpu_host_wait.hpp"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <string>

#include "wtmap/core/detail/cuda_check.hpp"

namespace wtmap {

Status set_gpu_host_wait(GpuHostWait wait) {
  unsigned flag = cudaDeviceScheduleAuto;
  switch (wait) {
    case GpuHostWait::automatic: flag = cudaDeviceScheduleAuto; break;
    case GpuHostWait::spin: flag = cudaDeviceScheduleSpin; break;
    case GpuHostWait::yield: flag = cudaDeviceScheduleYield; break;
    case GpuHostWait::block: flag = cudaDeviceScheduleBlockingSync; break;
  }
  WTMAP_CUDA_TRY(cudaSetDeviceFlags(flag));
  return {};
}

Status set_gpu_host_wait_from_environment() {
  const char* text = std::getenv(kGpuHostWaitVariable);
  if (text == nullptr || *text == '\0') return {};
  const std::string value = text;
  if (value == "spin") return set_gpu_host_wait(GpuHostWait::spin);
  if (value == "yield") return set_gpu_host_wait(GpuHostWait::yield);
  if (value == "block") return set_gpu_host_wait(GpuHostWait::block);
  return invalid_argument(std::string(kGpuHostWaitVariable) + "='" + value + "': use spin, yield or block");
}

}  // namespace wtmap
