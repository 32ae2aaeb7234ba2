// wtmap core: a quad vector -- a sequence of 2-bit symbols with rank and select for each of the
// four symbols -- as a trivially copyable view with __host__ __device__ queries and build steps.
//
// After Ceregini, Kurpicz and Venturini, "Faster wavelet trees with quad vectors" (DCC 2023),
// laid out for GPU memory sectors: each 64-byte QuadBlock holds 224 symbols (seven 64-bit words)
// and, in its first 8 bytes, the four 16-bit counts of each symbol from the start of its
// superblock (292 blocks = 65,408 symbols) to the block. Superblocks keep four 64-bit absolute
// counts (32 bytes per 65,408 symbols: small enough to stay in the GPU's L2 cache). So a rank of
// any symbol, or of all four at once, reads one 64-byte block -- one or two 32-byte sectors --
// where a binary wavelet tree over DNA pays two levels of count and bit lookups.
//
// Space: 2 bits per symbol + 14.3 % (block counts) + 0.05 % (superblocks) + 8 bytes per 8,192
// occurrences of each symbol (select samples, 0.4 %): 14.7 % in all. Rank and access O(1);
// select O(log(gap between samples)).
#pragma once

#include <cstdint>

#include "wtmap/core/bits.hpp"
#include "wtmap/core/config.hpp"

namespace wtmap {

struct QuadVectorLayout {
  static constexpr unsigned kSymbolsPerWord = 32;
  static constexpr unsigned kWordsPerBlock = 7;
  static constexpr unsigned kSymbolsPerBlock = kSymbolsPerWord * kWordsPerBlock;  // 224
  static constexpr unsigned kBlocksPerSuper = 292;  // 292 * 224 = 65,408 < 2^16
  static constexpr unsigned kSymbolsPerSuper = kSymbolsPerBlock * kBlocksPerSuper;
  static constexpr unsigned kSampleRate = 8192;  // select is off the FM-index's hot path
  static constexpr unsigned kSampleShift = 13;
  static constexpr unsigned kAlignment = 128;

  static WTMAP_HD std::uint64_t num_blocks(std::uint64_t n) { return n / kSymbolsPerBlock + 1; }
  static WTMAP_HD std::uint64_t num_supers(std::uint64_t n) { return n / kSymbolsPerSuper + 1; }
  // Upper bound of the select samples of all four symbols together.
  static WTMAP_HD std::uint64_t sample_capacity(std::uint64_t n) { return (n >> kSampleShift) + 4; }

  static WTMAP_HD std::uint64_t blocks_bytes(std::uint64_t n) { return bits::round_up(num_blocks(n) * 64, kAlignment); }
  static WTMAP_HD std::uint64_t supers_bytes(std::uint64_t n) { return bits::round_up(num_supers(n) * 32, kAlignment); }
  static WTMAP_HD std::uint64_t samples_bytes(std::uint64_t n) { return bits::round_up(sample_capacity(n) * 8, kAlignment); }
  static WTMAP_HD std::uint64_t total_bytes(std::uint64_t n) { return blocks_bytes(n) + supers_bytes(n) + samples_bytes(n); }
};

struct alignas(64) QuadBlock {
  std::uint16_t before[4];  // occurrences of each symbol from the superblock start to this block
  std::uint64_t words[7];   // symbol j of the block: bits 2(j % 32), 2(j % 32) + 1 of words[j / 32]
};
static_assert(sizeof(QuadBlock) == 64, "a QuadBlock is two 32-byte sectors");

namespace quad {

// Bit 2j of the result is set iff symbol j of `word` equals c.
WTMAP_HD std::uint64_t match_mask(std::uint64_t word, unsigned c) {
  constexpr std::uint64_t kLow = 0x5555555555555555ull;
  const std::uint64_t x = ~(word ^ (kLow * c));  // both bits set where the symbol equals c
  return x & (x >> 1) & kLow;
}

// The four symbols' counts at once, by bit planes (symbol c has low bit c & 1, high bit c >> 1):
// `low` counts the 1s and 3s, `high` the 2s and 3s, `both` the 3s. Three popcounts a word for
// all four symbols, where a match mask per symbol takes three with twice the logic around them:
// rank_all on the GPU ran at 20.8 G/s instead of 14.4 G/s (H100, 2^32 symbols;
// bench/history/RESULTS-2026-11-26.md, "DNA rank").
struct PlaneCounts {
  unsigned low = 0, high = 0, both = 0;

  // Adds a word's symbols (those not wanted already masked to 0, which count as symbol 0).
  WTMAP_HD void add(std::uint64_t word) {
    constexpr std::uint64_t kLow = 0x5555555555555555ull;
    const std::uint64_t l = word & kLow, h = (word >> 1) & kLow;
    low += static_cast<unsigned>(bits::popcount64(l));
    high += static_cast<unsigned>(bits::popcount64(h));
    both += static_cast<unsigned>(bits::popcount64(l & h));
  }
  // Occurrences of each symbol among `total` added symbols.
  WTMAP_HD void split(unsigned total, unsigned out[4]) const {
    out[0] = total - low - high + both;
    out[1] = low - both;
    out[2] = high - both;
    out[3] = both;
  }
};

// The bits of word w of a block that hold its symbols before in-block position j.
WTMAP_HD std::uint64_t prefix_mask(unsigned w, unsigned j) {
  return w < j / 32 ? ~std::uint64_t{0} : w == j / 32 ? bits::low_mask64(2 * (j % 32)) : 0;
}

// A block's counts and words, as much of it as a query up to word `last_word` needs, in
// registers (words past those it loads read 0). On the GPU as 16-byte loads: the first sector
// (the counts and words 0-2) in two, the second (words 3-6) in two more only where last_word
// reaches it -- instead of a load per word. Random gathers of 32 and 64 bytes ran at the same
// rate of 16-byte loads (bench_dna_rank: 46.4 G x 2 and 24.4 G x 4 per second on an H100), so
// the number of wide loads, not the bytes, is what a rank costs.
struct BlockRegisters {
  std::uint64_t counts;    // QuadBlock::before, 16 bits per symbol
  std::uint64_t words[7];  // indexed with constants only: a run-time index would put them in local memory

  WTMAP_HD unsigned before(unsigned c) const { return static_cast<unsigned>(counts >> (16 * c)) & 0xFFFFu; }
  // Word w for a run-time w, through constant indices.
  WTMAP_HD std::uint64_t word(unsigned w) const {
    std::uint64_t x = words[0];
    for (unsigned v = 1; v < 7; ++v) x = v == w ? words[v] : x;
    return x;
  }
};

WTMAP_HD BlockRegisters load_block(const QuadBlock& block, unsigned last_word) {
  BlockRegisters r{};
#if defined(__CUDA_ARCH__)
  const auto* halves = reinterpret_cast<const ulonglong2*>(&block);
  const ulonglong2 h0 = halves[0], h1 = halves[1];
  r.counts = h0.x;
  r.words[0] = h0.y;
  r.words[1] = h1.x;
  r.words[2] = h1.y;
  if (last_word >= 3) {
    const ulonglong2 h2 = halves[2], h3 = halves[3];
    r.words[3] = h2.x;
    r.words[4] = h2.y;
    r.words[5] = h3.x;
    r.words[6] = h3.y;
  }
#else
  r.counts = std::uint64_t{block.before[0]} | std::uint64_t{block.before[1]} << 16 | std::uint64_t{block.before[2]} << 32 |
             std::uint64_t{block.before[3]} << 48;
  for (unsigned w = 0; w <= last_word && w < 7; ++w) r.words[w] = block.words[w];
#endif
  return r;
}

}  // namespace quad

// Read-only view of a quad vector. rank(c, i) = occurrences of c in [0, i), i in [0, n];
// select(c, k) = position of the k-th occurrence of c, k in [1, count(c)].
struct QuadVectorView {
  const QuadBlock* blocks = nullptr;
  const std::uint64_t* supers = nullptr;   // 4 counts per superblock
  const std::uint64_t* samples = nullptr;  // per symbol, every 8,192nd occurrence; null while building
  std::uint64_t size = 0;
  std::uint64_t totals[4] = {0, 0, 0, 0};

  using L = QuadVectorLayout;

  WTMAP_HD std::uint64_t count(unsigned c) const { return totals[c]; }
  WTMAP_HD std::uint64_t num_samples(unsigned c) const { return bits::ceil_div<std::uint64_t>(totals[c], L::kSampleRate); }
  WTMAP_HD std::uint64_t sample_offset(unsigned c) const {
    std::uint64_t offset = 0;
    for (unsigned d = 0; d < c; ++d) offset += num_samples(d);
    return offset;
  }

  WTMAP_HD unsigned access(std::uint64_t i) const {
    const QuadBlock& b = blocks[i / L::kSymbolsPerBlock];
    const unsigned j = static_cast<unsigned>(i % L::kSymbolsPerBlock);
    return static_cast<unsigned>(b.words[j / 32] >> (2 * (j % 32))) & 3u;
  }

  // Occurrences of c before block b.
  WTMAP_HD std::uint64_t before_block(unsigned c, std::uint64_t b) const {
    return supers[(b / L::kBlocksPerSuper) * 4 + c] + blocks[b].before[c];
  }
  // The same from block b's loaded counts.
  WTMAP_HD std::uint64_t before_block(unsigned c, std::uint64_t b, const quad::BlockRegisters& block) const {
    return supers[(b / L::kBlocksPerSuper) * 4 + c] + block.before(c);
  }

  WTMAP_HD std::uint64_t rank(unsigned c, std::uint64_t i) const {
    const std::uint64_t b = i / L::kSymbolsPerBlock;
    const unsigned j = static_cast<unsigned>(i % L::kSymbolsPerBlock);
    const quad::BlockRegisters block = quad::load_block(blocks[b], j / 32);
    return before_block(c, b, block) + count_in_block(block, c, j);
  }

  // Asks the CPU's caches for what rank_all(i) reads (its block and superblock), so that a loop
  // over several independent searches overlaps their cache misses (a no-op on the GPU).
  WTMAP_HD void prefetch_rank(std::uint64_t i) const {
#if !defined(__CUDA_ARCH__)
    const std::uint64_t b = i / L::kSymbolsPerBlock;
    __builtin_prefetch(blocks + b);
    __builtin_prefetch(supers + (b / L::kBlocksPerSuper) * 4);
#else
    (void)i;
#endif
  }

  // Occurrences of each of the four symbols in [0, i), from one block: the whole words before
  // position j by bit planes, then the word of j masked.
  WTMAP_HD void rank_all(std::uint64_t i, std::uint64_t out[4]) const {
    const std::uint64_t b = i / L::kSymbolsPerBlock;
    const unsigned j = static_cast<unsigned>(i % L::kSymbolsPerBlock);
    // One load per word here, not quad::load_block: the wide loads gave rank_all nothing, and
    // the aligner's search kernel, whose time follows how many warps its registers let an SM
    // run rather than its loads, took more registers with them and its GPU stage 14 % longer
    // (bench/history/RESULTS-2026-11-26.md, "DNA rank").
    const QuadBlock& block = blocks[b];
    const std::uint64_t* super = supers + (b / L::kBlocksPerSuper) * 4;
    const unsigned last = j / 32;
    quad::PlaneCounts planes;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (unsigned w = 0; w + 1 < L::kWordsPerBlock; ++w) {  // predicated, so all loads issue at once
      if (w < last) planes.add(block.words[w]);
    }
    planes.add(block.words[last] & bits::low_mask64(2 * (j % 32)));
    unsigned in_block[4];
    planes.split(j, in_block);
    for (unsigned c = 0; c < 4; ++c) out[c] = super[c] + block.before[c] + in_block[c];
  }

  // rank(c, i) and rank(c, j) together. Deep in a backward search an SA interval is narrow, so
  // both of its ends usually fall in one block: that block is then read once, in one pass.
  WTMAP_HD void rank_pair(unsigned c, std::uint64_t i, std::uint64_t j, std::uint64_t& rank_i, std::uint64_t& rank_j) const {
    const std::uint64_t b = i / L::kSymbolsPerBlock;
    if (j / L::kSymbolsPerBlock != b) {
      rank_i = rank(c, i);
      rank_j = rank(c, j);
      return;
    }
    const unsigned ji = static_cast<unsigned>(i % L::kSymbolsPerBlock), jj = static_cast<unsigned>(j % L::kSymbolsPerBlock);
    const unsigned last = (ji > jj ? ji : jj) / 32;
    const quad::BlockRegisters block = quad::load_block(blocks[b], last);
    unsigned in_i = 0, in_j = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (unsigned w = 0; w < L::kWordsPerBlock; ++w) {
      if (w <= last) {
        const std::uint64_t m = quad::match_mask(block.words[w], c);
        in_i += static_cast<unsigned>(bits::popcount64(m & quad::prefix_mask(w, ji)));
        in_j += static_cast<unsigned>(bits::popcount64(m & quad::prefix_mask(w, jj)));
      }
    }
    const std::uint64_t before = before_block(c, b, block);
    rank_i = before + in_i;
    rank_j = before + in_j;
  }

  // rank_all(i) and rank_all(j) together. On the CPU, where i <= j fall in one block (deep in a
  // backward search an interval is narrow, most often one row): rank_all(i), then the counts of
  // the symbols in [i, j) added, from the words between them (one, mostly) -- where one pass over
  // the block up to j for both ends counted every word twice. On the GPU, two rank_all calls
  // whatever the blocks: there the shared block's second read hits L1, while a branch between the
  // two paths splits the warps of the aligner's search, whose threads hold intervals of all widths
  // (its search stage 15 % shorter; bench/history/RESULTS-2026-11-26.md).
  WTMAP_HD void rank_all_pair(std::uint64_t i, std::uint64_t j, std::uint64_t out_i[4], std::uint64_t out_j[4]) const {
    rank_all(i, out_i);
#if defined(__CUDA_ARCH__)
    rank_all(j, out_j);
#else
    if (j < i || j / L::kSymbolsPerBlock != i / L::kSymbolsPerBlock) {
      rank_all(j, out_j);
      return;
    }
    const QuadBlock& block = blocks[i / L::kSymbolsPerBlock];
    const unsigned ji = static_cast<unsigned>(i % L::kSymbolsPerBlock), jj = static_cast<unsigned>(j % L::kSymbolsPerBlock);
    quad::PlaneCounts planes;
    for (unsigned w = ji / 32; 32 * w < jj; ++w) {  // the words holding [ji, jj)
      const unsigned from = ji > 32 * w ? ji - 32 * w : 0, to = jj < 32 * w + 32 ? jj - 32 * w : 32;
      planes.add(block.words[w] & bits::low_mask64(2 * to) & ~bits::low_mask64(2 * from));
    }
    unsigned between[4];
    planes.split(jj - ji, between);
    for (unsigned c = 0; c < 4; ++c) out_j[c] = out_i[c] + between[c];
#endif
  }

  // The symbol at i and its rank before i, from one block: the LF step of backward search.
  struct SymbolRank {
    unsigned symbol;
    std::uint64_t rank;
  };
  WTMAP_HD SymbolRank access_rank(std::uint64_t i) const {
    const std::uint64_t b = i / L::kSymbolsPerBlock;
    const unsigned j = static_cast<unsigned>(i % L::kSymbolsPerBlock);
    const quad::BlockRegisters block = quad::load_block(blocks[b], j / 32);
    const unsigned c = static_cast<unsigned>(block.word(j / 32) >> (2 * (j % 32))) & 3u;
    return {c, before_block(c, b, block) + count_in_block(block, c, j)};
  }

  WTMAP_HD std::uint64_t select(unsigned c, std::uint64_t k) const {
    const std::uint64_t target = k - 1;  // 0-based occurrence index
    std::uint64_t lo = 0, hi = size / L::kSymbolsPerBlock;
    if (samples != nullptr) {
      const std::uint64_t* s = samples + sample_offset(c);
      const std::uint64_t j = target >> L::kSampleShift;
      lo = s[j] / L::kSymbolsPerBlock;
      if (j + 1 < num_samples(c)) hi = s[j + 1] / L::kSymbolsPerBlock;
    }
    while (lo < hi) {  // last block with at most `target` occurrences before it
      const std::uint64_t mid = lo + (hi - lo + 1) / 2;
      if (before_block(c, mid) <= target) lo = mid; else hi = mid - 1;
    }
    std::uint64_t remaining = target - before_block(c, lo);
    const QuadBlock& block = blocks[lo];
    for (unsigned w = 0;; ++w) {
      const std::uint64_t m = quad::match_mask(block.words[w], c);
      const unsigned n_in_word = static_cast<unsigned>(bits::popcount64(m));
      if (remaining < n_in_word) {
        return lo * L::kSymbolsPerBlock + 32u * w + bits::select_in_word64(m, static_cast<unsigned>(remaining)) / 2;
      }
      remaining -= n_in_word;
    }
  }

 private:
  // Occurrences of c among the first j symbols of a block (loaded up to word j / 32 at least).
  static WTMAP_HD unsigned count_in_block(const quad::BlockRegisters& block, unsigned c, unsigned j) {
    unsigned result = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (unsigned w = 0; w < L::kWordsPerBlock; ++w) {
      if (w <= j / 32) {
        const unsigned take = w < j / 32 ? 32u : j % 32;
        result += static_cast<unsigned>(bits::popcount64(quad::match_mask(block.words[w], c) & bits::low_mask64(2 * take)));
      }
    }
    return result;
  }
};

// ---- Construction steps (both backends) -------------------------------------------------------

// Word w of the vector: digits (code >> shift) & 3 of codes[32w .. 32w + 31] below `count`.
// Padding symbols past `count` are zero bits but never counted (counts stop at n).
template <class Code>
WTMAP_HD std::uint64_t pack_quad_word(const Code* codes, std::uint64_t count, unsigned shift, std::uint64_t w) {
  std::uint64_t word = 0;
  const std::uint64_t first = w * 32;
  const unsigned valid = count - first >= 32 ? 32u : static_cast<unsigned>(count - first);
  for (unsigned j = 0; j < valid; ++j) word |= static_cast<std::uint64_t>((codes[first + j] >> shift) & 3u) << (2 * j);
  return word;
}

// Fills the block counts of superblock s (relative to the superblock) and returns its totals.
WTMAP_HD void build_quad_superblock(QuadBlock* blocks, std::uint64_t n, std::uint64_t s, std::uint64_t totals[4]) {
  using L = QuadVectorLayout;
  const std::uint64_t first = s * L::kBlocksPerSuper;
  const std::uint64_t last = L::num_blocks(n);
  unsigned running[4] = {0, 0, 0, 0};
  for (std::uint64_t b = first; b < first + L::kBlocksPerSuper && b < last; ++b) {
    for (unsigned c = 0; c < 4; ++c) blocks[b].before[c] = static_cast<std::uint16_t>(running[c]);
    const std::uint64_t block_start = b * L::kSymbolsPerBlock;
    const unsigned in_block = n - block_start >= L::kSymbolsPerBlock ? L::kSymbolsPerBlock : static_cast<unsigned>(n - block_start);
    quad::PlaneCounts planes;
    for (unsigned w = 0; w * 32 < in_block; ++w) {
      const unsigned take = in_block - w * 32 >= 32 ? 32u : in_block - w * 32;
      planes.add(blocks[b].words[w] & bits::low_mask64(2 * take));
    }
    unsigned counted[4];
    planes.split(in_block, counted);
    for (unsigned c = 0; c < 4; ++c) running[c] += counted[c];
  }
  for (unsigned c = 0; c < 4; ++c) totals[c] = running[c];
}

// Sample j over all symbols: the (j'*K+1)-th occurrence of the symbol whose samples hold j.
WTMAP_HD std::uint64_t build_quad_sample(const QuadVectorView& v, std::uint64_t j) {
  unsigned c = 0;
  while (j >= v.num_samples(c)) j -= v.num_samples(c++);
  return v.select(c, j * QuadVectorLayout::kSampleRate + 1);
}

}  // namespace wtmap
