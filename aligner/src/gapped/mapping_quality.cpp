// wtmap aligner (gapped): bwa mem's single-end mapping quality (bwamem.c, mem_approx_mapq_se, in
// its default mode: mapQ_coef_len 50). The primary's score against the best other score of the
// same part of the read, scaled by the alignment's identity, less a penalty for the number of
// close alternatives, and scaled down by the share of the read in repetitive seeds.
//
// Space: O(1). Time: O(1).
#include <cmath>
#include <cstdint>

#include "wtmap/aligner/gapped/gapped_mapper.hpp"

namespace wtmap::aligner::gapped {
namespace {

// bwa mem's mapQ_coef_len: alignments this long or longer have their score difference scaled
// down by mapQ_coef_fac / log(length), so that a long read's few extra matches do not count as
// much. bwa sets mapQ_coef_fac = log(50) but declares it an int (bwamem.h, mem_opt_t), so the
// factor it uses is 3, not 3.912: with ln 50 every MAPQ of a long read came out (3.912 / 3)^2 =
// 1.7 times bwa's before the caps (36 where bwa says 21 for 150 bases, score 145, sub 135).
constexpr double kCoefficientLength = 50.0;
constexpr double kCoefficientFactor = 3.0;  // (int) log(kCoefficientLength)

}  // namespace

std::uint8_t mapping_quality(const GappedReadAlignment& a, const GappedOptions& options) {
  const GappedHit& hit = a.primary;
  const std::int32_t match = options.scoring.match;
  // Without another alignment the floor is what a minimal seed alone would score.
  std::int64_t sub = a.sub_score != 0 ? a.sub_score : static_cast<std::int64_t>(options.min_seed_length) * match;
  if (a.chain_sub_score > sub) sub = a.chain_sub_score;
  if (sub >= hit.score) return 0;
  const std::int64_t query_span = static_cast<std::int64_t>(hit.query_end) - hit.query_begin;
  const std::int64_t reference_span = static_cast<std::int64_t>(hit.reference_end - hit.position);
  const std::int64_t length = query_span > reference_span ? query_span : reference_span;
  // A match scores `match` and a mismatch turns it into -mismatch: the mismatch share of a
  // gap-free alignment of this length and score.
  const double identity = 1.0 - static_cast<double>(length * match - hit.score) /
                                    (match + options.scoring.mismatch) / static_cast<double>(length);
  double scale = static_cast<double>(length) < kCoefficientLength
                     ? 1.0
                     : kCoefficientFactor / std::log(static_cast<double>(length));
  scale *= identity * identity;
  // 6.02 = 20 log10(2): a score difference of one match, phred-scaled as a likelihood ratio.
  std::int64_t mapq = static_cast<std::int64_t>(6.02 * static_cast<double>(hit.score - sub) / match * scale * scale + .499);
  if (a.sub_count > 0) mapq -= static_cast<std::int64_t>(4.343 * std::log(a.sub_count + 1.0) + .499);
  if (mapq > 60) mapq = 60;
  if (mapq < 0) mapq = 0;
  mapq = static_cast<std::int64_t>(static_cast<double>(mapq) * (1.0 - a.repeat_fraction) + .499);
  return static_cast<std::uint8_t>(mapq);
}

}  // namespace wtmap::aligner::gapped
