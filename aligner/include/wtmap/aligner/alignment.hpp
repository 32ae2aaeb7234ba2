// wtmap aligner: what an alignment of a read is -- its placements on the reference, the counts of
// its best and second-best hits, the search's flags -- and bwa aln's mapping quality of it: the
// results a search engine (BatchAligner) hands to the output (SamWriter).
//
// Space: a ReadAlignment is 80 bytes, plus 32 per alternative placement (XA).
#pragma once

#include <cstdint>
#include <vector>

#include "wtmap/aligner/mismatch_search.hpp"  // Edits, SearchFlags, search_cut_short

namespace wtmap::aligner {

// One placement of a read, in reference coordinates.
struct Placement {
  std::uint32_t contig = 0;
  std::uint64_t position = 0;  // 0-based leftmost
  bool reverse = false;
  Edits edits{};               // substitutions, in read coordinates (before any reverse complement)
};

struct ReadAlignment {
  bool mapped = false;
  std::uint8_t flags = 0;      // SearchFlags
  std::uint8_t mismatches = 0; // of the reported placement (the best stratum)
  std::uint64_t best_count = 0;    // X0
  std::uint64_t second_count = 0;  // X1
  Placement primary;
  std::vector<Placement> alternatives;  // XA
};

// bwa aln's mapping quality (bwa_approx_mapQ): 37 unique, 25 unique with all k mismatches used,
// 23 - 4.343 ln(X1) with suboptimal hits, 0 for repeats.
int mapping_quality(const ReadAlignment& a, unsigned max_mismatches);

}  // namespace wtmap::aligner
