#include "wtmap/core/detail/batch.cuh"

#include <algorithm>

#include "wtmap/core/device_memory.hpp"

namespace wtmap::detail {

QueryWorkspace::~QueryWorkspace() { release(); }

void QueryWorkspace::release() {
  // Errors cannot be reported from here; the runtime frees everything at exit anyway.
  // Only what was allocated: even cudaFree(nullptr) starts the CUDA runtime and creates a context
  // (0.3 s on the H200 host), which a CPU-backend run never needs.
  auto free_pinned = [](void*& p) {
    if (p != nullptr) cudaFreeHost(p);
    p = nullptr;
  };
  for (cudaStream_t stream : streams) {
    if (stream != nullptr) cudaStreamSynchronize(stream);  // its kernels may still use the buffers
  }
  for (int s = 0; s < 2; ++s) {
    if (streams[s] != nullptr) cudaStreamDestroy(streams[s]);
    streams[s] = nullptr;
    device_free(device_in[s]);
    device_free(device_out[s]);
    device_in[s] = device_out[s] = nullptr;
    free_pinned(pinned_in[s]);
    free_pinned(pinned_out[s]);
  }
  for (cudaEvent_t& e : timing) {
    if (e != nullptr) cudaEventDestroy(e);
    e = nullptr;
  }
  device_free(device_first_invalid);
  device_free(device_next_query);
  device_first_invalid = device_next_query = nullptr;
  if (pinned_first_invalid != nullptr) cudaFreeHost(pinned_first_invalid);
  pinned_first_invalid = nullptr;
  in_capacity = out_capacity = pinned_in_capacity = pinned_out_capacity = 0;
  slots = 0;
  scratch = Buffer{};
}

namespace {

// Grows the first `slots` buffers of a pair to `bytes` each (or all of them anew when the slot
// count grows), freeing the old ones first. The capacity reads 0 until they are all made, so
// that a failed allocation is tried again by the next call.
Status grow_pair(void* (&buffers)[2], std::size_t& capacity, std::size_t bytes, bool more_slots, int slots,
                 bool pinned) {
  if (bytes <= capacity && !more_slots) return {};
  bytes = std::max(capacity, bytes);
  capacity = 0;
  for (int s = 0; s < 2; ++s) {
    if (pinned) {
      cudaFreeHost(buffers[s]);
    } else {
      device_free(buffers[s]);
    }
    buffers[s] = nullptr;
    if (s >= slots || bytes == 0) continue;
    if (pinned) {
      WTMAP_CUDA_TRY(cudaMallocHost(&buffers[s], bytes));
    } else {
      WTMAP_TRY(device_allocate(&buffers[s], bytes, "query batch buffers"));
    }
  }
  capacity = bytes;
  return {};
}

}  // namespace

Status QueryWorkspace::reserve(std::size_t in_bytes, std::size_t out_bytes, int use_slots, Staging staging) {
  // Each part made once (a part whose making failed is tried again by the next call).
  for (auto& s : streams) {
    if (s == nullptr) WTMAP_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  auto make_counters = [](unsigned long long*& counters, std::size_t count) -> Status {
    if (counters != nullptr) return {};
    void* p = nullptr;
    WTMAP_TRY(device_allocate(&p, count * sizeof(unsigned long long), "query batch counters"));
    counters = static_cast<unsigned long long*>(p);
    return {};
  };
  WTMAP_TRY(make_counters(device_first_invalid, 1));
  WTMAP_TRY(make_counters(device_next_query, 2));
  if (pinned_first_invalid == nullptr) WTMAP_CUDA_TRY(cudaMallocHost(&pinned_first_invalid, sizeof(unsigned long long)));
  // A slot more: every buffer anew, with room for both slots.
  const bool more_slots = use_slots > slots;
  const int keep_slots = more_slots ? use_slots : slots;
  WTMAP_TRY(grow_pair(device_in, in_capacity, in_bytes, more_slots, keep_slots, false));
  WTMAP_TRY(grow_pair(device_out, out_capacity, out_bytes, more_slots, keep_slots, false));
  WTMAP_TRY(grow_pair(pinned_in, pinned_in_capacity, staging.in ? in_bytes : 0, more_slots, keep_slots, true));
  WTMAP_TRY(grow_pair(pinned_out, pinned_out_capacity, staging.out ? out_bytes : 0, more_slots, keep_slots, true));
  slots = keep_slots;
  return {};
}

Status QueryWorkspace::reserve_scratch(std::size_t bytes) {
  if (scratch.size() >= bytes) return {};
  scratch = Buffer{};  // free the old one first: both need not fit at once
  auto b = Buffer::allocate(Backend::gpu, bytes + bytes / 4, "query batch data");  // room to grow
  if (!b.ok()) return b.status();
  scratch = std::move(b.value());
  return {};
}

Status QueryWorkspace::reserve_timing() {
  for (cudaEvent_t& e : timing) {
    if (e == nullptr) WTMAP_CUDA_TRY(cudaEventCreate(&e));
  }
  return {};
}

Status upload_staged(QueryWorkspace& ws, void* device_dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return {};
  std::lock_guard<std::mutex> lock(ws.mutex);
  constexpr std::size_t kPiece = std::size_t{16} << 20;
  WTMAP_TRY(ws.reserve(0, 0));  // its streams; no device buffers
  if (is_pinned(src)) {
    WTMAP_CUDA_TRY(cudaMemcpyAsync(device_dst, src, bytes, cudaMemcpyHostToDevice, ws.streams[0]));
    WTMAP_CUDA_TRY(cudaStreamSynchronize(ws.streams[0]));
    return {};
  }
  // The two staging buffers (16 MiB each, or larger ones already there).
  WTMAP_TRY(grow_pair(ws.pinned_in, ws.pinned_in_capacity, kPiece, false, ws.slots, true));
  const std::size_t piece = ws.pinned_in_capacity;
  for (std::size_t offset = 0, p = 0; offset < bytes; offset += piece, ++p) {
    const int s = static_cast<int>(p & 1);
    const std::size_t length = std::min(piece, bytes - offset);
    WTMAP_CUDA_TRY(cudaStreamSynchronize(ws.streams[s]));  // its pinned buffer is free again
    parallel_copy(ws.pinned_in[s], static_cast<const char*>(src) + offset, length);
    WTMAP_CUDA_TRY(cudaMemcpyAsync(static_cast<char*>(device_dst) + offset, ws.pinned_in[s], length,
                                   cudaMemcpyHostToDevice, ws.streams[s]));
  }
  for (cudaStream_t stream : ws.streams) WTMAP_CUDA_TRY(cudaStreamSynchronize(stream));
  return {};
}

bool is_pinned(const void* p) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error of an unknown pointer
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

int multiprocessor_count() {
  int device = 0, count = 1;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    return 1;
  }
  return count;
}

}  // namespace wtmap::detail
