// wtmap fmindex: the text of a DNA index read base by base -- its forward half F packed two bits a
// base, and where F's fragments end -- as a trivially copyable view (__host__ __device__; the
// owner is packed_text.hpp).
//
// The index text is T = F # rc(F) $ (fm_index_view.hpp), so T[q] for q > m is the complement of
// F[2m - q] and F alone answers for both strands. The search uses it to check a candidate
// alignment in one pass over the read instead of a backward step per base (ReadSearch's
// verification), as bwa keeps its .pac beside the BWT.
//
// Space: 2 bits per forward base (separators stored as A, told apart by the fragment ends) and
// 8 bytes per fragment. Queries: base() O(1); one_fragment() O(log fragments).
#pragma once

#include <cstdint>

#include "wtmap/core/config.hpp"

namespace wtmap::fmindex {

struct PackedTextView {
  static constexpr unsigned kBasesPerWord = 32;

  const std::uint64_t* words = nullptr;          // F: base i in bits 2 (i mod 32) of word i / 32
  const std::uint64_t* fragment_ends = nullptr;  // ascending: F position after each fragment (its separator, or m)
  std::uint64_t num_fragments = 0;
  std::uint64_t forward_length = 0;  // m

  WTMAP_HD bool empty() const { return words == nullptr; }

  WTMAP_HD unsigned forward_base(std::uint64_t i) const {
    return static_cast<unsigned>(words[i / kBasesPerWord] >> (2 * (i % kBasesPerWord))) & 3u;
  }

  // T[q] (0..3) for a position q that holds a base (one_fragment says which do).
  WTMAP_HD unsigned base(std::uint64_t q) const {
    const std::uint64_t m = forward_length;
    return q < m ? forward_base(q) : 3u - forward_base(2 * m - q);
  }

  // Whether T[a, b) (a < b) lies inside one fragment of either strand: no separator, not across
  // the strand junction T[m] nor past the last base T[2m].
  WTMAP_HD bool one_fragment(std::uint64_t a, std::uint64_t b) const {
    const std::uint64_t m = forward_length;
    std::uint64_t fa = a, fb = b;  // the same bases as F[fa, fb)
    if (b > m) {
      if (a <= m || b > 2 * m + 1) return false;
      fa = 2 * m + 1 - b;
      fb = 2 * m + 1 - a;
    }
    // The first fragment end at or after fa: F[fa, fb) is clear iff it lies at or past fb.
    std::uint64_t lo = 0, hi = num_fragments;
    while (lo < hi) {
      const std::uint64_t mid = (lo + hi) / 2;
      if (fragment_ends[mid] < fa) lo = mid + 1; else hi = mid;
    }
    return lo < num_fragments && fragment_ends[lo] >= fb;
  }
};

}  // namespace wtmap::fmindex
