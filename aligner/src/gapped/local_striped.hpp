// wtmap aligner (gapped, CPU only): the unbanded local DP of extend.hpp's local_rows -- the mate
// rescue's search of a read in a window -- striped over the query in SSE2 vectors of eight 16-bit
// lanes (Farrar 2007, Bioinformatics 23:156; bwa's ksw_align2 runs the same layout). The
// recurrence is local_rows' own, cell for cell: gaps open from M = H(I-1, J-1) + s, not from H
// (an insertion never follows a deletion), and every cell is at least 0. Since F then never
// depends on H, the lazy-F pass that carries F across the stripes changes H and F only.
// local_align_striped and tandem_score_striped return what local_align and tandem_score do (the
// same ties: the best cell in the earliest row, in it the largest query end).
//
// Space: per thread, 5 + 3 vectors per 8 query bases, kept between calls. Time: O(tlen * qlen / 8)
// plus the lazy-F passes (few: a row's F rarely survives a whole stripe). Where SSE2 is missing
// (not x86-64) or a score might leave 16 bits, striped_fits() is false and the caller runs the
// scalar DP.
#pragma once

#include <cstdint>

#include "wtmap/aligner/gapped/extend.hpp"
#include "wtmap/aligner/gapped/scoring.hpp"

namespace wtmap::aligner::gapped {

// Whether the striped DP serves local_rows over these lengths: unbanded (sc.band >= both
// lengths, as the rescue's windows are), SSE2 there, and no cell's score or penalty beyond
// 16 bits.
bool striped_fits(std::uint32_t qlen, std::uint32_t tlen, const Scoring& sc);

// local_align(query, qlen, target, tlen, sc, .) (codes 0..4), where striped_fits.
ExtendResult local_align_striped(const std::uint8_t* query, std::uint32_t qlen, const std::uint8_t* target,
                                 std::uint32_t tlen, const Scoring& sc);

// tandem_score(query, qlen, target, tlen, best, sc, floor, .), where striped_fits.
std::int32_t tandem_score_striped(const std::uint8_t* query, std::uint32_t qlen, const std::uint8_t* target,
                                  std::uint32_t tlen, const ExtendResult& best, const Scoring& sc, std::int32_t floor);

}  // namespace wtmap::aligner::gapped
