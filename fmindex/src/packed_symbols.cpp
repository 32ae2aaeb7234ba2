#include "wtmap/fmindex/packed_symbols.hpp"

#include <algorithm>
#include <atomic>
#include <new>

#include "wtmap/core/detail/parallel.hpp"

namespace wtmap::fmindex {

std::uint32_t PackedSymbols::bits_for(std::uint8_t largest_code) {
  std::uint32_t bits = 1;
  while (bits < 8 && (largest_code >> bits) != 0) ++bits;
  return bits;
}

Result<PackedSymbols> PackedSymbols::build(const std::uint8_t* text, std::uint64_t n) {
  // The largest code and the words' first touch on every thread (one thread took seconds for
  // a human genome's 6 G symbols).
  std::atomic<unsigned> largest{0};
  wtmap::detail::parallel_for_ranges(n, [&](std::uint64_t begin, std::uint64_t end) {
    std::uint8_t mine = 0;
    for (std::uint64_t i = begin; i < end; ++i) mine = std::max(mine, text[i]);
    unsigned seen = largest.load();
    while (mine > seen && !largest.compare_exchange_weak(seen, mine)) {
    }
  });
  PackedSymbols packed;
  const std::uint32_t bits = bits_for(static_cast<std::uint8_t>(largest.load()));
  try {
    packed.words_.resize(num_words(n, bits));  // every word written below
  } catch (const std::bad_alloc&) {
    return Status{StatusCode::out_of_memory, "out of host memory for the packed text of the suffix sorter"};
  }
  // Each word is filled from the symbols that overlap it, so the words are independent.
  std::uint64_t* words = packed.words_.data();
  const std::uint64_t filled = (n * bits + 63) / 64;
  wtmap::detail::parallel_for_ranges(filled, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t w = begin; w < end; ++w) {
      const std::uint64_t first = 64 * w / bits, last = std::min(n, (64 * w + 63) / bits + 1);
      std::uint64_t word = 0;
      for (std::uint64_t j = first; j < last; ++j) {
        // The symbol's bits are [at, at + bits) of the stream, bit 0 the word's most significant.
        const auto at = static_cast<std::int64_t>(j * bits) - static_cast<std::int64_t>(64 * w);
        const std::int64_t shift = 64 - (at + bits);
        const std::uint64_t symbol = text[j];
        // at < 0: its low bits open the word (the shift drops the high ones); shift < 0: its
        // high bits close the word.
        word |= shift >= 0 ? symbol << shift : symbol >> -shift;
      }
      words[w] = word;
    }
  }, 1 << 12);
  std::fill(packed.words_.begin() + static_cast<std::ptrdiff_t>(filled), packed.words_.end(), 0);  // zeros past the text
  packed.view_ = {words, n, bits, 64 / bits};
  return packed;
}

}  // namespace wtmap::fmindex
