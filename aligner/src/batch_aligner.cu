#include "wtmap/aligner/batch_aligner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>

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
  using In = fmindex::PatternRef;
  using Out = SearchResult;
  using State = ReadSearch<kHitSlots>;
  using Scratch = SearchScratch;
  fmindex::FmIndexView v;
  const std::uint8_t* codes;  // on the backend
  std::uint64_t codes_size;
  SearchParams params;
  WTMAP_HD bool valid(const In& p) const { return p.offset + p.length <= codes_size; }
  WTMAP_HD void start(State& s, const In& p, Out& r) const { s.start(v, codes + p.offset, p.length, params, r); }
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

// The hit choice and locate of a batch's reads on the GPU, after their search, in its buffers.
struct ChooseHitsOp {
  fmindex::FmIndexView v;
  const SearchResult* results;
  const fmindex::PatternRef* patterns;
  const std::uint8_t* codes;
  ChosenHits* chosen;
  unsigned max_alternatives;
  WTMAP_HD void operator()(std::uint64_t r) const {
    const fmindex::PatternRef p = patterns[r];
    choose_and_locate(v, results[r], codes + p.offset, p.length, BaseForm::codes, max_alternatives, chosen[r]);
  }
};

// Threads that gather a batch's letters for the GPU. In `wtmap align` the other stages keep the
// cores busy: 16 spawned threads took 9-35 ms a batch of 10^5 reads to encode them, where one
// thread copies them in about 4 ms (bench/RESULTS.md).
constexpr std::uint64_t kGatherThreads = 4;

// The same encoding on the host: the CPU backend's reads, and the GPU's reads cut short by the
// slice, which the CPU searches again.
void encode_read(const std::string& sequence, std::uint8_t* codes) {
  for (char c : sequence) *codes++ = fmindex::search_code(c);
}

}  // namespace

int mapping_quality(const ReadAlignment& a, unsigned max_mismatches) {
  if (!a.mapped) return 0;
  if (a.best_count > 1 || (a.flags & (kWorkCapped | kStackOverflow)) != 0) return 0;
  if (a.mismatches == max_mismatches) return 25;
  if (a.second_count == 0) return 37;
  const std::uint64_t n = a.second_count >= 255 ? 255 : a.second_count;
  const int log_n = static_cast<int>(4.343 * std::log(static_cast<double>(n)) + 0.5);
  return log_n > 23 ? 0 : 23 - log_n;
}

void SearchedBatch::reserve(std::size_t reads, std::size_t bases) {
  // resize() writes every new element (faulting its page in); clear() keeps the capacity.
  codes.resize(std::max(codes.size(), bases));
  patterns.resize(std::max(patterns.size(), reads));
  results.resize(std::max(results.size(), reads));
  chosen.resize(std::max(chosen.size(), reads));
  codes.clear();
  patterns.clear();
  results.clear();
  chosen.clear();
}

BatchAligner::BatchAligner(const fmindex::FmIndex& index, const AlignOptions& options, const fmindex::FmIndex* cpu_index)
    : index_(index),
      cpu_index_(cpu_index != nullptr && cpu_index->backend() == Backend::cpu ? cpu_index : nullptr),
      options_(options),
      workspaces_{std::make_unique<wtmap::detail::QueryWorkspace>(), std::make_unique<wtmap::detail::QueryWorkspace>()} {}

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
  batch.results.resize(n);
  batch.chosen.resize(n);
  lap(seconds_.encode);
  SearchParams params = options_.search;
  batch.sliced = gpu && cpu_index_ != nullptr && params.work_cap > options_.gpu_work_slice;
  if (batch.sliced) params.work_cap = options_.gpu_work_slice;
  if (!gpu) {
    const MismatchSearchOp op{index_.view(), batch.codes.data(), batch.codes.size(), params};
    WTMAP_TRY(wtmap::detail::run_batch_cpu(op, batch.patterns.data(), batch.results.data(), n, "search"));
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
  // The scratch holds the codes, then the chosen hits.
  const std::size_t codes_bytes = (batch.codes.size() + alignof(ChosenHits) - 1) / alignof(ChosenHits) * alignof(ChosenHits);
  WTMAP_TRY(ws.reserve_scratch(codes_bytes + n * sizeof(ChosenHits)));
  auto* device_codes = reinterpret_cast<std::uint8_t*>(ws.scratch.data());
  auto* device_chosen = reinterpret_cast<ChosenHits*>(device_codes + codes_bytes);
  // From the batch's pinned buffer (SearchedBatch): the copy runs beside this thread's next work.
  WTMAP_CUDA_TRY(cudaMemcpyAsync(device_codes, batch.codes.data(), batch.codes.size(), cudaMemcpyHostToDevice, ws.streams[0]));
  WTMAP_TRY(wtmap::detail::run_batch_device(EncodeLettersOp{}, device_codes, device_codes, batch.codes.size(), ws.streams[0],
                                            ws, "encode"));
  const MismatchSearchOp op{index_.view(), device_codes, batch.codes.size(), params};
  WTMAP_TRY(wtmap::detail::launch_batch_gpu(op, batch.patterns.data(), batch.results.data(), n, ws));
  // Then, on the same stream, the hits' choice and locate where the results and patterns are
  // (the search's buffers), and the copy of the chosen hits.
  const ChooseHitsOp choose{index_.view(), static_cast<const SearchResult*>(ws.device_out[0]),
                            static_cast<const fmindex::PatternRef*>(ws.device_in[0]), device_codes, device_chosen,
                            options_.max_alternatives};
  WTMAP_TRY(wtmap::detail::enqueue_for_each_index(choose, n, ws.streams[0]));
  WTMAP_CUDA_TRY(cudaMemcpyAsync(batch.chosen.data(), device_chosen, n * sizeof(ChosenHits), cudaMemcpyDeviceToHost,
                                 ws.streams[0]));
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
  const MismatchSearchOp op{index_.view(), nullptr, batch->codes.size(), options_.search};  // for its messages
  const Status collected = wtmap::detail::collect_batch_gpu(op, batch->patterns.data(), batch->results.data(),
                                                            batch->results.size(), *workspaces_[slot], "search");
  lock.lock();
  lap(seconds_.search);
  launched_[slot] = nullptr;
  collecting_[slot] = false;
  collected_.notify_all();
  return collected;
}

Status BatchAligner::finish(const std::vector<SeqRecord>& reads, SearchedBatch& batch, std::vector<ReadAlignment>& out) {
  const std::size_t n = reads.size();
  if (batch.results.size() != n) return invalid_argument("finish() needs the batch that search() was given");
  if (index_.backend() == Backend::gpu) {
    for (unsigned slot = 0; slot < kLaunchSlots; ++slot) WTMAP_TRY(collect(slot, &batch));  // (adds to search)
  }
  out.resize(n);
  // The reads the slice cut short are searched again from the start with the full cap on CPU
  // threads of their own, while the other reads' hits are chosen, located and placed: the
  // deferred search is mostly the tail of one or two repetitive reads on one thread each.
  batch.deferred.clear();
  if (batch.sliced) {
    batch.is_deferred.assign(n, 0);
    for (std::size_t r = 0; r < n; ++r) {
      if (batch.results[r].flags & kWorkCapped) {
        batch.deferred.push_back(r);
        batch.is_deferred[r] = 1;
      }
    }
    seconds_.cpu_reads += batch.deferred.size();
  }
  std::future<void> searching;
  if (!batch.deferred.empty()) searching = std::async(std::launch::async, [&] { search_deferred(reads, batch); });
  const std::uint8_t* skip = searching.valid() ? batch.is_deferred.data() : nullptr;
  // On a GPU index the GPU chose and located the hits after the search (the deferred reads' are
  // chosen again below); on the CPU they are chosen here.
  Status placed = index_.backend() == Backend::gpu ? Status{} : choose_on_host(batch, nullptr, n);
  if (placed.ok()) place_chosen(reads, batch, nullptr, n, skip, out);
  Lap wait;
  if (searching.valid()) searching.get();  // before any return: it writes into the batch
  wait(seconds_.cpu_search);
  WTMAP_TRY(placed);
  if (!batch.deferred.empty()) {
    WTMAP_TRY(choose_on_host(batch, batch.deferred.data(), batch.deferred.size()));
    place_chosen(reads, batch, batch.deferred.data(), batch.deferred.size(), nullptr, out);
  }
  for (const SearchResult& r : batch.results) {
    seconds_.search_nodes += r.work;
    if (r.work > options_.gpu_work_slice) {
      ++seconds_.long_reads;
      seconds_.long_read_nodes += r.work;
    }
  }
  return {};
}

// One read at a time per CPU thread: their work varies by orders of magnitude, so no static split.
void BatchAligner::search_deferred(const std::vector<SeqRecord>& reads, SearchedBatch& batch) const {
  std::atomic<std::size_t> next{0};
  const fmindex::FmIndexView host_view = cpu_index_->view();
  wtmap::detail::parallel_for_ranges(std::min<std::uint64_t>(batch.deferred.size(), wtmap::detail::cpu_threads()),
                                     [&](std::uint64_t, std::uint64_t) {
    std::vector<std::uint8_t> codes;  // one read's codes, reused (the batch's copy holds letters)
    for (std::size_t j; (j = next++) < batch.deferred.size();) {
      const std::size_t r = batch.deferred[j];
      codes.resize(reads[r].sequence.size());
      encode_read(reads[r].sequence, codes.data());
      search_read(host_view, codes.data(), codes.size(), options_.search, batch.results[r]);
    }
  }, 1);
}

Status BatchAligner::choose_on_host(SearchedBatch& batch, const std::size_t* list, std::size_t m) {
  Lap lap;
  auto read_at = [list](std::uint64_t i) { return list != nullptr ? list[i] : static_cast<std::size_t>(i); };
  // The codes of a GPU index's batch are letters (the GPU encodes its own copy).
  const BaseForm form = index_.backend() == Backend::gpu ? BaseForm::letters : BaseForm::codes;
  // Chosen in parallel over the reads; their rows gathered at offsets from a prefix sum (the i-th
  // read's are [wanted_begin[i], wanted_begin[i + 1])) for one batched locate, then put back.
  batch.wanted_begin.resize(m + 1);
  batch.wanted_begin[0] = 0;
  wtmap::detail::parallel_for_ranges(m, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      const std::size_t r = read_at(i);
      const fmindex::PatternRef p = batch.patterns[r];
      const std::uint8_t* bases = batch.codes.data() + p.offset;
      choose_hits(batch.results[r], options_.max_alternatives, [&] { return tie_hash(bases, p.length, form); },
                  batch.chosen[r]);
      batch.wanted_begin[i + 1] = batch.chosen[r].count;
    }
  }, 1 << 12);
  for (std::size_t i = 0; i < m; ++i) batch.wanted_begin[i + 1] += batch.wanted_begin[i];
  batch.rows.resize(batch.wanted_begin[m]);
  batch.positions.resize(batch.rows.size());
  auto for_each_row = [&](auto&& f) {
    wtmap::detail::parallel_for_ranges(m, [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t i = begin; i < end; ++i) {
        ChosenHits& c = batch.chosen[read_at(i)];
        for (unsigned j = 0; j < c.count; ++j) f(c.where[j], batch.wanted_begin[i] + j);
      }
    }, 1 << 12);
  };
  for_each_row([&](std::uint64_t& where, std::uint64_t w) { batch.rows[w] = where; });
  lap(seconds_.choose);
  WTMAP_TRY(index_.locate(batch.rows.data(), batch.positions.data(), batch.rows.size()));
  for_each_row([&](std::uint64_t& where, std::uint64_t w) { where = batch.positions[w]; });
  lap(seconds_.locate);
  return {};
}

void BatchAligner::place_chosen(const std::vector<SeqRecord>& reads, const SearchedBatch& batch, const std::size_t* list,
                                std::size_t m, const std::uint8_t* skip, std::vector<ReadAlignment>& out) {
  Lap lap;
  auto read_at = [list](std::uint64_t i) { return list != nullptr ? list[i] : static_cast<std::size_t>(i); };
  wtmap::detail::parallel_for_ranges(m, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      const std::size_t r = read_at(i);
      if (skip != nullptr && skip[r]) continue;  // placed later, by another call
      const SearchResult& res = batch.results[r];
      const ChosenHits& c = batch.chosen[r];
      ReadAlignment& a = out[r];
      a = ReadAlignment{};  // here, not serially before: a million resets are not free
      a.flags = res.flags;
      if (c.count == 0) continue;
      a.mapped = true;
      a.mismatches = res.best;
      a.best_count = res.best_count();
      a.second_count = res.second_count();
      a.alternatives.reserve(c.count - 1u);
      for (unsigned j = 0; j < c.count; ++j) {
        const fmindex::ReferenceHit hit = index_.to_reference(c.where[j], reads[r].sequence.size());
        const Placement p{hit.contig, hit.position, hit.reverse, res.slots[c.slot[j]].edits};
        if (j == 0) a.primary = p; else a.alternatives.push_back(p);
      }
    }
  }, 1 << 12);
  lap(seconds_.locate);
}

}  // namespace wtmap::aligner
