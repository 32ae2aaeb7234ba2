#include "wtmap/aligner/batch_aligner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <new>

#include "wtmap/core/detail/batch.cuh"
#include "wtmap/core/detail/parallel.hpp"

namespace wtmap::aligner {
namespace {

// A stepwise batch operation (detail/batch.cuh): the GPU keeps every thread on a read.
struct MismatchSearchOp {
  // Warps of their own: a block keeps its place on an SM until its last thread is done, and a
  // launch ends in a tail where a few reads of thousands of nodes run on few threads; blocks of
  // one warp then hold one warp's registers each instead of eight, free for the next batch's
  // launch (`wtmap align` on 10^6 E. coli reads: median 0.965 s instead of 1.045 s with blocks
  // of 256; bench/RESULTS.md).
  static constexpr unsigned kBlockThreads = 32;
  // 16 warps an SM, as many as the 128 registers ptxas then gives the kernel allow: left to
  // itself it takes 168, and 12 warps searched 10^6 E. coli reads in 0.058-0.063 s against
  // 0.055-0.057 s (at 20 warps it spills; bench/RESULTS.md).
  static constexpr unsigned kMinBlocksPerSm = 16;
  using In = fmindex::PatternRef;
  using Out = SearchResult;
  using State = ReadSearch<kHitSlots>;
  using Scratch = SearchScratch;
  fmindex::FmIndexView v;
  const std::uint8_t* codes;  // on the backend
  std::uint64_t codes_size;
  PackedCodesView packed;     // the codes packed, on the backend
  SearchParams params;
  WTMAP_HD bool valid(const In& p) const { return p.offset + p.length <= codes_size; }
  WTMAP_HD void start(State& s, const In& p, Out& r) const {
    s.start(v, codes + p.offset, p.length, packed.read_at(p.offset), params, r);
  }
  WTMAP_HD bool step(State& s, Out& r) const { return s.step(v, r); }
  std::string why_invalid(const In& p) const {
    return "read at offset " + std::to_string(p.offset) + " runs past the " + std::to_string(codes_size) + " bases";
  }
};

// Read letters to search codes in place on the device (search_code): the host only gathers the
// letters, and the GPU encodes 10^5 reads in microseconds where the CPU threads, busy inflating,
// formatting and compressing beside the search, took 9-35 ms a batch (bench/RESULTS.md).
struct EncodeLettersOp {
  using In = std::uint8_t;
  using Out = std::uint8_t;
  WTMAP_HD bool valid(In) const { return true; }
  WTMAP_HD Out operator()(In letter) const { return fmindex::search_code(static_cast<char>(letter)); }
  std::string why_invalid(In) const { return {}; }
};

// A batch's codes packed (packed_codes.hpp), a word per index.
struct PackCodesOp {
  const std::uint8_t* codes;
  std::uint64_t codes_size;
  std::uint64_t* bases;
  std::uint64_t* unknown;
  WTMAP_HD void operator()(std::uint64_t w) const { pack_codes_word(codes, codes_size, w, bases[w], unknown[w]); }
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

// Room for the other hits a read lists, max(1, N) - 1.
unsigned others_per_read(unsigned max_alternatives) { return max_alternatives > 1 ? max_alternatives - 1 : 0; }

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

// Threads that gather a batch's letters for the GPU. In `wtmap align` the other stages keep the
// cores busy: 16 spawned threads took 9-35 ms a batch of 10^5 reads to encode them, where one
// thread copies them in about 4 ms (bench/RESULTS.md).
constexpr std::uint64_t kGatherThreads = 4;

// The same encoding on the host, for the CPU backend.
void encode_read(const std::string& sequence, std::uint8_t* codes) {
  for (char c : sequence) *codes++ = fmindex::search_code(c);
}

// A CPU batch's packed codes (SearchedBatch::packed_codes).
PackedCodesView cpu_packed_codes(const SearchedBatch& batch) {
  const std::uint64_t* words = batch.packed_codes.data();
  return {words, words + batch.packed_codes.size() / 2};
}

}  // namespace

void SearchedBatch::reserve(std::size_t reads, std::size_t bases, Backend backend) {
  // resize() writes every new element (faulting its page in); clear() keeps the capacity.
  codes.resize(std::max(codes.size(), bases));
  patterns.resize(std::max(patterns.size(), reads));
  if (backend == Backend::cpu) results.resize(std::max(results.size(), reads));
  choices.resize(std::max(choices.size(), reads));
  codes.clear();
  patterns.clear();
  results.clear();
  choices.clear();
}

BatchAligner::BatchAligner(const fmindex::FmIndex& index, const AlignOptions& options)
    : index_(index),
      options_(options),
      workspaces_{std::make_unique<wtmap::detail::QueryWorkspace>(), std::make_unique<wtmap::detail::QueryWorkspace>()} {
  if (options_.thread_work_slice == 0) options_.thread_work_slice = default_thread_work_slice(index.view().rows);
}

// A batch still in flight is not collected: its SearchedBatch may be gone. Freeing the workspaces
// waits for their kernels.
BatchAligner::~BatchAligner() = default;

Status BatchAligner::align(const std::vector<SeqRecord>& reads, std::vector<ReadAlignment>& out) {
  WTMAP_TRY(search(reads, own_));
  return finish(reads, own_, out);
}

namespace {

// Adds the seconds since the last call to a stage's total.
class Lap {
 public:
  void operator()(double& stage) {
    const auto now = std::chrono::steady_clock::now();
    stage += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }
  void restart() { last_ = std::chrono::steady_clock::now(); }  // time that another Lap counted

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace

Status BatchAligner::search(const std::vector<SeqRecord>& reads, SearchedBatch& batch) {
  if (options_.max_alternatives > kMaxAlternatives) {
    return invalid_argument("at most " + std::to_string(kMaxAlternatives) + " alternative hits can be listed");
  }
  if (!index_.can_locate()) {
    return invalid_argument("the index was loaded for search only, without its sampled suffix array: nothing to locate hits with");
  }
  Lap lap;
  const std::size_t n = reads.size();
  const bool gpu = index_.backend() == Backend::gpu;
  if (gpu) {  // a batch searched again before it was finished: its last launch first
    for (unsigned slot = 0; slot < kLaunchSlots; ++slot) WTMAP_TRY(collect(slot, &batch));
    lap.restart();
  }
  // Offsets serially (a prefix sum); then the letters, which the GPU encodes, or on the CPU the
  // codes, in parallel.
  batch.patterns.resize(n);
  std::uint64_t total = 0;
  for (std::size_t r = 0; r < n; ++r) {
    batch.patterns[r] = {total, static_cast<std::uint32_t>(reads[r].sequence.size())};
    total += reads[r].sequence.size();
  }
  batch.codes.resize(total);
  if (gpu) {  // a copy per read, on at most kGatherThreads threads: more would wait for busy cores
    wtmap::detail::parallel_for_ranges(n, [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t r = begin; r < end; ++r) {
        std::memcpy(batch.codes.data() + batch.patterns[r].offset, reads[r].sequence.data(), reads[r].sequence.size());
      }
    }, std::max<std::uint64_t>(n / kGatherThreads, 1 << 14));
  } else {
    wtmap::detail::parallel_for_ranges(n, [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t r = begin; r < end; ++r) {
        encode_read(reads[r].sequence, batch.codes.data() + batch.patterns[r].offset);
      }
    }, 1 << 12);
  }
  if (!gpu) {  // and packed, a word per index
    const std::uint64_t words = packed_code_words(total);
    batch.packed_codes.resize(2 * words);
    const PackCodesOp pack{batch.codes.data(), total, batch.packed_codes.data(), batch.packed_codes.data() + words};
    wtmap::detail::parallel_for_ranges(words, [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t w = begin; w < end; ++w) pack(w);
    }, 1 << 12);
  }
  // On a GPU index the results stay on the device (the choices carry what the host needs).
  batch.results.resize(gpu ? 0 : n);
  batch.choices.resize(n);
  batch.others.resize(n * others_per_read(options_.max_alternatives));
  lap(seconds_.encode);
  // One thread per read up to the slice; the reads it cuts short again in groups, to the cap.
  SearchParams params = options_.search;
  const bool sliced = params.work_cap > options_.thread_work_slice;
  if (sliced) params.work_cap = options_.thread_work_slice;
  if (!gpu) {
    const MismatchSearchOp op{index_.view(), batch.codes.data(), batch.codes.size(), cpu_packed_codes(batch), params};
    WTMAP_TRY(wtmap::detail::run_batch_cpu(op, batch.patterns.data(), batch.results.data(), n, "search"));
    if (sliced) search_long_reads_on_cpu(batch);
    lap(seconds_.search);
    return {};
  }
  // The slot of the batch two searches back: its results come back now unless finish() took them.
  const unsigned slot = next_slot_;
  next_slot_ = (next_slot_ + 1) % kLaunchSlots;
  WTMAP_TRY(collect(slot, nullptr));  // (it adds its own wait to search)
  lap.restart();
  if (n == 0) return {};
  wtmap::detail::QueryWorkspace& ws = *workspaces_[slot];
  WTMAP_TRY(ws.reserve(0, 0, 1));  // its stream
  WTMAP_TRY(ws.reserve_timing());
  // The scratch holds the codes, their packed words and mask, the reads' choices, the list of long
  // reads and its two counters, the other hits' counter, the group searches' stacks, and room for
  // the other hits (used only if batch.others could not be page-locked).
  const unsigned group_blocks = static_cast<unsigned>(wtmap::detail::multiprocessor_count()) * kGroupBlocksPerSm;
  const std::size_t codes_bytes = (batch.codes.size() + 7) / 8 * 8;
  const std::uint64_t packed_words = packed_code_words(batch.codes.size());
  const std::size_t stacks_bytes =
      sliced ? std::size_t{group_blocks} * kGroupStackCapacity * sizeof(detail::Node) : 0;
  const std::size_t others_bytes = batch.others.size() * sizeof(OtherHit);
  WTMAP_TRY(ws.reserve_scratch(codes_bytes + 2 * packed_words * 8 + n * (sizeof(ReadChoice) + 8) + 24 + stacks_bytes +
                               others_bytes));
  auto* device_codes = reinterpret_cast<std::uint8_t*>(ws.scratch.data());
  auto* device_packed = reinterpret_cast<std::uint64_t*>(device_codes + codes_bytes);  // bases, then the mask
  const PackedCodesView packed{device_packed, device_packed + packed_words};
  auto* device_choices = reinterpret_cast<ReadChoice*>(device_packed + 2 * packed_words);
  auto* long_reads = reinterpret_cast<std::uint64_t*>(device_choices + n);
  auto* counters = reinterpret_cast<unsigned long long*>(long_reads + n);  // long reads listed, taken; others taken
  auto* stacks = reinterpret_cast<detail::Node*>(counters + 3);
  auto* device_others = reinterpret_cast<OtherHit*>(reinterpret_cast<std::byte*>(stacks) + stacks_bytes);
  const bool others_pinned = batch.others.empty() || wtmap::detail::is_pinned(batch.others.data());
  // From the batch's pinned buffer (SearchedBatch): the copy runs beside this thread's next work.
  WTMAP_CUDA_TRY(cudaMemcpyAsync(device_codes, batch.codes.data(), batch.codes.size(), cudaMemcpyHostToDevice, ws.streams[0]));
  WTMAP_CUDA_TRY(cudaEventRecord(ws.timing[0], ws.streams[0]));  // the reads are on the device
  WTMAP_TRY(wtmap::detail::run_batch_device(EncodeLettersOp{}, device_codes, device_codes, batch.codes.size(), ws.streams[0],
                                            ws, "encode"));
  const PackCodesOp pack{device_codes, batch.codes.size(), device_packed, device_packed + packed_words};
  WTMAP_TRY(wtmap::detail::enqueue_for_each_index(pack, packed_words, ws.streams[0]));
  // After the search kernel, on its stream and buffers: the long reads' group search, then every
  // read's hit choice and locate, and the copy of the choices (the results stay on the device).
  const fmindex::FmIndexView view = index_.view();
  auto after_search = [&](const fmindex::PatternRef* patterns, SearchResult* results, cudaStream_t stream) -> Status {
    if (sliced) {
      WTMAP_CUDA_TRY(cudaMemsetAsync(counters, 0, 2 * sizeof(unsigned long long), stream));
      WTMAP_TRY(wtmap::detail::enqueue_for_each_index(ListLongReadsOp{results, long_reads, counters}, n, stream));
      const GroupSearchOp group{view,      patterns, device_codes, packed, results,
                                long_reads, counters, counters + 1, stacks, options_.search};
      group_search_kernel<<<group_blocks, kGroupMembers, 0, stream>>>(group);
      WTMAP_CUDA_TRY_LAUNCH();
    }
    WTMAP_CUDA_TRY(cudaMemsetAsync(counters + 2, 0, sizeof(unsigned long long), stream));
    OtherHit* others = others_pinned ? batch.others.data() : device_others;
    const ChooseHitsOp choose{view, results, patterns, device_codes, device_choices, others, counters + 2,
                              options_.max_alternatives};
    WTMAP_TRY(wtmap::detail::enqueue_for_each_index(choose, n, stream));
    if (!others_pinned) {
      WTMAP_CUDA_TRY(cudaMemcpyAsync(batch.others.data(), device_others, others_bytes, cudaMemcpyDeviceToHost, stream));
    }
    WTMAP_CUDA_TRY(cudaMemcpyAsync(batch.choices.data(), device_choices, n * sizeof(ReadChoice), cudaMemcpyDeviceToHost, stream));
    return {};
  };
  const MismatchSearchOp op{view, device_codes, batch.codes.size(), packed, params};
  WTMAP_TRY(wtmap::detail::launch_batch_gpu(op, batch.patterns.data(), static_cast<SearchResult*>(nullptr), n, ws,
                                            after_search));
  WTMAP_CUDA_TRY(cudaEventRecord(ws.timing[1], ws.streams[0]));  // its choices are in host memory
  std::lock_guard<std::mutex> lock(launch_mutex_);
  launched_[slot] = &batch;
  lap(seconds_.search);
  return {};
}

Status BatchAligner::collect(unsigned slot, const SearchedBatch* only) {
  std::unique_lock<std::mutex> lock(launch_mutex_);
  collected_.wait(lock, [&] { return !collecting_[slot]; });  // another thread is collecting it
  SearchedBatch* batch = launched_[slot];
  if (batch == nullptr || (only != nullptr && batch != only)) return {};
  collecting_[slot] = true;
  lock.unlock();
  Lap lap;
  const MismatchSearchOp op{index_.view(), nullptr, batch->codes.size(), {}, options_.search};  // for its messages
  wtmap::detail::QueryWorkspace& ws = *workspaces_[slot];
  float device_ms = 0;  // the batch's device time (search()'s two events)
  auto collect_and_time = [&]() -> Status {
    WTMAP_TRY(wtmap::detail::collect_batch_gpu(op, batch->patterns.data(), static_cast<SearchResult*>(nullptr),
                                               batch->choices.size(), ws, "search"));
    WTMAP_CUDA_TRY(cudaEventElapsedTime(&device_ms, ws.timing[0], ws.timing[1]));
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

Status BatchAligner::finish(const std::vector<SeqRecord>& reads, SearchedBatch& batch, std::vector<ReadAlignment>& out) {
  const std::size_t n = reads.size();
  if (batch.choices.size() != n) return invalid_argument("finish() needs the batch that search() was given");
  if (index_.backend() == Backend::gpu) {
    for (unsigned slot = 0; slot < kLaunchSlots; ++slot) WTMAP_TRY(collect(slot, &batch));  // (adds to search)
  } else {
    choose_on_host(batch);  // (on a GPU index, search() had the GPU choose them)
  }
  out.resize(n);
  place_chosen(batch, out);
  return {};
}

// One read at a time per CPU thread: their work varies by orders of magnitude, so no static split.
void BatchAligner::search_long_reads_on_cpu(SearchedBatch& batch) const {
  batch.long_reads.clear();
  for (std::size_t r = 0; r < batch.results.size(); ++r) {
    if (batch.results[r].flags & kWorkCapped) batch.long_reads.push_back(r);
  }
  std::atomic<std::size_t> next{0};
  const PackedCodesView packed = cpu_packed_codes(batch);
  wtmap::detail::parallel_for_ranges(std::min<std::uint64_t>(batch.long_reads.size(), wtmap::detail::cpu_threads()),
                                     [&](std::uint64_t, std::uint64_t) {
    auto scratch = std::make_unique<GroupSearchScratch>();  // 160 KB: not on the thread's stack
    for (std::size_t j; (j = next++) < batch.long_reads.size();) {
      const std::size_t r = batch.long_reads[j];
      const fmindex::PatternRef p = batch.patterns[r];
      search_read_in_groups(index_.view(), batch.codes.data() + p.offset, p.length,
                            packed.read_at(p.offset), options_.search, batch.results[r], *scratch);
      batch.results[r].flags |= kGroupSearched;
    }
  }, 1);
}

// The CPU index's view is host memory: each read's hits chosen and located in one go, as on the
// GPU.
void BatchAligner::choose_on_host(SearchedBatch& batch) {
  Lap lap;
  const fmindex::FmIndexView view = index_.view();
  wtmap::detail::parallel_for_ranges(batch.results.size(), [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t r = begin; r < end; ++r) {
      const fmindex::PatternRef p = batch.patterns[r];
      ChosenHits chosen;
      choose_and_locate(view, batch.results[r], batch.codes.data() + p.offset, p.length, options_.max_alternatives,
                        chosen);
      const auto first_other = static_cast<std::uint32_t>(r * others_per_read(options_.max_alternatives));
      split_choice(batch.results[r], chosen, first_other, batch.choices[r], batch.others.data());
    }
  }, 1 << 12);
  lap(seconds_.choose);
}

// Also counts the search's nodes, in the same pass over the choices (a serial pass of its own
// over the 248-byte results took its time on the finish thread).
void BatchAligner::place_chosen(const SearchedBatch& batch, std::vector<ReadAlignment>& out) {
  Lap lap;
  std::atomic<std::uint64_t> nodes{0}, long_reads{0}, long_read_nodes{0}, capped{0};
  std::mutex max_mutex;
  wtmap::detail::parallel_for_ranges(batch.choices.size(), [&](std::uint64_t begin, std::uint64_t end) {
    std::uint64_t range_nodes = 0, range_long_reads = 0, range_long_read_nodes = 0, range_capped = 0, range_max = 0;
    for (std::uint64_t r = begin; r < end; ++r) {
      const ReadChoice& c = batch.choices[r];
      range_nodes += c.work;
      range_max = std::max<std::uint64_t>(range_max, c.work);
      range_capped += search_cut_short(c.flags);
      if (c.flags & kGroupSearched) {
        ++range_long_reads;
        range_long_read_nodes += c.work;
      }
      ReadAlignment& a = out[r];
      a = ReadAlignment{};  // here, not serially before: a million resets are not free
      a.flags = c.flags;
      if (c.count == 0) continue;
      a.mapped = true;
      a.mismatches = c.best;
      a.best_count = c.best_count;
      a.second_count = c.second_count;
      a.alternatives.reserve(c.count - 1u);
      auto place = [&](std::uint64_t where, const Edits& edits) {
        const fmindex::ReferenceHit hit = index_.to_reference(where, batch.patterns[r].length);
        return Placement{hit.contig, hit.position, hit.reverse, edits};
      };
      a.primary = place(c.where, c.edits);
      for (unsigned j = 1; j < c.count; ++j) {
        const OtherHit& other = batch.others[c.first_other + j - 1];
        a.alternatives.push_back(place(other.where, other.edits));
      }
    }
    nodes += range_nodes;
    long_reads += range_long_reads;
    long_read_nodes += range_long_read_nodes;
    capped += range_capped;
    std::lock_guard<std::mutex> lock(max_mutex);
    seconds_.max_read_nodes = std::max(seconds_.max_read_nodes, range_max);
  }, 1 << 12);
  seconds_.search_nodes += nodes;
  seconds_.long_reads += long_reads;
  seconds_.long_read_nodes += long_read_nodes;
  seconds_.capped_reads += capped;
  lap(seconds_.locate);
}

}  // namespace wtmap::aligner
