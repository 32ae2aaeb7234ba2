// wtmap aligner: where the device data of one k-mismatch batch on the GPU lies in its launch
// slot's scratch (core's QueryWorkspace::scratch): the reads' codes, their packed words, the
// reads' choices, the list of long reads, the kernels' counters, the group searches' stacks and
// room for the other hits. One layout computes every part's offset and size from the batch; the
// allocation takes its total and every kernel's pointers come from MismatchScratch::at, so no
// part is sized in one place and carved in another.
//
// Space: the codes (a byte a base), 2 * packed_code_words(bases) words, 56 bytes a read (its
// 48-byte ReadChoice and a long-read slot), 24 bytes of counters, 128 KiB of stack per group
// block when the batch is sliced, 16 bytes per other hit when those go through the device; each
// part on a 128-byte line (a GPU cache line, as core's structures lay out their arrays).
// Computing it is O(1).
#pragma once

#include <cstddef>
#include <cstdint>

#include "wtmap/aligner/hit_choice.hpp"
#include "wtmap/aligner/mismatch_search.hpp"
#include "wtmap/aligner/packed_codes.hpp"

namespace wtmap::aligner {

// The counters that a batch's kernels share, zeroed before its search.
struct MismatchBatchCounters {
  unsigned long long long_listed;   // reads the slice cut short, listed (ListLongReadsOp)
  unsigned long long long_taken;    // listed reads a group block has taken (group_search_kernel)
  unsigned long long others_taken;  // places of the other hits taken (ChooseHitsOp)
};

struct MismatchScratchLayout {
  static constexpr std::size_t kAlignment = 128;
  struct Part {
    std::size_t offset = 0, bytes = 0;
  };
  Part codes;           // code_bytes: the reads' letters, encoded in place
  Part packed_bases;    // packed_code_words(code_bytes) words (PackedCodesView::bases)
  Part packed_unknown;  // as many (PackedCodesView::unknown)
  Part choices;         // a ReadChoice per read
  Part long_reads;      // a read index per read: those the slice cut short
  Part counters;        // MismatchBatchCounters
  Part group_stacks;    // kGroupStackCapacity nodes per group block
  Part others;          // an OtherHit per place
  std::size_t total = 0;

  // `group_blocks` 0 for a batch searched without the slice (no group search); `other_hits` 0
  // when the other hits are written straight into page-locked host memory.
  MismatchScratchLayout(std::uint64_t code_bytes, std::uint64_t reads, std::uint64_t group_blocks,
                        std::uint64_t other_hits) {
    codes = take(code_bytes);
    const std::uint64_t packed_words = packed_code_words(code_bytes);
    packed_bases = take(packed_words * sizeof(std::uint64_t));
    packed_unknown = take(packed_words * sizeof(std::uint64_t));
    choices = take(reads * sizeof(ReadChoice));
    long_reads = take(reads * sizeof(std::uint64_t));
    counters = take(sizeof(MismatchBatchCounters));
    group_stacks = take(group_blocks * kGroupStackCapacity * sizeof(detail::Node));
    others = take(other_hits * sizeof(OtherHit));
  }

 private:
  Part take(std::size_t bytes) {
    const Part p{total, bytes};
    total += (bytes + kAlignment - 1) / kAlignment * kAlignment;
    return p;
  }
};

// Typed pointers to the parts of a scratch laid out by a MismatchScratchLayout.
struct MismatchScratch {
  std::uint8_t* codes;
  std::uint64_t* packed_bases;
  std::uint64_t* packed_unknown;
  ReadChoice* choices;
  std::uint64_t* long_reads;
  MismatchBatchCounters* counters;
  detail::Node* group_stacks;
  OtherHit* others;

  PackedCodesView packed() const { return {packed_bases, packed_unknown}; }

  // `base`: at least layout.total bytes, aligned to kAlignment (a Buffer is).
  static MismatchScratch at(std::byte* base, const MismatchScratchLayout& layout) {
    auto part = [base](const MismatchScratchLayout::Part& p) { return static_cast<void*>(base + p.offset); };
    return {static_cast<std::uint8_t*>(part(layout.codes)),
            static_cast<std::uint64_t*>(part(layout.packed_bases)),
            static_cast<std::uint64_t*>(part(layout.packed_unknown)),
            static_cast<ReadChoice*>(part(layout.choices)),
            static_cast<std::uint64_t*>(part(layout.long_reads)),
            static_cast<MismatchBatchCounters*>(part(layout.counters)),
            static_cast<detail::Node*>(part(layout.group_stacks)),
            static_cast<OtherHit*>(part(layout.others))};
  }
};

}  // namespace wtmap::aligner
