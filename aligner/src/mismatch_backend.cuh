// wtmap aligner (internal): BatchAligner's two backends behind one interface -- the CPU's search
// of a batch in host loops (cpu_mismatch_backend.cu), the GPU's in kernels on two launch slots
// (gpu_mismatch_backend.cu) -- and the batch operations both run (the Op contract of
// core/detail/batch.cuh). BatchAligner lays a batch out and places its hits; a backend gathers
// its bases, searches it, and chooses and locates its hits. Another search of the same batches
// (gapped, paired) is another implementation of MismatchBackend's steps.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "wtmap/aligner/batch_aligner.hpp"
#include "wtmap/core/detail/batch.cuh"

namespace wtmap::aligner {

// A stepwise batch operation (detail/batch.cuh): the GPU keeps every thread on a read.
struct MismatchSearchOp {
  // Warps of their own: a block keeps its place on an SM until its last thread is done, and a
  // launch ends in a tail where a few reads of thousands of nodes run on few threads; blocks of
  // one warp then hold one warp's registers each instead of eight, free for the next batch's
  // launch (`wtmap align` on 10^6 E. coli reads: median 0.965 s instead of 1.045 s with blocks
  // of 256; bench/history/RESULTS-2026-11-26.md).
  static constexpr unsigned kBlockThreads = 32;
  // 16 warps an SM, as many as the 128 registers ptxas then gives the kernel allow: left to
  // itself it takes 168 and runs 12 warps, which searched 10^6 E. coli reads some 8 % slower;
  // at 20 warps it spills (bench/history/RESULTS-2026-11-26.md).
  static constexpr unsigned kMinBlocksPerSm = 16;
  // Reads a CPU thread takes at least (run_batch_cpu): tens of us a read, so that a batch of 10^5
  // spreads over every thread (the default of 2^14 a thread left it to six).
  static constexpr std::uint64_t kCpuMinPerThread = 256;
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

// A batch's codes packed (packed_codes.hpp), a word per index.
struct PackCodesOp {
  const std::uint8_t* codes;
  std::uint64_t codes_size;
  std::uint64_t* bases;
  std::uint64_t* unknown;
  WTMAP_HD void operator()(std::uint64_t w) const { pack_codes_word(codes, codes_size, w, bases[w], unknown[w]); }
};

// Room for the other hits a read lists, max(1, N) - 1.
inline unsigned others_per_read(unsigned max_alternatives) { return max_alternatives > 1 ? max_alternatives - 1 : 0; }

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

// One backend's steps of BatchAligner::search() and finish(). The batch's patterns are laid out
// (offsets into codes, codes sized) before gather(); choices and others are sized before search().
class MismatchBackend {
 public:
  virtual ~MismatchBackend() = default;
  // First in search(): a batch searched again before it was finished has its last launch
  // collected (GPU).
  virtual Status reclaim(SearchedBatch& batch) = 0;
  // The bases of reads[0, batch.patterns.size()) into batch.codes at their patterns' offsets (as
  // search codes, or letters that the GPU encodes), and batch.results and packed_codes sized for
  // the search.
  virtual void gather(const SeqRecord* reads, SearchedBatch& batch) = 0;
  // Searches the batch with `params`, whose work cap the slice replaced when `sliced` (the reads
  // it cut short then searched again in groups to options.search's cap). A GPU also chooses and
  // locates the hits, and returns once the batch is launched; its device buffers are made before
  // anything is enqueued, so that a device_out_of_memory launches nothing. `lap` adds to the
  // stage seconds.
  virtual Status search(SearchedBatch& batch, const SearchParams& params, bool sliced, Lap& lap) = 0;
  // Each read's choice and other hits in batch.choices and batch.others, for placement.
  virtual Status choose(SearchedBatch& batch) = 0;
  // BatchAligner::release_device_memory: every launch collected, the device buffers freed.
  virtual Status release_device_memory() { return {}; }
};

// The backend of `index`'s backend. `options` (resolved) and `seconds` belong to the BatchAligner,
// which outlives it.
std::unique_ptr<MismatchBackend> make_cpu_backend(const fmindex::FmIndex& index, const AlignOptions& options,
                                                  BatchAligner::StageSeconds& seconds);
std::unique_ptr<MismatchBackend> make_gpu_backend(const fmindex::FmIndex& index, const AlignOptions& options,
                                                  BatchAligner::StageSeconds& seconds);

}  // namespace wtmap::aligner
