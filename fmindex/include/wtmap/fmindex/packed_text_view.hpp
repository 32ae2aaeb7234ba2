// wtmap fmindex: the text of a DNA index read a base or 32 bases at a time -- its forward half F
// packed two bits a base, and where F's fragments end -- as a trivially copyable view
// (__host__ __device__; the owner is packed_text.hpp).
//
// The index text is T = F # rc(F) $ (fm_index_view.hpp), so T[q] for q > m is the complement of
// F[2m - q] and F alone answers for both strands. The search uses it to check a candidate
// alignment in one pass over the read instead of a backward step per base (ReadSearch's
// verification), as bwa keeps its .pac beside the BWT.
//
// Space: 2 bits per forward base (separators stored as A, told apart by the fragment ends) and
// 8 bytes per fragment. Queries: base() and bases32() O(1); one_fragment() and fragment_end()
// O(log fragments).
#pragma once

#include <cstdint>

#include "wtmap/core/bits.hpp"
#include "wtmap/core/config.hpp"

namespace wtmap::fmindex {

// ---- 32 bases in a word, two bits each (base j in bits 2j) ------------------------------------------

constexpr std::uint64_t kEvenBits = 0x5555555555555555ull;  // bit 2j: one per base

// The 32 bases from base `first` of a packed array (base i in bits 2 (i mod 32) of word i / 32);
// words[first / 32 + 1] must be readable.
WTMAP_HD std::uint64_t bases32(const std::uint64_t* words, std::uint64_t first) {
  const std::uint64_t* w = words + first / 32;
  const unsigned shift = static_cast<unsigned>(2 * (first % 32));
  return shift == 0 ? w[0] : w[0] >> shift | w[1] << (64 - shift);
}

// The reverse complement of 32 packed bases (A, C, G, T = 0..3, so the complement is 3 - c).
WTMAP_HD std::uint64_t reverse_complement32(std::uint64_t x) {
  x = (x >> 2 & 0x3333333333333333ull) | (x & 0x3333333333333333ull) << 2;  // bases within nibbles
  x = (x >> 4 & 0x0F0F0F0F0F0F0F0Full) | (x & 0x0F0F0F0F0F0F0F0Full) << 4;  // nibbles within bytes
  return ~bits::byte_swap64(x);
}

// Bases that differ between two packed words, as bit 2j for base j.
WTMAP_HD std::uint64_t differing_bases(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t x = a ^ b;
  return (x | x >> 1) & kEvenBits;
}

struct PackedTextView {
  static constexpr unsigned kBasesPerWord = 32;

  // F: base i in bits 2 (i mod 32) of word i / 32; words[-1] and words[ceil(m / 32)] are zero
  // padding, so that bases32 may read a word before and after F.
  const std::uint64_t* words = nullptr;
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

  // T[q, q + 32) packed (q <= 2m; the bases past the end of q's fragment are undefined).
  WTMAP_HD std::uint64_t bases32(std::uint64_t q) const {
    const std::uint64_t m = forward_length;
    if (q < m) return fmindex::bases32(words, q);
    // T[q + j] = 3 - F[2m - q - j]: F[2m - q - 31, 2m - q] reversed and complemented (from the
    // padding word before F when that starts before F).
    return reverse_complement32(fmindex::bases32(words - 1, 2 * m - q + 1));
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
    // F[fa, fb) is clear iff the first fragment end at or after fa lies at or past fb.
    const std::uint64_t x = first_end_at_or_after(fa);
    return x < num_fragments && fragment_ends[x] >= fb;
  }

  // Where the bases from T[q] on end: the least e >= q where T[e] is no base (a separator, the
  // strand junction, the terminator or past it); q itself when T[q] is none. One search, where
  // finding e with one_fragment would take one per candidate.
  WTMAP_HD std::uint64_t fragment_end(std::uint64_t q) const {
    const std::uint64_t m = forward_length;
    if (q == m || q > 2 * m) return q;
    if (q < m) return fragment_ends[first_end_at_or_after(q)];  // F's last end is m > q
    // T[q, ...) is F[f], F[f - 1], ... complemented, down to the start of F[f]'s fragment.
    const std::uint64_t f = 2 * m - q, x = first_end_at_or_after(f);
    if (fragment_ends[x] == f) return q;  // F[f] is a separator
    const std::uint64_t start = x > 0 ? fragment_ends[x - 1] + 1 : 0;
    return 2 * m + 1 - start;
  }

 private:
  // The first x with fragment_ends[x] >= f (num_fragments if none).
  WTMAP_HD std::uint64_t first_end_at_or_after(std::uint64_t f) const {
    std::uint64_t lo = 0, hi = num_fragments;
    while (lo < hi) {
      const std::uint64_t mid = (lo + hi) / 2;
      if (fragment_ends[mid] < f) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
};

}  // namespace wtmap::fmindex
