// `wtmap align` on pairs in the gapped mode (issue 26), with mate rescue, run as a user runs it:
// planted pairs -- exact mates, a mate with a deletion, a mate in a repeat placed by its unique
// mate, a mate no 19-base seed can find but a local alignment in its window can (rescued), pairs
// too far apart, in RF orientation or on two contigs, an unmapped mate, both unmapped, pairs at
// contig ends -- their SAM records read back through htslib and every pair field recomputed
// here from where the test planted the mates (pair_support.hpp), the rescued mate's AS against a
// full unbanded Smith-Waterman (gotoh_oracle.hpp); samtools fixmate changes nothing; the same
// records for two files and one interleaved file, any --batch, -t, and either device.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "align_oracle.hpp"
#include "cli_support.hpp"
#include "fm_support.hpp"
#include "gotoh_oracle.hpp"
#include "pair_support.hpp"
#include "sam_readback.hpp"
#include "wtmap/core/config.hpp"

namespace wtmap::altest {
namespace {

using fmtest::revcomp;
using fmtest::shell_quote;
using fmtest::TempDir;

// The rescued mate: a substitution at these read offsets leaves no exact match of 19 bases (the
// default --min-seed), yet its full-length alignment scores 100 - 6 * (1 + 4) = 70 >= -T 30.
constexpr std::size_t kRescueSubstitutions[] = {10, 25, 40, 55, 70, 85};
constexpr std::int64_t kRescuedScore = 70;

// The common pairs (pair_support.hpp) and two of the gapped mode's own.
class AlignGappedPairs : public PlantedPairSuite {
 protected:
  static void SetUpTestSuite() { build("", plant_gapped_pairs); }

  static void plant_gapped_pairs() {
    const std::string& c1 = contigs_[0].sequence;
    // Mate 2 lacks 3 reference bases in its middle: 103 reference bases, 5' end still at 14300.
    PlantedPair deletion = fragment("deletion", 0, 14000, 300, true);
    const std::string span = c1.substr(14197, 103);
    deletion.sequence[1] = revcomp(span.substr(0, 50) + span.substr(53));
    deletion.truth[1] = {true, 0, 14197, true, 103};
    deletion.proper = deletion.sampled = true;
    PlantedPair rescued = fragment("rescued", 0, 25000, 300, true);  // mate 2 reverse on [25200, 25300)
    for (const std::size_t at : kRescueSubstitutions) {
      char& base = rescued.sequence[1][at];
      base = "CGTA"[std::string("ACGT").find(base)];
    }
    rescued.proper = true;
    pairs_.push_back(deletion);
    pairs_.push_back(rescued);
  }
};

TEST_F(AlignGappedPairs, PairFieldsMatchThePlantedPairs) {
  const std::string out = dir_->file("pairs.sam");
  const auto run = align(two_files(), out);
  const SamContents sam = read_alignments(out);
  ASSERT_EQ(sam.records.size(), 2 * pairs_.size());
  for (std::size_t i = 0; i < pairs_.size(); ++i) {
    for (int m = 0; m < 2; ++m) {
      const SamRecord& self = sam.records[2 * i + m];
      // A unique unpaired mate keeps bwa mem's single-end MAPQ of an exact unique hit, 60.
      check_mate(pairs_[i], m, self, sam.records[2 * i + 1 - m], 60, {"repeat"});
      // Every planted mate but the deletion's is an end-to-end alignment without gaps.
      if (pairs_[i].truth[m].mapped && pairs_[i].name != "deletion") {
        EXPECT_EQ(self.cigar, "100M") << pairs_[i].name;
      }
    }
  }
  std::size_t proper = 0, sampled = 0, singletons = 0;
  for (const PlantedPair& p : pairs_) proper += p.proper, sampled += p.sampled, singletons += p.truth[0].mapped != p.truth[1].mapped;
  EXPECT_NE(run.err.find(std::to_string(pairs_.size()) + " pairs; " + std::to_string(proper) + " properly paired"),
            std::string::npos) << run.err;
  EXPECT_NE(run.err.find(std::to_string(singletons) + " singletons"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("insert size (FR, from " + std::to_string(sampled) + " pairs)"), std::string::npos) << run.err;
  std::size_t mapped = 0;
  for (const PlantedPair& p : pairs_) mapped += p.truth[0].mapped + p.truth[1].mapped;
  EXPECT_NE(run.err.find(std::to_string(2 * pairs_.size()) + " reads; " + std::to_string(mapped) + " mapped"),
            std::string::npos) << run.err;
}

// The deletion's mate: its CIGAR spans 100 read and 103 reference bases with one 3-base D, NM 3,
// AS 100 - (6 + 3 * 1) = 91 (100 matches at -A 1, a 3-base gap at -O 6 -E 1); its mate's MC is that CIGAR (check_mate).
TEST_F(AlignGappedPairs, MateWithADeletionIsPairedWithItsCigar) {
  const std::string out = dir_->file("deletion.sam");
  align(two_files(), out);
  const SamRecord mate2 = read_alignments(out).records[2 * index_of("deletion") + 1];
  EXPECT_EQ(mate2.pos, 14197);
  EXPECT_EQ(mate2.flag & 0x2, 0x2);
  const std::regex one_deletion("([0-9]+)M3D([0-9]+)M");
  std::smatch parts;
  ASSERT_TRUE(std::regex_match(mate2.cigar, parts, one_deletion)) << mate2.cigar;
  EXPECT_EQ(std::stoi(parts[1]) + std::stoi(parts[2]), 100);
  EXPECT_EQ(mate2.nm, 3);
  EXPECT_EQ(mate2.as, 91);
}

// The repeat's mate 2 has two exact copies: alone it has MAPQ 0; paired, it takes the copy 300
// bases from its unique mate and a MAPQ of its own (bwa mem: up to its single-end MAPQ + 40).
TEST_F(AlignGappedPairs, RepetitiveMateIsPlacedAndRaisedByItsUniqueMate) {
  const auto [alone, mate2] = alone_and_paired("repeat", 1);
  EXPECT_EQ(alone.mapq, 0);
  EXPECT_EQ(alone.xs, 100);  // the other copy
  EXPECT_EQ(mate2.pos, 5000);
  EXPECT_EQ(mate2.flag & 0x2, 0x2);
  EXPECT_EQ(mate2.mapq, 40);
}

// The rescued mate: single-end it is unmapped (no seed); paired, the local alignment in the window
// its mate's hit allows finds it where it was planted, scoring what a full unbanded
// Smith-Waterman of it against its reference surroundings scores, 70.
TEST_F(AlignGappedPairs, MateWithoutSeedsIsRescuedInItsWindow) {
  const auto [alone, mate2] = alone_and_paired("rescued", 1);
  EXPECT_EQ(alone.flag & 0x4, 0x4) << "seeds found the mate: the test plants it wrong";
  EXPECT_EQ(mate2.flag, 0x1 | 0x2 | 0x10 | 0x80);
  EXPECT_EQ(mate2.pos, 25200);
  EXPECT_EQ(mate2.cigar, "100M");
  EXPECT_EQ(mate2.nm, static_cast<std::int64_t>(std::size(kRescueSubstitutions)));
  EXPECT_GT(mate2.mapq, 0);
  // The oracle: the mate (as the forward strand reads it) against 400 bases around its place.
  const std::string around = contigs_[0].sequence.substr(25000, 400);
  const test::GotohMatrices g = test::gotoh(fmtest::pattern_codes(revcomp(pairs_[index_of("rescued")].sequence[1])),
                                            fmtest::pattern_codes(around), test::Scoring{}, test::OracleMode::local, 0,
                                            test::unbanded());
  EXPECT_EQ(test::local_answer(g).score, kRescuedScore);
  EXPECT_EQ(mate2.as, kRescuedScore);
}

TEST_F(AlignGappedPairs, NoUnpairedPenaltyPairsNothing) { expect_no_proper_pair_without_unpaired_penalty(); }

TEST_F(AlignGappedPairs, InterleavedGzipAnyBatchAndThreadsGiveTheSameRecords) { expect_same_records_for_any_input_batch_and_threads(); }

TEST_F(AlignGappedPairs, SameRecordsOnCpuAndGpu) { expect_same_records_on_cpu_and_gpu(); }

TEST_F(AlignGappedPairs, SamtoolsFixmateChangesNothingAndFlagstatAgrees) {
  const std::string out = dir_->file("fix_in.sam");
  align(two_files(), out);
  check_fixmate_and_flagstat(*dir_, out, pairs_);
}

}  // namespace
}  // namespace wtmap::altest
