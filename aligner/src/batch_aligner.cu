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

std::uint64_t read_hash(const SeqRecord& read) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](unsigned char c) {
    h ^= c;
    h *= 1099511628211ull;
  };
  for (char c : read.name) mix(static_cast<unsigned char>(c));
  mix(0);
  for (char c : read.sequence) mix(static_cast<unsigned char>(c));
  return h;
}

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
  codes.clear();
  patterns.clear();
  results.clear();
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
  WTMAP_TRY(ws.reserve_scratch(batch.codes.size()));
  auto* device_codes = reinterpret_cast<std::uint8_t*>(ws.scratch.data());
  // From the batch's pinned buffer (SearchedBatch): the copy runs beside this thread's next work.
  WTMAP_CUDA_TRY(cudaMemcpyAsync(device_codes, batch.codes.data(), batch.codes.size(), cudaMemcpyHostToDevice, ws.streams[0]));
  WTMAP_TRY(wtmap::detail::run_batch_device(EncodeLettersOp{}, device_codes, device_codes, batch.codes.size(), ws.streams[0],
                                            ws, "encode"));
  const MismatchSearchOp op{index_.view(), device_codes, batch.codes.size(), params};
  WTMAP_TRY(wtmap::detail::launch_batch_gpu(op, batch.patterns.data(), batch.results.data(), n, ws));
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
  const Status placed = place_hits(reads, batch, nullptr, n, searching.valid() ? batch.is_deferred.data() : nullptr, out);
  Lap wait;
  if (searching.valid()) searching.get();  // before any return: it writes into the batch
  wait(seconds_.cpu_search);
  WTMAP_TRY(placed);
  if (!batch.deferred.empty()) WTMAP_TRY(place_hits(reads, batch, batch.deferred.data(), batch.deferred.size(), nullptr, out));
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

Status BatchAligner::place_hits(const std::vector<SeqRecord>& reads, SearchedBatch& batch, const std::size_t* list,
                                std::size_t m, const std::uint8_t* skip, std::vector<ReadAlignment>& out) {
  Lap lap;
  auto read_at = [list](std::uint64_t i) { return list != nullptr ? list[i] : static_cast<std::size_t>(i); };
  const auto& results = batch.results;
  // Which rows to locate, per read: the reported one (chosen by the read's hash among the best
  // rows) first, then the alternatives when the hits are few enough to list. Counted, then
  // filled at offsets from a prefix sum, both in parallel over the reads; the rows of the i-th
  // read are [wanted_begin[i], wanted_begin[i + 1]).
  batch.wanted_begin.resize(m + 1);
  batch.wanted_begin[0] = 0;
  wtmap::detail::parallel_for_ranges(m, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      const std::size_t r = read_at(i);
      batch.wanted_begin[i + 1] = 0;
      if (skip != nullptr && skip[r]) continue;  // placed later, by another call
      const SearchResult& res = results[r];
      ReadAlignment& a = out[r];
      a = ReadAlignment{};  // here, not serially before: a million resets are not free
      a.flags = res.flags;
      if (!res.mapped()) continue;
      a.mapped = true;
      a.mismatches = res.best;
      a.best_count = res.best_count();
      a.second_count = res.second_count();
      std::uint64_t listed = 1;
      if (a.best_count + a.second_count <= options_.max_alternatives) {
        listed = 0;
        for (unsigned s = 0; s < res.num_slots; ++s) listed += res.slots[s].hi - res.slots[s].lo;
      }
      batch.wanted_begin[i + 1] = listed;
    }
  }, 1 << 12);
  for (std::size_t i = 0; i < m; ++i) batch.wanted_begin[i + 1] += batch.wanted_begin[i];
  batch.wanted.resize(batch.wanted_begin[m]);
  batch.rows.resize(batch.wanted.size());
  batch.positions.resize(batch.wanted.size());
  wtmap::detail::parallel_for_ranges(m, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      if (batch.wanted_begin[i] == batch.wanted_begin[i + 1]) continue;
      const std::size_t r = read_at(i);
      const SearchResult& res = results[r];
      std::uint64_t kept_best = 0;
      for (unsigned s = 0; s < res.num_slots; ++s) {
        if (res.slots[s].edits.count() == res.best) kept_best += res.slots[s].hi - res.slots[s].lo;
      }
      // The hash only breaks ties: most reads have one best row, and hashing a read's name and
      // bases byte by byte was most of this loop's time.
      std::uint64_t pick = kept_best > 1 ? read_hash(reads[r]) % kept_best : 0;
      unsigned primary_slot = 0;
      std::uint64_t primary_row = 0;
      for (unsigned s = 0; s < res.num_slots; ++s) {
        const HitInterval& h = res.slots[s];
        if (h.edits.count() != res.best) continue;
        if (pick < h.hi - h.lo) {
          primary_slot = s;
          primary_row = h.lo + pick;
          break;
        }
        pick -= h.hi - h.lo;
      }
      std::uint64_t w = batch.wanted_begin[i];
      batch.wanted[w] = primary_slot;
      batch.rows[w++] = primary_row;
      for (unsigned s = 0; s < res.num_slots && w < batch.wanted_begin[i + 1]; ++s) {
        const HitInterval& h = res.slots[s];
        for (std::uint64_t row = h.lo; row < h.hi; ++row) {
          if (s == primary_slot && row == primary_row) continue;
          batch.wanted[w] = s;
          batch.rows[w++] = row;
        }
      }
    }
  }, 1 << 12);
  lap(seconds_.choose);
  WTMAP_TRY(index_.locate(batch.rows.data(), batch.positions.data(), batch.rows.size()));
  wtmap::detail::parallel_for_ranges(m, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      const std::uint64_t first = batch.wanted_begin[i], last = batch.wanted_begin[i + 1];
      if (first == last) continue;
      const std::size_t r = read_at(i);
      out[r].alternatives.reserve(last - first - 1);
      for (std::uint64_t w = first; w < last; ++w) {
        const fmindex::ReferenceHit hit = index_.to_reference(batch.positions[w], reads[r].sequence.size());
        const Placement p{hit.contig, hit.position, hit.reverse, results[r].slots[batch.wanted[w]].edits};
        if (w == first) out[r].primary = p; else out[r].alternatives.push_back(p);
      }
    }
  }, 1 << 12);
  lap(seconds_.locate);
  return {};
}

}  // namespace wtmap::aligner
