// wtmap core (internal): turning CUDA runtime errors into Status values.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "wtmap/core/status.hpp"

namespace wtmap::detail {

inline Status cuda_status(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return {};
  const StatusCode code = err == cudaErrorMemoryAllocation ? StatusCode::out_of_memory : StatusCode::cuda_error;
  return {code, std::string(call) + " failed: " + cudaGetErrorString(err) + " (" + file + ":" + std::to_string(line) + ")"};
}

}  // namespace wtmap::detail

// Evaluates a CUDA runtime call; returns its error as a Status from the current function.
#define WTMAP_CUDA_TRY(call) WTMAP_TRY(::wtmap::detail::cuda_status((call), #call, __FILE__, __LINE__))
// After a kernel launch: launch-configuration errors.
#define WTMAP_CUDA_TRY_LAUNCH() WTMAP_CUDA_TRY(cudaGetLastError())
