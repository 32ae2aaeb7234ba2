#include "wtmap/aligner/batch_aligner.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "mismatch_backend.cuh"
#include "wtmap/core/detail/parallel.hpp"

namespace wtmap::aligner {

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
    : index_(index), options_(options) {
  if (options_.thread_work_slice == 0) options_.thread_work_slice = default_thread_work_slice(index.view().rows);
  backend_ = index.backend() == Backend::gpu ? make_gpu_backend(index_, options_, seconds_)
                                             : make_cpu_backend(index_, options_, seconds_);
}

BatchAligner::~BatchAligner() = default;

Status BatchAligner::align(const std::vector<SeqRecord>& reads, std::vector<ReadAlignment>& out) {
  WTMAP_TRY(search(reads, own_));
  return finish(reads, own_, out);
}

Status BatchAligner::search(const SeqRecord* reads, std::size_t count, SearchedBatch& batch) {
  if (options_.max_alternatives > kMaxAlternatives) {
    return invalid_argument("at most " + std::to_string(kMaxAlternatives) + " alternative hits can be listed");
  }
  if (!index_.can_locate()) {
    return invalid_argument("the index was loaded for search only, without its sampled suffix array: nothing to locate hits with");
  }
  Lap lap;
  const std::size_t n = count;
  WTMAP_TRY(backend_->reclaim(batch));  // a batch searched again before it was finished
  lap.restart();
  // Offsets serially (a prefix sum); then the backend's gathering of the bases, in parallel.
  batch.patterns.resize(n);
  std::uint64_t total = 0;
  for (std::size_t r = 0; r < n; ++r) {
    batch.patterns[r] = {total, static_cast<std::uint32_t>(reads[r].sequence.size())};
    total += reads[r].sequence.size();
  }
  batch.codes.resize(total);
  backend_->gather(reads, batch);
  batch.choices.resize(n);
  batch.others.resize(n * others_per_read(options_.max_alternatives));
  lap(seconds_.encode);
  // One thread per read up to the slice; the reads it cuts short again in groups, to the cap.
  SearchParams params = options_.search;
  const bool sliced = params.work_cap > options_.thread_work_slice;
  if (sliced) params.work_cap = options_.thread_work_slice;
  return backend_->search(batch, params, sliced, lap);
}

Status BatchAligner::finish(const SeqRecord*, std::size_t count, SearchedBatch& batch, std::vector<ReadAlignment>& out) {
  const std::size_t n = count;
  if (batch.choices.size() != n) return invalid_argument("finish() needs the batch that search() was given");
  WTMAP_TRY(backend_->choose(batch));  // (on a GPU index, search() had the GPU choose them: collected here)
  out.resize(n);
  place_chosen(batch, out);
  return {};
}

Status BatchAligner::release_device_memory() { return backend_->release_device_memory(); }

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
      // A hit whose locate failed (a corrupt index: no SA sample within s steps) is no hit.
      if (c.count == 0 || c.where == fmindex::SampledSuffixArrayView::kNotLocated) continue;
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
        if (other.where != fmindex::SampledSuffixArrayView::kNotLocated) a.alternatives.push_back(place(other.where, other.edits));
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
