// wtmap aligner (gapped): the host steps of mate rescue (bwa mem's mem_matesw, bwamem_pair.c) --
// which windows to search for which mate, and how a found alignment joins the mate's hits. The
// local alignments themselves and their CIGARs run on the backend (GappedMapper::rescue_mates).
//
// Space: one job per searched window. Time: O(hits1 * hits2) per pair to plan; O(hits) to merge.
#pragma once

#include <cstdint>
#include <vector>

#include "mapper_reference.hpp"
#include "wtmap/aligner/gapped/gapped_mapper.hpp"
#include "wtmap/aligner/pairing.hpp"

namespace wtmap::aligner::gapped {

// bwa mem's max_matesw: the most hits of a mate whose windows are searched for the other.
constexpr std::size_t kMaxRescueAnchors = 50;
// Windows longer than this are not searched: only a given model (-I) with a huge max makes them,
// and each would cost O(read x window) DP and its bytes of codes. Twice bwa mem's max_ins.
constexpr std::uint64_t kMaxRescueWindow = 2 * kMaxSampledInsert;

// One window to search: mate `read` (its index in the batch) in `window` (rescue_window).
struct RescueJob {
  std::size_t read = 0;
  RescueWindow window;
};

// For each pair (reads 2p and 2p + 1) and each mate, its hits scoring within `unpaired` of its
// best (the first kMaxRescueAnchors): the other mate's window, unless it is empty or longer than
// kMaxRescueWindow, the other mate is outside the mapper's lengths, or it already has a hit the
// model pairs with this one. In
// pair order, mate 1's anchors first, each mate's in hit order.
std::vector<RescueJob> plan_rescues(const std::vector<ReadCodes>& reads, const std::vector<GappedReadAlignment>& alignments,
                                    const InsertSizeModel& model, std::int32_t unpaired, const MapperReference& reference,
                                    const GappedOptions& options);

// The window in strand coordinates (those of MapperReference::base on the window's strand): [lo, hi).
void strand_span(const RescueWindow& window, std::uint64_t contig_length, std::int64_t& lo, std::int64_t& hi);

// Whether a found alignment on forward span [position, reference_end) overlaps a hit of `a` --
// primary, alternative or supplementary -- or a pairing candidate on the same contig and strand
// (then it is one the mapper already found).
bool overlaps_a_hit(const GappedReadAlignment& a, std::uint32_t contig, bool reverse, std::uint64_t position,
                    std::uint64_t reference_end);

// Adds rescued hits (best first; tandem[k]: hit k's tandem_score, bwa's csub) to a mate: an
// unmapped mate gets the best as its primary; a mapped one keeps its primary unless a rescued hit
// scores more. They join its pairing candidates, marked primary or secondary again as bwa mem's
// mem_mark_primary_se does (candidates[0] stays the primary); the primary's sub-scores are its
// secondaries' among them (sub, sub_count), and its XA bwa's mem_gen_alt over them (those scoring
// xa_drop_ratio of it, all or none); the mate's other hits go to pair_hits. A rescued primary has chain_sub_score its tandem score, seed_coverage
// `seed_coverage` (bwa: half its shorter span) and repeat_fraction 0 (bwa's rescued region has no
// seeds). MAPQ recomputed.
void add_rescued_hits(GappedReadAlignment& a, std::vector<GappedHit>& hits, const std::vector<std::int32_t>& tandem,
                      std::int32_t seed_coverage, const GappedOptions& options);

}  // namespace wtmap::aligner::gapped
