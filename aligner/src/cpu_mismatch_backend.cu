// BatchAligner's CPU backend (mismatch_backend.cuh): codes encoded and packed by host threads,
// each read searched by one thread up to the slice (core's run_batch_cpu over MismatchSearchOp),
// the reads the slice cut short searched again by one thread playing each member of a group, and
// the hits chosen and located on the host -- the same steps as the GPU backend's kernels, so the
// same results.
#include <algorithm>
#include <atomic>
#include <memory>

#include "mismatch_backend.cuh"
#include "wtmap/core/detail/parallel.hpp"

namespace wtmap::aligner {
namespace {

// The same encoding on the host, for the CPU backend.
void encode_read(const std::string& sequence, std::uint8_t* codes) {
  for (char c : sequence) *codes++ = fmindex::search_code(c);
}

// A CPU batch's packed codes (SearchedBatch::packed_codes).
PackedCodesView cpu_packed_codes(const SearchedBatch& batch) {
  const std::uint64_t* words = batch.packed_codes.data();
  return {words, words + batch.packed_codes.size() / 2};
}

class CpuMismatchBackend : public MismatchBackend {
 public:
  CpuMismatchBackend(const fmindex::FmIndex& index, const AlignOptions& options, BatchAligner::StageSeconds& seconds)
      : index_(index), options_(options), seconds_(seconds) {}

  Status reclaim(SearchedBatch&) override { return {}; }

  void gather(const SeqRecord* reads, SearchedBatch& batch) override {
    const std::size_t n = batch.patterns.size();
    wtmap::detail::parallel_for_ranges(n, [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t r = begin; r < end; ++r) {
        encode_read(reads[r].sequence, batch.codes.data() + batch.patterns[r].offset);
      }
    }, 1 << 12);
    // And packed, a word per index.
    const std::uint64_t total = batch.codes.size();
    const std::uint64_t words = packed_code_words(total);
    batch.packed_codes.resize(2 * words);
    const PackCodesOp pack{batch.codes.data(), total, batch.packed_codes.data(), batch.packed_codes.data() + words};
    wtmap::detail::parallel_for_ranges(words, [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t w = begin; w < end; ++w) pack(w);
    }, 1 << 12);
    batch.results.resize(n);
  }

  Status search(SearchedBatch& batch, const SearchParams& params, bool sliced, Lap& lap) override {
    const MismatchSearchOp op{index_.view(), batch.codes.data(), batch.codes.size(), cpu_packed_codes(batch), params};
    WTMAP_TRY(wtmap::detail::run_batch_cpu(op, batch.patterns.data(), batch.results.data(), batch.patterns.size(), "search"));
    if (sliced) search_long_reads(batch);
    lap(seconds_.search);
    return {};
  }

  // The CPU index's view is host memory: each read's hits chosen and located in one go, as on the
  // GPU.
  Status choose(SearchedBatch& batch) override {
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
    return {};
  }

 private:
  // One read at a time per CPU thread: their work varies by orders of magnitude, so no static split.
  void search_long_reads(SearchedBatch& batch) const {
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

  const fmindex::FmIndex& index_;
  const AlignOptions& options_;
  BatchAligner::StageSeconds& seconds_;
};

}  // namespace

std::unique_ptr<MismatchBackend> make_cpu_backend(const fmindex::FmIndex& index, const AlignOptions& options,
                                                  BatchAligner::StageSeconds& seconds) {
  return std::make_unique<CpuMismatchBackend>(index, options, seconds);
}

}  // namespace wtmap::aligner
