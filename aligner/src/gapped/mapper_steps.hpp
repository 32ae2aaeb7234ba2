// wtmap aligner (gapped): the per-read steps of bwa mem's single-end algorithm after seeding
// (bwamem.c; Li 2013, arXiv:1303.3997), in strand coordinates (mapper_reference.hpp) so that both
// strands run the same code:
//   chain_seeds      mem_chain + mem_chain_flt: seeds of one contig and strand near the chain's
//                    diagonal join it (not across a long N run); chains much lighter than an
//                    overlapping heavier one go;
//   ExtensionPlan,   mem_chain2aln: the chain's seeds, longest first, extended left and right with
//   start_region,    banded affine-gap DP and z-drop (extend.hpp, run in batches by the caller)
//   finish_region    in a window of cal_max_gap (chain_window);
//   finish_regions   mem_sort_dedup_patch (without the patching) + mem_mark_primary_se.
// Every sort is a total order, so the result depends on nothing but the read and the index.
//
// Space: O(hits + chains + regions) per read. Time: chaining O(hits x chains), the skip test
// O(seeds x regions), regions O(regions^2 + regions x chains).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "mapper_reference.hpp"
#include "wtmap/aligner/gapped/extend.hpp"
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
std::vector<Chain> chain_seeds(const std::vector<SeedHit>& hits, const MapperReference& reference,
                               const GappedOptions& options);

// The reference window [lo, hi) a chain's extensions may use (bwa's rmax in mem_chain2aln: each
// seed's read flanks plus cal_max_gap), clipped to the contig and long ambiguity runs.
void chain_window(const Chain& c, std::int32_t read_length, const MapperReference& ref, const Scoring& sc,
                  std::int64_t& lo, std::int64_t& hi);

// The order in which bwa's mem_chain2aln extends seeds: chain by chain, each chain's seeds longest
// first; a seed inside an existing region near its diagonal is skipped unless an extended seed of
// its chain overlaps it off its diagonal. next() hands out the seeds one at a time, so that the
// extensions of many reads can run as one batch between calls.
class ExtensionPlan {
 public:
  void start(const std::vector<Chain>& chains);
  // The next seed to extend (chain and seed index), given the regions found so far; false at the end.
  bool next(const std::vector<Chain>& chains, const std::vector<Region>& regions, std::int32_t read_length,
            const Scoring& sc, std::size_t& chain, std::size_t& seed);
  // Seeds after the one next() handed out last that a round may extend ahead of their turn, each
  // handed out once (by next() or here): the first seed of every later chain (bwa extends each
  // unless a region found before holds it: rare), and up to `guesses` more, those next() would
  // hand out if every seed before them were extended (a read of a tandem repeat extends dozens to
  // hundreds of seeds of one chain, one round each without guesses). An extension depends on its
  // seed and chain alone, so one made early or never used changes no alignment, only the work.
  // They replace `ahead`'s contents (the caller's vector, whose memory it keeps for later rounds).
  void take_ahead(const std::vector<Chain>& chains, const std::vector<Region>& regions, std::int32_t read_length,
                  const Scoring& sc, std::size_t guesses, std::vector<std::pair<std::size_t, std::size_t>>& ahead);

 private:
  bool would_extend(const std::vector<Chain>& chains, const std::vector<Region>& regions, std::int32_t read_length,
                    const Scoring& sc, std::size_t at, const std::uint8_t* extended) const;
  // extended: by order_ entry, whether next() extended it; nullptr: as if every one were.
  bool off_diagonal_overlap(const std::vector<Chain>& chains, std::size_t at, const std::uint8_t* extended) const;

  std::vector<std::pair<std::size_t, std::size_t>> order_;  // (chain, seed)
  std::vector<std::uint8_t> extended_;                      // by order_ entry: next() handed it out
  std::vector<std::uint8_t> taken_;                         // by order_ entry: handed out to a round
  std::size_t next_ = 0;
};

// A region from seed s and its left extension (nullptr: the seed starts the read), ended where
// choose_end says; finish_region adds the right extension (nullptr: the seed ends the read) from
// h0 = the region's score so far, and the seed coverage.
Region start_region(const SeedHit& s, std::int32_t chain_index, const ExtendResult* left, const Scoring& sc);
void finish_region(Region& region, const SeedHit& s, const Chain& c, std::int32_t read_length,
                   const ExtendResult* right, const Scoring& sc);

// Removes redundant regions, sorts the rest by score (ties: the read's hash) and marks
// secondaries (sub, sub_n). regions[0] is the best afterwards. csub is left as it is (0): bwa mem
// gives a region one only in mate rescue (mem_matesw, ksw's score2); a chain shadowed by this one
// counts through the region it is extended to, as sub (mem_chain_flt keeps it for that).
void finish_regions(std::vector<Region>& regions, std::uint64_t read_hash, const GappedOptions& options);

}  // namespace wtmap::aligner::gapped
