// wtmap fmindex: the FM-index as a trivially copyable view -- backward search, LF and locate as
// __host__ __device__ functions for the CPU backend and GPU kernels alike.
//
// Ferragina and Manzini, "Opportunistic data structures with applications" (FOCS 2000). The
// text is the reference's fragments and their reverse complement, T = F # rc(F) $, where every
// separator # (contig ends, ambiguity runs, the strand junction) and the terminator $ are
// symbols smaller than A. The BWT is stored in a 4-symbol quad-vector wavelet tree with the
// few rows whose BWT symbol is # or $ ("special rows") stored as A and corrected at rank time
// from a sorted table: so DNA stays a one-level, one-block-per-rank tree, and since # and $
// are no DNA symbol, no backward search extends across them -- no match spans a separator.
// Locate: SA samples at every text position divisible by s, and at every position that follows
// a separator, marked by a rank bit vector; a locate costs at most s - 1 LF steps (shared with
// the general index, sampled_suffix_array.hpp). A search of at least k bases takes its last k
// bases' interval from a k-mer table (kmer_interval_table_view.hpp) when the index has one.
#pragma once

#include <cstdint>

#include "wtmap/core/config.hpp"
#include "wtmap/core/quad_wavelet_tree_view.hpp"
#include "wtmap/core/rank_select_view.hpp"
#include "wtmap/fmindex/kmer_interval_table_view.hpp"
#include "wtmap/fmindex/packed_text_view.hpp"
#include "wtmap/fmindex/sa_interval.hpp"
#include "wtmap/fmindex/sampled_suffix_array_view.hpp"

namespace wtmap::fmindex {

struct FmIndexView {
  static constexpr unsigned kBucketShift = 16;  // special-row counts every 65,536 rows

  WaveletTreeView<std::uint8_t, 4> bwt;
  std::uint64_t rows = 0;                  // text length n, including separators and $
  std::uint64_t C[5] = {0, 0, 0, 0, 0};    // first row of the suffixes starting with A, C, G, T; C[4] = n
  const std::uint64_t* special_rows = nullptr;  // sorted rows whose BWT symbol is # or $
  std::uint64_t num_special = 0;
  const std::uint64_t* special_before_bucket = nullptr;  // specials below row b << kBucketShift
  SampledSuffixArrayView sa;               // locate support (sampled_suffix_array.hpp)
  KmerIntervalTableView kmers;             // the first steps of a search, looked up (length 0: none)
  PackedTextView text;                     // the text itself (empty: an index without it)

  // Special rows before row i: a cached bucket count plus the (rare) specials inside the bucket.
  WTMAP_HD std::uint64_t specials_before(std::uint64_t i) const {
    std::uint64_t j = special_before_bucket[i >> kBucketShift];
    while (j < num_special && special_rows[j] < i) ++j;
    return j;
  }

  // Occurrences of base c (0..3) in BWT[0, i).
  WTMAP_HD std::uint64_t occ(unsigned c, std::uint64_t i) const {
    const std::uint64_t r = bwt.levels[0].rank(c, i);
    return c == 0 ? r - specials_before(i) : r;
  }

  // occ(c, i) for the four bases at once, from one quad-vector block.
  WTMAP_HD void occ_all(std::uint64_t i, std::uint64_t out[4]) const {
    bwt.levels[0].rank_all(i, out);
    out[0] -= specials_before(i);
  }

  // Prefetches what occ_all(i) reads (QuadVectorView::prefetch_rank).
  WTMAP_HD void prefetch_occ(std::uint64_t i) const { bwt.levels[0].prefetch_rank(i); }

  // occ_all at both ends of an interval (QuadVectorView::rank_all_pair).
  WTMAP_HD void occ_all_pair(std::uint64_t lo, std::uint64_t hi, std::uint64_t out_lo[4], std::uint64_t out_hi[4]) const {
    bwt.levels[0].rank_all_pair(lo, hi, out_lo, out_hi);
    out_lo[0] -= specials_before(lo);
    out_hi[0] -= specials_before(hi);
  }

  WTMAP_HD SaInterval all() const { return {0, rows}; }

  // The rows of cP given the rows of P (both ends ranked from one block when they share it).
  WTMAP_HD SaInterval extend(const SaInterval& iv, unsigned c) const {
    std::uint64_t lo = 0, hi = 0;
    bwt.levels[0].rank_pair(c, iv.lo, iv.hi, lo, hi);
    if (c == 0) {
      lo -= specials_before(iv.lo);
      hi -= specials_before(iv.hi);
    }
    return {C[c] + lo, C[c] + hi};
  }

  // Backward search of codes[0, length) (0..3; any other code matches nothing). The k-mer table
  // holds what the first kmers.stored steps give, so the answer is the same with or without it.
  WTMAP_HD SaInterval backward_search(const std::uint8_t* codes, std::uint32_t length) const {
    SaInterval iv = all();
    std::uint32_t k = length;
    if (kmers.stored != 0 && length >= kmers.stored && kmers.find(codes + length - kmers.stored, iv)) {
      k -= kmers.stored;
    }
    for (; k-- > 0 && !iv.empty();) {
      const unsigned c = codes[k];
      if (c > 3) return {0, 0};
      iv = extend(iv, c);
    }
    return iv;
  }

  // The interval of the kmers.length-mer `key` (base 4, first base most significant), as backward
  // search returns it, stopping at the first empty interval: the table's interval of its last
  // kmers.stored bases, extended by the others (none when the table holds every level).
  // A GPU table holds every level (FmIndex::set_kmer_length), so on the device this is one load:
  // the steps, inlined into the aligner's search kernel, took it from 3,320 to 7,160 instructions
  // (4,368 and register spills out of line).
  WTMAP_HD SaInterval kmer_interval(std::uint64_t key) const {
    SaInterval iv = kmers.intervals[key & ((std::uint64_t{1} << (2 * kmers.stored)) - 1)];
#if !defined(__CUDA_ARCH__)
    for (std::uint32_t j = kmers.stored; j < kmers.length && !iv.empty(); ++j) {
      iv = extend(iv, static_cast<unsigned>(key >> (2 * j)) & 3u);
    }
#endif
    return iv;
  }

  // Row of the suffix one text position earlier (BWT[r] must be a base, i.e. r not special).
  WTMAP_HD std::uint64_t lf(std::uint64_t r) const {
    const QuadVectorView::SymbolRank s = bwt.levels[0].access_rank(r);
    return C[s.symbol] + (s.symbol == 0 ? s.rank - specials_before(r) : s.rank);
  }

  // Text position of row r.
  WTMAP_HD std::uint64_t locate(std::uint64_t r) const { return sa.locate(*this, r); }
};

}  // namespace wtmap::fmindex
