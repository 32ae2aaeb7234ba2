// The host steps of mate rescue (see mate_rescue.hpp).
#include "mate_rescue.hpp"

#include <algorithm>
#include <utility>

namespace wtmap::aligner::gapped {

std::vector<RescueJob> plan_rescues(const std::vector<SeqRecord>& reads, const std::vector<GappedReadAlignment>& alignments,
                                    const InsertSizeModel& model, std::int32_t unpaired, const MapperReference& reference,
                                    const GappedOptions& options) {
  std::vector<RescueJob> jobs;
  if (!model.known) return jobs;
  for (std::size_t first = 0; first + 1 < reads.size(); first += 2) {
    const std::vector<MateHit> hits[2] = {mate_hits(alignments[first]), mate_hits(alignments[first + 1])};
    for (std::size_t m = 0; m < 2; ++m) {
      const std::size_t other = first + 1 - m;
      const std::size_t length = reads[other].sequence.size();
      if (hits[m].empty() || length < options.min_seed_length || length > options.max_read_length) continue;
      std::size_t anchors = 0;
      for (const MateHit& anchor : hits[m]) {
        if (anchor.score < hits[m][0].score - unpaired) continue;
        if (anchors++ == kMaxRescueAnchors) break;
        // The other mate already pairs with this hit: nothing to search (bwa's skip[]).
        const bool paired = std::any_of(hits[1 - m].begin(), hits[1 - m].end(), [&](const MateHit& h) {
          const std::int64_t size = fr_insert_size(anchor, h);
          return size >= model.low && size <= model.high;
        });
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
  return overlaps(a.primary) || std::any_of(a.alternatives.begin(), a.alternatives.end(), overlaps) ||
         std::any_of(a.supplementary.begin(), a.supplementary.end(), overlaps);
}

void add_rescued_hits(GappedReadAlignment& a, std::vector<GappedHit>& hits, std::int32_t seed_coverage,
                      const GappedOptions& options) {
  if (hits.empty()) return;
  auto rest = hits.begin() + 1;
  if (!a.mapped) {
    a.mapped = true;
    a.flags = 0;
    a.primary = std::move(hits.front());
    a.sub_score = hits.size() > 1 ? hits[1].score : 0;
    a.chain_sub_score = 0;
    a.sub_count = 0;
    a.seed_coverage = static_cast<std::uint32_t>(seed_coverage);
    a.supplementary.clear();
    a.alternatives.clear();
  } else if (hits.front().score > a.primary.score) {
    a.sub_score = std::max(a.sub_score, a.primary.score);
    a.alternatives.insert(a.alternatives.begin(), std::move(a.primary));
    a.primary = std::move(hits.front());
    a.seed_coverage = static_cast<std::uint32_t>(seed_coverage);
  } else {
    rest = hits.begin();
  }
  a.alternatives.insert(a.alternatives.end(), std::make_move_iterator(rest), std::make_move_iterator(hits.end()));
  a.mapq = mapping_quality(a, options);
}

}  // namespace wtmap::aligner::gapped
