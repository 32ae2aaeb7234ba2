// wtmap fmindex: a text of small integer codes packed b bits each (b = 1..8, the bit width of its
// largest code), the first symbol in the most significant bits, so that the K = floor(64 / b)
// symbols from any position read as one integer whose order is their lexicographic order. These
// windows are the fixed-width keys of the blockwise suffix sorter (blockwise_suffix_array.hpp):
// radix-sortable, and compared a word at a time instead of a symbol at a time.
//
// Space: b n / 8 bytes plus two words of zeros (3 bits a symbol for the DNA index's text T over
// $ # A C G T: 0.75 bytes per reference base). window() and symbol(): two word reads, O(1).
// Positions at or past n read as 0.
#pragma once

#include <cstdint>
#include <vector>

#include "wtmap/core/bits.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/core/detail/default_init_allocator.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::fmindex {

struct PackedSymbolsView {
  const std::uint64_t* words = nullptr;
  std::uint64_t n = 0;
  std::uint32_t bits = 1;         // per symbol
  std::uint32_t per_window = 64;  // K = floor(64 / bits)

  // Symbols [i, i + K) as a K b-bit integer, text[i] the most significant; 0 past the end.
  WTMAP_HD std::uint64_t window(std::uint64_t i) const {
    if (i >= n) return 0;
    const std::uint64_t bit = i * bits;
    const std::uint64_t w = bit >> 6;
    const unsigned s = static_cast<unsigned>(bit & 63);
    std::uint64_t top = words[w] << s;
    if (s != 0) top |= words[w + 1] >> (64 - s);
    return top >> (64 - per_window * bits);
  }
  // The first `count` (<= K) symbols of window(i), the first the most significant.
  WTMAP_HD std::uint64_t prefix(std::uint64_t i, std::uint32_t count) const {
    return count == 0 ? 0 : window(i) >> ((per_window - count) * bits);
  }
  WTMAP_HD std::uint32_t symbol(std::uint64_t i) const { return static_cast<std::uint32_t>(prefix(i, 1)); }
  // How many leading symbols two different windows share.
  WTMAP_HD std::uint32_t shared_symbols(std::uint64_t a, std::uint64_t b) const {
    return static_cast<std::uint32_t>(bits::count_leading_zeros64(a ^ b) - (64 - per_window * bits)) / bits;
  }
};

class PackedSymbols {
 public:
  PackedSymbols() = default;
  PackedSymbols(PackedSymbols&&) noexcept = default;  // the view keeps pointing at the words
  PackedSymbols& operator=(PackedSymbols&&) noexcept = default;
  PackedSymbols(const PackedSymbols&) = delete;
  PackedSymbols& operator=(const PackedSymbols&) = delete;

  // Packs text[0, n) at the bit width of its largest code, on all CPU threads.
  static Result<PackedSymbols> build(const std::uint8_t* text, std::uint64_t n);
  static std::uint32_t bits_for(std::uint8_t largest_code);
  static std::uint64_t num_words(std::uint64_t n, std::uint32_t bits) { return (n * bits + 63) / 64 + 2; }

  const PackedSymbolsView& view() const { return view_; }
  std::uint64_t size_in_bytes() const { return words_.size() * 8; }

 private:
  std::vector<std::uint64_t, wtmap::detail::DefaultInitialising<std::allocator<std::uint64_t>>> words_;
  PackedSymbolsView view_{};
};

}  // namespace wtmap::fmindex
