// wtmap fmindex: the owner of the sampled suffix array shared by the DNA and the general
// FM-index, on the CPU or the GPU. What is sampled and why, the space and the locate walk:
// sampled_suffix_array_view.hpp. Construction: one pass over the suffix array on all CPU threads,
// O(n) (Builder).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "wtmap/core/bit_vector.hpp"
#include "wtmap/core/buffer.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/sampled_suffix_array_view.hpp"

namespace wtmap::fmindex {

// The sample rate s of an index of n rows unless one is asked for (FmIndexOptions::sample_rate,
// `wtmap index -s`): the smallest of 8, 16 and 32 whose samples (8 bytes each, n / s of them)
// take at most 256 MiB, else 32. A search that verifies its one-row intervals against the text
// (aligner/mismatch_search.hpp) locates one row per read: on E. coli, s = 8 took search only from
// 0.055-0.057 s to 0.049-0.051 s (bench/history/RESULTS-2026-11-26.md), for an index of 15.3 MB
// instead of 7.8 MB. References past 2^28 rows
// (134 Mbp, both strands) keep 32, bwa's and bowtie's rate: GRCh38 at 8 would hold 6 GB of
// samples.
constexpr std::uint32_t default_sample_rate(std::uint64_t n) {
  constexpr std::uint64_t kBudgetBytes = std::uint64_t{256} << 20;
  for (std::uint32_t s = 8; s < 32; s *= 2) {
    if (n / s * 8 <= kBudgetBytes) return s;
  }
  return 32;
}

// The largest sample rate an index may have (`wtmap index -s`; a loader rejects more): a locate
// walk may take up to s - 1 LF steps.
constexpr std::uint32_t kMaxSampleRate = std::uint32_t{1} << 20;

// The whole suffix array of text[0, n) by libdivsufsort's divsufsort64 (Mori), 8 bytes a symbol:
// the peak memory of every index build. out_of_memory when divsufsort64 fails.
Result<std::vector<std::int64_t>> full_suffix_array(const std::uint8_t* text, std::uint64_t n);

class SampledSuffixArray {
 public:
  // Collects the samples during the pass over the suffix array that also derives the BWT, whole
  // (divsufsort64) or a round of rows at a time (blockwise_suffix_array.hpp). That pass reads
  // text[SA[r] - 1] at random, a cache miss per row (65 s for a 2 Gbp text on one core), so it
  // runs on all CPU threads: each call's rows are cut into pieces at multiples of 32 rows, each
  // piece sets its own words of marks and keeps its own list of samples, and the lists are joined
  // in row order when the call ends.
  class Builder {
   public:
    Builder(std::uint64_t n, std::uint32_t sample_rate);  // 4 pieces per CPU thread
    std::uint64_t num_pieces() const { return pieces_.size(); }
    // Runs body(piece, first_row, end_row) for the pieces of rows [begin, end) on all CPU threads;
    // the calls cover the rows in order (begin is the previous call's end). A std::bad_alloc
    // thrown by a body (a list that cannot grow) becomes out_of_memory.
    Status for_each_piece(std::uint64_t begin, std::uint64_t end,
                          const std::function<void(std::uint64_t, std::uint64_t, std::uint64_t)>& body);
    // Row r of `piece` holds the suffix at text_position; after_separator: the text symbol before
    // it is a separator or the terminator. A piece adds its rows in increasing order.
    void add(std::uint64_t piece, std::uint64_t r, std::uint64_t text_position, bool after_separator) {
      if (after_separator || text_position % rate_ == 0) {
        words_[r / 32] |= 1u << (r % 32);  // no other piece writes this word
        pieces_[piece].push_back(text_position);
      }
    }
    Result<SampledSuffixArray> finish(Backend backend);

   private:
    std::uint64_t n_;
    std::uint32_t rate_;
    std::uint64_t next_row_ = 0;
    std::vector<std::uint32_t> words_;
    std::vector<std::vector<std::uint64_t>> pieces_;  // the current call's
    std::vector<std::uint64_t> samples_;              // the previous calls', in row order
  };

  SampledSuffixArray(SampledSuffixArray&&) noexcept = default;
  SampledSuffixArray& operator=(SampledSuffixArray&&) noexcept = default;

  // The marks and the samples as stored in an index file: rejects (corrupt_data) samples that
  // disagree with the marks in number or lie outside the text of marks.size() symbols.
  static Result<SampledSuffixArray> create(RankSelectBitVector&& marks, const std::vector<std::uint64_t>& samples);
  // No rows: an index that only searches (IndexParts::search_only) holds this one.
  static Result<SampledSuffixArray> empty(Backend backend);

  const SampledSuffixArrayView& view() const { return view_; }
  const RankSelectBitVector& marks() const { return marks_; }
  Backend backend() const { return marks_.backend(); }
  std::uint64_t num_samples() const { return view_.sampled.ones; }
  std::size_t size_in_bytes() const { return marks_.size_in_bytes() + samples_.size(); }
  // The samples, copied from the backend into host memory.
  Result<std::vector<std::uint64_t>> samples() const;

 private:
  explicit SampledSuffixArray(RankSelectBitVector&& marks) : marks_(std::move(marks)) {}

  RankSelectBitVector marks_;
  Buffer samples_;
  SampledSuffixArrayView view_{};
};

}  // namespace wtmap::fmindex
