#include "wtmap/core/detail/batch.cuh"

#include <algorithm>

namespace wtmap::detail {

void QueryWorkspace::release() {
  // Only streams that were made: even a synchronize starts the CUDA runtime and creates a context,
  // which a CPU-backend run never needs. Their kernels may still use the buffers.
  for (Stream& s : streams_) {
    if (s) cudaStreamSynchronize(s.get());  // nothing useful to do with an error here
  }
  // Device memory first, as the destructor frees it (see the class comment); the streams and
  // events hold no memory to speak of and stay.
  scratch_ = Buffer{};
  counters_ = Buffer{};  // reserve makes the counters (and their pinned copy) anew
  for (int s = 0; s < 2; ++s) {
    device_in_[s] = Buffer{};
    device_out_[s] = Buffer{};
  }
  for (int s = 0; s < 2; ++s) {
    pinned_in_[s] = PinnedBuffer{};
    pinned_out_[s] = PinnedBuffer{};
  }
  pinned_first_invalid_ = PinnedBuffer{};
  in_capacity_ = out_capacity_ = pinned_in_capacity_ = pinned_out_capacity_ = 0;
  slots_ = 0;
}

namespace {

Result<Buffer> allocate_device(std::size_t bytes) { return Buffer::allocate(Backend::gpu, bytes, "query batch buffers"); }
Result<PinnedBuffer> allocate_pinned(std::size_t bytes) { return PinnedBuffer::allocate(bytes, "query batch staging"); }

// Makes the first `slots` buffers of a pair `bytes` each, freeing the old ones first. The capacity
// reads 0 until they are all made, so that a failed allocation is tried again by the next call.
template <class Owner>
Status make_pair(Owner (&buffers)[2], std::size_t& capacity, std::size_t bytes, int slots,
                 Result<Owner> (*allocate)(std::size_t)) {
  capacity = 0;
  for (int s = 0; s < 2; ++s) {
    buffers[s] = Owner{};
    if (s >= slots || bytes == 0) continue;
    Result<Owner> made = allocate(bytes);
    if (!made.ok()) return made.status();
    buffers[s] = std::move(made.value());
  }
  capacity = bytes;
  return {};
}

// Grows the first `slots` buffers of a pair to `bytes` each (or all of them anew when the slot
// count grows). With `slack`, as Buffer::grow_with_slack does (size_with_slack), or the exact size
// where that does not fit: the gapped aligner's extension and rescue rounds vary in size, and each
// regrowth of a buffer waits for the whole device (cudaFree) and page-locks anew (5 * 10^5 pairs,
// H200: 2.29 s -> 2.09 s).
template <class Owner>
Status grow_pair(Owner (&buffers)[2], std::size_t& capacity, std::size_t bytes, bool more_slots, int slots,
                 Result<Owner> (*allocate)(std::size_t), bool slack) {
  if (bytes <= capacity && !more_slots) return {};
  const std::size_t exact = std::max(capacity, bytes);
  const std::size_t padded = slack && bytes > capacity ? size_with_slack(exact) : exact;
  Status made = make_pair(buffers, capacity, padded, slots, allocate);
  if (short_of_memory(made) && padded > exact) made = make_pair(buffers, capacity, exact, slots, allocate);
  return made;
}

}  // namespace

Status QueryWorkspace::reserve(std::size_t in_bytes, std::size_t out_bytes, int use_slots, Staging staging) {
  if (!counters_.data()) {
    for (Stream& s : streams_) {
      if (s) continue;
      Result<Stream> made = Stream::create();
      if (!made.ok()) return made.status();
      s = std::move(made.value());
    }
    Result<PinnedBuffer> pinned = allocate_pinned(sizeof(unsigned long long));
    if (!pinned.ok()) return pinned.status();
    pinned_first_invalid_ = std::move(pinned.value());
    Result<Buffer> counters = Buffer::allocate(Backend::gpu, 3 * sizeof(unsigned long long), "query batch counters");
    if (!counters.ok()) return counters.status();
    counters_ = std::move(counters.value());  // last: its presence says all of these are made
  }
  // A slot more: every buffer anew, with room for both slots.
  const bool more_slots = use_slots > slots_;
  const int keep_slots = more_slots ? use_slots : slots_;
  constexpr bool kSlack = true;
  WTMAP_TRY(grow_pair(device_in_, in_capacity_, in_bytes, more_slots, keep_slots, allocate_device, kSlack));
  WTMAP_TRY(grow_pair(device_out_, out_capacity_, out_bytes, more_slots, keep_slots, allocate_device, kSlack));
  WTMAP_TRY(grow_pair(pinned_in_, pinned_in_capacity_, staging.in ? in_bytes : 0, more_slots, keep_slots,
                      allocate_pinned, kSlack));
  WTMAP_TRY(grow_pair(pinned_out_, pinned_out_capacity_, staging.out ? out_bytes : 0, more_slots, keep_slots,
                      allocate_pinned, kSlack));
  slots_ = keep_slots;
  return {};
}

Status QueryWorkspace::reserve_scratch(std::size_t bytes) {
  if (scratch_.size() >= bytes) return {};
  scratch_ = Buffer{};  // free the old one first: both need not fit at once
  auto b = Buffer::allocate(Backend::gpu, bytes + bytes / 4, "query batch data");  // room to grow
  if (!b.ok()) return b.status();
  scratch_ = std::move(b.value());
  return {};
}

Status QueryWorkspace::reserve_timing() {
  for (Event& e : timing_) {
    if (e) continue;
    Result<Event> made = Event::create();
    if (!made.ok()) return made.status();
    e = std::move(made.value());
  }
  return {};
}

std::size_t staging_piece_bytes(std::size_t bytes) {
  constexpr std::size_t kLeast = std::size_t{64} << 10, kMost = std::size_t{4} << 20;
  std::size_t piece = kLeast;
  while (piece < bytes && piece < kMost) piece *= 2;
  return piece;
}

Status upload_staged(QueryWorkspace& ws, void* device_dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return {};
  std::lock_guard<std::mutex> lock(ws.mutex);
  WTMAP_TRY(ws.reserve(0, 0));  // its streams; no device buffers
  if (is_pinned(src)) {
    WTMAP_CUDA_TRY(cudaMemcpyAsync(device_dst, src, bytes, cudaMemcpyHostToDevice, ws.stream(0)));
    WTMAP_CUDA_TRY(cudaStreamSynchronize(ws.stream(0)));
    return {};
  }
  // The two staging buffers (staging_piece_bytes each, or larger ones already there).
  WTMAP_TRY(grow_pair(ws.pinned_in_, ws.pinned_in_capacity_, staging_piece_bytes(bytes), false, ws.slots_,
                      allocate_pinned, /*slack=*/false));
  const std::size_t piece = ws.pinned_in_capacity_;
  for (std::size_t offset = 0, p = 0; offset < bytes; offset += piece, ++p) {
    const int s = static_cast<int>(p & 1);
    const std::size_t length = std::min(piece, bytes - offset);
    WTMAP_CUDA_TRY(cudaStreamSynchronize(ws.stream(s)));  // its pinned buffer is free again
    parallel_copy(ws.pinned_in(s), static_cast<const char*>(src) + offset, length);
    WTMAP_CUDA_TRY(cudaMemcpyAsync(static_cast<char*>(device_dst) + offset, ws.pinned_in(s), length,
                                   cudaMemcpyHostToDevice, ws.stream(s)));
  }
  for (int s = 0; s < 2; ++s) WTMAP_CUDA_TRY(cudaStreamSynchronize(ws.stream(s)));
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
