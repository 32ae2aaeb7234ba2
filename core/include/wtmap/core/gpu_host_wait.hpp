// wtmap core: how host threads wait for the GPU.
//
// A host thread that synchronises with a stream or an event, or makes a blocking copy, waits as
// the device's scheduling flag says (cudaSetDeviceFlags). CUDA's default (`automatic`) spins while
// the process has no more contexts than cores, so every thread waiting for a kernel keeps a core
// busy; `yield` spins but yields the core to other threads; `block` sleeps until the GPU signals
// (cudaDeviceScheduleSpin / Yield / BlockingSync): a wake-up costs some microseconds, and the core
// is free meanwhile, e.g. for the aligner's inflating and BGZF threads.
#pragma once

#include <cstdint>

#include "wtmap/core/status.hpp"

namespace wtmap {

enum class GpuHostWait : std::uint8_t { automatic, spin, yield, block };

// The environment variable set_gpu_host_wait_from_environment reads.
inline constexpr const char* kGpuHostWaitVariable = "WTMAP_GPU_WAIT";

// Sets how this process's host threads wait for the current device; applies to a context already
// made too. Fails only where the CUDA call does (no device).
Status set_gpu_host_wait(GpuHostWait wait);

// The wait WTMAP_GPU_WAIT names ("spin", "yield" or "block"; unset or empty: leave CUDA's
// default), set with set_gpu_host_wait; invalid_argument naming the variable for any other value.
Status set_gpu_host_wait_from_environment();

}  // namespace wtmap
