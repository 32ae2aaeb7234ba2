// gapped_mapper.hpp: mapping_quality, bwa mem's mem_approx_mapq_se, against values worked out by
// hand from its formula (each case's arithmetic in its comment), one case per branch: the
// sub-score floor (min_seed_length * A), csub over sub, sub >= score, the length coefficient
// (alignments of 50 bases and more), identity below 1, the reference span longer than the read's,
// the sub_n penalty, the caps at 60 and 0, and the repeat fraction's rounding.
#include <gtest/gtest.h>

#include "wtmap/aligner/gapped/gapped_mapper.hpp"

namespace wtmap::altest {
namespace {

using aligner::gapped::GappedOptions;
using aligner::gapped::GappedReadAlignment;
using aligner::gapped::mapping_quality;

// A mapped read whose primary spans `query_span` read bases and `reference_span` reference bases.
GappedReadAlignment aligned(std::int32_t score, std::uint32_t query_span, std::uint64_t reference_span) {
  GappedReadAlignment a;
  a.mapped = true;
  a.primary.score = score;
  a.primary.query_begin = 7;  // spans, not offsets, count
  a.primary.query_end = 7 + query_span;
  a.primary.position = 1000;
  a.primary.reference_end = 1000 + reference_span;
  return a;
}

int mapq(const GappedReadAlignment& a, const GappedOptions& o = GappedOptions{}) { return mapping_quality(a, o); }

TEST(GappedMapq, PerfectUniqueReadIsCappedAt60) {
  // sub = 19 (floor); l = 100: scale (3 / ln 100)^2 = 0.42437; 6.02 * 81 * 0.42437 = 206.9 -> 60.
  EXPECT_EQ(mapq(aligned(100, 100, 100)), 60);
}

TEST(GappedMapq, ShortAlignmentUsesTheScoreDifferenceUnscaled) {
  // l = 30 < 50, identity 1: 6.02 * (30 - 25) = 30.1 -> 30.
  GappedReadAlignment a = aligned(30, 30, 30);
  a.sub_score = 25;
  EXPECT_EQ(mapq(a), 30);
}

TEST(GappedMapq, ChainSubScoreCountsWhenLarger) {
  // max(20, 27) = 27: 6.02 * 3 = 18.06 -> 18.
  GappedReadAlignment a = aligned(30, 30, 30);
  a.sub_score = 20;
  a.chain_sub_score = 27;
  EXPECT_EQ(mapq(a), 18);
  // A smaller csub changes nothing: 6.02 * 10 = 60.2 -> 60.
  a.chain_sub_score = 5;
  EXPECT_EQ(mapq(a), 60);
}

TEST(GappedMapq, SubScoreAtOrAboveTheScoreGivesZero) {
  GappedReadAlignment a = aligned(30, 30, 30);
  a.sub_score = 30;
  EXPECT_EQ(mapq(a), 0);
  a.sub_score = 31;
  EXPECT_EQ(mapq(a), 0);
  a.sub_score = 0;
  a.chain_sub_score = 30;
  EXPECT_EQ(mapq(a), 0);
  // Without any other alignment the floor 19 decides: a score of 19 is a repeat's.
  EXPECT_EQ(mapq(aligned(19, 19, 19)), 0);
}

TEST(GappedMapq, FloorIsMinSeedLengthTimesMatchAndTheDifferenceCountsInMatches) {
  // A = 2, k = 25: floor 50; 6.02 * (60 - 50) / 2 = 30.1 -> 30.
  GappedOptions o;
  o.scoring.match = 2;
  o.min_seed_length = 25;
  EXPECT_EQ(mapq(aligned(60, 30, 30), o), 30);
}

TEST(GappedMapq, IdentityBelowOneScalesDown) {
  // l = 40, score 30: identity 1 - 10 / 5 / 40 = 0.95; 6.02 * 11 * 0.95^4 = 53.94 -> 54.
  EXPECT_EQ(mapq(aligned(30, 40, 40)), 54);
}

// bwa's factor is (int) ln 50 = 3 (mapQ_coef_fac is an int in bwamem.h), not ln 50 = 3.912.
TEST(GappedMapq, LongAlignmentIsScaledByLengthCoefficient) {
  // l = 100: (3 / ln 100)^2 = 0.42437; 6.02 * 5 * 0.42437 = 12.77 -> 13 (ln 50 would give 22).
  GappedReadAlignment a = aligned(100, 100, 100);
  a.sub_score = 95;
  EXPECT_EQ(mapq(a), 13);
}

// bwa mem 0.7.17 on E. coli, mason reads of the benchmark, single-end (mem_approx_mapq_se's
// inputs printed from an instrumented build): simulated.1180/2, 150M, AS 145, XS 135, no close
// alternative, MAPQ 21: identity 1 - 5 / 5 / 150 = 0.99333, scale (3 / ln 150 * 0.99333^2)^2 =
// 0.34901, 6.02 * 10 * 0.34901 = 21.01 -> 21 (ln 50 gave 36). simulated.10101/2, XS 140 and one
// close alternative (sub_n 1), MAPQ 8: 6.02 * 5 * 0.34901 = 10.51 -> 11, less (int)(4.343 ln 2 +
// .499) = 3.
TEST(GappedMapq, BwaMemsValuesFor150BaseReads) {
  GappedReadAlignment a = aligned(145, 150, 150);
  a.sub_score = 135;
  EXPECT_EQ(mapq(a), 21);
  a.sub_score = 140;
  a.sub_count = 1;
  EXPECT_EQ(mapq(a), 8);
}

TEST(GappedMapq, LengthIsTheLongerOfTheReadAndReferenceSpans) {
  // A 3-base deletion: l = 33, not 30. identity 1 - 12 / 5 / 33 = 0.92727; 6.02 * 6 * 0.92727^4 =
  // 26.70 -> 27 (with l = 30 it would be 6.02 * 6 * 0.94^4 = 28.20 -> 28).
  GappedReadAlignment a = aligned(21, 30, 33);
  a.sub_score = 15;
  EXPECT_EQ(mapq(a), 27);
  // An insertion: the read's span is the longer one.
  GappedReadAlignment b = aligned(21, 33, 30);
  b.sub_score = 15;
  EXPECT_EQ(mapq(b), 27);
}

TEST(GappedMapq, CloseAlternativesCostFourPhredPerDoubling) {
  // 30 - (int)(4.343 ln 4 + .499) = 30 - (int)6.52 = 24.
  GappedReadAlignment a = aligned(30, 30, 30);
  a.sub_score = 25;
  a.sub_count = 3;
  EXPECT_EQ(mapq(a), 24);
  // 6 - (int)(4.343 ln 101 + .499) = 6 - 20 < 0 -> 0.
  GappedReadAlignment b = aligned(30, 30, 30);
  b.sub_score = 29;
  b.sub_count = 100;
  EXPECT_EQ(mapq(b), 0);
}

TEST(GappedMapq, RepeatFractionScalesAfterTheCap) {
  // 60 (capped from 351.9) * 0.5 = 30.
  GappedReadAlignment a = aligned(100, 100, 100);
  a.repeat_fraction = 0.5f;
  EXPECT_EQ(mapq(a), 30);
  // 30 * 0.75 = 22.5: bwa rounds with +0.499, so 22.
  GappedReadAlignment b = aligned(30, 30, 30);
  b.sub_score = 25;
  b.repeat_fraction = 0.25f;
  EXPECT_EQ(mapq(b), 22);
  b.repeat_fraction = 1.0f;
  EXPECT_EQ(mapq(b), 0);
}

}  // namespace
}  // namespace wtmap::altest
