// pairing.hpp against closed forms: mate names, the insert-size estimate (quartiles, mean, std,
// bounds worked out by hand for uniform and constant samples), -I, FR insert sizes, bwa mem's
// pair choice and MAPQ (pair scores and margins computed here from the formula), and the SAM mate
// fields of every case samtools fixmate distinguishes; the gapped mode's pairing and mate rescue's
// window; and which pairs PairedSamWriterSink estimates the model from, for any batching.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fm_support.hpp"
#include "wtmap/aligner/align_stages.hpp"
#include "wtmap/aligner/gapped/edit_tags.hpp"
#include "wtmap/aligner/gapped/gapped_batch.hpp"
#include "wtmap/aligner/pairing.hpp"

namespace wtmap::aligner {
namespace {

TEST(MateName, StripsOnlyATrailingSlashOneOrTwo) {
  EXPECT_EQ(mate_name("read7/1"), "read7");
  EXPECT_EQ(mate_name("read7/2"), "read7");
  EXPECT_EQ(mate_name("read7/3"), "read7/3");
  EXPECT_EQ(mate_name("read7/12"), "read7/12");
  EXPECT_EQ(mate_name("read7"), "read7");
  EXPECT_EQ(mate_name("/1"), "");
  EXPECT_EQ(mate_name("1"), "1");
  std::string name = "a/b/2";
  strip_mate_suffix(name);
  EXPECT_EQ(name, "a/b");
}

// 100 sizes 201..300: quartiles at indexes 25, 50, 75 (226, 251, 276), all within 2 IQR, so the
// mean is 250.5 and the std sqrt((100^2 - 1) / 12); proper bounds the wider of 3 IQR (76, 426)
// and mean +- 4 std (135, 366).
TEST(EstimateInsertSize, UniformSizesGiveTheClosedForm) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t s = 300; s >= 201; --s) sizes.push_back(s);  // unsorted on purpose
  const InsertSizeModel m = estimate_insert_size(sizes);
  ASSERT_TRUE(m.known);
  EXPECT_FALSE(m.given);
  EXPECT_EQ(m.pairs, 100u);
  EXPECT_EQ(m.q25, 226);
  EXPECT_EQ(m.q50, 251);
  EXPECT_EQ(m.q75, 276);
  EXPECT_DOUBLE_EQ(m.mean, 250.5);
  EXPECT_NEAR(m.std, std::sqrt(9999.0 / 12.0), 1e-9);
  EXPECT_EQ(m.low, 76);
  EXPECT_EQ(m.high, 426);
}

// An outlier is left out of mean and std; with no spread the bounds close on the one size.
TEST(EstimateInsertSize, OutliersLeaveMeanAndStd) {
  std::vector<std::int64_t> sizes(100, 300);
  sizes.push_back(9000);
  const InsertSizeModel m = estimate_insert_size(sizes);
  ASSERT_TRUE(m.known);
  EXPECT_DOUBLE_EQ(m.mean, 300.0);
  EXPECT_DOUBLE_EQ(m.std, 0.0);
  EXPECT_EQ(m.low, 300);
  EXPECT_EQ(m.high, 300);
}

TEST(EstimateInsertSize, TooFewPairsEstimateNothing) {
  const InsertSizeModel m = estimate_insert_size(std::vector<std::int64_t>(kMinInsertPairs - 1, 300));
  EXPECT_FALSE(m.known);
  EXPECT_EQ(m.pairs, kMinInsertPairs - 1);
  EXPECT_TRUE(estimate_insert_size(std::vector<std::int64_t>(kMinInsertPairs, 300)).known);
}

TEST(ParseInsertSize, NoneIsAGivenModelThatKnowsNothing) {
  const auto m = parse_insert_size("none");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(m->given);
  EXPECT_FALSE(m->known);
  for (const char* bad : {"None", "none,", "none,30", " none"}) EXPECT_FALSE(parse_insert_size(bad).ok()) << bad;
}

// insert_size_option gives back every estimate bit for bit, where 6 decimals (stats-json's mean)
// would not: sizes from a fixed LCG, spreads from 1 to 10^4.
TEST(InsertSizeOption, GivesBackTheEstimateBitForBit) {
  std::uint64_t state = 12345;
  auto next = [&](std::uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::int64_t>((state >> 33) % bound);
  };
  int six_decimals_differ = 0;
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<std::int64_t> sizes(10 + next(3000));
    const std::int64_t centre = 50 + next(9000), spread = 1 + next(trial % 2 ? 10000 : 60);
    for (std::int64_t& s : sizes) s = std::max<std::int64_t>(1, centre + next(spread) - spread / 2);
    const InsertSizeModel m = estimate_insert_size(sizes);
    ASSERT_TRUE(m.known);
    const std::string option = insert_size_option(m);
    const auto back = parse_insert_size(option);
    ASSERT_TRUE(back.ok()) << option << ": " << back.status().message();
    EXPECT_TRUE(back->known && back->given);
    EXPECT_EQ(back->mean, m.mean) << option;  // exact, not DOUBLE_EQ
    EXPECT_EQ(back->std, m.std) << option;
    EXPECT_EQ(back->low, m.low) << option;
    EXPECT_EQ(back->high, m.high) << option;
    char six[64];
    std::snprintf(six, sizeof six, "%.6f", m.mean);
    six_decimals_differ += std::stod(six) != m.mean;
  }
  EXPECT_GT(six_decimals_differ, 100);  // the case the 17 digits are for
  const InsertSizeModel none = estimate_insert_size({300, 300});
  EXPECT_EQ(insert_size_option(none), "none");
  const auto back = parse_insert_size(insert_size_option(none));
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->known);
}

TEST(ParseInsertSize, DefaultsAndBounds) {
  auto m = parse_insert_size("300,30");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(m->known && m->given);
  EXPECT_EQ(m->low, 180);
  EXPECT_EQ(m->high, 420);
  m = parse_insert_size("300,30,500");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->low, 180);
  EXPECT_EQ(m->high, 500);
  m = parse_insert_size("300,30,500,100");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->low, 100);
  m = parse_insert_size("10,30");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->low, 1);  // never below 1
  for (const char* bad : {"300", "300,x", "0,1", "300,-1", "300,30,100,200", "1,2,3,4,5", "300,,", "", "3e400,1"}) {
    const auto r = parse_insert_size(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("-I needs mean,std"), std::string::npos);
  }
}

MateHit hit(std::uint64_t position, bool reverse, int score = 100, std::uint32_t contig = 0, std::uint64_t length = 100) {
  return MateHit{contig, position, position + length, reverse, score};
}

// bwa mem's distance (mem_infer_dir): the reverse mate's last base (end - 1) less the forward
// mate's position, the fragment's length less one; FR only where positive.
TEST(FrInsertSize, FromTheForwardStartToTheReverseLastBase) {
  EXPECT_EQ(fr_insert_size(hit(100, false), hit(300, true)), 299);  // a fragment of 300
  EXPECT_EQ(fr_insert_size(hit(300, true), hit(100, false)), 299);
  EXPECT_EQ(fr_insert_size(hit(100, false), hit(150, true)), 149);   // overlapping mates
  EXPECT_EQ(fr_insert_size(hit(100, false), hit(2, true)), 1);       // last base 101
  EXPECT_EQ(fr_insert_size(hit(100, false), hit(1, true)), -1);      // last base at the forward start: bwa's RF
  EXPECT_EQ(fr_insert_size(hit(100, false), hit(0, true)), -1);      // reverse ends at the forward start
  EXPECT_EQ(fr_insert_size(hit(300, false), hit(100, true)), -1);    // RF
  EXPECT_EQ(fr_insert_size(hit(100, false), hit(300, false)), -1);   // FF
  EXPECT_EQ(fr_insert_size(hit(100, true), hit(300, true)), -1);     // RR
  EXPECT_EQ(fr_insert_size(hit(100, false), hit(300, true, 100, 1)), -1);  // different contigs
}

InsertSizeModel given(const std::string& option) {
  auto m = parse_insert_size(option);
  EXPECT_TRUE(m.ok()) << option;
  return m.ok() ? *m : InsertSizeModel{};
}
InsertSizeModel model_300_30() { return given("300,30"); }

// The pair score as bwa mem's mem_pair computes it, written out here.
long long pair_score(int s1, int s2, double size, double mean, double std) {
  const double ns = (size - mean) / std;
  return static_cast<long long>(std::floor(s1 + s2 + 0.721 * std::log(2.0 * std::erfc(std::fabs(ns) / std::sqrt(2.0))) + .499));
}

TEST(ChoosePair, UniqueMatesAtTheMeanArePairedWithMapq60) {
  const std::vector<MateHit> hits[2] = {{hit(100, false)}, {hit(300, true)}};
  const int mapq[2] = {37, 37};
  const PairChoice c = choose_pair(hits, mapq, model_300_30(), PairScoring{});
  EXPECT_TRUE(c.proper);
  EXPECT_EQ(c.hit[0], 0u);
  EXPECT_EQ(c.hit[1], 0u);
  // margin over unpaired (200 - 17) is 17: 6.02 * 17 > 60, capped; 37 + 40 > 60.
  ASSERT_EQ(pair_score(100, 100, 300, 300, 30), 200);
  EXPECT_EQ(c.mapq[0], 60);
  EXPECT_EQ(c.mapq[1], 60);
}

TEST(ChoosePair, RepetitiveMateTakesTheCopyNearItsMateAndGainsMapq) {
  // Mate 2's best hit is far away; its equal alternative lies 300 from mate 1.
  const std::vector<MateHit> hits[2] = {{hit(100, false)}, {hit(50000, true), hit(300, true)}};
  const int mapq[2] = {37, 0};
  const PairChoice c = choose_pair(hits, mapq, model_300_30(), PairScoring{});
  EXPECT_TRUE(c.proper);
  EXPECT_EQ(c.hit[1], 1u);
  EXPECT_EQ(c.mapq[0], 60);
  EXPECT_EQ(c.mapq[1], 40);  // 0 + 40 below the pair's 60
}

TEST(ChoosePair, TwoCopiesInTheWindowGiveNoPairMapq) {
  const std::vector<MateHit> hits[2] = {{hit(100, false)}, {hit(300, true), hit(310, true)}};
  const int mapq[2] = {37, 0};
  // Insert sizes 300 and 310, as far from the mean 305: equal pair scores.
  ASSERT_EQ(pair_score(100, 100, 300, 305, 30), pair_score(100, 100, 310, 305, 30));
  const PairChoice c = choose_pair(hits, mapq, given("305,30"), PairScoring{});
  EXPECT_TRUE(c.proper);
  EXPECT_EQ(c.hit[1], 0u);  // the tie keeps the earlier hit
  EXPECT_EQ(c.mapq[0], 37);
  EXPECT_EQ(c.mapq[1], 0);
}

// Mate 2 exact at insert 300 (pair score 200) or with one mismatch at 310 (95 + the likelihood
// of a third of a std: 195): MAPQ 6.02 * (200 - 195) less 4.343 ln 2 for the one pair near the
// second, 30 - 3.
TEST(ChoosePair, ASecondPairLowersThePairMapq) {
  const PairScoring scoring;
  const std::vector<MateHit> hits[2] = {{hit(1000, false)}, {hit(1200, true), hit(1210, true, ungapped_score(100, 1, scoring))}};
  ASSERT_EQ(pair_score(100, 95, 310, 300, 30), 195);
  const int mapq[2] = {37, 23};
  const PairChoice c = choose_pair(hits, mapq, model_300_30(), scoring);
  ASSERT_TRUE(c.proper);
  EXPECT_EQ(c.hit[1], 0u);
  const int pair_mapq = static_cast<int>(6.02 * 5 + .499) - static_cast<int>(4.343 * std::log(2.0) + .499);
  ASSERT_EQ(pair_mapq, 27);
  EXPECT_EQ(c.mapq[0], 37);
  EXPECT_EQ(c.mapq[1], 27);
}

TEST(ChoosePair, DiscordantPairsStayUnpaired) {
  const int mapq[2] = {37, 25};
  const std::vector<MateHit> too_far[2] = {{hit(100, false)}, {hit(8000, true)}};
  const std::vector<MateHit> rf[2] = {{hit(300, false)}, {hit(100, true)}};
  const std::vector<MateHit> ff[2] = {{hit(100, false)}, {hit(300, false)}};
  const std::vector<MateHit> contigs[2] = {{hit(100, false)}, {hit(300, true, 100, 1)}};
  for (const auto* hits : {&too_far, &rf, &ff, &contigs}) {
    const PairChoice c = choose_pair(*hits, mapq, model_300_30(), PairScoring{});
    EXPECT_FALSE(c.proper);
    EXPECT_EQ(c.mapq[0], 37);
    EXPECT_EQ(c.mapq[1], 25);
  }
  const std::vector<MateHit> fine[2] = {{hit(100, false)}, {hit(300, true)}};
  EXPECT_FALSE(choose_pair(fine, mapq, InsertSizeModel{}, PairScoring{}).proper);  // no model
}

// Mate 2's best hit (score 100) is far; an alternative with m mismatches (score 100 - 5 m) lies at
// the mean. Paired beats unpaired (183) only when 200 - 5 m > 183: m = 3 pairs, m = 4 does not.
TEST(ChoosePair, UnpairedPenaltyDecides) {
  const int mapq[2] = {37, 37};
  const PairScoring scoring;
  const std::vector<MateHit> four[2] = {{hit(100, false)}, {hit(50000, true), hit(300, true, ungapped_score(100, 4, scoring))}};
  EXPECT_FALSE(choose_pair(four, mapq, model_300_30(), scoring).proper);
  const std::vector<MateHit> three[2] = {{hit(100, false)}, {hit(50000, true), hit(300, true, ungapped_score(100, 3, scoring))}};
  const PairChoice c = choose_pair(three, mapq, model_300_30(), scoring);
  ASSERT_TRUE(c.proper);
  EXPECT_EQ(c.hit[1], 1u);
  const int pair_mapq = static_cast<int>(6.02 * (185 - 183) + .499);  // 12
  EXPECT_EQ(c.mapq[0], 37);         // above the pair's
  EXPECT_EQ(c.mapq[1], pair_mapq);  // its hit is not its best: single-end 0, raised to the pair's
}

// bwa mem's q_pe * (1 - (frac_rep1 + frac_rep2) / 2): the unique-mate pair of RepetitiveMate... above
// (pair MAPQ 60) with repeat fractions 0.5 and 0.3 has a pair MAPQ of 36, which mate 2 (0) rises
// to and mate 1 (37) stays above.
TEST(ChoosePair, RepeatFractionsScaleThePairMapq) {
  const std::vector<MateHit> hits[2] = {{hit(100, false)}, {hit(50000, true), hit(300, true)}};
  const int mapq[2] = {37, 0};
  const float repeats[2] = {0.5f, 0.3f};
  const PairChoice c = choose_pair(hits, mapq, model_300_30(), PairScoring{}, repeats);
  ASSERT_TRUE(c.proper);
  const int pair_mapq = static_cast<int>(60 * (1.0 - 0.5 * (0.5 + 0.3)) + .499);
  ASSERT_EQ(pair_mapq, 36);
  EXPECT_EQ(c.mapq[0], 37);
  EXPECT_EQ(c.mapq[1], 36);
  const float none[2] = {0, 0};
  EXPECT_EQ(choose_pair(hits, mapq, model_300_30(), PairScoring{}, none).mapq[1], 40);
  const float all[2] = {1, 1};
  EXPECT_EQ(choose_pair(hits, mapq, model_300_30(), PairScoring{}, all).mapq[1], 0);
}

// bwa mem's cap at the tandem repeat score: a chosen hit whose rescue window held a second copy
// scoring 95 (csub) rises to at most 6.02 * (100 - 95) = 30, from its 0 + 40; its mate (no csub)
// is untouched; the cap also lowers a single-end MAPQ above it.
TEST(ChoosePair, TandemCopyCapsTheRaisedMapq) {
  std::vector<MateHit> hits[2] = {{hit(100, false)}, {hit(50000, true), hit(300, true)}};
  hits[1][1].tandem_sub = 95;
  const int mapq[2] = {37, 0};
  PairChoice c = choose_pair(hits, mapq, model_300_30(), PairScoring{});
  ASSERT_TRUE(c.proper);
  ASSERT_EQ(c.hit[1], 1u);
  EXPECT_EQ(c.mapq[0], 60);
  EXPECT_EQ(c.mapq[1], static_cast<int>(6.02 * 5 + .499));
  hits[0][0].tandem_sub = 96;  // 6.02 * 4 = 24 < 37
  c = choose_pair(hits, mapq, model_300_30(), PairScoring{});
  EXPECT_EQ(c.mapq[0], static_cast<int>(6.02 * 4 + .499));
}

// mem_sam_pe gives a chosen secondary its primary's score as sub, so its single-end MAPQ is 0
// whatever the read's: raised by the pair to at most 0 + 40, not to the pair's 60.
TEST(ChoosePair, AChosenSecondaryStartsFromZero) {
  std::vector<MateHit> hits[2] = {{hit(100, false)}, {hit(50000, true), hit(300, true)}};
  hits[1][1].secondary = true;
  const int mapq[2] = {37, 25};
  const PairChoice c = choose_pair(hits, mapq, model_300_30(), PairScoring{});
  ASSERT_EQ(c.hit[1], 1u);
  EXPECT_EQ(c.mapq[1], 40);
  hits[1][1].secondary = false;  // another part's primary of equal score keeps the read's (bwa: its own)
  EXPECT_EQ(choose_pair(hits, mapq, model_300_30(), PairScoring{}).mapq[1], 60);
}

// Short hits (scores 4 and 4): the only pair scores floor(8 + 0.721 ln 2 + .499) = 8 against
// bwa's sub 0 (no second pair; unpaired 8 - 17 < 0), so the pair MAPQ is 6.02 * 8 = 48, not
// 6.02 * 17; each mate then rises from 10 to 48, capped at 6.02 * 4 = 24 (csub 0).
TEST(ChoosePair, WithoutASecondPairTheSubIsZero) {
  const std::vector<MateHit> hits[2] = {{hit(100, false, 4)}, {hit(300, true, 4)}};
  const int mapq[2] = {10, 10};
  ASSERT_EQ(pair_score(4, 4, 300, 300, 30), 8);
  const PairChoice c = choose_pair(hits, mapq, model_300_30(), PairScoring{});
  ASSERT_TRUE(c.proper);
  ASSERT_EQ(static_cast<int>(6.02 * 8 + .499), 48);
  EXPECT_EQ(c.mapq[0], static_cast<int>(6.02 * 4 + .499));
  EXPECT_EQ(c.mapq[1], 24);
  const int high[2] = {50, 50};  // the cap lowers a single-end MAPQ too
  EXPECT_EQ(choose_pair(hits, high, model_300_30(), PairScoring{}).mapq[0], 24);
}

// A pair inside the bounds scoring 0 (an insert 370 std from the mean: its likelihood underflows)
// is no pair to mem_pair, so bwa mem goes to no_pairing, which flags the best hits proper when
// they are within the bounds, and keeps the single-end MAPQs.
TEST(ChoosePair, APairScoringZeroIsFlaggedProperWithoutRaisingMapq) {
  const InsertSizeModel wide = given("300,10,5000");
  const std::vector<MateHit> hits[2] = {{hit(100, false)}, {hit(4000, true)}};
  ASSERT_TRUE(within_bounds(hits[0][0], hits[1][0], wide));
  const int mapq[2] = {7, 3};
  const PairChoice c = choose_pair(hits, mapq, wide, PairScoring{});
  EXPECT_TRUE(c.proper);
  EXPECT_EQ(c.mapq[0], 7);
  EXPECT_EQ(c.mapq[1], 3);
}

TEST(UngappedScore, IsBwaMemsMatchAndMismatch) {
  EXPECT_EQ(ungapped_score(100, 0, PairScoring{}), 100);
  EXPECT_EQ(ungapped_score(100, 2, PairScoring{}), 90);
  EXPECT_EQ(ungapped_score(150, 1, PairScoring{2, 8, 17}), 290);
}

WrittenMate written(bool mapped, std::uint32_t contig, std::uint64_t position, bool reverse, int mapq) {
  return WrittenMate{mapped, contig, position, position + 100, reverse, mapq, mapped ? "100M" : ""};
}

TEST(MateFields, ProperFrPair) {
  const WrittenMate mates[2] = {written(true, 2, 100, false, 60), written(true, 2, 300, true, 40)};
  MateFields f[2];
  mate_fields(mates, true, f);
  EXPECT_EQ(f[0].flag, 0x1 | 0x2 | 0x20 | 0x40);
  EXPECT_EQ(f[1].flag, 0x1 | 0x2 | 0x80);
  EXPECT_EQ(f[0].mate_contig, 2);
  EXPECT_EQ(f[0].mate_position, 300);
  EXPECT_EQ(f[1].mate_position, 100);
  EXPECT_EQ(f[0].tlen, 300);   // 5' ends 100 and 400
  EXPECT_EQ(f[1].tlen, -300);
  EXPECT_EQ(f[0].mapq, 60);
  EXPECT_EQ(f[0].mate_mapq, 40);
  EXPECT_EQ(f[1].mate_mapq, 60);
  EXPECT_TRUE(f[0].has_mate_cigar);
  EXPECT_EQ(f[0].mate_cigar, "100M");
  EXPECT_EQ(f[0].contig, -1);  // mapped: keeps its own place
}

// samtools fixmate's TLEN (bam_mate.c): the mate's 5' end less this read's, a forward read's
// being its position and a reverse read's its end past its last base (bam_endpos). Mate 1
// reverse at [100, 200) (5' end 200), mate 2 forward at 300: 300 - 200 = 100 (bwa mem writes
// 102: d + sign(d) from the last base, 199).
TEST(MateFields, RfPairTlenIsFixmates) {
  const WrittenMate mates[2] = {written(true, 0, 100, true, 37), written(true, 0, 300, false, 37)};
  MateFields f[2];
  mate_fields(mates, false, f);
  EXPECT_EQ(f[0].flag, 0x1 | 0x40);
  EXPECT_EQ(f[1].flag, 0x1 | 0x20 | 0x80);
  EXPECT_EQ(f[0].tlen, 100);
  EXPECT_EQ(f[1].tlen, -100);
}

// Same strand: forward mates at 1000 and 1250 give 1250 - 1000 = 250 (bwa: 251); reverse mates
// at [1250, 1350) and [1000, 1100): 5' ends 1350 and 1100, 250 too; one 5' end: 0.
TEST(MateFields, SameStrandTlenIsFixmates) {
  MateFields f[2];
  const WrittenMate forward[2] = {written(true, 0, 1000, false, 60), written(true, 0, 1250, false, 60)};
  mate_fields(forward, false, f);
  EXPECT_EQ(f[0].tlen, 250);
  EXPECT_EQ(f[1].tlen, -250);
  EXPECT_EQ(f[0].flag, 0x1 | 0x40);
  const WrittenMate backward[2] = {written(true, 0, 1250, true, 60), written(true, 0, 1000, true, 60)};
  mate_fields(backward, false, f);
  EXPECT_EQ(f[0].tlen, -250);
  EXPECT_EQ(f[1].tlen, 250);
  EXPECT_EQ(f[0].flag, 0x1 | 0x20 | 0x40);
  const WrittenMate together[2] = {written(true, 0, 1000, false, 60), written(true, 0, 1000, false, 60)};
  mate_fields(together, false, f);
  EXPECT_EQ(f[0].tlen, 0);
  EXPECT_EQ(f[1].tlen, 0);
}

// A 5' end as fixmate takes it: a forward read's first base, a reverse read's end (exclusive).
TEST(TemplateLength, FivePrimeEndIsFixmates) {
  EXPECT_EQ(five_prime_end(100, 200, false), 100);
  EXPECT_EQ(five_prime_end(100, 200, true), 200);
  EXPECT_EQ(five_prime_end(0, 1, true), 1);
}

// Mates of 100 bases where the orientations meet their edge cases: FR overlapping ([100, 200)
// forward, [150, 250) reverse: 250 - 100 = 150, the fragment), FR with the reverse mate inside
// the forward one's span ([100, 200), [120, 170) of 50 bases: 170 - 100 = 70), RF touching
// (reverse [100, 200), forward at 200: 200 - 200 = 0; bwa's 2) and RF overlapping (reverse
// [100, 200), forward at 150: 150 - 200 = -50 for the reverse mate, though it starts leftmost).
TEST(TemplateLength, OverlappingAndTouchingMates) {
  MateFields f[2];
  const WrittenMate overlapping[2] = {written(true, 0, 100, false, 60), written(true, 0, 150, true, 60)};
  mate_fields(overlapping, true, f);
  EXPECT_EQ(f[0].tlen, 150);
  EXPECT_EQ(f[1].tlen, -150);
  WrittenMate inside[2] = {written(true, 0, 100, false, 60), written(true, 0, 120, true, 60)};
  inside[1].end = 170;
  mate_fields(inside, true, f);
  EXPECT_EQ(f[0].tlen, 70);
  EXPECT_EQ(f[1].tlen, -70);
  const WrittenMate touching[2] = {written(true, 0, 100, true, 60), written(true, 0, 200, false, 60)};
  mate_fields(touching, false, f);
  EXPECT_EQ(f[0].tlen, 0);
  EXPECT_EQ(f[1].tlen, 0);
  const WrittenMate crossing[2] = {written(true, 0, 100, true, 60), written(true, 0, 150, false, 60)};
  mate_fields(crossing, false, f);
  EXPECT_EQ(f[0].tlen, -50);
  EXPECT_EQ(f[1].tlen, 50);
}

TEST(MateFields, DifferentContigsHaveNoTlen) {
  const WrittenMate mates[2] = {written(true, 0, 100, false, 37), written(true, 1, 300, true, 37)};
  MateFields f[2];
  mate_fields(mates, false, f);
  EXPECT_EQ(f[0].tlen, 0);
  EXPECT_EQ(f[1].tlen, 0);
  EXPECT_EQ(f[0].mate_contig, 1);
  EXPECT_EQ(f[1].mate_contig, 0);
}

// bwa mem's mem_aln2sam: an unmapped mate takes its mapped mate's place and strand (0x10), so
// the mapped one's 0x20 is its own strand and its RNEXT/PNEXT its own place; MQ:i:0 names the
// unmapped mate's MAPQ, and MC:Z:* its CIGAR (samtools fixmate's; bwa writes no MC there).
TEST(MateFields, UnmappedMateStandsAtItsMate) {
  const WrittenMate mates[2] = {written(true, 3, 500, true, 37), written(false, 0, 0, false, 0)};
  MateFields f[2];
  mate_fields(mates, false, f);
  EXPECT_EQ(f[0].flag, 0x1 | 0x8 | 0x20 | 0x40);  // 0x20: the mate stands on this one's strand
  EXPECT_EQ(f[1].flag, 0x1 | 0x20 | 0x80);
  EXPECT_EQ(f[0].mate_contig, 3);
  EXPECT_EQ(f[0].mate_position, 500);  // the unmapped mate's place: its own
  EXPECT_EQ(f[1].contig, 3);
  EXPECT_EQ(f[1].position, 500);
  EXPECT_TRUE(f[1].reverse);  // 0x10 on the unmapped mate, SEQ reverse complemented
  EXPECT_FALSE(f[0].reverse);
  EXPECT_EQ(f[1].mate_position, 500);
  EXPECT_EQ(f[0].tlen, 0);
  EXPECT_EQ(f[1].tlen, 0);
  EXPECT_EQ(f[0].mate_mapq, 0);
  EXPECT_TRUE(f[0].has_mate_cigar);
  EXPECT_EQ(f[0].mate_cigar, "*");
  EXPECT_EQ(f[1].mate_mapq, 37);
  EXPECT_TRUE(f[1].has_mate_cigar);
  EXPECT_EQ(f[1].mate_cigar, "100M");
  // A forward mapped mate: neither 0x20 nor 0x10.
  const WrittenMate forward[2] = {written(false, 0, 0, false, 0), written(true, 1, 70, false, 20)};
  mate_fields(forward, false, f);
  EXPECT_EQ(f[0].flag, 0x1 | 0x40);
  EXPECT_EQ(f[1].flag, 0x1 | 0x8 | 0x80);
  EXPECT_FALSE(f[0].reverse);
  EXPECT_EQ(f[0].mate_mapq, 20);
  EXPECT_EQ(f[0].mate_cigar, "100M");
  EXPECT_EQ(f[1].mate_cigar, "*");
}

TEST(MateFields, BothUnmapped) {
  const WrittenMate mates[2] = {written(false, 0, 0, false, 0), written(false, 0, 0, false, 0)};
  MateFields f[2];
  mate_fields(mates, false, f);
  EXPECT_EQ(f[0].flag, 0x1 | 0x8 | 0x40);
  EXPECT_EQ(f[1].flag, 0x1 | 0x8 | 0x80);
  for (const MateFields& m : f) {
    EXPECT_EQ(m.mate_contig, -1);
    EXPECT_EQ(m.mate_position, -1);
    EXPECT_EQ(m.contig, -1);
    EXPECT_EQ(m.mate_mapq, 0);  // bwa writes MQ:i:0
    EXPECT_FALSE(m.has_mate_cigar);  // neither mapped: fixmate writes no MC
  }
}

// flagstat's view of pairs: proper, both mapped (and on different contigs), singletons.
TEST(PairTotals, CountsFromTheFields) {
  const WrittenMate on0 = written(true, 0, 100, false, 37), on0r = written(true, 0, 300, true, 37);
  const WrittenMate on1 = written(true, 1, 300, true, 37), none = written(false, 0, 0, false, 0);
  const WrittenMate pairs[4][2] = {{on0, on0r}, {on0, on1}, {none, on0r}, {none, none}};
  const bool proper[4] = {true, false, false, false};
  PairTotals totals;
  for (int p = 0; p < 4; ++p) {
    MateFields f[2];
    mate_fields(pairs[p], proper[p], f);
    totals.add(f[0], f[1]);
  }
  EXPECT_EQ(totals.pairs, 4u);
  EXPECT_EQ(totals.proper, 1u);
  EXPECT_EQ(totals.both_mapped, 2u);
  EXPECT_EQ(totals.different_contigs, 1u);
  EXPECT_EQ(totals.singletons, 1u);
  EXPECT_EQ(totals.mates_mapq_positive, 5u);  // every mapped mate (MAPQ 37)
}

TEST(CigarText, BamOpsToSamAndEmptyToStar) {
  EXPECT_EQ(gapped::cigar_text({}), "*");
  EXPECT_EQ(gapped::cigar_text({5u << 4 | 4, 48u << 4 | 0, 2u << 4 | 1, 45u << 4 | 0, 3u << 4 | 2}), "5S48M2I45M3D");
}

gapped::GappedHit gapped_hit(std::uint32_t contig, std::uint64_t position, bool reverse, std::int32_t score,
                             std::vector<std::uint32_t> cigar, std::uint64_t reference_length) {
  gapped::GappedHit h;
  h.contig = contig;
  h.position = position;
  h.reference_end = position + reference_length;
  h.reverse = reverse;
  h.score = score;
  h.cigar = std::move(cigar);
  return h;
}

// Two mapped gapped mates with these primaries and single-end MAPQs.
void mapped_mates(gapped::GappedReadAlignment (&mates)[2], gapped::GappedHit first, int first_mapq,
                  gapped::GappedHit second, int second_mapq) {
  mates[0] = mates[1] = gapped::GappedReadAlignment{};
  mates[0].mapped = mates[1].mapped = true;
  mates[0].primary = std::move(first);
  mates[0].mapq = static_cast<std::uint8_t>(first_mapq);
  mates[1].primary = std::move(second);
  mates[1].mapq = static_cast<std::uint8_t>(second_mapq);
}

// The gapped mode through the same pairing: mate 2's best hit is far away, an alternative with a
// 2-base deletion (reference span 102) lies by mate 1 and scores as well: it becomes the primary,
// TLEN runs to its reference end, and mate 1's MC is its CIGAR.
TEST(PairGappedMates, AlternativeByTheMateBecomesPrimary) {
  gapped::GappedReadAlignment mates[2];
  mates[0].mapped = mates[1].mapped = true;
  mates[0].primary = gapped_hit(0, 1000, false, 100, {100u << 4}, 100);
  mates[0].mapq = 60;
  const std::vector<std::uint32_t> deletion = {50u << 4, 2u << 4 | 2, 50u << 4};
  mates[1].primary = gapped_hit(0, 90000, true, 89, deletion, 102);
  mates[1].alternatives = {gapped_hit(0, 1198, true, 89, deletion, 102)};
  mates[1].mapq = 0;
  MateFields f[2];
  pair_gapped_mates(mates, model_300_30(), PairScoring{}, f);
  EXPECT_EQ(mates[1].primary.position, 1198u);
  EXPECT_EQ(mates[1].alternatives[0].position, 90000u);
  EXPECT_EQ(f[0].flag, 0x1 | 0x2 | 0x20 | 0x40);
  EXPECT_EQ(f[0].tlen, 1300 - 1000);  // mate 2's 5' end: its reference end
  EXPECT_EQ(f[1].tlen, -300);
  EXPECT_EQ(f[0].mate_cigar, "50M2D50M");
  EXPECT_EQ(f[1].mate_cigar, "100M");
  EXPECT_EQ(f[0].mapq, 60);
  EXPECT_EQ(f[1].mapq, 40);  // 0 raised by the pair, by at most 40
  EXPECT_EQ(mates[1].mapq, 40);
  EXPECT_EQ(f[0].mate_mapq, 40);
}

// A split mate (a supplementary hit) is paired by its primary only: the same alternative as above
// stays an alternative, no pair is proper, and the MAPQs stay single-end.
TEST(PairGappedMates, SplitMateOffersItsPrimaryOnly) {
  gapped::GappedReadAlignment mates[2];
  mapped_mates(mates, gapped_hit(0, 1000, false, 100, {100u << 4}, 100), 60,
               gapped_hit(0, 90000, true, 60, {60u << 4, 40u << 4 | 4}, 60), 0);
  mates[1].supplementary = {gapped_hit(0, 50000, true, 40, {60u << 4 | 4, 40u << 4}, 40)};
  mates[1].alternatives = {gapped_hit(0, 1240, true, 60, {60u << 4, 40u << 4 | 4}, 60)};
  MateFields f[2];
  pair_gapped_mates(mates, model_300_30(), PairScoring{}, f);
  EXPECT_EQ(mates[1].primary.position, 90000u);
  EXPECT_EQ(f[0].flag & kSamProperPair, 0);
  EXPECT_EQ(f[0].mapq, 60);
  EXPECT_EQ(f[1].mapq, 0);
}

// bwa mem pairs no split read (is_multi, then no_pairing): mate 2's primary lies 300 from mate 1,
// so the pair is flagged proper, but both keep their single-end MAPQs (paired they would rise to
// 60 and 20 + 40); and mate 1, whose primary is far, is not moved to its alternative by mate 2.
TEST(PairGappedMates, SplitMateIsFlaggedAtItsPrimaryButNotPaired) {
  gapped::GappedReadAlignment mates[2];
  mapped_mates(mates, gapped_hit(0, 1000, false, 100, {100u << 4}, 100), 30,
               gapped_hit(0, 1240, true, 60, {60u << 4, 40u << 4 | 4}, 60), 20);
  mates[1].supplementary = {gapped_hit(0, 50000, true, 40, {60u << 4 | 4, 40u << 4}, 40)};
  MateFields f[2];
  pair_gapped_mates(mates, model_300_30(), PairScoring{}, f);
  EXPECT_EQ(f[0].flag & kSamProperPair, kSamProperPair);
  EXPECT_EQ(f[0].mapq, 30);
  EXPECT_EQ(f[1].mapq, 20);
  EXPECT_EQ(mates[1].mapq, 20);
  EXPECT_EQ(f[0].tlen, 1300 - 1000);

  gapped::GappedReadAlignment far[2] = {mates[0], mates[1]};
  far[0].primary = gapped_hit(0, 70000, false, 100, {100u << 4}, 100);
  far[0].alternatives = {gapped_hit(0, 1000, false, 100, {100u << 4}, 100)};
  far[0].mapq = 0;
  pair_gapped_mates(far, model_300_30(), PairScoring{}, f);
  EXPECT_EQ(far[0].primary.position, 70000u);
  EXPECT_EQ(f[0].flag & kSamProperPair, 0);
  EXPECT_EQ(f[0].mapq, 0);
  EXPECT_EQ(f[1].mapq, 20);
}

// The gapped mode scales the pair MAPQ by the mates' repeat fractions (GappedReadAlignment's):
// a unique pair at the mean (pair MAPQ 60) with 0.4 and 0.2 gives 42, which mate 2 (single-end
// 10) rises to and mate 1 (60) stays above.
TEST(PairGappedMates, RepeatFractionsScaleThePairMapq) {
  gapped::GappedReadAlignment mates[2];
  mapped_mates(mates, gapped_hit(0, 1000, false, 100, {100u << 4}, 100), 60, gapped_hit(0, 1200, true, 100, {100u << 4}, 100), 10);
  mates[0].repeat_fraction = 0.4f;
  mates[1].repeat_fraction = 0.2f;
  MateFields f[2];
  pair_gapped_mates(mates, model_300_30(), PairScoring{}, f);
  EXPECT_EQ(f[0].flag & kSamProperPair, kSamProperPair);
  EXPECT_EQ(f[0].mapq, 60);
  EXPECT_EQ(f[1].mapq, static_cast<int>(60 * (1 - 0.5 * (0.4 + 0.2)) + .499));
  EXPECT_EQ(f[1].mapq, 42);
}

// A supplementary line's TLEN runs from its own 5' end to the mate's (mem_aln2sam with the mate's
// primary, by fixmate's rule as the primary's); its other pair fields are its primary's.
TEST(SupplementaryMateFields, TlenFromTheLinesOwnFivePrimeEnd) {
  const WrittenMate mates[2] = {written(true, 0, 1000, false, 60), written(true, 0, 1200, true, 40)};
  MateFields f[2];
  mate_fields(mates, true, f);
  const gapped::GappedHit forward = gapped_hit(0, 700, false, 40, {60u << 4 | 4, 40u << 4}, 40);
  const gapped::GappedHit reverse = gapped_hit(0, 5000, true, 40, {60u << 4 | 4, 40u << 4}, 40);
  const gapped::GappedHit elsewhere = gapped_hit(3, 700, false, 40, {60u << 4 | 4, 40u << 4}, 40);
  const MateFields s = supplementary_mate_fields(f[0], forward);
  EXPECT_EQ(s.tlen, 1300 - 700);  // the mate's 5' end is its end, 1300
  EXPECT_EQ(s.flag, f[0].flag);
  EXPECT_EQ(s.mate_contig, 0);
  EXPECT_EQ(s.mate_position, 1200);
  EXPECT_EQ(s.mate_cigar, "100M");
  EXPECT_EQ(s.mate_mapq, 40);
  EXPECT_EQ(supplementary_mate_fields(f[0], reverse).tlen, 1300 - 5040);  // own 5' end 5040
  EXPECT_EQ(supplementary_mate_fields(f[0], elsewhere).tlen, 0);
}

// bwa prints the mate's CIGAR on a supplementary line as it prints that line's own (add_cigar
// with the line's index): soft clips hard unless -Y.
TEST(SupplementaryMateFields, MateCigarClipsAreHardUnlessSoftClipSupplementary) {
  WrittenMate mates[2] = {written(true, 0, 1000, false, 60), written(true, 0, 1200, true, 40)};
  mates[1].cigar = "5S90M5S";
  MateFields f[2];
  mate_fields(mates, true, f);
  const gapped::GappedHit line = gapped_hit(0, 700, false, 40, {60u << 4 | 4, 40u << 4}, 40);
  EXPECT_EQ(f[0].mate_cigar, "5S90M5S");  // the primary line: as the mate's record has it
  EXPECT_EQ(supplementary_mate_fields(f[0], line).mate_cigar, "5H90M5H");
  EXPECT_EQ(supplementary_mate_fields(f[0], line, true).mate_cigar, "5S90M5S");
}

// With the mate unmapped, bwa places that mate at each line it writes (mem_aln2sam copies the
// line to the mate): a supplementary line's RNEXT/PNEXT are its own, 0x20 its own strand, TLEN 0;
// MC:Z:* as on its primary.
TEST(SupplementaryMateFields, UnmappedMateStandsAtTheLine) {
  const WrittenMate alone[2] = {written(true, 0, 1000, false, 60), written(false, 0, 0, false, 0)};
  MateFields f[2];
  mate_fields(alone, false, f);
  const gapped::GappedHit reverse = gapped_hit(2, 5000, true, 40, {60u << 4 | 4, 40u << 4}, 40);
  const MateFields s = supplementary_mate_fields(f[0], reverse);
  EXPECT_EQ(s.tlen, 0);
  EXPECT_EQ(s.mate_contig, 2);
  EXPECT_EQ(s.mate_position, 5000);
  EXPECT_EQ(s.flag, 0x1 | 0x8 | 0x20 | 0x40);
  EXPECT_EQ(f[0].flag, 0x1 | 0x8 | 0x40);  // the primary is forward
  EXPECT_TRUE(s.has_mate_cigar);
  EXPECT_EQ(s.mate_cigar, "*");
  EXPECT_EQ(s.mate_mapq, 0);
}

gapped::PairCandidate candidate(std::uint64_t position, bool reverse, std::int32_t score, std::int32_t secondary,
                                std::uint32_t query_begin = 0, std::uint32_t query_end = 100) {
  return {0, position, position + 100, reverse, query_begin, query_end, score, score, secondary};
}

// bwa mem's XA of a mate moved to a secondary (mem_sam_pe's switch, then mem_gen_alt): its former
// primary and the primary's other secondaries scoring at least 0.8 of it, all or none (-h); one
// moved to another primary keeps that primary's own secondaries.
TEST(GappedWrittenCandidates, TheFormerPrimarysGroupAboveTheXaShareAllOrNone) {
  const std::vector<gapped::PairCandidate> c = {
      candidate(1000, false, 100, -1), candidate(2000, false, 100, 0), candidate(3000, false, 90, 0),
      candidate(4000, false, 70, 0),  // 70 < 0.8 * 90
      candidate(5000, false, 60, -1, 100, 160), candidate(6000, false, 50, 4, 100, 160)};
  PairScoring s;
  EXPECT_EQ(gapped_written_candidates(c, 2, s), (std::vector<std::size_t>{2, 0, 1}));
  EXPECT_EQ(gapped_written_candidates(c, 1, s), (std::vector<std::size_t>{1, 0, 2}));  // 70 < 80 still
  EXPECT_EQ(gapped_written_candidates(c, 4, s), (std::vector<std::size_t>{4, 5}));     // 50 >= 48
  s.max_xa_hits = 1;
  EXPECT_EQ(gapped_written_candidates(c, 2, s), (std::vector<std::size_t>{2}));
  EXPECT_EQ(gapped_written_candidates(c, 4, s), (std::vector<std::size_t>{4, 5}));
}

// Both mates in a repeat of 3 copies, each mate's candidates all its copies though neither lists
// an XA: 3 proper pairs score alike, so the pair's MAPQ is 0 (6.02 * 0 - 4.343 ln 3 < 0) and the
// mates keep MAPQ 0. With the candidates left out (primaries only, in one copy) the one pair
// would raise both to 40: the bug this guards against.
TEST(PairGappedMates, TiedPairsOverUnreportedCandidatesKeepMapqZero) {
  gapped::GappedReadAlignment mates[2];
  for (int m = 0; m < 2; ++m) {
    mates[m].mapped = true;
    mates[m].mapq = 0;
    mates[m].sub_score = 100;
  }
  mates[0].primary = gapped_hit(0, 10000, false, 100, {100u << 4}, 100);
  mates[1].primary = gapped_hit(0, 10200, true, 100, {100u << 4}, 100);
  for (const std::uint64_t copy : {10000u, 30000u, 50000u}) {
    mates[0].candidates.push_back(candidate(copy, false, 100, mates[0].candidates.empty() ? -1 : 0));
    mates[1].candidates.push_back(candidate(copy + 200, true, 100, mates[1].candidates.empty() ? -1 : 0));
  }
  gapped::GappedReadAlignment without[2] = {mates[0], mates[1]};
  without[0].candidates.clear();
  without[1].candidates.clear();
  MateFields f[2], g[2];
  pair_gapped_mates(mates, model_300_30(), PairScoring{}, f);
  pair_gapped_mates(without, model_300_30(), PairScoring{}, g);
  EXPECT_EQ(f[0].flag & kSamProperPair, kSamProperPair);
  EXPECT_EQ(f[0].mapq, 0);
  EXPECT_EQ(f[1].mapq, 0);
  EXPECT_EQ(mates[0].primary.position, 10000u);  // ties keep the primaries
  EXPECT_EQ(g[0].mapq, 40);
  EXPECT_EQ(g[1].mapq, 40);
}

// A chosen candidate no hit holds (no CIGAR: rescue_mates did not run) leaves the pair unpaired
// rather than writing a place without its alignment; with its hit in pair_hits it is written.
TEST(PairGappedMates, AChosenCandidateNeedsItsHit) {
  gapped::GappedReadAlignment mates[2];
  mates[0].mapped = mates[1].mapped = true;
  mates[0].primary = gapped_hit(0, 1000, false, 100, {100u << 4}, 100);
  mates[0].mapq = 60;
  mates[0].candidates = {candidate(1000, false, 100, -1)};
  mates[1].primary = gapped_hit(0, 90000, true, 100, {100u << 4}, 100);
  mates[1].mapq = 0;
  mates[1].candidates = {candidate(90000, true, 100, -1), candidate(1200, true, 100, 0)};
  mates[1].primary.query_end = 100;  // a hit is its candidate's when their read parts agree too
  gapped::GappedReadAlignment ready[2] = {mates[0], mates[1]};
  ready[1].pair_hits = {gapped_hit(0, 1200, true, 100, {100u << 4}, 100)};
  ready[1].pair_hits[0].query_end = 100;
  MateFields f[2];
  pair_gapped_mates(mates, model_300_30(), PairScoring{}, f);
  EXPECT_EQ(f[0].flag & kSamProperPair, 0);
  EXPECT_EQ(mates[1].primary.position, 90000u);
  EXPECT_EQ(f[1].mapq, 0);
  pair_gapped_mates(ready, model_300_30(), PairScoring{}, f);
  EXPECT_EQ(f[0].flag & kSamProperPair, kSamProperPair);
  EXPECT_EQ(ready[1].primary.position, 1200u);
  ASSERT_EQ(ready[1].alternatives.size(), 1u);  // the former primary, 100 >= 0.8 * 100
  EXPECT_EQ(ready[1].alternatives[0].position, 90000u);
  EXPECT_EQ(ready[1].sub_score, 100);
  EXPECT_EQ(f[1].mapq, 40);
  EXPECT_EQ(f[0].tlen, 300);
}

TEST(GappedPairScoring, TakesTheRunsScoringAndTheCostOfOneDifference) {
  gapped::Scoring s;
  PairScoring p = gapped_pair_scoring(s, 17);
  EXPECT_EQ(p.match, 1);
  EXPECT_EQ(p.mismatch, 4);
  EXPECT_EQ(p.unpaired, 17);
  EXPECT_EQ(p.near_second, 7);  // max(1 + 4, 6 + 1, 6 + 1)
  s.match = 2;
  s.mismatch = 3;
  s.open_ins = 9;
  s.extend_ins = 2;
  p = gapped_pair_scoring(s, 5);
  EXPECT_EQ(p.match, 2);
  EXPECT_EQ(p.unpaired, 5);
  EXPECT_EQ(p.near_second, 11);  // max(2 + 3, 6 + 1, 9 + 2)
}

TEST(SampledInsertSize, GappedMatesUniqueEnoughAndFr) {
  gapped::GappedReadAlignment mates[2];
  mates[0].mapped = mates[1].mapped = true;
  mates[0].primary = gapped_hit(0, 1000, false, 100, {100u << 4}, 100);
  mates[1].primary = gapped_hit(0, 1198, true, 90, {50u << 4, 2u << 4 | 2, 50u << 4}, 102);
  EXPECT_EQ(sampled_insert_size(mates), 299);  // last base 1299, bwa's distance
  mates[1].sub_score = 72;  // exactly 0.8 of 90: still unique enough
  EXPECT_EQ(sampled_insert_size(mates), 299);
  mates[1].sub_score = 73;
  EXPECT_EQ(sampled_insert_size(mates), -1);
  mates[1].sub_score = 0;
  mates[1].primary.reverse = false;  // FF
  EXPECT_EQ(sampled_insert_size(mates), -1);
  mates[1].primary = gapped_hit(0, 20000, true, 90, {100u << 4}, 100);  // beyond 10000
  EXPECT_EQ(sampled_insert_size(mates), -1);
  mates[1].mapped = false;
  EXPECT_EQ(sampled_insert_size(mates), -1);
}

TEST(RescueWindow, WhereAProperMateLies) {
  const InsertSizeModel m = model_300_30();  // [180, 420]
  RescueWindow w = rescue_window(hit(1000, false), 100, m, 5000);
  EXPECT_EQ(w.begin, 1080u);  // a mate ending 180 after the anchor's start begins at 1080
  EXPECT_EQ(w.end, 1420u);
  EXPECT_TRUE(w.reverse);
  w = rescue_window(hit(1200, true), 100, m, 5000);  // anchor [1200, 1300)
  EXPECT_EQ(w.begin, 880u);
  EXPECT_EQ(w.end, 1220u);
  EXPECT_FALSE(w.reverse);
  w = rescue_window(hit(100, true), 100, m, 5000);  // cut at the contig's start
  EXPECT_EQ(w.begin, 0u);
  EXPECT_EQ(w.end, 120u);
  w = rescue_window(hit(4800, false), 100, m, 5000);  // and at its end
  EXPECT_EQ(w.begin, 4880u);
  EXPECT_EQ(w.end, 5000u);
  w = rescue_window(hit(4950, false), 100, m, 5000);  // wholly past it
  EXPECT_EQ(w.begin, w.end);
  w = rescue_window(hit(1000, false), 100, InsertSizeModel{}, 5000);  // no model
  EXPECT_EQ(w.begin, w.end);
}

std::vector<std::uint8_t> codes_of(const std::string& bases) {
  std::vector<std::uint8_t> codes;
  for (const char c : bases) codes.push_back(static_cast<std::uint8_t>(std::string("ACGT").find(c)));
  return codes;
}

// A mate with a 2-base deletion, found by a local alignment of it in its anchor's window on the
// CPU backend: [1198, 1300) on the reverse strand, its 100 bases matched less the gap's 6 + 2 * 1.
TEST(RescueWindow, LocalAlignmentInTheWindowFindsTheMate) {
  std::mt19937 rng(7);
  std::string reference;
  for (int i = 0; i < 5000; ++i) reference += "ACGT"[rng() % 4];
  const MateHit anchor = hit(1000, false);
  const std::string mate_forward = reference.substr(1198, 50) + reference.substr(1250, 50);  // as the window reads it
  const RescueWindow w = rescue_window(anchor, mate_forward.size(), model_300_30(), reference.size());
  ASSERT_TRUE(w.reverse);
  const std::vector<std::uint8_t> query = codes_of(mate_forward);
  const std::vector<std::uint8_t> target = codes_of(reference.substr(w.begin, w.end - w.begin));
  gapped::Scoring scoring;
  scoring.band = static_cast<std::int32_t>(target.size());
  gapped::GappedAligner aligner(Backend::cpu);
  const gapped::CodeArrays codes{query.data(), query.size(), target.data(), target.size()};
  const gapped::LocalTask task{0, 0, static_cast<std::uint32_t>(query.size()), static_cast<std::uint32_t>(target.size())};
  gapped::LocalResult found;
  ASSERT_TRUE(aligner.align_local(scoring, codes, &task, &found, 1).ok());
  const MateHit mate = rescued_hit(w, found.target_begin, found.target_end, found.score);
  EXPECT_EQ(mate.contig, anchor.contig);
  EXPECT_EQ(mate.position, 1198u);
  EXPECT_EQ(mate.end, 1300u);
  EXPECT_TRUE(mate.reverse);
  EXPECT_EQ(mate.score, 100 - (6 + 2 * 1));
  EXPECT_EQ(fr_insert_size(anchor, mate), 299);
}

// ---- PairedSamWriterSink: which pairs the estimate takes ----------------------------------

// Pair i of `inserts` (0: mate 2 unmapped): mate 1 forward at 1000 i, mate 2 reverse ending
// `insert` after it; 100 bases each, unique and exact (k-mismatch: MAPQ 37; gapped: AS 100, no
// sub-score, MAPQ 60).
// `first`: the number of pair 0, for parts of an input.
std::vector<ReadBatch> pair_batches(const std::vector<std::int64_t>& inserts, std::size_t pairs_per_batch,
                                    bool gapped = false, std::size_t first = 0) {
  std::vector<ReadBatch> batches;
  for (std::size_t i = 0; i < inserts.size(); ++i) {
    if (i % pairs_per_batch == 0) {
      batches.emplace_back();
      batches.back().number = batches.size() - 1;  // as the pipeline numbers them
    }
    ReadBatch& b = batches.back();
    for (int m = 0; m < 2; ++m) {
      SeqRecord& r = b.next_record();
      r.name = "pair" + std::to_string(first + i);
      r.sequence = std::string(100, "ACGT"[m]);
      r.quality = std::string(100, 'I');
      b.keep_record();
      const bool mapped = m == 0 || inserts[i] > 0;
      const std::uint64_t position = m == 0 ? 1000 * (first + i) : 1000 * (first + i) + inserts[i] - 100;
      if (gapped) {
        gapped::GappedReadAlignment a;
        a.mapped = mapped;
        if (mapped) a.primary = gapped_hit(0, position, m == 1, 100, {100u << 4}, 100);
        a.mapq = mapped ? 60 : 0;
        b.gapped_alignments.push_back(a);
        continue;
      }
      ReadAlignment a;
      a.mapped = mapped;
      a.best_count = 1;
      a.primary.position = position;
      a.primary.reverse = m == 1;
      b.alignments.push_back(a);
    }
  }
  return batches;
}

struct SinkRun {
  InsertSizeModel model;
  PairTotals totals;
  std::string sam;
  // The models on_settled was told, and how many of them before the first write().
  std::vector<InsertSizeModel> told;
  std::size_t told_before_writing = 0;
};

// `finish_order`: batches offered through batch_finished() in this order (indices) before any is
// written, as engines' finish stages do ahead of the writer; empty: none (the writer offers each).
SinkRun run_sink(const std::vector<ReadBatch>& batches, std::uint64_t sample_pairs, std::uint64_t window_pairs,
                 PairedSamWriterSink::Rescue rescue = {}, const InsertSizeModel& given = InsertSizeModel{},
                 const std::vector<std::size_t>& finish_order = {}) {
  const fmtest::TempDir dir;
  SamOptions options;
  options.path = dir.file("pairs.sam");
  auto writer = SamWriter::open(options, {{"c", 1000000}});
  EXPECT_TRUE(writer.ok());
  PairedSamWriterSink sink(*writer, 4, given, PairScoring{}, sample_pairs, window_pairs);
  sink.set_rescue(std::move(rescue));
  SinkRun run;
  sink.set_on_settled([&run](const InsertSizeModel& model) { run.told.push_back(model); });
  EXPECT_TRUE(sink.prepare(16).ok());
  for (const std::size_t b : finish_order) sink.batch_finished(batches.at(b));
  run.told_before_writing = run.told.size();
  for (ReadBatch b : batches) EXPECT_TRUE(sink.write(b).ok());  // a copy: the sink pairs it in place
  EXPECT_TRUE(sink.finish().ok());
  run.model = sink.model();
  run.totals = sink.totals();
  run.sam = fmtest::read_file(options.path);
  return run;
}

// Pairs 0..24 lack a mate, 25..59 are confident: a window of 20 pairs sees no confident pair (no
// model, nothing proper); a window of 100 takes pairs 25..34.
TEST(PairedSink, EstimateTakesTheConfidentPairsOfTheWindow) {
  std::vector<std::int64_t> inserts(60, 0);
  std::vector<std::int64_t> first_ten;
  for (std::size_t i = 25; i < 60; ++i) inserts[i] = 250 + static_cast<std::int64_t>(i * 7 % 100);
  for (std::size_t i = 25; i < 35; ++i) first_ten.push_back(inserts[i] - 1);  // bwa's distance: fragment - 1
  const SinkRun narrow = run_sink(pair_batches(inserts, 8), 10, 20);
  EXPECT_FALSE(narrow.model.known);
  EXPECT_EQ(narrow.model.pairs, 0u);
  EXPECT_EQ(narrow.totals.pairs, 60u);
  EXPECT_EQ(narrow.totals.proper, 0u);
  EXPECT_EQ(narrow.totals.singletons, 25u);
  const SinkRun wide = run_sink(pair_batches(inserts, 8), 10, 100);
  const InsertSizeModel expected = estimate_insert_size(first_ten);
  ASSERT_TRUE(wide.model.known);
  EXPECT_EQ(wide.model.pairs, 10u);
  EXPECT_EQ(wide.model.mean, expected.mean);
  EXPECT_EQ(wide.model.low, expected.low);
  EXPECT_EQ(wide.model.high, expected.high);
  std::uint64_t proper = 0;
  for (const std::int64_t insert : inserts) proper += insert - 1 >= expected.low && insert - 1 <= expected.high && insert > 0;
  EXPECT_EQ(wide.totals.proper, proper);
}

TEST(PairedSink, SameModelAndRecordsForAnyBatching) {
  std::vector<std::int64_t> inserts;
  for (std::int64_t i = 0; i < 60; ++i) inserts.push_back(i % 9 == 4 ? 0 : 200 + (i * 37) % 200);
  const SinkRun whole = run_sink(pair_batches(inserts, 60), 10, 40);
  ASSERT_TRUE(whole.model.known);
  ASSERT_EQ(whole.told.size(), 1u);
  EXPECT_EQ(whole.told[0].mean, whole.model.mean);
  for (const std::size_t per_batch : {1, 7, 13}) {
    const SinkRun split = run_sink(pair_batches(inserts, per_batch), 10, 40);
    EXPECT_EQ(split.model.mean, whole.model.mean) << per_batch;
    EXPECT_EQ(split.model.low, whole.model.low) << per_batch;
    EXPECT_EQ(split.model.high, whole.model.high) << per_batch;
    EXPECT_EQ(split.sam, whole.sam) << per_batch;
  }
}

// Engines' finish stages offer the batches ahead of the writer, in any order (several engines):
// the model settles once the batches holding the first 10 confident pairs were all offered, is
// told then (once, before any write), and the model and records are the writer's alone.
// Pairs 4, 13, 22, ... lack a mate, so the 10 confident pairs are pairs 0..10: in batches of 7,
// batches 0 and 1 hold them.
TEST(PairedSink, FinishStagesOfferingInAnyOrderSettleTheSameModelEarlier) {
  std::vector<std::int64_t> inserts;
  for (std::int64_t i = 0; i < 60; ++i) inserts.push_back(i % 9 == 4 ? 0 : 200 + (i * 37) % 200);
  const SinkRun written = run_sink(pair_batches(inserts, 7), 10, 40);
  ASSERT_TRUE(written.model.known);
  EXPECT_EQ(written.told_before_writing, 0u);
  const std::vector<std::size_t> orders[] = {{0, 1, 2, 3, 4, 5, 6, 7, 8},
                                             {8, 7, 6, 5, 4, 3, 2, 1, 0},
                                             {3, 1, 5, 2, 0, 8, 4, 6, 7},
                                             {1, 1, 0, 0}};
  for (const std::vector<std::size_t>& order : orders) {
    const SinkRun offered = run_sink(pair_batches(inserts, 7), 10, 40, {}, InsertSizeModel{}, order);
    ASSERT_EQ(offered.told.size(), 1u) << order[0];
    EXPECT_EQ(offered.told_before_writing, 1u) << order[0];
    EXPECT_EQ(offered.told[0].mean, written.model.mean) << order[0];
    EXPECT_EQ(offered.model.low, written.model.low) << order[0];
    EXPECT_EQ(offered.model.high, written.model.high) << order[0];
    EXPECT_EQ(offered.sam, written.sam) << order[0];
  }
  // Batch 1 alone, or batches 1..8 without batch 0, settle nothing ahead of the writer.
  for (const std::vector<std::size_t>& order : {std::vector<std::size_t>{1}, {8, 7, 6, 5, 4, 3, 2, 1}}) {
    const SinkRun offered = run_sink(pair_batches(inserts, 7), 10, 40, {}, InsertSizeModel{}, order);
    EXPECT_EQ(offered.told_before_writing, 0u);
    ASSERT_EQ(offered.told.size(), 1u);
    EXPECT_EQ(offered.sam, written.sam);
  }
}

// InsertSizeSample against the estimate of the pairs it should take: the first `sample` confident
// pairs (insert size > 0 here) among the first `window`, whatever the order of the offers; the
// offer that completes them returns the model, no other does.
TEST(InsertSizeSample, TakesTheFirstConfidentPairsOfTheWindowInInputOrder) {
  std::vector<std::int64_t> inserts;
  for (std::int64_t i = 0; i < 50; ++i) inserts.push_back(i % 3 == 0 ? 0 : 300 + (i * 53) % 150);
  const std::vector<ReadBatch> batches = pair_batches(inserts, 6);  // 9 batches
  for (const auto& [sample, window] : {std::pair<std::uint64_t, std::uint64_t>{10, 100}, {10, 12}, {100, 100}}) {
    std::vector<std::int64_t> expected;  // bwa's distance: fragment - 1
    for (std::size_t i = 0; i < std::min<std::size_t>(window, inserts.size()) && expected.size() < sample; ++i) {
      if (inserts[i] > 0) expected.push_back(inserts[i] - 1);
    }
    const InsertSizeModel want = estimate_insert_size(expected);
    // The last pair the sample takes, and so the batch whose offer completes it (none: the input ends first).
    std::size_t pairs_taken = 0, confident = 0;
    while (pairs_taken < inserts.size() && pairs_taken < window && confident < sample) confident += inserts[pairs_taken++] > 0;
    const bool completes = confident == sample || pairs_taken == window;
    const std::size_t completing_batch = (pairs_taken - 1) / 6;
    std::mt19937 shuffle(static_cast<unsigned>(sample + window));
    std::vector<std::size_t> order(batches.size());
    for (std::size_t b = 0; b < order.size(); ++b) order[b] = b;
    for (int round = 0; round < 5; ++round) {
      InsertSizeSample s(4, sample, window);
      std::size_t settled_by = batches.size();
      for (const std::size_t b : order) {
        if (const auto model = s.offer(batches[b])) {
          EXPECT_EQ(settled_by, batches.size()) << "settled twice";
          settled_by = b;
          EXPECT_EQ(model->mean, want.mean);
          EXPECT_EQ(model->pairs, want.pairs);
        }
      }
      if (completes) {
        // Settled by the offer after which batches 0..completing_batch had all been offered.
        std::size_t last_needed = 0;
        for (std::size_t k = 0; k < order.size(); ++k) {
          if (order[k] <= completing_batch) last_needed = k;
        }
        EXPECT_EQ(settled_by, order[last_needed]) << sample << " " << window;
        EXPECT_FALSE(s.settle_now());
      } else {
        EXPECT_EQ(settled_by, batches.size());
        EXPECT_FALSE(s.model());
        const auto model = s.settle_now();
        ASSERT_TRUE(model);
        EXPECT_EQ(model->pairs, want.pairs);
        EXPECT_EQ(model->mean, want.mean);
      }
      ASSERT_TRUE(s.model());
      EXPECT_EQ(s.model()->mean, want.mean);
      std::shuffle(order.begin(), order.end(), shuffle);
    }
  }
}

// The SAM records (no header) of `run`.
std::string records(const SinkRun& run) {
  std::string out;
  std::istringstream in(run.sam);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '@') out += line + "\n";
  }
  return out;
}

// Parts of one input (workflow/'s chunks), each given the whole run's model through
// insert_size_option, write the whole run's records; on their own, a part's records differ.
// Pairs 0..29 lack a mate, then inserts grow along the input, so a later part estimates another
// model (window 40: the whole run sees 10 confident pairs; window 20: none).
TEST(PairedSink, PartsGivenTheWholeRunsModelWriteItsRecords) {
  std::vector<std::int64_t> inserts(30, 0);
  for (std::int64_t i = 30; i < 120; ++i) inserts.push_back(200 + 4 * i + (i * 37) % 30);
  for (const std::uint64_t window : {40, 20}) {
    const SinkRun whole = run_sink(pair_batches(inserts, 120), 10, window);
    ASSERT_EQ(whole.model.known, window == 40);
    auto given = parse_insert_size(insert_size_option(whole.model));
    ASSERT_TRUE(given.ok());
    for (const std::size_t parts : {2, 3, 7}) {
      std::string given_records, own_records;
      const std::size_t per_part = (inserts.size() + parts - 1) / parts;
      for (std::size_t begin = 0; begin < inserts.size(); begin += per_part) {
        const std::vector<std::int64_t> part(inserts.begin() + begin,
                                             inserts.begin() + std::min(inserts.size(), begin + per_part));
        given_records += records(run_sink(pair_batches(part, 5, false, begin), 10, window, {}, *given));
        own_records += records(run_sink(pair_batches(part, 5, false, begin), 10, window));
      }
      EXPECT_EQ(given_records, records(whole)) << window << " " << parts;
      EXPECT_NE(own_records, records(whole)) << window << " " << parts;
    }
  }
}

// Gapped batches: the model from the same pairs as the k-mismatch mode's (unique mates, no
// sub-score), the rescue called on every batch with that model before pairing, its finds paired
// and written, and the same records for any batching.
TEST(PairedSink, GappedBatchesAreRescuedWithTheSettledModelThenPaired) {
  std::vector<std::int64_t> inserts;
  for (std::int64_t i = 0; i < 40; ++i) inserts.push_back(i % 5 == 2 ? 0 : 250 + (i * 13) % 100);
  const SinkRun mismatch = run_sink(pair_batches(inserts, 40), 10, 40);
  ASSERT_TRUE(mismatch.model.known);
  std::size_t calls = 0, pairs_seen = 0;
  // A stand-in for GappedMapper::rescue_mates: mate 2 of every pair without one ends 300 after mate 1.
  auto rescue = [&](const std::vector<SeqRecord>& reads, std::vector<gapped::GappedReadAlignment>& alignments,
                    const InsertSizeModel& model) {
    ++calls;
    pairs_seen += reads.size() / 2;
    EXPECT_EQ(model.mean, mismatch.model.mean);
    EXPECT_EQ(alignments.size(), reads.size());
    for (std::size_t i = 1; i < alignments.size(); i += 2) {
      if (alignments[i].mapped) continue;
      alignments[i].mapped = true;
      alignments[i].primary = gapped_hit(0, alignments[i - 1].primary.position + 200, true, 70, {100u << 4}, 100);
      alignments[i].mapq = 60;
    }
    return Status{};
  };
  const SinkRun whole = run_sink(pair_batches(inserts, 40, true), 10, 40, rescue);
  EXPECT_EQ(whole.model.mean, mismatch.model.mean);
  EXPECT_EQ(whole.model.low, mismatch.model.low);
  EXPECT_EQ(calls, 1u);
  EXPECT_EQ(pairs_seen, inserts.size());
  EXPECT_EQ(whole.totals.singletons, 0u);  // every unmapped mate was rescued
  std::uint64_t proper = 0;
  for (const std::int64_t insert : inserts) {
    const std::int64_t written = insert > 0 ? insert : 300;
    proper += written >= mismatch.model.low && written <= mismatch.model.high;
  }
  EXPECT_EQ(whole.totals.proper, proper);
  for (const std::size_t per_batch : {1, 7}) {
    calls = pairs_seen = 0;
    const SinkRun split = run_sink(pair_batches(inserts, per_batch, true), 10, 40, rescue);
    EXPECT_EQ(calls, (inserts.size() + per_batch - 1) / per_batch);
    EXPECT_EQ(pairs_seen, inserts.size());
    EXPECT_EQ(split.sam, whole.sam) << per_batch;
  }
}

}  // namespace
}  // namespace wtmap::aligner
