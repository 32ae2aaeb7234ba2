// BatchAligner's GPU backend (mismatch_backend.cuh): the host gathers the reads' letters into the
// batch's page-locked buffer; on the device they are encoded and packed, each read is searched
// by one thread up to the slice (core's launch_batch_gpu over MismatchSearchOp), the reads it cut
// short again by a block of kGroupMembers threads each, and the hits chosen and located, all on
// one stream of one of two launch slots, so that a batch's kernels run beside the previous
// batch's tail. Only the choices and the other hits come back.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>

#include "mismatch_backend.cuh"
#include "wtmap/aligner/mismatch_scratch_layout.hpp"
#include "wtmap/core/detail/parallel.hpp"

namespace wtmap::aligner {
namespace {

// Read letters to search codes in place on the device (search_code): the host only gathers the
// letters, and the GPU encodes 10^5 reads in microseconds where the CPU threads, busy inflating,
// formatting and compressing beside the search, took 9-35 ms a batch
// (bench/history/RESULTS-2026-11-26.md).
struct EncodeLettersOp {
  using In = std::uint8_t;
  using Out = std::uint8_t;
  WTMAP_HD bool valid(In) const { return true; }
  WTMAP_HD Out operator()(In letter) const { return fmindex::search_code(static_cast<char>(letter)); }
  std::string why_invalid(In) const { return {}; }
};

// The hit choice and locate of a batch's reads on the GPU, after their search, in its buffers:
// each read's ReadChoice, and its other hits, if any, at the next free place in `others`
// (page-locked host memory, written across PCIe by the kernel itself).
struct ChooseHitsOp {
  fmindex::FmIndexView v;
  const SearchResult* results;
  const fmindex::PatternRef* patterns;
  const std::uint8_t* codes;
  ReadChoice* choices;
  OtherHit* others;
  unsigned long long* others_taken;  // others' places taken so far
  unsigned max_alternatives;
  __device__ void operator()(std::uint64_t r) const {
    const fmindex::PatternRef p = patterns[r];
    ChosenHits chosen;
    choose_and_locate(v, results[r], codes + p.offset, p.length, max_alternatives, chosen);
    const unsigned more = chosen.count > 1 ? chosen.count - 1u : 0u;
    const auto first = more > 0 ? static_cast<std::uint32_t>(atomicAdd(others_taken, more)) : 0u;
    split_choice(results[r], chosen, first, choices[r], others);
  }
};

// The reads the slice cut short (AlignOptions::thread_work_slice), listed on the device.
struct ListLongReadsOp {
  const SearchResult* results;
  std::uint64_t* list;
  unsigned long long* count;
  __device__ void operator()(std::uint64_t r) const {
    if (results[r].flags & kWorkCapped) list[atomicAdd(count, 1ull)] = r;
  }
};

// The group search of the listed long reads on the GPU, a block of kGroupMembers threads per read
// (ReadSearch's group steps): thread 0 leads, thread j expands the group's j-th node.
using GroupSearch = ReadSearch<kHitSlots, kGroupStackCapacity>;
constexpr unsigned kGroupWarps = kGroupMembers / 32;  // warps of a group's block
constexpr unsigned kGroupBlocksPerSm = 4;
static_assert(kGroupMembers % 32 == 0, "a group is whole warps");

struct GroupSearchOp {
  fmindex::FmIndexView v;
  const fmindex::PatternRef* patterns;
  const std::uint8_t* codes;
  PackedCodesView packed;
  SearchResult* results;
  const std::uint64_t* long_reads;
  const unsigned long long* long_count;
  unsigned long long* next_long;  // the next listed read a block takes
  detail::Node* stacks;           // kGroupStackCapacity per block of the grid
  SearchParams params;
};

// A group's shared memory: the search's state (thread 0 writes it, every thread reads it), the
// members' children, and each warp's count of them for the members' offsets.
struct GroupShared {
  alignas(GroupSearch) unsigned char search[sizeof(GroupSearch)];
  detail::Node children[4 * kGroupMembers];
  std::uint8_t counts[kGroupMembers];
  unsigned warp_children[kGroupWarps];
  unsigned members;
  unsigned long long taken;
};

__global__ void __launch_bounds__(kGroupMembers) group_search_kernel(GroupSearchOp op) {
  __shared__ GroupShared shared;
  const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
  auto& search = *reinterpret_cast<GroupSearch*>(shared.search);
  detail::Node* stack = op.stacks + std::uint64_t{blockIdx.x} * kGroupStackCapacity;
  while (true) {
    if (t == 0) shared.taken = atomicAdd(op.next_long, 1ull);
    __syncthreads();
    const unsigned long long i = shared.taken;
    if (i >= *op.long_count) return;
    const std::uint64_t r = op.long_reads[i];
    SearchResult& out = op.results[r];
    if (t == 0) {
      new (&search) GroupSearch(stack);
      const fmindex::PatternRef p = op.patterns[r];
      search.start(op.v, op.codes + p.offset, p.length, op.packed.read_at(p.offset), op.params, out);
      out.flags |= kGroupSearched;
    }
    __syncthreads();
    while (true) {
      if (t == 0) shared.members = search.take_group(op.v, out, kGroupMembers);
      __syncthreads();
      const unsigned n = shared.members;
      if (n == kGroupDone) break;
      if (n != 0) {  // (0: the leader did other work)
        const unsigned count =
            t < n ? search.expand_member(op.v, search.group_node(t), shared.children + 4 * t) : 0u;
        // Without hits the members push their children at once, at offsets from a scan (a leader
        // pushing hundreds of nodes one by one made most of a group step); with hits, or children
        // that do not fit, the leader merges them in turn (ReadSearch::merge_group).
        const bool hit = count == kGroupHit;
        unsigned before = hit ? 0u : count;  // inclusive scan within the warp
        for (unsigned d = 1; d < 32; d *= 2) {
          const unsigned below = __shfl_up_sync(~0u, before, d);
          if (lane >= d) before += below;
        }
        if (lane == 31) shared.warp_children[warp] = before;
        const bool any_hit = __syncthreads_or(hit) != 0;
        unsigned total = 0;
        for (unsigned w = 0; w < kGroupWarps; ++w) {
          if (w < warp) before += shared.warp_children[w];
          total += shared.warp_children[w];
        }
        before -= hit ? 0u : count;  // exclusive
        if (!any_hit && search.pushed_fit(total)) {
          for (unsigned c = 0; c < count; ++c) search.pushed_slot(before + c) = shared.children[4 * t + c];
          __syncthreads();
          if (t == 0) search.commit_pushed(op.v, out, total);
        } else {
          shared.counts[t] = static_cast<std::uint8_t>(count);
          __syncthreads();
          if (t == 0) search.merge_group(op.v, out, shared.children, shared.counts, n);
        }
      }
      __syncthreads();
    }
  }
}

// Threads that gather a batch's letters for the GPU. In wtmap align the other stages keep
// the cores busy, so more threads would wait for busy cores: one thread copies 10^5 reads in
// about 4 ms (bench/history/RESULTS-2026-11-26.md).
constexpr std::uint64_t kGatherThreads = 4;

class GpuMismatchBackend : public MismatchBackend {
 public:
  GpuMismatchBackend(const fmindex::FmIndex& index, const AlignOptions& options, BatchAligner::StageSeconds& seconds)
      : index_(index), options_(options), seconds_(seconds) {}
  // A batch still in flight is not collected: its SearchedBatch may be gone. Freeing the
  // workspaces waits for their kernels.
  ~GpuMismatchBackend() override = default;

  Status reclaim(SearchedBatch& batch) override {
    for (unsigned slot = 0; slot < kLaunchSlots; ++slot) WTMAP_TRY(collect(slot, &batch));
    return {};
  }

  // A copy per read, on at most kGatherThreads threads: more would wait for busy cores.
  void gather(const SeqRecord* reads, SearchedBatch& batch) override {
    const std::size_t n = batch.patterns.size();
    wtmap::detail::parallel_for_ranges(n, [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t r = begin; r < end; ++r) {
        std::memcpy(batch.codes.data() + batch.patterns[r].offset, reads[r].sequence.data(), reads[r].sequence.size());
      }
    }, std::max<std::uint64_t>(n / kGatherThreads, 1 << 14));
    batch.results.resize(0);  // the results stay on the device (the choices carry what the host needs)
  }

  Status search(SearchedBatch& batch, const SearchParams& params, bool sliced, Lap& lap) override {
    const std::size_t n = batch.patterns.size();
    // The slot of the batch two searches back: its results come back now unless finish() took them.
    const unsigned slot = next_slot_;
    next_slot_ = (next_slot_ + 1) % kLaunchSlots;
    WTMAP_TRY(collect(slot, nullptr));  // (it adds its own wait to search)
    lap.restart();
    if (n == 0) return {};
    wtmap::detail::QueryWorkspace& ws = workspaces_[slot];
    // Every device buffer before any work is enqueued (a device_out_of_memory launches nothing):
    // its stream, launch_batch_gpu's patterns and search results (staging the patterns only if
    // they could not be page-locked)...
    const bool patterns_pinned = wtmap::detail::is_pinned(batch.patterns.data());
    WTMAP_TRY(ws.reserve(n * sizeof(fmindex::PatternRef), n * sizeof(SearchResult), 1, {!patterns_pinned, false}));
    WTMAP_TRY(ws.reserve_timing());
    const cudaStream_t stream = ws.stream(0);
    // ...and the scratch (MismatchScratchLayout). The other hits are written across PCIe by the
    // kernel into batch.others where it is page-locked, else into the scratch and copied. No more
    // group blocks than reads, so that a small batch takes little memory (a stack per block).
    const bool others_pinned = batch.others.empty() || wtmap::detail::is_pinned(batch.others.data());
    const unsigned group_blocks = static_cast<unsigned>(std::min<std::uint64_t>(
        n, std::uint64_t{static_cast<unsigned>(wtmap::detail::multiprocessor_count())} * kGroupBlocksPerSm));
    const MismatchScratchLayout layout(batch.codes.size(), n, sliced ? group_blocks : 0,
                                       others_pinned ? 0 : batch.others.size());
    WTMAP_TRY(ws.reserve_scratch(layout.total));
    const MismatchScratch scratch = MismatchScratch::at(ws.scratch(), layout);
    // From the batch's pinned buffer (SearchedBatch): the copy runs beside this thread's next work.
    WTMAP_CUDA_TRY(cudaMemcpyAsync(scratch.codes, batch.codes.data(), batch.codes.size(), cudaMemcpyHostToDevice, stream));
    WTMAP_CUDA_TRY(cudaEventRecord(ws.timing(0), stream));  // the reads are on the device
    WTMAP_CUDA_TRY(cudaMemsetAsync(scratch.counters, 0, sizeof(MismatchBatchCounters), stream));
    WTMAP_TRY(wtmap::detail::run_batch_device(EncodeLettersOp{}, scratch.codes, scratch.codes, batch.codes.size(), stream,
                                              ws, "encode"));
    const std::uint64_t packed_words = packed_code_words(batch.codes.size());
    const PackCodesOp pack{scratch.codes, batch.codes.size(), scratch.packed_bases, scratch.packed_unknown};
    WTMAP_TRY(wtmap::detail::enqueue_for_each_index(pack, packed_words, stream));
    // After the search kernel, on its stream and buffers: the long reads' group search, then every
    // read's hit choice and locate, and the copy of the choices (the results stay on the device).
    const fmindex::FmIndexView view = index_.view();
    auto after_search = [&](const fmindex::PatternRef* patterns, SearchResult* results, cudaStream_t on) -> Status {
      if (sliced) {
        const ListLongReadsOp list{results, scratch.long_reads, &scratch.counters->long_listed};
        WTMAP_TRY(wtmap::detail::enqueue_for_each_index(list, n, on));
        const GroupSearchOp group{view,           patterns, scratch.codes,
                                  scratch.packed(), results, scratch.long_reads,
                                  &scratch.counters->long_listed, &scratch.counters->long_taken,
                                  scratch.group_stacks, options_.search};
        group_search_kernel<<<group_blocks, kGroupMembers, 0, on>>>(group);
        WTMAP_CUDA_TRY_LAUNCH();
      }
      OtherHit* others = others_pinned ? batch.others.data() : scratch.others;
      const ChooseHitsOp choose{view, results, patterns, scratch.codes, scratch.choices, others,
                                &scratch.counters->others_taken, options_.max_alternatives};
      WTMAP_TRY(wtmap::detail::enqueue_for_each_index(choose, n, on));
      if (!others_pinned) {
        WTMAP_CUDA_TRY(cudaMemcpyAsync(batch.others.data(), scratch.others, layout.others.bytes, cudaMemcpyDeviceToHost, on));
      }
      WTMAP_CUDA_TRY(cudaMemcpyAsync(batch.choices.data(), scratch.choices, layout.choices.bytes, cudaMemcpyDeviceToHost, on));
      return {};
    };
    const MismatchSearchOp op{view, scratch.codes, batch.codes.size(), scratch.packed(), params};
    WTMAP_TRY(wtmap::detail::launch_batch_gpu(op, batch.patterns.data(), static_cast<SearchResult*>(nullptr), n, ws,
                                              after_search));
    WTMAP_CUDA_TRY(cudaEventRecord(ws.timing(1), stream));  // its choices are in host memory
    std::lock_guard<std::mutex> lock(launch_mutex_);
    launched_[slot] = &batch;
    lap(seconds_.search);
    return {};
  }

  Status choose(SearchedBatch& batch) override {
    for (unsigned slot = 0; slot < kLaunchSlots; ++slot) WTMAP_TRY(collect(slot, &batch));  // (adds to search)
    return {};
  }

  Status release_device_memory() override {
    for (unsigned slot = 0; slot < kLaunchSlots; ++slot) {
      WTMAP_TRY(collect(slot, nullptr));
      workspaces_[slot].release();
    }
    return {};
  }

 private:
  // Waits for the batch in launch slot `slot` and copies its results into it; with `only`, just
  // if that is the batch there (else it was collected already).
  Status collect(unsigned slot, const SearchedBatch* only) {
    std::unique_lock<std::mutex> lock(launch_mutex_);
    collected_.wait(lock, [&] { return !collecting_[slot]; });  // another thread is collecting it
    SearchedBatch* batch = launched_[slot];
    if (batch == nullptr || (only != nullptr && batch != only)) return {};
    collecting_[slot] = true;
    lock.unlock();
    Lap lap;
    const MismatchSearchOp op{index_.view(), nullptr, batch->codes.size(), {}, options_.search};  // for its messages
    wtmap::detail::QueryWorkspace& ws = workspaces_[slot];
    float device_ms = 0;  // the batch's device time (search()'s two events)
    auto collect_and_time = [&]() -> Status {
      WTMAP_TRY(wtmap::detail::collect_batch_gpu(op, batch->patterns.data(), static_cast<SearchResult*>(nullptr),
                                                 batch->choices.size(), ws, "search"));
      WTMAP_CUDA_TRY(cudaEventElapsedTime(&device_ms, ws.timing(0), ws.timing(1)));
      return {};
    };
    const Status collected = collect_and_time();
    lock.lock();
    lap(seconds_.search);
    seconds_.device += device_ms / 1e3;
    launched_[slot] = nullptr;
    collecting_[slot] = false;
    collected_.notify_all();
    return collected;
  }

  const fmindex::FmIndex& index_;
  const AlignOptions& options_;
  BatchAligner::StageSeconds& seconds_;
  // Two launch slots, each with its workspace (buffers, streams, the codes on the device) and the
  // batch it holds until collected.
  static constexpr unsigned kLaunchSlots = 2;
  wtmap::detail::QueryWorkspace workspaces_[kLaunchSlots];
  SearchedBatch* launched_[kLaunchSlots] = {nullptr, nullptr};
  bool collecting_[kLaunchSlots] = {false, false};
  unsigned next_slot_ = 0;           // search()'s only
  std::mutex launch_mutex_;          // launched_, collecting_, seconds_.search
  std::condition_variable collected_;
};

}  // namespace

std::unique_ptr<MismatchBackend> make_gpu_backend(const fmindex::FmIndex& index, const AlignOptions& options,
                                                  BatchAligner::StageSeconds& seconds) {
  return std::make_unique<GpuMismatchBackend>(index, options, seconds);
}

}  // namespace wtmap::aligner
