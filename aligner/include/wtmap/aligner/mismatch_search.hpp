// wtmap aligner: exhaustive k-mismatch backward search of one read, as a __host__ __device__
// function (one GPU thread per read, or one CPU loop iteration).
//
// The search is bwa aln's (Li and Durbin, Bioinformatics 2009) restricted to substitutions
// (bwa aln -o 0): a depth-first backward search over the FM-index of both strands, branching on
// all four bases at every read position with rank_all (two quad-vector blocks per node), pruned
// by bwa's lower bound D[i] on the mismatches needed in read[0, i] (bwt_cal_width). Because the
// index text is closed under reverse complement, D is computed with the same index: extending
// read[j, i] to the right is a backward step of its reverse complement. The passes deepen one
// mismatch at a time (a stratified search, as bowtie's): passes with limits D, D + 1, ... stop at
// their first hit, so the best stratum s is the first limit with one; a last pass with limit
// min(k, s + 1) then collects every hit of strata s and s + 1. So every alignment with at most
// min(k, s + 1) mismatches is found, and a read whose first searched base is wrong no longer
// explores the whole k-mismatch tree before its one-mismatch hit. The explicit stack explores
// the exact branch first. An N in the read matches no base (a mismatch). Work per read is
// capped so repetitive reads cannot stall a batch; such reads are flagged.
#pragma once

#include <cstdint>

#include "wtmap/core/config.hpp"
#include "wtmap/fmindex/fm_index_view.hpp"

namespace wtmap::aligner {

constexpr unsigned kMaxMismatches = 4;
constexpr unsigned kMaxReadLength = 512;
constexpr unsigned kMinReadLength = 10;
constexpr unsigned kHitSlots = 8;         // distinct SA intervals kept per read
constexpr unsigned kStackCapacity = 128;  // pending search nodes per read

// The substitutions of a hit: read positions and the reference base at each.
struct Edits {
  std::uint16_t position[kMaxMismatches];
  std::uint8_t base[kMaxMismatches];
  std::uint8_t count;
};

// All occurrences of one string within min(k, best + 1) mismatches of the read.
struct HitInterval {
  std::uint64_t lo, hi;  // SA rows
  Edits edits;
};

enum SearchFlags : std::uint8_t {
  kTooShort = 1,         // read shorter than kMinReadLength: not searched
  kTooLong = 2,          // read longer than kMaxReadLength: not searched
  kWorkCapped = 4,       // the work cap stopped the search: counts are lower bounds
  kStackOverflow = 8,    // a branch was dropped for lack of stack: counts are lower bounds
  kSlotsOverflow = 16,   // more intervals than kHitSlots: some hits are counted but not kept
};

template <unsigned Slots>
struct BasicSearchResult {
  static constexpr unsigned kSlots = Slots;
  HitInterval slots[Slots];
  std::uint64_t count[kMaxMismatches + 1];  // rows found at each mismatch count
  std::uint32_t num_slots;
  std::uint32_t work;    // search nodes visited
  std::uint8_t flags;
  std::uint8_t best;     // mismatches of the best hits; 0xFF when unmapped

  WTMAP_HD bool mapped() const { return best != 0xFF; }
  WTMAP_HD std::uint64_t best_count() const { return mapped() ? count[best] : 0; }
  WTMAP_HD std::uint64_t second_count() const {
    return mapped() && best < kMaxMismatches ? count[best + 1] : 0;
  }
};
using SearchResult = BasicSearchResult<kHitSlots>;

struct SearchParams {
  std::uint8_t max_mismatches = 4;  // k
  std::uint32_t work_cap = 1u << 16;
};

namespace detail {

struct Node {
  std::uint64_t lo, hi;
  Edits edits;
  std::uint16_t remaining;  // read positions still to match: read[0, remaining)
};

// bwt_cal_width: lower[i] = greedy count of disjoint pieces of read[0, i] absent from the text.
WTMAP_HD void lower_bounds(const fmindex::FmIndexView& index, const std::uint8_t* read, std::uint32_t length,
                           std::uint8_t* lower) {
  std::uint8_t z = 0;
  fmindex::SaInterval iv = index.all();
  for (std::uint32_t i = 0; i < length; ++i) {
    const unsigned c = read[i];
    if (c > 3) {
      iv = {0, 0};
    } else {
      iv = index.extend(iv, 3 - c);  // complement: read[j, i] forward = rc backward
    }
    if (iv.empty()) {
      if (z < 0xFF) ++z;
      iv = index.all();
    }
    lower[i] = z;
  }
}

// One depth-first pass with a fixed mismatch limit. With `first_only` it stops at its first hit
// and returns it in `first`; otherwise it records every hit in `out`. False when no hit was found.
template <unsigned Slots>
WTMAP_HD bool search_pass(const fmindex::FmIndexView& index, const std::uint8_t* read, std::uint32_t length,
                          const std::uint8_t* lower, unsigned limit, bool first_only, std::uint32_t work_cap,
                          BasicSearchResult<Slots>& out, HitInterval& first) {
  Node stack[kStackCapacity];
  unsigned top = 0;
  bool found = false;
  stack[top++] = {0, index.rows, {{0, 0, 0, 0}, {0, 0, 0, 0}, 0}, static_cast<std::uint16_t>(length)};
  while (top > 0) {
    const Node node = stack[--top];
    if (++out.work > work_cap) {
      out.flags |= kWorkCapped;
      return found;
    }
    if (node.remaining == 0) {  // a hit: all occurrences of one string
      found = true;
      if (first_only) {
        first = {node.lo, node.hi, node.edits};
        return true;
      }
      const unsigned mm = node.edits.count;
      out.count[mm] += node.hi - node.lo;
      if (out.num_slots < Slots) {
        out.slots[out.num_slots++] = {node.lo, node.hi, node.edits};
      } else {  // full: a better hit replaces the worst kept one
        out.flags |= kSlotsOverflow;
        unsigned worst = 0;
        for (unsigned s = 1; s < Slots; ++s) {
          if (out.slots[s].edits.count > out.slots[worst].edits.count) worst = s;
        }
        if (out.slots[worst].edits.count > mm) out.slots[worst] = {node.lo, node.hi, node.edits};
      }
      continue;
    }
    const unsigned i = node.remaining - 1u;
    const unsigned base = read[i];
    const unsigned needed_before = i > 0 ? lower[i - 1] : 0u;
    std::uint64_t lo[4], hi[4];
    index.occ_all(node.lo, lo);
    index.occ_all(node.hi, hi);
    // Mismatching children first, so that the exact child is explored first (stack order).
    for (unsigned round = 0; round < 2; ++round) {
      for (unsigned c = 0; c < 4; ++c) {
        const bool mismatch = c != base;
        if (mismatch != (round == 0)) continue;
        const unsigned mm = node.edits.count + (mismatch ? 1u : 0u);
        if (mm + needed_before > limit) continue;
        const std::uint64_t clo = index.C[c] + lo[c], chi = index.C[c] + hi[c];
        if (clo >= chi) continue;
        if (top == kStackCapacity) {
          out.flags |= kStackOverflow;
          continue;
        }
        Node child{clo, chi, node.edits, static_cast<std::uint16_t>(i)};
        if (mismatch) {
          child.edits.position[child.edits.count] = static_cast<std::uint16_t>(i);
          child.edits.base[child.edits.count] = static_cast<std::uint8_t>(c);
          ++child.edits.count;
        }
        stack[top++] = child;
      }
    }
  }
  return found;
}

}  // namespace detail

template <unsigned Slots>
WTMAP_HD void search_read(const fmindex::FmIndexView& index, const std::uint8_t* read, std::uint32_t length,
                          const SearchParams& params, BasicSearchResult<Slots>& out) {
  out.num_slots = 0;
  out.flags = 0;
  out.best = 0xFF;
  out.work = 0;
  for (auto& c : out.count) c = 0;
  if (length < kMinReadLength) {
    out.flags = kTooShort;
    return;
  }
  if (length > kMaxReadLength) {
    out.flags = kTooLong;
    return;
  }
  std::uint8_t lower[kMaxReadLength];
  detail::lower_bounds(index, read, length, lower);
  const unsigned k = params.max_mismatches;
  HitInterval first{};
  for (unsigned limit = lower[length - 1]; limit <= k; ++limit) {
    if (!detail::search_pass(index, read, length, lower, limit, true, params.work_cap, out, first)) {
      if (out.flags & kWorkCapped) return;
      continue;
    }
    // The best stratum is `limit`: collect it and the next one.
    out.best = static_cast<std::uint8_t>(limit);
    detail::search_pass(index, read, length, lower, limit < k ? limit + 1 : k, false, params.work_cap, out, first);
    bool have_best = false;  // a cut-short pass may have missed them all: keep the first one
    for (unsigned s = 0; s < out.num_slots; ++s) have_best = have_best || out.slots[s].edits.count == limit;
    if (!have_best) {
      if (out.num_slots == Slots) --out.num_slots;
      out.slots[out.num_slots++] = first;
      if (out.count[limit] == 0) out.count[limit] = first.hi - first.lo;
    }
    return;
  }
}

}  // namespace wtmap::aligner
