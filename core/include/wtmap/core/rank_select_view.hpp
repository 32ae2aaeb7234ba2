// wtmap core: the rank/select bit vector as a trivially copyable view, and the query and
// construction steps every backend calls (__host__ __device__, one code for CPU and GPU).
//
// Space: n bits + 32 bytes per 6,144 bits of counts (4.17 %) + 8 bytes per 4,096 ones and per
// 4,096 zeros of select samples (1.56 %). Queries: rank and access O(1), touching one 32-byte
// count sector and at most 64 bytes of bits; select O(log(gap between samples)).
//
// Based on the wide-popcount rank structure (Kurpicz, "Engineering compact data structures for
// rank and select queries on bit vectors", SPIRE 2022) as adapted to GPUs by the thesis (sec. 4).
// Unlike the thesis, which keeps L1 counts, L2 counts and bits in three arrays (three cache lines
// per rank), the counts are interleaved: each 32-byte RankRecord -- one GPU memory sector -- holds
// the absolute count before its first 512-bit block and 16-bit counts for 12 blocks, so a rank
// reads one sector of counts and one 32-byte half of a block's bits (counting forward from the
// block's count or back from the next one's).
#pragma once

#include <cstdint>

#include "wtmap/core/bits.hpp"
#include "wtmap/core/config.hpp"

namespace wtmap {

// Fixed layout parameters (the "policy"); changing them changes the serialized format.
struct RankSelectLayout {
  static constexpr unsigned kBlockBits = 512;            // L2 block: 8 64-bit words
  static constexpr unsigned kBlockShift = 9;
  static constexpr unsigned kWordsPerBlock = kBlockBits / 64;
  static constexpr unsigned kBlocksPerRecord = 12;       // 8 + 12 * 2 = 32 bytes per record
  static constexpr unsigned kRecordBits = kBlockBits * kBlocksPerRecord;
  static constexpr unsigned kSampleRate = 4096;          // select samples: every 4096th one/zero
  static constexpr unsigned kSampleShift = 12;
  static constexpr unsigned kAlignment = 128;            // every array starts on a cache line

  static WTMAP_HD std::uint64_t num_blocks(std::uint64_t n) { return (n >> kBlockShift) + 1; }
  static WTMAP_HD std::uint64_t num_records(std::uint64_t n) {
    return bits::ceil_div<std::uint64_t>(num_blocks(n), kBlocksPerRecord);
  }
  static WTMAP_HD std::uint64_t num_words32(std::uint64_t n) { return bits::ceil_div<std::uint64_t>(n, 32); }
  // Upper bound on ceil(ones/K) + ceil(zeros/K) for any content.
  static WTMAP_HD std::uint64_t sample_capacity(std::uint64_t n) { return (n >> kSampleShift) + 2; }

  // Byte sizes of the three arrays, each rounded up to kAlignment.
  static WTMAP_HD std::uint64_t bits_bytes(std::uint64_t n) { return bits::round_up(num_words32(n) * 4, kAlignment); }
  static WTMAP_HD std::uint64_t records_bytes(std::uint64_t n) { return bits::round_up(num_records(n) * 32, kAlignment); }
  static WTMAP_HD std::uint64_t samples_bytes(std::uint64_t n) { return bits::round_up(sample_capacity(n) * 8, kAlignment); }
  static WTMAP_HD std::uint64_t total_bytes(std::uint64_t n) { return bits_bytes(n) + records_bytes(n) + samples_bytes(n); }
};

// Counts for 12 consecutive 512-bit blocks in one 32-byte sector.
struct alignas(32) RankRecord {
  std::uint64_t base;          // ones before the record's first block
  std::uint16_t relative[12];  // ones from the record's first block to block j (relative[0] == 0)
};
static_assert(sizeof(RankRecord) == 32, "a RankRecord must be one 32-byte sector");

// Read-only view of one bit vector with rank and select support. Trivially copyable: pass it by
// value into kernels. All pointers refer to memory of the backend that owns the vector.
//
// Definitions (as SDSL): rank1(i) = ones in [0, i) for i in [0, n]; select1(k) = position of the
// k-th one, k in [1, ones]; likewise for zeros.
struct RankSelectView {
  const std::uint64_t* words = nullptr;   // bits, LSB first; padded with zeros to 128 bytes
  const RankRecord* records = nullptr;
  const std::uint64_t* samples = nullptr; // one-samples, then zero-samples; null while building
  std::uint64_t size = 0;                 // n, in bits
  std::uint64_t ones = 0;

  using L = RankSelectLayout;

  WTMAP_HD std::uint64_t zeros() const { return size - ones; }
  WTMAP_HD std::uint64_t num_one_samples() const { return bits::ceil_div<std::uint64_t>(ones, L::kSampleRate); }
  WTMAP_HD std::uint64_t num_zero_samples() const { return bits::ceil_div<std::uint64_t>(zeros(), L::kSampleRate); }

  WTMAP_HD bool access(std::uint64_t i) const { return (words[i >> 6] >> (i & 63)) & 1u; }

  // Ones before block b: the only count lookup of a rank.
  WTMAP_HD std::uint64_t ones_before_block(std::uint64_t b) const {
    const RankRecord& r = records[b / L::kBlocksPerRecord];
    return r.base + r.relative[b % L::kBlocksPerRecord];
  }

  // rank1 together with the bit at i (when i < n): the fused access+rank of the thesis (5.2.1).
  struct RankAndBit {
    std::uint64_t rank1;
    bool bit;
  };
  WTMAP_HD RankAndBit rank1_and_bit(std::uint64_t i) const {
    const std::uint64_t b = i >> L::kBlockShift;
    const std::uint64_t* w = words + b * L::kWordsPerBlock;
    const unsigned full = static_cast<unsigned>((i >> 6) & (L::kWordsPerBlock - 1));
    const unsigned slot = static_cast<unsigned>(b % L::kBlocksPerRecord);
    const unsigned offset = static_cast<unsigned>(i & 63);
    // In the upper half of a block, count back from the next block's count (same record sector)
    // so that only the upper 32-byte sector of bits is read: two sectors per rank, not three.
    if (full >= L::kWordsPerBlock / 2 && slot + 1 < L::kBlocksPerRecord && b < (size >> L::kBlockShift)) {
      const RankRecord& r = records[b / L::kBlocksPerRecord];
      const std::uint64_t first = w[full];
      unsigned tail = static_cast<unsigned>(bits::popcount64(first >> offset));
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (unsigned k = L::kWordsPerBlock / 2; k < L::kWordsPerBlock; ++k) {
        if (k > full) tail += static_cast<unsigned>(bits::popcount64(w[k]));
      }
      return {r.base + r.relative[slot + 1] - tail, ((first >> offset) & 1u) != 0};
    }
    std::uint64_t result = ones_before_block(b);
    // Predicated, unrolled loads so that all words of the block are requested at once.
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (unsigned k = 0; k < L::kWordsPerBlock - 1; ++k) {
      if (k < full) result += static_cast<unsigned>(bits::popcount64(w[k]));
    }
    bool bit = false;
    if (i < size) {
      const std::uint64_t last = w[full];
      result += static_cast<unsigned>(bits::popcount64(last & bits::low_mask64(offset)));
      bit = (last >> offset) & 1u;
    } else if (offset != 0) {  // i == n inside a word: the word exists, bits past n are zero
      result += static_cast<unsigned>(bits::popcount64(w[full]));
    }
    return {result, bit};
  }

  WTMAP_HD std::uint64_t rank1(std::uint64_t i) const { return rank1_and_bit(i).rank1; }
  WTMAP_HD std::uint64_t rank0(std::uint64_t i) const { return i - rank1(i); }

  WTMAP_HD std::uint64_t select1(std::uint64_t k) const { return select_impl<true>(k); }
  WTMAP_HD std::uint64_t select0(std::uint64_t k) const { return select_impl<false>(k); }

 private:
  // Count of `Bit` values before block b.
  template <bool Bit>
  WTMAP_HD std::uint64_t before_block(std::uint64_t b) const {
    const std::uint64_t o = ones_before_block(b);
    return Bit ? o : (b << L::kBlockShift) - o;
  }

  template <bool Bit>
  WTMAP_HD std::uint64_t select_impl(std::uint64_t k) const {
    const std::uint64_t target = k - 1;  // 0-based index among the Bit values
    const std::uint64_t last_block = size >> L::kBlockShift;
    std::uint64_t lo_block = 0, hi_block = last_block;
    if (samples != nullptr) {  // narrow the search to the blocks between two samples
      const std::uint64_t* s = Bit ? samples : samples + num_one_samples();
      const std::uint64_t count = Bit ? num_one_samples() : num_zero_samples();
      const std::uint64_t j = target >> L::kSampleShift;
      lo_block = s[j] >> L::kBlockShift;
      if (j + 1 < count) hi_block = s[j + 1] >> L::kBlockShift;
    }
    // Binary search over whole records (one sector each) for the last record whose first
    // block starts with at most `target` Bit values before it...
    std::uint64_t lo = lo_block / L::kBlocksPerRecord, hi = hi_block / L::kBlocksPerRecord;
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo + 1) / 2;
      if (before_block<Bit>(mid * L::kBlocksPerRecord) <= target) lo = mid; else hi = mid - 1;
    }
    // ...then a scan of that record's 12 counts, which sit in the same sector.
    std::uint64_t block = lo * L::kBlocksPerRecord;
    const std::uint64_t block_end = (lo + 1) * L::kBlocksPerRecord - 1 < last_block
                                        ? (lo + 1) * L::kBlocksPerRecord - 1 : last_block;
    while (block < block_end && before_block<Bit>(block + 1) <= target) ++block;
    std::uint64_t remaining = target - before_block<Bit>(block);
    const std::uint64_t* w = words + block * L::kWordsPerBlock;
    for (unsigned k2 = 0;; ++k2) {
      const std::uint64_t word = Bit ? w[k2] : ~w[k2];
      const unsigned c = static_cast<unsigned>(bits::popcount64(word));
      if (remaining < c) {
        return (block << L::kBlockShift) + 64u * k2 + bits::select_in_word64(word, static_cast<unsigned>(remaining));
      }
      remaining -= c;
    }
  }
};

// ---- Construction steps (called per record / per sample by both backends) -----------------

// Fills record r's relative counts and returns the ones in its blocks. Blocks past the end of
// the vector get the record's total, so the layout is a pure function of the bits.
WTMAP_HD std::uint64_t build_record_relative(const std::uint64_t* words, std::uint64_t n, std::uint64_t r,
                                             RankRecord& record) {
  using L = RankSelectLayout;
  const std::uint64_t num_words64 = bits::ceil_div<std::uint64_t>(n, 64);
  std::uint64_t total = 0;
  for (unsigned j = 0; j < L::kBlocksPerRecord; ++j) {
    record.relative[j] = static_cast<std::uint16_t>(total);
    const std::uint64_t first = (r * L::kBlocksPerRecord + j) * L::kWordsPerBlock;
    for (unsigned k = 0; k < L::kWordsPerBlock; ++k) {
      if (first + k < num_words64) total += static_cast<unsigned>(bits::popcount64(words[first + k]));
    }
  }
  return total;
}

// Position of sample j of `Bit` values (the (j*K+1)-th one or zero), from a view whose samples
// pointer is still null.
WTMAP_HD std::uint64_t build_select_sample(const RankSelectView& v, bool one, std::uint64_t j) {
  const std::uint64_t k = j * RankSelectLayout::kSampleRate + 1;
  return one ? v.select1(k) : v.select0(k);
}

}  // namespace wtmap
