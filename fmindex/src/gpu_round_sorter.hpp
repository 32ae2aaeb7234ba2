// wtmap fmindex (internal): the GPU's rounds of the blockwise suffix sort (blockwise_suffix_array.hpp).
//
// The packed text and the difference-cover sample's ranks go to the device once. One pass counts
// each bucket's suffixes (SplitterView::bucket_of, a block's counts in shared memory). Each round then
//  1. picks its suffixes out of the whole text: those above the splitter before the round and up to
//     the splitter that ends it (RoundBounds: a window comparison, compare_suffixes only where the
//     window equals a splitter's), compacted by CUB's DeviceSelect a chunk of the text at a time;
//  2. sorts them by their K-symbol windows (CUB's DeviceRadixSort of pairs);
//  3. orders each run of equal windows by compare_suffixes -- at most v / K window reads and one
//     rank lookup a comparison -- in one merge sort of the tied suffixes keyed by their window
//     (CUB's DeviceMergeSort), whose results go back to the tied slots in order;
//  4. copies the rows back.
// A round's rows are one range of the suffix array, so the CPU's bucket by bucket sort and this
// whole-round sort give the same rows. Unlike the CPU's, ties are not broken K symbols a pass:
// a suffix inside a long repeat reads up to v / K windows at each of the merge's log2(rows) levels.
//
// Device space: the packed text (b n / 8 bytes), the ranks (8 n |D| / v bytes), 40 bytes per row of
// the largest round, CUB's scratch for it (about 16 more), and a chunk's slack for the selection.
#pragma once

#include <cstdint>
#include <vector>

#include "device_suffix_tables.hpp"
#include "splitters.hpp"
#include "wtmap/core/buffer.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/difference_cover_sample.hpp"
#include "wtmap/fmindex/packed_symbols.hpp"

namespace wtmap::fmindex::detail {

class GpuRoundSorter {
 public:
  GpuRoundSorter() = default;
  GpuRoundSorter(GpuRoundSorter&&) noexcept = default;
  GpuRoundSorter& operator=(GpuRoundSorter&&) noexcept = default;

  // The text and the sample's ranks (DifferenceCoverSample::build's for this text) copied to the
  // current GPU.
  static Result<GpuRoundSorter> create(const PackedSymbolsView& text, const DifferenceCoverView& dc);
  // Each bucket's suffixes (bucket_of among the host's `splitters`: count + 1 buckets) into
  // counts, by one pass over the text.
  Status count_buckets(const SplitterView& splitters, std::vector<std::uint64_t>& counts);
  // The most rows a round can have with its arrays in `budget` bytes of device memory.
  std::uint64_t rows_within(std::uint64_t budget) const;
  // Device memory for rounds of up to `rows` rows (allocated once; a smaller call keeps them).
  Status reserve(std::uint64_t rows);
  // The round's suffixes in suffix order to rows[0, count); invalid_argument if the text holds
  // another number of them. Needs reserve(count) first.
  Status sort_round(const RoundBounds& bounds, std::uint64_t count, std::uint64_t* rows);

 private:
  Status select_round(const RoundBounds& bounds, std::uint64_t count);
  Status sort_selected(std::uint64_t count);
  Status order_ties(std::uint64_t count);

  DeviceSuffixTables tables_;
  std::uint64_t reserved_ = 0;
  std::uint64_t select_chunk_ = 1;  // text positions a selection call looks at: the output's slack
  // Per row of the largest round: `pairs_` 16 bytes (the selection's positions and the windows
  // sorted from, then the tied suffixes as window-position pairs), `keys_` and `positions_` 8 each
  // (the sorted pairs), `tied_` 8 (the tied rows' slots); `scratch_` CUB's; `found_` the count.
  Buffer pairs_, keys_, positions_, tied_, scratch_, found_;
};

}  // namespace wtmap::fmindex::detail
