// wtmap core (detail, for wtmap libraries): running a batch of independent queries on either backend.
//
// A query operation is a trivially copyable struct with
//   using In = ...; using Out = ...;
//   WTMAP_HD bool valid(const In&) const;   // is the query inside the structure's range?
//   WTMAP_HD Out operator()(const In&) const;
//   std::string why_invalid(const In&) const;  // host only, for the error message; must not
//                                               // read through the view (it may be GPU memory)
// A stepwise operation (queries whose work varies a lot, such as a read's mismatch search) has,
// instead of operator(),
//   using State = ...;                                   // working state of one query
//   using Scratch = ...;                                 // its arrays; State(Scratch&) uses them
// (Kept apart so that State, indexed only by constant offsets, can live in registers: an array
// indexed at run time inside it would keep all of it in local memory.)
//   WTMAP_HD void start(State&, const In&, Out&) const;
//   WTMAP_HD bool step(State&, Out&) const;              // false once the query is finished
// A stepwise operation whose steps mostly wait on memory may also have, host only,
//   bool prefetch(State&, Out&) const;  // as step's start: the bookkeeping before its memory
//                                       // reads, which it prefetches; false once finished
// after which step() must do the same as without it; the CPU loop then runs a few queries per
// thread in turn, each step's cache misses overlapping the others' (BWA-MEM2's batched SMEM
// search, Vasimuddin et al., IPDPS 2019).
// A stepwise operation's kernel hands each thread the next query as soon as the thread's current
// one is finished, so a warp's threads all keep working until the batch runs out, instead of
// idling until the slowest query of their warp is done.
// An operation that is not stepwise, whose queries are each a long chain of work and too few to
// fill the GPU one thread each (mate rescue's window alignments), may have a warp take each query:
//   using WarpPerQuery = std::true_type;
//   __device__ Out warp_call(const In&, unsigned lane) const;  // every lane of the warp calls it
//                                                              // on the same query; lane 0's Out
// (the CPU loop still calls operator(), whose Out it must equal).
// Any operation may name its kernel's block size (a policy; kQueryBlockThreads otherwise):
//   static constexpr unsigned kBlockThreads = ...;
// The CPU backend calls it from a parallel loop, the GPU backend from one generic kernel; the
// host-memory GPU path cuts the batch in chunks whose copy-in, kernel and copy-out overlap on two
// streams (thesis 5.2.1), staging pageable memory through reusable pinned buffers.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "wtmap/core/buffer.hpp"
#include "wtmap/core/device_handles.hpp"
#include "wtmap/core/pinned_buffer.hpp"
#include "wtmap/core/detail/cuda_check.hpp"
#include "wtmap/core/detail/parallel.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::detail {

constexpr unsigned kQueryBlockThreads = 256;
// Threads of a warp (CUDA's warpSize on every architecture so far), as a constant: block sizes and
// static_asserts are written with it at compile time.
constexpr unsigned kWarpThreads = 32;

// Device and pinned storage for batched queries, allocated on first use and reused; one per
// structure. The mutex serialises concurrent batches on the same structure. Every resource is an
// owner (Stream, Event, Buffer, PinnedBuffer), so destroying the workspace frees what was made and
// nothing else; its device buffers go first, and cudaFree waits for the device, so no copy into
// its pinned buffers is still running when they are freed. Its device memory comes from
// Buffer::allocate (counted, device_memory.hpp): a batch too large for the device, or for
// WTMAP_GPU_MEM_LIMIT, fails with device_out_of_memory before its work is enqueued.
// Space: per slot (1 or 2), the device queries and results of its largest batch (or chunk) and a
// quarter more, and pinned staging of the same sizes for the sides that are pageable; the
// scratch; 3 counters.
class QueryWorkspace {
 public:
  QueryWorkspace() = default;
  QueryWorkspace(const QueryWorkspace&) = delete;
  QueryWorkspace& operator=(const QueryWorkspace&) = delete;
  // Waits for its streams and frees its device and pinned memory (the scratch included; the
  // streams and events stay); the next reserve makes them anew. The device memory of a batch size
  // that no longer fits goes back this way (a caller retrying in smaller batches). The caller
  // holds `mutex` and `scratch_mutex` (or knows no batch uses the workspace).
  void release();

  std::mutex mutex;

  // Which sides of a batch pass through the pinned staging buffers: those in pageable memory.
  // Pinned queries or results are copied directly, and their staging buffer is not made:
  // page-locking a buffer that is never used delays the first batches (two of 31 MB started the
  // aligner's search some 30 ms later; bench/history/RESULTS-2026-11-26.md).
  struct Staging {
    bool in, out;
  };

  // Makes sure each of the first `use_slots` slots holds in_bytes of queries and out_bytes of
  // results on the device, and as much staging memory where `staging` asks for it (one slot: a
  // workspace that holds one batch in flight, launch_batch_gpu). Makes the streams and counters.
  Status reserve(std::size_t in_bytes, std::size_t out_bytes, int use_slots = 2, Staging staging = {true, true});

  cudaStream_t stream(int s) const { return streams_[s].get(); }
  void* device_in(int s) { return device_in_[s].data(); }
  void* device_out(int s) { return device_out_[s].data(); }
  void* pinned_in(int s) { return pinned_in_[s].data(); }
  void* pinned_out(int s) { return pinned_out_[s].data(); }
  // Bytes per slot of the device queries and results (0 before they are made).
  std::size_t in_capacity() const { return in_capacity_; }
  // The batch's first invalid query (on the device, and its copy in pinned memory), and the
  // stepwise kernel's next query on stream s.
  unsigned long long* first_invalid_on_device() { return counters() + 0; }
  unsigned long long* next_query_on_device(int s) { return counters() + 1 + s; }
  unsigned long long* first_invalid_on_host() { return reinterpret_cast<unsigned long long*>(pinned_first_invalid_.data()); }

  // Device memory for data the queries point into (a batch's pattern codes), grown on demand
  // and reused. A caller holds scratch_mutex from filling it to the end of its batch.
  std::mutex scratch_mutex;
  Status reserve_scratch(std::size_t bytes);
  std::byte* scratch() { return scratch_.data(); }

  // Two events that time a batch's device work (a caller records them on its stream and reads
  // cudaEventElapsedTime once the batch is done), made on first use.
  Status reserve_timing();
  cudaEvent_t timing(int i) const { return timing_[i].get(); }

 private:
  friend Status upload_staged(QueryWorkspace& ws, void* device_dst, const void* src, std::size_t bytes);
  unsigned long long* counters() { return reinterpret_cast<unsigned long long*>(counters_.data()); }

  // Declared in the reverse of the order they are freed in (see the class comment).
  Stream streams_[2];
  PinnedBuffer pinned_in_[2], pinned_out_[2], pinned_first_invalid_;
  Buffer device_in_[2], device_out_[2], counters_, scratch_;
  Event timing_[2];
  std::size_t in_capacity_ = 0, out_capacity_ = 0;                // device bytes per slot
  std::size_t pinned_in_capacity_ = 0, pinned_out_capacity_ = 0;  // staging bytes per slot
  int slots_ = 0;                                                 // slots allocated: 1 or 2
};

// Copies `bytes` of host memory to device memory `device_dst`: pageable memory goes in pieces
// through the workspace's two pinned buffers, one filled by parallel_copy while the other's DMA
// runs (a pageable cudaMemcpy moves 6.5 GB/s on the H100 host; pinned DMA 46 GB/s).
Status upload_staged(QueryWorkspace& ws, void* device_dst, const void* src, std::size_t bytes);

// The size of upload_staged's two pinned buffers for an upload of `bytes`: the power of two at or
// above it, from 64 KiB to 4 MiB, so that a workspace's staging grows a few times at most. Not
// larger: page-locking is slow and holds up the other threads' device work (with 2 * 16 MiB in
// each of its workspaces, the gapped aligner's first batches took 0.43 s against 0.22 s later;
// with at most 4 MiB, 0.29 s, and a run 7 % less: H200, bench/RESULTS.md).
std::size_t staging_piece_bytes(std::size_t bytes);

bool is_pinned(const void* p);
int multiprocessor_count();

template <class Op, class = void>
struct is_stepwise : std::false_type {};
template <class Op>
struct is_stepwise<Op, std::void_t<typename Op::State>> : std::true_type {};

template <class Op, class = void>
struct has_prefetch : std::false_type {};
template <class Op>
struct has_prefetch<Op, std::void_t<decltype(std::declval<const Op&>().prefetch(
                            std::declval<typename Op::State&>(), std::declval<typename Op::Out&>()))>>
    : std::true_type {};

// Whether a warp takes each query (Op::WarpPerQuery), and the threads a query takes.
template <class Op, class = void>
struct is_warp_per_query : std::false_type {};
template <class Op>
struct is_warp_per_query<Op, std::void_t<typename Op::WarpPerQuery>> : Op::WarpPerQuery {};
template <class Op>
constexpr unsigned threads_per_query = is_warp_per_query<Op>::value ? kWarpThreads : 1;

// Threads per block of an operation's kernel (a policy): Op::kBlockThreads where the operation
// names it, else kQueryBlockThreads.
template <class Op, class = void>
struct block_threads_of : std::integral_constant<unsigned, kQueryBlockThreads> {};
template <class Op>
struct block_threads_of<Op, std::void_t<decltype(Op::kBlockThreads)>>
    : std::integral_constant<unsigned, Op::kBlockThreads> {};

// Blocks per multiprocessor the kernel's registers must leave room for (a policy):
// Op::kMinBlocksPerSm where the operation names it, else 1 (no limit but the block's).
template <class Op, class = void>
struct min_blocks_of : std::integral_constant<unsigned, 1> {};
template <class Op>
struct min_blocks_of<Op, std::void_t<decltype(Op::kMinBlocksPerSm)>>
    : std::integral_constant<unsigned, Op::kMinBlocksPerSm> {};

// Queries each CPU thread takes at least (a policy): Op::kCpuMinPerThread where the operation names
// it (queries of much work, such as an alignment's DP, spread over the threads from fewer), else
// parallel_for_ranges' default.
template <class Op, class = void>
struct cpu_min_per_thread_of : std::integral_constant<std::uint64_t, std::uint64_t{1} << 14> {};
template <class Op>
struct cpu_min_per_thread_of<Op, std::void_t<decltype(Op::kCpuMinPerThread)>>
    : std::integral_constant<std::uint64_t, Op::kCpuMinPerThread> {};

template <class Op>
__global__ void __launch_bounds__(block_threads_of<Op>::value, min_blocks_of<Op>::value)
    batch_query_kernel(Op op, const typename Op::In* in, typename Op::Out* out, std::uint64_t count,
                       std::uint64_t first_index, unsigned long long* first_invalid, unsigned long long* next_query) {
  using In = typename Op::In;
  using Out = typename Op::Out;
  if constexpr (is_stepwise<Op>::value) {
    typename Op::Scratch scratch;
    typename Op::State state(scratch);
    std::uint64_t i = 0;
    bool busy = false;
    while (true) {
      if (!busy) {
        i = atomicAdd(next_query, 1ull);
        if (i >= count) return;
        const In q = in[i];
        // Every byte written, as the non-stepwise kernel does: start() may leave parts unset
        // (unused result slots) that are still copied to the host.
        out[i] = Out{};
        if (!op.valid(q)) {
          atomicMin(first_invalid, static_cast<unsigned long long>(first_index + i));
          continue;
        }
        op.start(state, q, out[i]);
      }
      busy = op.step(state, out[i]);
    }
  } else if constexpr (is_warp_per_query<Op>::value) {
    static_assert(block_threads_of<Op>::value % kWarpThreads == 0, "a warp a query needs whole warps a block");
    (void)next_query;
    const unsigned lane = threadIdx.x % kWarpThreads;
    const std::uint64_t warps = std::uint64_t{gridDim.x} * blockDim.x / kWarpThreads;
    for (std::uint64_t i = (std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) / kWarpThreads; i < count; i += warps) {
      const In q = in[i];
      if (!op.valid(q)) {  // the same answer on every lane: the warp skips the query together
        if (lane == 0) {
          out[i] = Out{};
          atomicMin(first_invalid, static_cast<unsigned long long>(first_index + i));
        }
        continue;
      }
      const Out o = op.warp_call(q, lane);
      if (lane == 0) out[i] = o;
    }
  } else {
    (void)next_query;
    const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
    for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
      const In q = in[i];
      if (op.valid(q)) {
        out[i] = op(q);
      } else {
        out[i] = Out{};
        atomicMin(first_invalid, static_cast<unsigned long long>(first_index + i));
      }
    }
  }
}

// One query on the CPU.
template <class Op>
void run_query_cpu(const Op& op, const typename Op::In& q, typename Op::Out& out) {
  if constexpr (is_stepwise<Op>::value) {
    typename Op::Scratch scratch;
    typename Op::State state(scratch);
    out = typename Op::Out{};
    op.start(state, q, out);
    while (op.step(state, out)) {
    }
  } else {
    out = op(q);
  }
}

// A persistent grid: as many blocks as can be resident at once (thesis 5.2.1).
template <class Op>
int persistent_grid_size() {
  static const int blocks = [] {
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, batch_query_kernel<Op>, block_threads_of<Op>::value, 0) !=
            cudaSuccess || per_sm <= 0) {
      per_sm = 1;
    }
    return per_sm * multiprocessor_count();
  }();
  return blocks;
}

// Blocks of a launch over `count` queries: the persistent grid, or fewer for a small batch.
template <class Op>
int grid_blocks(std::uint64_t count) {
  constexpr unsigned threads = block_threads_of<Op>::value;
  const std::uint64_t needed = count * threads_per_query<Op>;
  return static_cast<int>(std::min<std::uint64_t>(persistent_grid_size<Op>(), (needed + threads - 1) / threads));
}

template <class Op>
Status invalid_query_status(const Op& op, const char* what, std::uint64_t index, const typename Op::In& q) {
  return invalid_argument(std::string(what) + " query " + std::to_string(index) + ": " + op.why_invalid(q));
}

inline void note_invalid(std::atomic<std::uint64_t>& first_invalid, std::uint64_t i) {
  std::uint64_t seen = first_invalid.load();
  while (i < seen && !first_invalid.compare_exchange_weak(seen, i)) {
  }
}

// Queries [begin, end) of an operation with prefetch(), kLanes at a time on this thread, in turn:
// a lane steps, then settles and prefetches its next step's reads, which the other lanes' steps
// give time to arrive. A lane whose query is finished takes the next one. Each query's steps are
// those of run_query_cpu.
template <class Op>
void run_interleaved_cpu(const Op& op, const typename Op::In* in, typename Op::Out* out, std::uint64_t begin,
                         std::uint64_t end, std::atomic<std::uint64_t>& first_invalid) {
  constexpr unsigned kLanes = 8;
  typename Op::Scratch scratch[kLanes];
  std::optional<typename Op::State> state[kLanes];
  std::uint64_t query[kLanes];
  bool live[kLanes];
  std::uint64_t next = begin;
  // Starts lane k on the next valid query, settled and prefetched; false when none is left.
  auto start_next = [&](unsigned k) {
    while (next < end) {
      const std::uint64_t i = next++;
      out[i] = typename Op::Out{};
      if (!op.valid(in[i])) {
        note_invalid(first_invalid, i);
        continue;
      }
      state[k].emplace(scratch[k]);
      op.start(*state[k], in[i], out[i]);
      query[k] = i;
      if (op.prefetch(*state[k], out[i])) return true;
    }
    return false;
  };
  unsigned alive = 0;
  for (unsigned k = 0; k < kLanes; ++k) {
    live[k] = start_next(k);
    if (live[k]) ++alive;
  }
  while (alive > 0) {
    for (unsigned k = 0; k < kLanes; ++k) {
      if (!live[k]) continue;
      op.step(*state[k], out[query[k]]);
      if (op.prefetch(*state[k], out[query[k]])) continue;
      live[k] = start_next(k);
      if (!live[k]) --alive;
    }
  }
}

template <class Op>
Status run_batch_cpu(const Op& op, const typename Op::In* in, typename Op::Out* out, std::uint64_t count,
                     const char* what) {
  std::atomic<std::uint64_t> first_invalid{std::numeric_limits<std::uint64_t>::max()};
  parallel_for_ranges(count, [&](std::uint64_t begin, std::uint64_t end) {
    if constexpr (has_prefetch<Op>::value) {
      run_interleaved_cpu(op, in, out, begin, end, first_invalid);
    } else {
      for (std::uint64_t i = begin; i < end; ++i) {
        if (op.valid(in[i])) {
          run_query_cpu(op, in[i], out[i]);
        } else {
          out[i] = typename Op::Out{};
          note_invalid(first_invalid, i);
        }
      }
    }
  }, cpu_min_per_thread_of<Op>::value);
  const std::uint64_t bad = first_invalid.load();
  if (bad != std::numeric_limits<std::uint64_t>::max()) return invalid_query_status(op, what, bad, in[bad]);
  return {};
}

// Work a caller enqueues on a batch's stream between its kernel and the copy of its results:
// Status (const In* device_queries, Out* device_results, cudaStream_t). None by default.
struct NoEpilogue {
  template <class In, class Out>
  Status operator()(const In*, Out*, cudaStream_t) const { return {}; }
};

// On stream s of the workspace: the copy of `length` queries from `src` (host) into its device
// buffer s, the kernel over them (query indices reported from `begin` on), the epilogue, and the
// copy of their results into `dst` (pinned host memory for an asynchronous copy; none if null).
template <class Op, class Epilogue = NoEpilogue>
Status enqueue_chunk(const Op& op, const typename Op::In* src, typename Op::Out* dst, std::uint64_t length,
                     std::uint64_t begin, int s, QueryWorkspace& ws, const Epilogue& epilogue = {}) {
  using In = typename Op::In;
  using Out = typename Op::Out;
  auto* d_in = static_cast<In*>(ws.device_in(s));
  auto* d_out = static_cast<Out*>(ws.device_out(s));
  WTMAP_CUDA_TRY(cudaMemcpyAsync(d_in, src, length * sizeof(In), cudaMemcpyHostToDevice, ws.stream(s)));
  WTMAP_CUDA_TRY(cudaMemsetAsync(ws.next_query_on_device(s), 0, sizeof(unsigned long long), ws.stream(s)));
  batch_query_kernel<Op><<<grid_blocks<Op>(length), block_threads_of<Op>::value, 0, ws.stream(s)>>>(
      op, d_in, d_out, length, begin, ws.first_invalid_on_device(), ws.next_query_on_device(s));
  WTMAP_CUDA_TRY_LAUNCH();
  WTMAP_TRY(epilogue(static_cast<const In*>(d_in), d_out, ws.stream(s)));
  if (dst != nullptr) WTMAP_CUDA_TRY(cudaMemcpyAsync(dst, d_out, length * sizeof(Out), cudaMemcpyDeviceToHost, ws.stream(s)));
  return {};
}

// Queries and results in host memory (pageable or pinned).
template <class Op>
Status run_batch_gpu(const Op& op, const typename Op::In* in, typename Op::Out* out, std::uint64_t count,
                     QueryWorkspace& ws, const char* what) {
  using In = typename Op::In;
  using Out = typename Op::Out;
  if (count == 0) return {};
  std::lock_guard<std::mutex> lock(ws.mutex);
  // At least four chunks for large batches so that copies and kernels overlap; stepwise kernels
  // have a tail (the last queries run on few threads) that larger chunks make relatively smaller.
  const std::uint64_t min_chunk = std::uint64_t{1} << (is_stepwise<Op>::value ? 18 : 16);
  const std::uint64_t chunk = std::min<std::uint64_t>(
      count, std::max<std::uint64_t>(min_chunk, std::min<std::uint64_t>((count + 3) / 4, std::uint64_t{1} << 22)));
  const bool in_pinned = is_pinned(in), out_pinned = is_pinned(out);
  WTMAP_TRY(ws.reserve(chunk * sizeof(In), chunk * sizeof(Out), 2, {!in_pinned, !out_pinned}));
  WTMAP_CUDA_TRY(cudaMemsetAsync(ws.first_invalid_on_device(), 0xFF, sizeof(unsigned long long), ws.stream(0)));
  WTMAP_CUDA_TRY(cudaStreamSynchronize(ws.stream(0)));
  const std::uint64_t chunks = (count + chunk - 1) / chunk;
  auto chunk_length = [&](std::uint64_t c) { return std::min(chunk, count - c * chunk); };
  // Results of chunk c staged in pinned memory are copied out once its stream is done.
  auto finish_chunk = [&](std::uint64_t c) -> Status {
    const int s = static_cast<int>(c & 1);
    WTMAP_CUDA_TRY(cudaStreamSynchronize(ws.stream(s)));
    if (!out_pinned) parallel_copy(out + c * chunk, ws.pinned_out(s), chunk_length(c) * sizeof(Out));
    return {};
  };
  for (std::uint64_t c = 0; c < chunks; ++c) {
    const int s = static_cast<int>(c & 1);
    if (c >= 2) WTMAP_TRY(finish_chunk(c - 2));
    const std::uint64_t begin = c * chunk, length = chunk_length(c);
    const In* src = in + begin;
    if (!in_pinned) {
      parallel_copy(ws.pinned_in(s), src, length * sizeof(In));
      src = static_cast<const In*>(ws.pinned_in(s));
    }
    Out* dst = out_pinned ? out + begin : static_cast<Out*>(ws.pinned_out(s));
    WTMAP_TRY(enqueue_chunk(op, src, dst, length, begin, s, ws));
  }
  for (std::uint64_t c = chunks >= 2 ? chunks - 2 : 0; c < chunks; ++c) WTMAP_TRY(finish_chunk(c));
  unsigned long long bad = 0;
  WTMAP_CUDA_TRY(cudaMemcpy(&bad, ws.first_invalid_on_device(), sizeof bad, cudaMemcpyDeviceToHost));
  if (bad != std::numeric_limits<unsigned long long>::max()) return invalid_query_status(op, what, bad, in[bad]);
  return {};
}

// The two halves of run_batch_gpu for a batch in one launch, so that a caller with two workspaces
// keeps two batches in flight: launch_batch_gpu copies the queries in (through the workspace's
// pinned buffer unless they are pinned), enqueues the kernel and the copy of the results into
// pinned memory (`out` itself when it is pinned) on the workspace's first stream, and returns;
// collect_batch_gpu waits for them and copies the results out of the workspace's buffer if they
// are not already there. In between, the workspace (its buffers, its scratch) belongs to that
// batch. A stepwise kernel's tail -- its slowest queries on few threads -- then overlaps the next
// batch's kernel. The epilogue (NoEpilogue) runs on the device's queries and results before
// they are copied. With `out` null the results stay on the device, where only the epilogue sees
// them, and nothing is copied back (the aligner's 248-byte search results, of which its epilogue
// sends the host what it needs).
template <class Op, class Epilogue = NoEpilogue>
Status launch_batch_gpu(const Op& op, const typename Op::In* in, typename Op::Out* out, std::uint64_t count,
                        QueryWorkspace& ws, const Epilogue& epilogue = {}) {
  using In = typename Op::In;
  using Out = typename Op::Out;
  if (count == 0) return {};
  std::lock_guard<std::mutex> lock(ws.mutex);
  // Pinned queries and results need no staging: `in` must then stay as it is, and `out` is
  // written, until collect_batch_gpu returns.
  const bool in_pinned = is_pinned(in), out_pinned = out == nullptr || is_pinned(out);
  WTMAP_TRY(ws.reserve(count * sizeof(In), count * sizeof(Out), 1, {!in_pinned, !out_pinned}));
  const In* src = in;
  if (!in_pinned) {
    parallel_copy(ws.pinned_in(0), in, count * sizeof(In));
    src = static_cast<const In*>(ws.pinned_in(0));
  }
  Out* dst = out_pinned ? out : static_cast<Out*>(ws.pinned_out(0));
  WTMAP_CUDA_TRY(cudaMemsetAsync(ws.first_invalid_on_device(), 0xFF, sizeof(unsigned long long), ws.stream(0)));
  WTMAP_TRY(enqueue_chunk(op, src, dst, count, 0, 0, ws, epilogue));
  WTMAP_CUDA_TRY(cudaMemcpyAsync(ws.first_invalid_on_host(), ws.first_invalid_on_device(), sizeof(unsigned long long),
                                 cudaMemcpyDeviceToHost, ws.stream(0)));
  return {};
}

// `in`, `out` and `count` as given to launch_batch_gpu.
template <class Op>
Status collect_batch_gpu(const Op& op, const typename Op::In* in, typename Op::Out* out, std::uint64_t count,
                         QueryWorkspace& ws, const char* what) {
  if (count == 0) return {};
  std::lock_guard<std::mutex> lock(ws.mutex);
  WTMAP_CUDA_TRY(cudaStreamSynchronize(ws.stream(0)));
  if (out != nullptr && !is_pinned(out)) parallel_copy(out, ws.pinned_out(0), count * sizeof(typename Op::Out));
  const unsigned long long bad = *ws.first_invalid_on_host();
  if (bad != std::numeric_limits<unsigned long long>::max()) return invalid_query_status(op, what, bad, in[bad]);
  return {};
}

// Queries and results already in device memory: one launch on the caller's stream, which is
// synchronised to report out-of-range queries.
template <class Op>
Status run_batch_device(const Op& op, const typename Op::In* d_in, typename Op::Out* d_out, std::uint64_t count,
                        cudaStream_t stream, QueryWorkspace& ws, const char* what) {
  if (count == 0) return {};
  std::lock_guard<std::mutex> lock(ws.mutex);
  WTMAP_TRY(ws.reserve(0, 0, 1));
  WTMAP_CUDA_TRY(cudaMemsetAsync(ws.first_invalid_on_device(), 0xFF, sizeof(unsigned long long), stream));
  WTMAP_CUDA_TRY(cudaMemsetAsync(ws.next_query_on_device(0), 0, sizeof(unsigned long long), stream));
  batch_query_kernel<Op><<<grid_blocks<Op>(count), block_threads_of<Op>::value, 0, stream>>>(
      op, d_in, d_out, count, 0, ws.first_invalid_on_device(), ws.next_query_on_device(0));
  WTMAP_CUDA_TRY_LAUNCH();
  WTMAP_CUDA_TRY(cudaMemcpyAsync(ws.first_invalid_on_host(), ws.first_invalid_on_device(), sizeof(unsigned long long),
                                 cudaMemcpyDeviceToHost, stream));
  WTMAP_CUDA_TRY(cudaStreamSynchronize(stream));
  const unsigned long long bad = *ws.first_invalid_on_host();
  if (bad != std::numeric_limits<unsigned long long>::max()) {
    typename Op::In q{};
    WTMAP_CUDA_TRY(cudaMemcpy(&q, d_in + bad, sizeof q, cudaMemcpyDeviceToHost));
    return invalid_query_status(op, what, bad, q);
  }
  return {};
}

// Work whose query is a position in arrays the operation holds (the aligner's hit choice reads a
// read's search result, pattern and bases at its index): f(i) for every i in [0, count), where f
// is a trivially copyable functor with a __device__ (or WTMAP_HD) operator()(std::uint64_t) that
// cannot fail.
template <class F>
__global__ void __launch_bounds__(kQueryBlockThreads) for_each_index_kernel(F f, std::uint64_t count) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) f(i);
}

// Enqueues for_each_index_kernel on `stream` and returns without waiting for it. The one place
// that sizes its grid.
template <class F>
Status enqueue_for_each_index(const F& f, std::uint64_t count, cudaStream_t stream) {
  if (count == 0) return {};
  // A grid-stride loop over at most as many threads as the GPU holds at once.
  const std::uint64_t resident_blocks = std::uint64_t{2048 / kQueryBlockThreads} * multiprocessor_count();
  const auto blocks = static_cast<unsigned>(std::min(resident_blocks, (count + kQueryBlockThreads - 1) / kQueryBlockThreads));
  for_each_index_kernel<F><<<blocks, kQueryBlockThreads, 0, stream>>>(f, count);
  WTMAP_CUDA_TRY_LAUNCH();
  return {};
}

// f(i) for every i in [0, count) on `backend`, done when it returns: the construction steps' one
// launcher, so that no build kernel computes its own grid. On the host a parallel loop (at least
// cpu_min_per_thread indices a thread); on the GPU for_each_index_kernel on the default stream,
// which the construction code's CUB calls and copies also use, waited for. f is a trivially
// copyable functor with a WTMAP_HD operator()(std::uint64_t) whose calls are independent.
template <class F>
Status for_each_index(Backend backend, std::uint64_t count, const F& f,
                      std::uint64_t cpu_min_per_thread = std::uint64_t{1} << 14) {
  if (backend == Backend::cpu) {
    parallel_for_ranges(count, [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t i = begin; i < end; ++i) f(i);
    }, cpu_min_per_thread);
    return {};
  }
  if (count == 0) return {};
  WTMAP_TRY(enqueue_for_each_index(f, count, nullptr));
  WTMAP_CUDA_TRY(cudaStreamSynchronize(nullptr));
  return {};
}

template <class Op>
Status run_batch(Backend backend, const Op& op, const typename Op::In* in, typename Op::Out* out, std::uint64_t count,
                 QueryWorkspace& ws, const char* what) {
  return backend == Backend::gpu ? run_batch_gpu(op, in, out, count, ws, what) : run_batch_cpu(op, in, out, count, what);
}

}  // namespace wtmap::detail
