// The host steps of mate rescue (see mate_rescue.hpp).
#include "mate_rescue.hpp"

#include <algorithm>
#include <utility>

namespace wtmap::aligner::gapped {

std::vector<RescueJob> plan_rescues(const std::vector<ReadCodes>& reads, const std::vector<GappedReadAlignment>& alignments,
                                    const InsertSizeModel& model, std::int32_t unpaired, const MapperReference& reference,
                                    const GappedOptions& options) {
  std::vector<RescueJob> jobs;
  if (!model.known) return jobs;
  for (std::size_t first = 0; first + 1 < reads.size(); first += 2) {
    const std::vector<MateHit> hits[2] = {mate_hits(alignments[first]), mate_hits(alignments[first + 1])};
    for (std::size_t m = 0; m < 2; ++m) {
      const std::size_t other = first + 1 - m;
      const std::size_t length = reads[other].forward.size();
      if (hits[m].empty() || length < options.min_seed_length || length > options.max_read_length) continue;
      std::size_t anchors = 0;
      for (const MateHit& anchor : hits[m]) {
        if (anchor.score < hits[m][0].score - unpaired) continue;
        if (anchors++ == kMaxRescueAnchors) break;
        // The other mate already pairs with this hit: nothing to search (bwa's skip[]).
        const bool paired = std::any_of(hits[1 - m].begin(), hits[1 - m].end(),
                                        [&](const MateHit& h) { return within_bounds(anchor, h, model); });
        if (paired) continue;
        const RescueWindow w = rescue_window(anchor, length, model, reference.contig_length(anchor.contig));
        if (w.end > w.begin && w.end - w.begin <= kMaxRescueWindow) jobs.push_back({other, w});
      }
    }
  }
  return jobs;
}

void strand_span(const RescueWindow& window, std::uint64_t contig_length, std::int64_t& lo, std::int64_t& hi) {
  lo = static_cast<std::int64_t>(window.reverse ? contig_length - window.end : window.begin);
  hi = lo + static_cast<std::int64_t>(window.end - window.begin);
}

bool overlaps_a_hit(const GappedReadAlignment& a, std::uint32_t contig, bool reverse, std::uint64_t position,
                    std::uint64_t reference_end) {
  if (!a.mapped) return false;
  auto overlaps = [&](const GappedHit& h) {
    return h.contig == contig && h.reverse == reverse && h.position < reference_end && position < h.reference_end;
  };
  // Every region of the mate counts, reported or not (bwa mem's mem_matesw tests them all).
  auto overlaps_candidate = [&](const PairCandidate& c) {
    return c.contig == contig && c.reverse == reverse && c.position < reference_end && position < c.reference_end;
  };
  return overlaps(a.primary) || std::any_of(a.alternatives.begin(), a.alternatives.end(), overlaps) ||
         std::any_of(a.supplementary.begin(), a.supplementary.end(), overlaps) ||
         std::any_of(a.candidates.begin(), a.candidates.end(), overlaps_candidate);
}

namespace {
// The rescued hits join the mate's candidates, which are then marked again as bwa mem's
// mem_sam_pe reruns mem_mark_primary_se after mem_matesw: by score (a stable sort: ties stay in
// order, so that candidates[0] stays the primary add_rescued_hits keeps), each secondary to the
// first better primary it overlaps on the read by mask_level of the shorter.
void add_rescued_candidates(GappedReadAlignment& a, const std::vector<GappedHit>& hits,
                            const std::vector<std::int32_t>& tandem, const GappedOptions& options) {
  for (std::size_t k = 0; k < hits.size(); ++k) {
    const GappedHit& h = hits[k];
    a.candidates.push_back({h.contig, h.position, h.reference_end, h.reverse, h.query_begin, h.query_end, h.score,
                            h.score, -1, tandem[k]});
  }
  std::stable_sort(a.candidates.begin(), a.candidates.end(),
                   [](const PairCandidate& x, const PairCandidate& y) { return x.score > y.score; });
  std::vector<std::int32_t> primaries;
  for (std::size_t i = 0; i < a.candidates.size(); ++i) {
    PairCandidate& c = a.candidates[i];
    c.secondary = -1;
    for (const std::int32_t z : primaries) {
      const PairCandidate& p = a.candidates[static_cast<std::size_t>(z)];
      const std::uint32_t b = std::max(p.query_begin, c.query_begin), e = std::min(p.query_end, c.query_end);
      const std::uint32_t shorter = std::min(p.query_end - p.query_begin, c.query_end - c.query_begin);
      if (e > b && e - b >= shorter * options.mask_level) {
        c.secondary = z;
        break;
      }
    }
    if (c.secondary < 0) primaries.push_back(static_cast<std::int32_t>(i));
  }
}

// mem_mark_primary_se's sub and sub_n of the primary (candidates[0]) among `candidates`: the
// score of its best secondary, and how many of its secondaries score within the cost of one
// difference of it.
void primary_sub_scores(const std::vector<PairCandidate>& candidates, const GappedOptions& options,
                        std::int32_t& sub, std::uint32_t& sub_n) {
  const Scoring& sc = options.scoring;
  const std::int32_t close = std::max({sc.match + sc.mismatch, sc.open_del + sc.extend_del, sc.open_ins + sc.extend_ins});
  sub = 0;
  sub_n = 0;
  for (const PairCandidate& c : candidates) {
    if (c.secondary != 0) continue;
    if (sub == 0) sub = c.score;
    sub_n += candidates[0].score - c.score <= close;
  }
}
}  // namespace

namespace {
// bwa mem writes XA from the regions as rescue leaves them (mem_gen_alt): the primary's
// secondaries scoring xa_drop_ratio of it, all or none (gapped_written_candidates of the primary),
// each from the hit in `pool` that is its; the other hits of the pool go to pair_hits, where
// pairing may choose them without aligning them again. A secondary without a hit here (a region
// the mapper did not report, now within the share) leaves no XA.
void choose_alternatives(GappedReadAlignment& a, std::vector<GappedHit>& pool, const GappedOptions& options) {
  PairScoring xa;
  xa.xa_drop_ratio = options.xa_drop_ratio;
  xa.max_xa_hits = options.max_xa_hits;
  const std::vector<std::size_t> written = gapped_written_candidates(a.candidates, 0, xa);
  std::vector<std::size_t> chosen;
  for (std::size_t w = 1; w < written.size(); ++w) {
    const PairCandidate& c = a.candidates[written[w]];
    std::size_t j = 0;
    while (j < pool.size() && (!is_hit_of(pool[j], c) || std::find(chosen.begin(), chosen.end(), j) != chosen.end())) ++j;
    if (j == pool.size()) {
      chosen.clear();
      break;
    }
    chosen.push_back(j);
  }
  a.alternatives.clear();
  for (const std::size_t j : chosen) a.alternatives.push_back(pool[j]);
  for (std::size_t j = 0; j < pool.size(); ++j) {
    if (std::find(chosen.begin(), chosen.end(), j) == chosen.end()) a.pair_hits.push_back(std::move(pool[j]));
  }
}
}  // namespace

void add_rescued_hits(GappedReadAlignment& a, std::vector<GappedHit>& hits, const std::vector<std::int32_t>& tandem,
                      std::int32_t seed_coverage, const GappedOptions& options) {
  if (hits.empty()) return;
  a.candidates = pairing_candidates(a);  // primary and XA where the mapper gave none; none if unmapped
  add_rescued_candidates(a, hits, tandem, options);
  const bool new_primary = !a.mapped || hits.front().score > a.primary.score;
  // Every hit the mate holds besides its primary: its XA, then the rescued ones.
  std::vector<GappedHit> pool = a.mapped ? std::move(a.alternatives) : std::vector<GappedHit>{};
  if (new_primary && a.mapped) pool.insert(pool.begin(), std::move(a.primary));
  pool.insert(pool.end(), std::make_move_iterator(hits.begin() + (new_primary ? 1 : 0)), std::make_move_iterator(hits.end()));
  if (new_primary) {
    // The rescued region is the read's best now: its sub-scores are counted afresh among all the
    // candidates; bwa's rescued region has csub ksw's score2 and no seeds (frac_rep 0).
    if (!a.mapped) {
      a.mapped = true;
      a.flags = 0;
      a.supplementary.clear();
    }
    a.primary = std::move(hits.front());
    a.chain_sub_score = tandem.front();
    a.seed_coverage = static_cast<std::uint32_t>(seed_coverage);
    a.repeat_fraction = 0;
    primary_sub_scores(a.candidates, options, a.sub_score, a.sub_count);
  } else {
    // The kept primary's sub-scores with the rescued hits secondary to it. The mapper's are over
    // all its regions, the candidates only the first kMaxPairCandidates of them: the larger.
    std::int32_t sub = 0;
    std::uint32_t sub_n = 0;
    primary_sub_scores(a.candidates, options, sub, sub_n);
    a.sub_score = std::max(a.sub_score, sub);
    a.sub_count = std::max(a.sub_count, sub_n);
  }
  choose_alternatives(a, pool, options);
  a.mapq = mapping_quality(a, options);
}

}  // namespace wtmap::aligner::gapped
