// wtmap core: the device memory wtmap's own allocations hold, and the limit they keep to.
//
// Every device allocation of the libraries (Buffer, the batch workspaces of detail/batch.cuh)
// goes through detail::device_allocate, which counts the bytes held and refuses a request
// beyond the free device memory or beyond WTMAP_GPU_MEM_LIMIT with device_out_of_memory, so
// that a caller can retry with smaller batches. The limit lets a test make any card short of
// memory (docs/architecture.md); it is not a user option. Both the limit and the free memory
// are the current device's (cudaGetDevice): a run on several GPUs keeps to the limit on each.
//
// Space: one map entry per live device allocation. Time: an allocation or free takes a mutex
// and a hash-map update beside the CUDA call (allocations are per batch size, not per batch).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "wtmap/core/status.hpp"

namespace wtmap {

// The environment variable of the limit: bytes, optionally followed by K, M or G (powers of 1024).
constexpr const char* kDeviceMemoryLimitVariable = "WTMAP_GPU_MEM_LIMIT";

// A byte count as the limit's variable holds it ("4096", "512K", "64M", "2G"); none for anything
// else (empty, signs, spaces, other suffixes, or a count past 2^64).
std::optional<std::size_t> parse_byte_count(const std::string& text);

// The limit: the variable's value, read once per process; SIZE_MAX when it is unset.
// invalid_argument when it is set but not a byte count.
Result<std::size_t> device_memory_limit();

// Bytes held now by wtmap's device allocations, summed over the devices, and the most held at
// once so far (since the process started, or since the last reset_device_memory_peak, which sets
// it to what is held).
std::size_t device_memory_held();
std::size_t device_memory_peak();
void reset_device_memory_peak();
// The same for the one device that holds the most now, and the most any one device held at once
// (each device's peak, reset with the others): what a run on several GPUs needs of each.
std::size_t device_memory_held_on_busiest();
std::size_t device_memory_peak_on_busiest();

// Bytes one more device allocation on the current device may take now: its free memory, and no
// more than the limit leaves of it.
Result<std::size_t> device_memory_available();

namespace detail {

// cudaMalloc of `bytes` (> 0) into *p, counted; device_out_of_memory, naming `what`, when it
// exceeds the limit, the free memory or cudaMalloc fails for want of memory (that error is
// cleared, so later checks of cudaGetLastError do not see it).
Status device_allocate(void** p, std::size_t bytes, const char* what);
// cudaFree of an allocation device_allocate made (null: nothing).
void device_free(void* p);

}  // namespace detail
}  // namespace wtmap
