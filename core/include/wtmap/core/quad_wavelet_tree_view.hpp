// wtmap core: the 4-ary level-wise wavelet tree, whose levels are quad vectors, as a trivially
// copyable view with __host__ __device__ access, rank, select, rank_all and access_rank.
//
// Ceregini, Kurpicz and Venturini, "Faster wavelet trees with quad vectors" (DCC 2023): each level
// consumes two bits of the (minimal) symbol, so a tree over sigma symbols has ceil(log4 sigma)
// levels -- one for DNA, four for bytes -- and each level step costs one quad-vector rank, i.e.
// one 64-byte block. Node starts come from the cumulative histogram as in the binary tree
// (thesis sec. 5); the ranks of the four digits at every node start are precomputed.
// Alphabets that are not powers of four use plain binary codes padded to whole digits (no
// reduced codes): nodes above absent symbols simply have fewer children.
//
// Space: 2 * ceil(log4 sigma) bits per symbol + the quad-vector overheads (quad_vector_view.hpp)
// + sigma + 1 words of histogram + 4 words per internal node. Queries: O(log4 sigma) block reads
// for access, rank and access_rank; select O(log4 sigma) quad-vector selects, bottom-up.
#pragma once

#include <cstdint>

#include "wtmap/core/quad_vector_view.hpp"
#include "wtmap/core/wavelet_tree_view.hpp"

namespace wtmap {

// Internal nodes are numbered as in a 4-ary heap: root 0, children 4h + 1 + digit.
template <class Symbol>
struct WaveletTreeView<Symbol, 4> : WaveletTreeCommon<Symbol> {
  static constexpr unsigned kMaxLevels = 4 * sizeof(Symbol);
  using WaveletTreeCommon<Symbol>::sigma;
  using WaveletTreeCommon<Symbol>::num_levels;
  using WaveletTreeCommon<Symbol>::cumulative;
  using WaveletTreeCommon<Symbol>::to_minimal;
  using WaveletTreeCommon<Symbol>::from_minimal;

  QuadVectorView levels[kMaxLevels];
  const std::uint64_t* node_rank = nullptr;  // [4h + d]: rank of digit d in node h's level at its start

  // Bits of the minimal symbol below level l's digit.
  WTMAP_HD unsigned shift(unsigned l) const { return 2 * (num_levels - 1 - l); }
  WTMAP_HD unsigned digit(std::uint64_t m, unsigned l) const { return static_cast<unsigned>(m >> shift(l)) & 3u; }
  // First position in its level of the node whose first symbol is s (s may lie past sigma).
  WTMAP_HD std::uint64_t node_start(std::uint64_t s) const { return cumulative[s < sigma ? s : sigma]; }

  struct SymbolRank {
    Symbol symbol;
    std::uint64_t rank;  // occurrences of `symbol` before the queried position
  };

  // T[i] and rank(T[i], i) in one traversal: the LF step of backward search and locate.
  WTMAP_HD SymbolRank access_rank(std::uint64_t i) const {
    std::uint64_t s = 0, h = 0;
    for (unsigned l = 0; l < num_levels; ++l) {
      const QuadVectorView::SymbolRank r = levels[l].access_rank(node_start(s) + i);
      i = r.rank - node_rank[4 * h + r.symbol];
      s += std::uint64_t{r.symbol} << shift(l);
      h = 4 * h + 1 + r.symbol;
    }
    return {from_minimal(s), i};
  }

  // Symbol at position i, i in [0, n); the last level needs the digit only.
  WTMAP_HD Symbol access(std::uint64_t i) const {
    std::uint64_t s = 0, h = 0;
    for (unsigned l = 0; l + 1 < num_levels; ++l) {
      const QuadVectorView::SymbolRank r = levels[l].access_rank(node_start(s) + i);
      i = r.rank - node_rank[4 * h + r.symbol];
      s += std::uint64_t{r.symbol} << shift(l);
      h = 4 * h + 1 + r.symbol;
    }
    if (num_levels > 0) s += levels[num_levels - 1].access(node_start(s) + i);
    return from_minimal(s);
  }

  // Occurrences of c in [0, i), i in [0, n]; 0 for symbols outside the alphabet.
  WTMAP_HD std::uint64_t rank(Symbol c, std::uint64_t i) const {
    std::uint64_t m = 0;
    if (!to_minimal(c, m)) return 0;
    std::uint64_t s = 0, h = 0;
    for (unsigned l = 0; l < num_levels; ++l) {
      const unsigned d = digit(m, l);
      i = levels[l].rank(d, node_start(s) + i) - node_rank[4 * h + d];
      s += std::uint64_t{d} << shift(l);
      h = 4 * h + 1 + d;
    }
    return i;
  }

  // Occurrences of each minimal symbol 0..3 in [0, i), for trees over at most four symbols (one
  // level, as DNA): what k-mismatch and bidirectional search consume at every step.
  WTMAP_HD void rank_all(std::uint64_t i, std::uint64_t out[4]) const {
    if (num_levels == 0) {
      out[0] = i;
      out[1] = out[2] = out[3] = 0;
      return;
    }
    levels[0].rank_all(i, out);
  }

  // rank_all(i) and rank_all(j) together: the two ends of an SA interval, on the CPU one block
  // read when both fall in the same block (QuadVectorView::rank_all_pair). Same trees as rank_all.
  WTMAP_HD void rank_all_pair(std::uint64_t i, std::uint64_t j, std::uint64_t out_i[4], std::uint64_t out_j[4]) const {
    if (num_levels == 0) {
      rank_all(i, out_i);
      rank_all(j, out_j);
      return;
    }
    levels[0].rank_all_pair(i, j, out_i, out_j);
  }

  // Position of the k-th occurrence (k >= 1) of c; requires 1 <= k <= count(c).
  WTMAP_HD std::uint64_t select(Symbol c, std::uint64_t k) const {
    std::uint64_t m = 0;
    to_minimal(c, m);
    std::uint64_t h = 0;
    for (unsigned l = 0; l < num_levels; ++l) h = 4 * h + 1 + digit(m, l);
    for (unsigned l = num_levels; l-- > 0;) {
      const unsigned d = digit(m, l);
      h = (h - 1) / 4;
      const std::uint64_t first_symbol = (m >> (shift(l) + 2)) << (shift(l) + 2);
      const std::uint64_t start = node_start(first_symbol);
      k = levels[l].select(d, node_rank[4 * h + d] + k) - start + 1;
    }
    return k - 1;
  }
};

// ---- Construction steps shared by both backends --------------------------------------------

// First symbol and depth of 4-ary heap node h in a tree of num_levels levels.
struct QuadNode {
  std::uint64_t first_symbol;
  unsigned depth;
};
WTMAP_HD QuadNode quad_node(std::uint64_t h, unsigned num_levels) {
  std::uint64_t prefix = 0, scale = 1;
  unsigned depth = 0;
  for (; h > 0; h = (h - 1) / 4, ++depth, scale *= 4) prefix += ((h - 1) % 4) * scale;
  return {prefix << (2 * (num_levels - depth)), depth};
}

template <class Symbol>
WTMAP_HD void quad_node_table_entry(const WaveletTreeView<Symbol, 4>& v, std::uint64_t h, std::uint64_t* node_rank) {
  const QuadNode node = quad_node(h, v.num_levels);
  const std::uint64_t start = v.node_start(node.first_symbol);
  for (unsigned d = 0; d < 4; ++d) node_rank[4 * h + d] = v.levels[node.depth].rank(d, start);
}

}  // namespace wtmap
