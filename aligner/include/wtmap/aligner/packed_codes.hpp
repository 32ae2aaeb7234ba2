// wtmap aligner: a batch's search codes packed two bits a base, beside a mask of the codes that are
// no base, so that a read is compared with the index's packed text 32 bases at a time (ReadSearch's
// verification) -- the layout of PackedTextView, and word for word the same on either backend.
//
// Space: 4 bits per base (the bases and the mask), plus two words. Construction: one word per call
// of pack_codes_word, independent of the others (one GPU thread each).
#pragma once

#include <cstdint>

#include "wtmap/core/config.hpp"

namespace wtmap::aligner {

// Words of each array for `size` codes: one more than they fill, so that bases32 may read the
// word after any base.
constexpr WTMAP_HD std::uint64_t packed_code_words(std::uint64_t size) { return size / 32 + 2; }

// Word w of codes[0, size) packed: in `bases` code & 3 of code 32 w + j at bits 2j (0 for a code
// that is no base, and for positions past size), and in `unknown` bit 2j set where the code is no
// base (> 3).
WTMAP_HD void pack_codes_word(const std::uint8_t* codes, std::uint64_t size, std::uint64_t w, std::uint64_t& bases,
                              std::uint64_t& unknown) {
  bases = 0;
  unknown = 0;
  for (unsigned j = 0; j < 32; ++j) {
    const std::uint64_t i = 32 * w + j;
    const unsigned c = i < size ? codes[i] : 0u;
    if (c > 3) {
      unknown |= std::uint64_t{1} << (2 * j);
    } else {
      bases |= std::uint64_t{c} << (2 * j);
    }
  }
}

// One read's packed codes: its base i is base first + i of the arrays (first < 32: the arrays start
// at the word of the read's first base).
struct PackedRead {
  const std::uint64_t* bases = nullptr;
  const std::uint64_t* unknown = nullptr;
  std::uint32_t first = 0;
};

// The packed codes of a batch (each array packed_code_words(size) words).
struct PackedCodesView {
  const std::uint64_t* bases = nullptr;
  const std::uint64_t* unknown = nullptr;

  // The read whose codes start at `offset` of the batch's codes.
  WTMAP_HD PackedRead read_at(std::uint64_t offset) const {
    return {bases + offset / 32, unknown + offset / 32, static_cast<std::uint32_t>(offset % 32)};
  }
};

}  // namespace wtmap::aligner
