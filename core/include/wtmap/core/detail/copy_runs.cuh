// wtmap core: copying the used parts of a sparse device array back to the host.
//
// Batch outputs whose items each get a room sized for the most they can write (a read's seeds, an
// alignment's CIGAR) fill a small part of their array: a 150 bp read has room for 91 seeds and
// writes a few, a CIGAR room holds query + target length operations and an alignment writes a
// handful. Copying the whole array moves some 20 times the bytes used. copy_runs_to_host moves only
// the runs listed: packed on the device by one thread per run, copied in one transfer on the
// workspace's stream, and put back in place on the host threads.
//
// Space: the packed runs on the device and on the host, plus the run list (RunStaging, kept by the
// caller between calls). Time: one kernel, one copy of the packed bytes, one host pass.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "wtmap/core/buffer.hpp"
#include "wtmap/core/detail/batch.cuh"
#include "wtmap/core/detail/host_pages.hpp"
#include "wtmap/core/detail/parallel.hpp"

namespace wtmap::detail {

// `count` elements at `offset` of both the device and the host array; `packed`: where they sit in
// the packed copy (the runs before it, one after another).
struct CopyRun {
  std::uint64_t offset = 0, packed = 0;
  std::uint32_t count = 0;
};

// The buffers of copy_runs_to_host, grown as needed and reused.
struct RunStaging {
  Buffer device_runs, device_packed;
  HostPageVector<std::byte> host_packed;  // rewritten whole by each copy
  // Frees the device buffers (after a batch too large for the device); the next copy makes them.
  void release_device_memory() {
    device_runs = Buffer{};
    device_packed = Buffer{};
  }
};

template <class T>
struct PackRuns {
  const T* from;
  T* to;
  const CopyRun* runs;
  __device__ void operator()(std::uint64_t r) const {
    const CopyRun run = runs[r];
    for (std::uint32_t k = 0; k < run.count; ++k) to[run.packed + k] = from[run.offset + k];
  }
};

// host[run.offset, + run.count) = device[run.offset, + run.count) for every run (the runs' packed
// fields laid out one after another from 0, `packed_total` elements in all); the rest of `host`
// is left as it was. Synchronous: done when it returns.
template <class T>
Status copy_runs_to_host(QueryWorkspace& ws, const T* device, T* host, const std::vector<CopyRun>& runs,
                         std::uint64_t packed_total, RunStaging& staging) {
  if (packed_total == 0) return {};
  WTMAP_TRY(staging.device_runs.grow_with_slack(Backend::gpu, runs.size() * sizeof(CopyRun), "copy runs"));
  WTMAP_TRY(staging.device_packed.grow_with_slack(Backend::gpu, packed_total * sizeof(T), "packed runs"));
  WTMAP_TRY(upload_staged(ws, staging.device_runs.data(), runs.data(), runs.size() * sizeof(CopyRun)));
  T* packed = reinterpret_cast<T*>(staging.device_packed.data());
  const cudaStream_t stream = ws.stream(0);
  WTMAP_TRY(enqueue_for_each_index(
      PackRuns<T>{device, packed, reinterpret_cast<const CopyRun*>(staging.device_runs.data())}, runs.size(), stream));
  staging.host_packed.resize(packed_total * sizeof(T));
  WTMAP_CUDA_TRY(
      cudaMemcpyAsync(staging.host_packed.data(), packed, packed_total * sizeof(T), cudaMemcpyDeviceToHost, stream));
  WTMAP_CUDA_TRY(cudaStreamSynchronize(stream));
  const T* from = reinterpret_cast<const T*>(staging.host_packed.data());
  parallel_for_ranges(runs.size(), [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t r = begin; r < end; ++r) std::copy_n(from + runs[r].packed, runs[r].count, host + runs[r].offset);
  }, 4096);
  return {};
}

}  // namespace wtmap::detail
