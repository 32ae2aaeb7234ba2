// wtmap fmindex: bi-intervals on the both-strand FM-index -- extension of a match to the left and
// to the right with one BWT, as __host__ __device__ functions.
//
// Li, "Exploring single-sample SNP and INDEL calling with whole-genome de novo assembly"
// (Bioinformatics 2012), the FMD-index: when the indexed text is its own reverse complement, the
// rows of a pattern P and those of rc(P) are two intervals of the same size, and extending P to the
// left by a base c gives both new intervals from the counts of the four bases at P's two ends:
// P's side as in backward search, and rc(P)'s side because the rows of rc(P) are ordered by the
// symbol after rc(P) -- first a non-base, then A, C, G, T -- where rc(P) followed by b is rc(comp(b) P),
// whose size the counts give. Extending P to the right by c is extending rc(P) to the left by comp(c).
// Our text T = F # rc(F) $ is its own reverse complement but for $, and no base string matches
// across a separator or $ (fm_index_view.hpp): so an occurrence of P preceded by a separator or $
// mirrors one of rc(P) followed by one, and their number -- the interval's size minus the four
// bases' counts -- is what bwa's bwt_extend counts as its one $ (the "primary" row).
//
// Space: a BiInterval is three words. Time: one extension is one occ_all_pair (one quad-vector
// block per end, FmIndexView) and a few additions, in either direction.
#pragma once

#include <cstdint>

#include "wtmap/core/config.hpp"
#include "wtmap/fmindex/fm_index_view.hpp"
#include "wtmap/fmindex/sa_interval.hpp"

namespace wtmap::fmindex {

// The rows of a pattern P, [x0, x0 + size), and of its reverse complement, [x1, x1 + size).
struct BiInterval {
  std::uint64_t x0 = 0, x1 = 0, size = 0;

  WTMAP_HD SaInterval rows() const { return {x0, x0 + size}; }
  WTMAP_HD SaInterval reverse_rows() const { return {x1, x1 + size}; }
  WTMAP_HD bool empty() const { return size == 0; }
  // The same match read on the other strand: rc(P)'s bi-interval.
  WTMAP_HD BiInterval swapped() const { return {x1, x0, size}; }
};

// The empty pattern: every row on both sides.
WTMAP_HD BiInterval whole_bi_interval(const FmIndexView& index) { return {0, 0, index.rows}; }

// The one-base pattern c (0..3): its rows and those of comp(c) from the C array, no rank.
WTMAP_HD BiInterval base_bi_interval(const FmIndexView& index, unsigned c) {
  return {index.C[c], index.C[3 - c], index.C[c + 1] - index.C[c]};
}

// cP's bi-interval from P's and the four bases' counts before P's rows' ends (occ_all_pair at
// bi.x0 and bi.x0 + bi.size). Loops over constant indices only, so that the counts stay in
// registers on the GPU.
WTMAP_HD BiInterval backward_from_counts(const FmIndexView& index, const BiInterval& bi, unsigned c,
                                         const std::uint64_t (&occ_lo)[4], const std::uint64_t (&occ_hi)[4]) {
  BiInterval out{0, bi.x1, 0};
  std::uint64_t bases = 0;
  for (unsigned b = 0; b < 4; ++b) {
    const std::uint64_t size = occ_hi[b] - occ_lo[b];
    bases += size;
    if (b == c) {
      out.x0 = index.C[b] + occ_lo[b];
      out.size = size;
    }
    // rc(P) followed by comp(b) sorts after rc(P) followed by comp(b') for b' > b.
    if (b > c) out.x1 += size;
  }
  out.x1 += bi.size - bases;  // rc(P) followed by a separator or $ sorts first
  return out;
}

// The bi-interval of cP (c = 0..3; empty when cP does not occur).
WTMAP_HD BiInterval extend_backward(const FmIndexView& index, const BiInterval& bi, unsigned c) {
  std::uint64_t occ_lo[4], occ_hi[4];
  index.occ_all_pair(bi.x0, bi.x0 + bi.size, occ_lo, occ_hi);
  return backward_from_counts(index, bi, c, occ_lo, occ_hi);
}

// cP (forward false) or Pc (forward true), c = 0..3: Pc's is rc(Pc) = comp(c) rc(P) read on the
// other strand. One rank for either direction, so that a caller alternating them (the SMEM
// search) runs the same instructions for both and a GPU warp stays converged.
WTMAP_HD BiInterval extend(const FmIndexView& index, const BiInterval& bi, unsigned c, bool forward) {
  const BiInterval from = forward ? bi.swapped() : bi;
  const BiInterval to = extend_backward(index, from, forward ? 3 - c : c);
  return forward ? to.swapped() : to;
}

// Prefetches the index blocks extend(index, bi, c, forward) ranks, whatever c: for a CPU loop
// that runs several searches in turn (core/detail/batch.cuh's prefetch).
WTMAP_HD void prefetch_extend(const FmIndexView& index, const BiInterval& bi, bool forward) {
  const BiInterval from = forward ? bi.swapped() : bi;
  index.prefetch_occ(from.x0);
  index.prefetch_occ(from.x0 + from.size);
}

// The bi-interval of Pc (c = 0..3).
WTMAP_HD BiInterval extend_forward(const FmIndexView& index, const BiInterval& bi, unsigned c) {
  return extend(index, bi, c, true);
}

}  // namespace wtmap::fmindex
