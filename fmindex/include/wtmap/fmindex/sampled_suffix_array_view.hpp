// wtmap fmindex: locate support shared by the DNA and the general FM-index -- the suffix array
// sampled by text position, and the walk of LF steps from any row to a sampled one, as a
// trivially copyable view (__host__ __device__; the owner is sampled_suffix_array.hpp).
//
// A row is sampled when its text position is a multiple of s, or when the text symbol before
// its suffix is a separator or the terminator (the rows whose BWT symbol is one): an LF step
// over a separator would need the separator's rank, which neither index stores (the DNA index
// keeps separators out of its tree, the general one merges all of them into one symbol), so the
// walk must stop before it. The walk from text position p visits p, p - 1, ... and meets a
// sampled position in (p - s, p], so a locate costs at most s - 1 LF steps.
//
// Space: a rank bit vector over the n rows (n * 1.06 bits) and 8 bytes per sample (n / s plus
// one per separator). Construction: one pass over the suffix array, O(n).
#pragma once

#include <cstdint>

#include "wtmap/core/config.hpp"
#include "wtmap/core/rank_select_view.hpp"

namespace wtmap::fmindex {

struct SampledSuffixArrayView {
  // What locate returns when the walk finds no sampled row within s steps or leaves the rows:
  // only a corrupt index does that (the loaders check what they can; this bounds the rest).
  static constexpr std::uint64_t kNotLocated = ~std::uint64_t{0};

  RankSelectView sampled;                // rows with a stored SA value
  const std::uint64_t* sa_samples = nullptr;  // text positions of the sampled rows, in row order
  std::uint32_t sample_rate = 0;         // s: a locate takes at most s - 1 LF steps (set by the index)

  // Text position of row r (< index.rows) of `index`, whose lf(r) is the row of the suffix one
  // text position earlier (called on unsampled rows only); kNotLocated if the walk takes s steps
  // or leaves the rows, so that no index file can make it loop or read out of bounds.
  template <class Index>
  WTMAP_HD std::uint64_t locate(const Index& index, std::uint64_t r) const {
    std::uint64_t steps = 0;
    while (!sampled.access(r)) {
      if (++steps >= sample_rate) return kNotLocated;
      r = index.lf(r);
      if (r >= index.rows) return kNotLocated;
    }
    const std::uint64_t p = position(r, steps);
    return p < index.rows ? p : kNotLocated;
  }

  // Text position of the row whose walk met the sampled row r after `steps` LF steps (for
  // callers that walk themselves, as the aligner's search does a step at a time).
  WTMAP_HD std::uint64_t position(std::uint64_t r, std::uint64_t steps) const {
    return sa_samples[sampled.rank1(r)] + steps;
  }
};

}  // namespace wtmap::fmindex
