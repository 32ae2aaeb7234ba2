// wtmap fmindex: the difference-cover sample of a text's suffixes and the suffix comparison it
// bounds (J. Kärkkäinen, "Fast BWT in small space by blockwise suffix sorting", TCS 387, 2007;
// Kärkkäinen, Sanders and Burkhardt, "Linear work suffix array construction", JACM 2006).
//
// A difference cover D mod v (v a power of 2) holds, for every d in [0, v), some a, b in D with
// a - b = d (mod v). So for any positions i, j there is an h < v with i + h and j + h both in the
// sample S = {p : p mod v in D}: two suffixes compare in at most h symbols, then by the ranks of
// the sample suffixes at i + h and j + h. Here D = {0, ..., k - 1} and the multiples of k, for
// k = 2^ceil(log2(v) / 2): |D| < 2 sqrt(2v), e.g. 63 for v = 1024 (Colbourn and Ling's covers
// of about sqrt(1.5 v) are 1.6x smaller; not worth their construction at 6 % of the text sampled).
//
// Space: 8 bytes per sample suffix (n |D| / v of them: 0.5 bytes per symbol at v = 1024) plus two
// tables of v words. build(): the sample sorted by its first v symbols a window at a time, then by
// prefix doubling over the sample (Larsson and Sadakane, TCS 2007), each pass touching only the
// suffixes still tied: O(N log N) for N sample suffixes on random text, plus one pass over the tied
// ones per K symbols of their longest repeat up to v, and log2(repeat / v) doubling passes beyond.
#pragma once

#include <cstdint>
#include <vector>

#include "wtmap/core/bits.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/packed_symbols.hpp"

namespace wtmap::fmindex {

struct DifferenceCoverView {
  static constexpr std::uint32_t kNotInCover = ~std::uint32_t{0};

  const std::uint32_t* slot = nullptr;    // v entries: residue r's index in D, or kNotInCover
  const std::uint32_t* anchor = nullptr;  // v entries: for d, some a in D with a + d (mod v) in D
  const std::uint64_t* ranks = nullptr;   // per sample suffix (sample_index): its rank in the sample
  std::uint32_t period_log2 = 0;          // v = 2^period_log2
  std::uint32_t cover_size = 0;           // |D|

  WTMAP_HD std::uint64_t period() const { return std::uint64_t{1} << period_log2; }
  WTMAP_HD bool in_sample(std::uint64_t p) const { return slot[p & (period() - 1)] != kNotInCover; }
  // The index of sample position p among the sample's slots (those past the text included).
  WTMAP_HD std::uint64_t sample_index(std::uint64_t p) const {
    return (p >> period_log2) * cover_size + slot[p & (period() - 1)];
  }
  // An h < v with i + h and j + h both in the sample: a = anchor[(j - i) mod v] is in D and so is
  // a + (j - i), so h = a - i (mod v).
  WTMAP_HD std::uint32_t offset(std::uint64_t i, std::uint64_t j) const {
    const std::uint64_t mask = period() - 1;
    return static_cast<std::uint32_t>((anchor[(j - i) & mask] - i) & mask);
  }
};

// How many leading symbols the suffixes at i and j share, counted on from `from` (symbols known to
// be shared): exact below `limit`, else at least limit (or from where that is larger). A window of
// K symbols at a time. O((limit - from) / K) window reads.
WTMAP_HD std::uint64_t common_prefix(const PackedSymbolsView& text, std::uint64_t i, std::uint64_t j, std::uint64_t from,
                                     std::uint64_t limit) {
  for (std::uint64_t done = from; done < limit; done += text.per_window) {
    const std::uint64_t a = text.window(i + done), b = text.window(j + done);
    if (a != b) return done + text.shared_symbols(a, b) < limit ? done + text.shared_symbols(a, b) : limit;
  }
  return from > limit ? from : limit;
}

// Three-way comparison (< 0, 0 only for i == j, > 0) of the suffixes at i and j of a text whose
// last symbol is its only smallest one (the terminator $), known to agree on their first
// `known_equal` symbols: the symbols from there up to h < v, then the sample ranks at i + h and
// j + h. Equal on h symbols, neither suffix met $ there, so both i + h and j + h lie inside the
// text. Sets `shared` to a number of leading symbols they share (at least known_equal, and their
// exact common prefix where that is below h). O(v / K) window reads; O(1) where known_equal >= v - 1.
WTMAP_HD int compare_suffixes(const PackedSymbolsView& text, const DifferenceCoverView& dc, std::uint64_t i,
                              std::uint64_t j, std::uint64_t known_equal, std::uint64_t& shared) {
  shared = known_equal;
  if (i == j) return 0;
  const std::uint32_t h = dc.offset(i, j);
  shared = common_prefix(text, i, j, known_equal, h);
  if (shared < h) return text.symbol(i + shared) < text.symbol(j + shared) ? -1 : 1;
  return dc.ranks[dc.sample_index(i + h)] < dc.ranks[dc.sample_index(j + h)] ? -1 : 1;
}

WTMAP_HD int compare_suffixes(const PackedSymbolsView& text, const DifferenceCoverView& dc, std::uint64_t i,
                              std::uint64_t j, std::uint64_t known_equal = 0) {
  std::uint64_t shared = 0;
  return compare_suffixes(text, dc, i, j, known_equal, shared);
}

class DifferenceCoverSample {
 public:
  DifferenceCoverSample() = default;
  DifferenceCoverSample(DifferenceCoverSample&&) noexcept = default;  // the view keeps its pointers
  DifferenceCoverSample& operator=(DifferenceCoverSample&&) noexcept = default;
  DifferenceCoverSample(const DifferenceCoverSample&) = delete;
  DifferenceCoverSample& operator=(const DifferenceCoverSample&) = delete;

  // The cover's tables for period v (a power of 2, 1 to 2^20), no ranks yet.
  static Result<DifferenceCoverSample> cover(std::uint32_t period);
  // The cover and the ranks of the sample suffixes of `text`, which must end in its only 0, ranked
  // on `backend` (gpu: the current GPU, src/gpu_sample_ranker.hpp; device_out_of_memory where it
  // has no room). Either backend gives the same ranks.
  static Result<DifferenceCoverSample> build(const PackedSymbolsView& text, std::uint32_t period,
                                             Backend backend = Backend::cpu);
  // Sample suffixes of a text of n symbols (the slots past the text included): what build() keeps.
  static std::uint64_t num_slots(std::uint64_t n, std::uint32_t period);

  const DifferenceCoverView& view() const { return view_; }
  const std::vector<std::uint32_t>& cover_residues() const { return residues_; }  // D, ascending
  std::uint64_t size_in_bytes() const { return (slot_.size() + anchor_.size()) * 4 + ranks_.size() * 8; }

 private:
  Status rank_sample(const PackedSymbolsView& text);

  std::vector<std::uint32_t> residues_, slot_, anchor_;
  std::vector<std::uint64_t> ranks_;
  DifferenceCoverView view_{};
};

}  // namespace wtmap::fmindex
