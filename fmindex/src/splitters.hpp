// wtmap fmindex (internal): the splitters of the blockwise suffix sort (blockwise_suffix_array.hpp)
// as the CPU's scans and the GPU's kernels both read them -- a suffix's bucket among them, and the
// bounds of a round of buckets -- over host or device pointers alike.
#pragma once

#include <cstdint>

#include "wtmap/core/config.hpp"
#include "wtmap/fmindex/difference_cover_sample.hpp"
#include "wtmap/fmindex/packed_symbols.hpp"

namespace wtmap::fmindex::detail {

// How many of the sorted keys[0, count) are below `key` (or_equal: at most `key`): a binary search
// without branches, which a scan's unpredictable keys would mispredict half the time.
WTMAP_HD std::uint64_t keys_below(const std::uint64_t* keys, std::uint64_t count, std::uint64_t key, bool or_equal) {
  const std::uint64_t* base = keys;
  for (std::uint64_t left = count; left > 0;) {
    const std::uint64_t half = left / 2;
    const std::uint64_t probe = base[half];
    const bool below = or_equal ? probe <= key : probe < key;
    base = below ? base + half + 1 : base;
    left = below ? left - half - 1 : half;
  }
  return static_cast<std::uint64_t>(base - keys);
}

// The splitters in suffix order, their K-symbol windows, and per leading kPrefixBits of a window the
// first splitter at or above that prefix (prefix_start, 2^kPrefixBits + 1 entries): a key's place
// among the splitter keys is searched for only among those that share its prefix (usually none or
// one) instead of all of them. Space: 16 bytes a splitter and 512 KiB of prefix starts.
struct SplitterView {
  static constexpr std::uint32_t kPrefixBits = 16;

  const std::uint64_t* positions = nullptr;
  const std::uint64_t* keys = nullptr;
  const std::uint64_t* prefix_start = nullptr;
  std::uint64_t count = 0;
  std::uint32_t prefix_shift = 0;  // a window's bits less kPrefixBits

  // keys_below among the splitter keys that share the key's prefix.
  WTMAP_HD std::uint64_t keys_below_key(std::uint64_t key, bool or_equal) const {
    const std::uint64_t prefix = key >> prefix_shift;
    const std::uint64_t first = prefix_start[prefix], last = prefix_start[prefix + 1];
    return first + keys_below(keys + first, last - first, key, or_equal);
  }

  // The bucket of the suffix at i, whose window is key: how many splitters are smaller. Those
  // whose key differs from the suffix's place it by key alone; among those that share its key, a
  // binary search keeps how many leading symbols suffix i shares with the splitters at either end
  // of the range: every splitter between them shares at least the smaller count, so a comparison
  // starts there (Manber and Myers' search, SIAM J. Comput. 1993) and a suffix inside a long
  // repeat reads its symbols about once rather than at every step.
  WTMAP_HD std::uint64_t bucket_of(const PackedSymbolsView& text, const DifferenceCoverView& dc, std::uint64_t i,
                                   std::uint64_t key) const {
    std::uint64_t lo = keys_below_key(key, false);
    if (lo == count || keys[lo] != key) return lo;
    std::uint64_t hi = keys_below_key(key, true), shared_lo = 0, shared_hi = 0;
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      const std::uint64_t common = shared_lo < shared_hi ? shared_lo : shared_hi;
      const std::uint64_t known = common > text.per_window ? common : text.per_window;
      std::uint64_t shared = 0;
      if (compare_suffixes(text, dc, positions[mid], i, known, shared) < 0) {
        lo = mid + 1;
        shared_lo = shared;
      } else {
        hi = mid;
        shared_hi = shared;
      }
    }
    return lo;
  }
};

// The suffixes of one round of buckets [first, last): those with at least `first` splitters
// smaller than them and fewer than `last` (SplitterView::bucket_of), that is above the splitter
// at `lower` (if first > 0) and at most the one at `upper` (if the round does not run to the end).
struct RoundBounds {
  bool has_lower = false, has_upper = false;
  std::uint64_t lower = 0, upper = 0;          // the splitters' text positions
  std::uint64_t lower_key = 0, upper_key = 0;  // and their windows

  // Whether the suffix at i, whose window is key, is one of the round's. Equal windows share K
  // symbols, where compare_suffixes starts.
  WTMAP_HD bool contains(const PackedSymbolsView& text, const DifferenceCoverView& dc, std::uint64_t i,
                         std::uint64_t key) const {
    if (has_lower && (key < lower_key || (key == lower_key && compare_suffixes(text, dc, lower, i, text.per_window) >= 0)))
      return false;
    return !has_upper || key < upper_key || (key == upper_key && compare_suffixes(text, dc, i, upper, text.per_window) <= 0);
  }
};

}  // namespace wtmap::fmindex::detail
