// wtmap fmindex (internal): the difference-cover sample's ranks (difference_cover_sample.hpp)
// computed on the current GPU, equal to the CPU's SampleRanker's: Larsson and Sadakane's prefix
// doubling restricted to the sample (TCS 2007), as on the CPU -- the first v symbols a K-symbol
// window a pass, then the ranks `step` further on -- each pass touching only the suffixes still
// tied. A pass: the keys read (before any rank changes), the tied suffixes sorted by (group,
// key) with two stable CUB radix sorts, each one's new group head (the first row of its run of
// equal keys, by two max-scans) written to the ranks, the runs of one kept for the next pass.
//
// Device space: the packed text, the ranks (8 bytes a sample slot), seven arrays of 8 bytes a
// sample suffix (positions, groups, keys, a permutation, their sorted copies and scans, reused
// from step to step) and CUB's radix scratch (about 16 more): some 4.5 bytes per text symbol at
// v = 1024. O(N log N) work for N sample suffixes on random text, like the CPU's.
#pragma once

#include <cstdint>
#include <vector>

#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/difference_cover_sample.hpp"
#include "wtmap/fmindex/packed_symbols.hpp"

namespace wtmap::fmindex::detail {

// The sample suffixes inside a text of n symbols, cover D (`residues`, ascending) of period v, in
// the text order both rankers give them: row k is text position k / |D| * v + D[k % |D|], every
// whole period's |D| slots, then those of the last period that fall inside the text.
inline std::uint64_t sample_suffixes_in_text(std::uint64_t n, std::uint64_t v, const std::vector<std::uint32_t>& residues) {
  const std::uint64_t periods = n / v;
  std::uint64_t count = periods * residues.size();
  for (const std::uint32_t r : residues) count += periods * v + r < n;
  return count;
}

// Fills ranks (DifferenceCoverSample::num_slots entries, the slots past the text left as they are)
// with the rank of each sample suffix of `text`, which ends in its only 0; `residues` is D,
// ascending, and `dc` the cover's tables (its ranks unused). device_out_of_memory where the device
// has no room.
Status rank_sample_on_gpu(const PackedSymbolsView& text, const DifferenceCoverView& dc,
                          const std::vector<std::uint32_t>& residues, std::vector<std::uint64_t>& ranks);

}  // namespace wtmap::fmindex::detail
