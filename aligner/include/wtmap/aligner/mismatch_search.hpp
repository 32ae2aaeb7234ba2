// wtmap aligner: exhaustive k-mismatch backward search of one read, as a __host__ __device__
// function (one GPU thread per read, or one CPU loop iteration).
//
// The search is bwa aln's (Li and Durbin, Bioinformatics 2009) restricted to substitutions
// (bwa aln -o 0): a depth-first backward search over the FM-index of both strands, branching on
// all four bases at every read position with rank_all (two quad-vector blocks per node), pruned
// by bwa's lower bound D[i] on the mismatches needed in read[0, i] (bwt_cal_width). Because the
// index text is closed under reverse complement, D is computed with the same index: extending
// read[j, i] to the right is a backward step of its reverse complement. The explicit stack
// explores the exact branch first; once a best stratum s is known, paths with more than s + 1
// mismatches are cut, so the best stratum and the next one are complete: every alignment with
// at most min(k, s + 1) mismatches is found. An N in the read matches no base (a mismatch).
// Work per read is capped so repetitive reads cannot stall a batch; such reads are flagged.
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

struct SearchResult {
  HitInterval slots[kHitSlots];
  std::uint64_t count[kMaxMismatches + 1];  // rows found at each mismatch count
  std::uint8_t num_slots;
  std::uint8_t flags;
  std::uint8_t best;     // mismatches of the best hits; 0xFF when unmapped
  std::uint32_t work;    // search nodes visited

  WTMAP_HD bool mapped() const { return best != 0xFF; }
  WTMAP_HD std::uint64_t best_count() const { return mapped() ? count[best] : 0; }
  WTMAP_HD std::uint64_t second_count() const {
    return mapped() && best < kMaxMismatches ? count[best + 1] : 0;
  }
};

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

}  // namespace detail

WTMAP_HD void search_read(const fmindex::FmIndexView& index, const std::uint8_t* read, std::uint32_t length,
                          const SearchParams& params, SearchResult& out) {
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
  unsigned max_mm = params.max_mismatches;
  if (lower[length - 1] > max_mm) return;

  detail::Node stack[kStackCapacity];
  unsigned top = 0;
  stack[top++] = {0, index.rows, {{0, 0, 0, 0}, {0, 0, 0, 0}, 0}, static_cast<std::uint16_t>(length)};
  while (top > 0) {
    const detail::Node node = stack[--top];
    const unsigned still_needed = node.remaining > 0 ? lower[node.remaining - 1] : 0u;
    if (node.edits.count + still_needed > max_mm) continue;  // the bound tightened since the push
    if (++out.work > params.work_cap) {
      out.flags |= kWorkCapped;
      break;
    }
    if (node.remaining == 0) {  // a hit: all occurrences of one string
      const unsigned mm = node.edits.count;
      out.count[mm] += node.hi - node.lo;
      if (mm < out.best) {
        out.best = static_cast<std::uint8_t>(mm);
        if (mm + 1 < max_mm) max_mm = mm + 1;
        unsigned kept = 0;  // drop slots outside the two strata still reported
        for (unsigned s = 0; s < out.num_slots; ++s) {
          if (out.slots[s].edits.count <= mm + 1) out.slots[kept++] = out.slots[s];
        }
        out.num_slots = static_cast<std::uint8_t>(kept);
      }
      if (out.num_slots < kHitSlots) {
        out.slots[out.num_slots++] = {node.lo, node.hi, node.edits};
      } else {  // full: a better hit replaces the worst kept one
        out.flags |= kSlotsOverflow;
        unsigned worst = 0;
        for (unsigned s = 1; s < kHitSlots; ++s) {
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
    for (unsigned pass = 0; pass < 2; ++pass) {
      for (unsigned c = 0; c < 4; ++c) {
        const bool mismatch = c != base;
        if (mismatch != (pass == 0)) continue;
        const unsigned mm = node.edits.count + (mismatch ? 1u : 0u);
        if (mm + needed_before > max_mm) continue;
        const std::uint64_t clo = index.C[c] + lo[c], chi = index.C[c] + hi[c];
        if (clo >= chi) continue;
        if (top == kStackCapacity) {
          out.flags |= kStackOverflow;
          continue;
        }
        detail::Node child{clo, chi, node.edits, static_cast<std::uint16_t>(i)};
        if (mismatch) {
          child.edits.position[child.edits.count] = static_cast<std::uint16_t>(i);
          child.edits.base[child.edits.count] = static_cast<std::uint8_t>(c);
          ++child.edits.count;
        }
        stack[top++] = child;
      }
    }
  }
  // Strata beyond best + 1 were counted before the best was known, and are incomplete.
  if (out.mapped()) {
    for (unsigned mm = out.best + 2u; mm <= kMaxMismatches; ++mm) out.count[mm] = 0;
  }
}

}  // namespace wtmap::aligner
