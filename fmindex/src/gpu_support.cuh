// wtmap fmindex (internal): what the index build's GPU steps (gpu_round_sorter.cu,
// gpu_sample_ranker.cu) share: grid-stride launches over 64-bit counts, typed views of Buffers,
// host arrays copied to the device, CUB's two-phase calls into one growing scratch buffer, a
// selection's count and the test for rows still tied. (The text and the cover on the device:
// device_suffix_tables.hpp.)
#pragma once

#include <algorithm>
#include <cstdint>

#include "wtmap/core/buffer.hpp"
#include "wtmap/core/detail/cuda_check.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::fmindex::detail::gpu {

constexpr unsigned kThreads = 256;

// Blocks for a grid-stride loop over `items`: at least one (a grid of none is a launch error).
inline unsigned grid_for(std::uint64_t items) {
  return static_cast<unsigned>(std::clamp<std::uint64_t>((items + kThreads - 1) / kThreads, 1, 1u << 16));
}

// The first index of this thread in a grid-stride loop, and the stride.
__device__ __forceinline__ std::uint64_t first_index() { return blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; }
__device__ __forceinline__ std::uint64_t grid_stride() { return std::uint64_t{gridDim.x} * blockDim.x; }

template <class T>
T* as(Buffer& b) {
  return reinterpret_cast<T*>(b.data());
}

inline Result<Buffer> device_copy(const void* host, std::size_t bytes, const char* what) {
  auto buffer = Buffer::allocate(Backend::gpu, std::max<std::size_t>(bytes, 8), what);
  if (!buffer.ok()) return buffer.status();
  if (bytes > 0) WTMAP_TRY(buffer->copy_from_host(0, host, bytes));
  return buffer;
}

// The count a CUB selection wrote (a device int64).
inline Status read_count(const Buffer& found, std::uint64_t& count) {
  std::int64_t value = 0;
  WTMAP_TRY(found.copy_to_host(0, &value, sizeof value));
  count = static_cast<std::uint64_t>(value);
  return {};
}

// Whether row k's value equals a neighbour's in a sorted array of `count`: a row still tied with
// another (equal windows after the round's radix sort; equal run starts after a ranking pass).
struct EqualsANeighbour {
  const std::uint64_t* values;
  std::uint64_t count;
  __device__ bool operator()(std::uint64_t k) const {
    return (k > 0 && values[k] == values[k - 1]) || (k + 1 < count && values[k] == values[k + 1]);
  }
};

// A CUB call's two phases: its scratch size asked for, `scratch` grown to it, then the call.
template <class Call>
Status cub_call(Buffer& scratch, Call call) {
  std::size_t bytes = 0;
  WTMAP_CUDA_TRY(call(nullptr, bytes));
  if (scratch.size() < bytes) WTMAP_TRY(scratch.grow_to(Backend::gpu, bytes, "index build CUB scratch"));
  bytes = scratch.size();
  WTMAP_CUDA_TRY(call(scratch.data(), bytes));
  return {};
}

}  // namespace wtmap::fmindex::detail::gpu
