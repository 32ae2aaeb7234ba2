// wtmap aligner (gapped): the per-read steps of bwa mem's single-end algorithm after seeding
// (bwamem.c; Li 2013, arXiv:1303.3997), in strand coordinates (mapper_reference.hpp) so that both
// strands run the same code:
//   chain_seeds      mem_chain + mem_chain_flt: seeds of one contig and strand near the chain's
//                    diagonal join it; chains much lighter than an overlapping heavier one go;
//   extend_chain     mem_chain2aln: the chain's seeds, longest first, extended left and right with
//                    banded affine-gap DP and z-drop (extend.hpp) in a window of cal_max_gap;
//   finish_regions   mem_sort_dedup_patch (without the patching) + mem_mark_primary_se.
// Every sort is a total order, so the result depends on nothing but the read and the index.
//
// Space: O(hits + chains + regions) per read, and one DP row pair of the read's length. Time:
// chaining O(hits x chains), the extensions' DP, regions O(regions^2).
#pragma once

#include <cstdint>
#include <vector>

#include "mapper_reference.hpp"
#include "wtmap/aligner/gapped/gapped_mapper.hpp"

namespace wtmap::aligner::gapped {

// bwa mem's max_chain_gap and mask_level_redun.
constexpr std::int64_t kMaxChainGap = 10000;
constexpr double kRedundantOverlap = 0.95;

// One occurrence of a seed: read[qbeg, qbeg + len) = strand bases [rbeg, rbeg + len).
struct SeedHit {
  std::uint32_t contig = 0;
  bool reverse = false;
  std::int64_t rbeg = 0;
  std::int32_t qbeg = 0, len = 0;
};

struct Chain {
  std::uint32_t contig = 0;
  bool reverse = false;
  std::vector<SeedHit> seeds;  // in the order they joined (by read position)
  std::int32_t weight = 0;     // min(read bases, reference bases) its seeds cover
  std::int32_t qbeg = 0, qend = 0;
  std::int32_t first_shadowed = -1;  // the first lighter chain overlapping it (bwa's `first`)
  std::uint8_t kept = 0;             // bwa's: 0 dropped, 1 kept as the first shadowed, 2/3 kept
};

// A region: read[qb, qe) aligned to strand bases [rb, re) by extension.
struct Region {
  std::uint32_t contig = 0;
  bool reverse = false;
  std::int64_t rb = 0, re = 0;
  std::int32_t qb = 0, qe = 0;
  std::int32_t score = 0, true_score = 0;
  std::int32_t sub = 0, sub_n = 0, csub = 0;
  std::int32_t seed_coverage = 0, seed_length = 0;
  std::int32_t secondary = -1;  // index of the primary it is secondary to
  std::int32_t chain = -1;      // the chain it grew from
  std::uint64_t hash = 0;
};

// The chains of a read from its seed hits (in seed order: by read position), filtered.
std::vector<Chain> chain_seeds(const std::vector<SeedHit>& hits, const GappedOptions& options);

// Appends to `regions` the alignments grown from chain `chain_index`'s seeds. window and rows
// are scratch.
void extend_chain(const Chain& chain, std::int32_t chain_index, const std::uint8_t* read, std::int32_t read_length,
                  const MapperReference& reference, const GappedOptions& options, std::vector<Region>& regions,
                  std::vector<std::uint8_t>& window, std::vector<std::int32_t>& rows);

// Removes redundant regions, sorts the rest by score (ties: the read's hash) and marks
// secondaries (sub, sub_n), and gives each the chain_sub_score of bwa's csub: the weight (times
// the match score) of the heaviest other chain overlapping it on the read by more than
// mask_level. regions[0] is the best afterwards.
void finish_regions(std::vector<Region>& regions, const std::vector<Chain>& chains, std::uint64_t read_hash,
                    const GappedOptions& options);

}  // namespace wtmap::aligner::gapped
