// wtmap fmindex: the FM-index of a general alphabet (protein, byte; sigma up to 254 symbols) as
// a trivially copyable view -- backward search, LF and locate as __host__ __device__ functions
// for the CPU backend and GPU kernels alike.
//
// The text is one strand, T = r0 # r1 # ... # rk $ (records r, separators #, terminator $), the
// suffix array sorted with $ < # < every symbol. The BWT is stored in core's binary level-wise
// wavelet tree (the thesis' general tree) over tree codes 0..sigma-1: code 0 for # and $ alike,
// code k for the k-th smallest symbol of the text (SymbolMap, alphabet.hpp). Separators and the
// terminator thus share one code that no pattern symbol ever has, so no backward search extends
// across one -- no match spans two records, by construction. (The DNA index instead keeps them
// out of its tree as "special rows" corrected at rank time, so that DNA stays a 4-symbol tree;
// that correction scans the special rows inside a 65,536-row bucket, cheap for a genome's few
// hundred contigs but not for a protein database of one separator every few hundred rows. Here
// the separator costs one more tree symbol, at most one more level, and no correction.)
//
// Because the tree's symbols are exactly the suffix array's first-symbol order (# and $ merged),
// the tree's cumulative histogram is the FM-index's C array: C[c] = rows whose suffix starts
// with a code below c. The LF step is one access_rank traversal; the rows whose BWT symbol is #
// or $ (where LF would be wrong, # and $ being merged) are all sampled, so locate never takes it.
//
// Space: n * ceil(log2 sigma) bits at most (reduced codes) plus rank/select support for the
// tree, plus the sampled suffix array (sampled_suffix_array_view.hpp). Queries: a backward search
// step O(log sigma) binary ranks (two per level), an LF step O(log sigma), a locate at most s - 1
// LF steps.
#pragma once

#include <cstdint>

#include "wtmap/core/config.hpp"
#include "wtmap/core/wavelet_tree_view.hpp"
#include "wtmap/fmindex/sa_interval.hpp"
#include "wtmap/fmindex/sampled_suffix_array_view.hpp"

namespace wtmap::fmindex {

struct GeneralFmIndexView {
  static constexpr std::uint8_t kSeparatorCode = 0;  // # and $ in the tree; never a pattern code

  WaveletTreeView<std::uint8_t, 2> bwt;  // tree codes, no alphabet mapping (identity)
  std::uint64_t rows = 0;                // text length n, separators and $ included
  SampledSuffixArrayView sa;             // locate support

  // First row of the suffixes that start with code c (c <= sigma; C[sigma] = n).
  WTMAP_HD std::uint64_t C(unsigned c) const { return bwt.cumulative[c]; }

  WTMAP_HD SaInterval all() const { return {0, rows}; }

  // The rows of cP given the rows of P; c a symbol code, 1..sigma-1.
  WTMAP_HD SaInterval extend(const SaInterval& iv, std::uint8_t c) const {
    return {C(c) + bwt.rank(c, iv.lo), C(c) + bwt.rank(c, iv.hi)};
  }

  // Backward search of codes[0, length) (1..sigma-1; 0 -- the separator code, also that of
  // every byte outside the alphabet -- and codes past the alphabet match nothing).
  WTMAP_HD SaInterval backward_search(const std::uint8_t* codes, std::uint32_t length) const {
    SaInterval iv = all();
    for (std::uint32_t k = length; k-- > 0 && !iv.empty();) {
      const std::uint8_t c = codes[k];
      if (c == kSeparatorCode || c >= bwt.sigma) return {0, 0};
      iv = extend(iv, c);
    }
    return iv;
  }

  // Row of the suffix one text position earlier (BWT[r] must be a symbol, not # or $).
  WTMAP_HD std::uint64_t lf(std::uint64_t r) const {
    const auto s = bwt.access_rank(r);
    return C(s.symbol) + s.rank;
  }

  // Text position of row r.
  WTMAP_HD std::uint64_t locate(std::uint64_t r) const { return sa.locate(*this, r); }
};

}  // namespace wtmap::fmindex
