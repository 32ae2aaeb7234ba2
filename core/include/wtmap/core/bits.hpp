// wtmap core: word-level bit tricks used by rank/select and the wavelet tree, host and device.
#pragma once

#include <cstdint>

#include "wtmap/core/config.hpp"

namespace wtmap::bits {

WTMAP_HD int popcount64(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __popcll(x);
#else
  return __builtin_popcountll(x);
#endif
}

WTMAP_HD int count_leading_zeros64(std::uint64_t x) {  // x != 0
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(x));
#else
  return __builtin_clzll(x);
#endif
}

WTMAP_HD int count_trailing_zeros64(std::uint64_t x) {  // x != 0
#if defined(__CUDA_ARCH__)
  return __ffsll(static_cast<long long>(x)) - 1;
#else
  return __builtin_ctzll(x);
#endif
}

// The bytes of x in reverse order.
WTMAP_HD std::uint64_t byte_swap64(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  const unsigned lo = __byte_perm(static_cast<unsigned>(x), 0, 0x0123);
  const unsigned hi = __byte_perm(static_cast<unsigned>(x >> 32), 0, 0x0123);
  return std::uint64_t{lo} << 32 | hi;
#else
  return __builtin_bswap64(x);
#endif
}

// Mask of the `count` low bits, count in [0, 64].
WTMAP_HD std::uint64_t low_mask64(unsigned count) {
  return count >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << count) - 1);
}

// ceil(log2(x)) for x >= 1; 0 for x <= 1.
WTMAP_HD unsigned ceil_log2(std::uint64_t x) {
  return x <= 1 ? 0u : 64u - static_cast<unsigned>(count_leading_zeros64(x - 1));
}

// Largest power of two strictly below x, for x >= 2: the size of the left child of a
// wavelet-tree node covering x symbols (thesis Alg. 3 / "prevPowTwo").
WTMAP_HD std::uint64_t split_size(std::uint64_t x) {
  return std::uint64_t{1} << (63 - count_leading_zeros64(x - 1));
}

// Position (0-based) of the set bit of rank `k` (0-based) in `word`; k < popcount(word).
// Binary search by halves with popcounts (thesis 4.2, "select by halving").
WTMAP_HD unsigned select_in_word64(std::uint64_t word, unsigned k) {
  unsigned pos = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (unsigned width = 32; width >= 1; width /= 2) {
    const std::uint64_t low = word & low_mask64(width);
    const unsigned c = static_cast<unsigned>(popcount64(low));
    if (k >= c) {
      k -= c;
      pos += width;
      word >>= width;
    } else {
      word = low;
    }
  }
  return pos;
}

template <class T>
WTMAP_HD T ceil_div(T a, T b) { return (a + b - 1) / b; }

WTMAP_HD std::uint64_t round_up(std::uint64_t x, std::uint64_t multiple) {
  return ceil_div(x, multiple) * multiple;
}

}  // namespace wtmap::bits
