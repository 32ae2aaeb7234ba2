// wtmap core: the level-wise wavelet tree as a trivially copyable view, with access, rank and
// select as __host__ __device__ functions (the same code for the CPU backend and GPU kernels).
//
// Structure (thesis sec. 5; Makinen and Navarro's level-wise tree, extended with the cumulative
// histogram): symbols are first mapped to a minimal alphabet [0, sigma). Level l concatenates
// the bit vectors of all nodes of depth l, each node starting at the number of text symbols
// smaller than its first symbol. For sigma not a power of two the tree uses the "reduced" codes
// of thesis Algorithm 3: a node covering m symbols splits into a left child of the largest power
// of two p < m symbols and a right child of m - p, so no node has a single child; leaves of
// short codes are the largest symbols, which fall off the end of deeper levels.
//
// Space: n * (average code length) bits plus rank/select support (rank_select_view.hpp), the
// cumulative histogram (sigma + 1 words) and two words per internal node for the node start and
// the precomputed rank at it. Queries: access and rank O(log sigma) binary ranks (access stops
// one level early), access_rank (symbol and its rank, the LF step) the same in one traversal,
// select O(log sigma) binary selects, bottom-up.
#pragma once

#include <cstdint>

#include "wtmap/core/bits.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/core/rank_select_view.hpp"

namespace wtmap {

// What binary and 4-ary trees share: the text length, the minimal alphabet and its mapping,
// and the cumulative histogram.
template <class Symbol>
struct WaveletTreeCommon {
  std::uint64_t size = 0;        // n
  std::uint64_t sigma = 0;       // minimal alphabet size
  unsigned num_levels = 0;
  const std::uint64_t* cumulative = nullptr;   // C[c] = symbols < c in the text, c in [0, sigma]
  const Symbol* alphabet = nullptr;            // sorted symbols when extracted; null: identity

  // Maps a user symbol to the minimal alphabet; false if the symbol is not in the alphabet.
  WTMAP_HD bool to_minimal(Symbol c, std::uint64_t& m) const {
    if (alphabet == nullptr) {
      m = c;
      return m < sigma;
    }
    std::uint64_t lo = 0, hi = sigma;  // lower_bound
    while (lo < hi) {
      const std::uint64_t mid = (lo + hi) / 2;
      if (alphabet[mid] < c) lo = mid + 1; else hi = mid;
    }
    m = lo;
    return lo < sigma && alphabet[lo] == c;
  }
  WTMAP_HD Symbol from_minimal(std::uint64_t m) const {
    return alphabet == nullptr ? static_cast<Symbol>(m) : alphabet[m];
  }

  // Occurrences of the minimal symbol m in the whole text.
  WTMAP_HD std::uint64_t occurrences_minimal(std::uint64_t m) const { return cumulative[m + 1] - cumulative[m]; }
  WTMAP_HD std::uint64_t count(Symbol c) const {
    std::uint64_t m = 0;
    return to_minimal(c, m) ? occurrences_minimal(m) : 0;
  }
};

// Arity 2: binary levels (this header); arity 4: quad-vector levels (quad_wavelet_tree_view.hpp).
template <class Symbol, unsigned Arity = 2>
struct WaveletTreeView;

// A node met on a walk down the binary tree: the minimal symbols [first, last) it covers and its
// number in a binary heap (root 0, children 2h + 1 left and 2h + 2 right). A node of m >= 2
// symbols splits after the largest power of two below m (the reduced codes).
struct BinaryNode {
  std::uint64_t first, last, heap;

  WTMAP_HD std::uint64_t width() const { return last - first; }
  WTMAP_HD std::uint64_t split() const { return first + bits::split_size(width()); }
  WTMAP_HD void descend(bool right) {
    const std::uint64_t mid = split();
    if (right) {
      first = mid;
      heap = 2 * heap + 2;
    } else {
      last = mid;
      heap = 2 * heap + 1;
    }
  }
};

template <class Symbol>
struct WaveletTreeView<Symbol, 2> : WaveletTreeCommon<Symbol> {
  static constexpr unsigned kMaxLevels = 8 * sizeof(Symbol);
  using WaveletTreeCommon<Symbol>::sigma;
  using WaveletTreeCommon<Symbol>::to_minimal;
  using WaveletTreeCommon<Symbol>::from_minimal;

  RankSelectView levels[kMaxLevels];
  const std::uint64_t* node_start = nullptr;   // per heap node: its first position in its level
  const std::uint64_t* node_rank0 = nullptr;   // per heap node: rank0 of its level at node_start

  // Ones before the node-relative position i of node h at level l.
  WTMAP_HD std::uint64_t ones_in_node(unsigned l, std::uint64_t h, std::uint64_t i) const {
    const std::uint64_t start = node_start[h];
    return levels[l].rank1(start + i) - (start - node_rank0[h]);
  }

  // Symbol at position i, i in [0, n) (thesis Alg. 5, with the fused access+rank and the early
  // stop at nodes of two symbols).
  WTMAP_HD Symbol access(std::uint64_t i) const {
    BinaryNode node{0, sigma, 0};
    for (unsigned l = 0;; ++l) {
      if (node.width() <= 1) return from_minimal(node.first);
      const RankSelectView& level = levels[l];
      const std::uint64_t start = node_start[node.heap];
      if (node.width() == 2) return from_minimal(node.first + (level.access(start + i) ? 1 : 0));
      const RankSelectView::RankAndBit rb = level.rank1_and_bit(start + i);
      const std::uint64_t ones_before = rb.rank1 - (start - node_rank0[node.heap]);
      i = rb.bit ? ones_before : i - ones_before;
      node.descend(rb.bit);
    }
  }

  struct SymbolRank {
    Symbol symbol;
    std::uint64_t rank;  // occurrences of `symbol` before the queried position
  };

  // T[i] and rank(T[i], i) in one traversal, i in [0, n): the LF step of an FM-index. Access
  // already maps i to the node-relative position on its way down; at the leaf that position is
  // the rank. Unlike access it cannot stop at a node of two symbols: the last level's rank is
  // the answer.
  WTMAP_HD SymbolRank access_rank(std::uint64_t i) const {
    BinaryNode node{0, sigma, 0};
    for (unsigned l = 0; node.width() > 1; ++l) {
      const std::uint64_t start = node_start[node.heap];
      const RankSelectView::RankAndBit rb = levels[l].rank1_and_bit(start + i);
      const std::uint64_t ones_before = rb.rank1 - (start - node_rank0[node.heap]);
      i = rb.bit ? ones_before : i - ones_before;
      node.descend(rb.bit);
    }
    return {from_minimal(node.first), i};
  }

  // Occurrences of c in [0, i), i in [0, n]; 0 for symbols outside the alphabet (thesis Alg. 6).
  WTMAP_HD std::uint64_t rank(Symbol c, std::uint64_t i) const {
    std::uint64_t m = 0;
    if (!to_minimal(c, m)) return 0;
    BinaryNode node{0, sigma, 0};
    for (unsigned l = 0; node.width() > 1; ++l) {
      const bool right = m >= node.split();
      const std::uint64_t ones_before = ones_in_node(l, node.heap, i);
      i = right ? ones_before : i - ones_before;
      node.descend(right);
    }
    return i;
  }

  // Position of the k-th occurrence (k >= 1) of c; requires 1 <= k <= count(c) (thesis Alg. 7).
  // The path is found top-down from the symbol alone (no memory reads), then climbed with one
  // binary select per level.
  WTMAP_HD std::uint64_t select(Symbol c, std::uint64_t k) const {
    std::uint64_t m = 0;
    to_minimal(c, m);
    BinaryNode node{0, sigma, 0};
    unsigned depth = 0;
    for (; node.width() > 1; ++depth) node.descend(m >= node.split());
    std::uint64_t h = node.heap;  // the (virtual) leaf; climb to the root
    while (depth > 0) {
      --depth;
      const bool right = (h & 1) == 0;
      h = (h - 1) / 2;
      const std::uint64_t start = node_start[h];
      const std::uint64_t rank0_start = node_rank0[h];
      const std::uint64_t pos = right ? levels[depth].select1((start - rank0_start) + k)
                                      : levels[depth].select0(rank0_start + k);
      k = pos - start + 1;
    }
    return k - 1;
  }
};

// ---- Construction steps shared by both backends --------------------------------------------

// The reduced code of minimal symbol m as a left-aligned num_levels-bit value, and its length.
struct SymbolCode {
  std::uint64_t code;
  unsigned length;
};
WTMAP_HD SymbolCode encode_symbol(std::uint64_t m, std::uint64_t sigma, unsigned num_levels) {
  BinaryNode node{0, sigma, 0};
  std::uint64_t code = 0;
  unsigned l = 0;
  for (; node.width() > 1; ++l) {
    const bool right = m >= node.split();
    if (right) code |= std::uint64_t{1} << (num_levels - 1 - l);
    node.descend(right);
  }
  return {code, l};
}

// Symbol range [first, last) of heap node h; empty (first == last) if h is not an internal node.
struct NodeRange {
  std::uint64_t first, last;
  unsigned depth;
};
WTMAP_HD NodeRange node_range(std::uint64_t h, std::uint64_t sigma) {
  const std::uint64_t path = h + 1;  // a leading 1, then one bit per level: 0 left, 1 right
  const unsigned depth = 63u - static_cast<unsigned>(bits::count_leading_zeros64(path));
  BinaryNode node{0, sigma, 0};
  for (int l = static_cast<int>(depth) - 1; l >= 0; --l) {
    if (node.width() <= 1) return {node.first, node.first, depth};
    node.descend((path >> l) & 1);
  }
  if (node.width() <= 1) return {node.first, node.first, depth};
  return {node.first, node.last, depth};
}

// One 32-bit word of a level: bit `bit` of the codes codes[32w .. 32w + 31] below `count`.
template <class Code>
WTMAP_HD std::uint32_t pack_level_word(const Code* codes, std::uint64_t count, unsigned bit, std::uint64_t w) {
  std::uint32_t word = 0;
  const std::uint64_t first = w * 32;
  const unsigned valid = count - first >= 32 ? 32u : static_cast<unsigned>(count - first);
  for (unsigned j = 0; j < valid; ++j) word |= static_cast<std::uint32_t>((codes[first + j] >> bit) & 1u) << j;
  return word;
}

}  // namespace wtmap
