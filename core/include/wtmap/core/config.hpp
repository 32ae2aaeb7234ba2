// wtmap core: compile-time configuration shared by host and device code.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define WTMAP_HD __host__ __device__ __forceinline__
#define WTMAP_HD_FN __host__ __device__
#else
#define WTMAP_HD inline
#define WTMAP_HD_FN
#endif

namespace wtmap {

// Where a structure's storage lives and which processor answers its queries.
// The CPU backend runs the same __host__ __device__ query functions as the GPU kernels.
enum class Backend : std::uint8_t { cpu = 0, gpu = 1 };

inline const char* backend_name(Backend b) { return b == Backend::gpu ? "gpu" : "cpu"; }

// True when a CUDA device can be used by this process (driver present, at least one card).
bool gpu_available();

// Threads the CPU backend uses for construction and queries; 0 (the default) = all cores.
void set_cpu_threads(unsigned threads);

}  // namespace wtmap
