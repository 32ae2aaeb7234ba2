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

class AlignGappedPairs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<TempDir>();
    std::mt19937 rng(2626);
    contigs_ = {{"c1", random_bases(rng, 30000)}, {"c2", random_bases(rng, 8000)}};
    contigs_[0].sequence.replace(20000, kMateLength, contigs_[0].sequence.substr(5000, kMateLength));  // a repeat
    fmtest::write_file(dir_->file("ref.fa"), fmtest::fasta_text(contigs_));
    const auto built = fmtest::run_wtmap(*dir_, "index -p " + shell_quote(dir_->file("ref")) + " " + shell_quote(dir_->file("ref.fa")));
    ASSERT_EQ(built.exit_code, 0) << fmtest::describe(built);
    plant_pairs(rng);
    write_pair_reads(pairs_, dir_->file("r1.fq"), dir_->file("r2.fq"), dir_->file("il.fq"));
  }
  static void TearDownTestSuite() { dir_.reset(); }

  static PlantedPair fragment(const std::string& name, std::int32_t contig, std::int64_t position, std::int64_t insert,
                              bool first_forward) {
    return altest::fragment(contigs_, name, contig, position, insert, first_forward);
  }

  static void plant_pairs(std::mt19937& rng) {
    for (int i = 0; i < 40; ++i) {  // away from the repeat's copies
      const std::int64_t insert = 260 + rng() % 81;
      PlantedPair p = fragment("pair" + std::to_string(i), 0, 6000 + rng() % 12000, insert, rng() % 2 == 0);
      p.proper = p.sampled = true;
      pairs_.push_back(p);
    }
    const std::string& c1 = contigs_[0].sequence;
    // Mate 2 lacks 3 reference bases in its middle: 103 reference bases, 5' end still at 14300.
    PlantedPair deletion = fragment("deletion", 0, 14000, 300, true);
    const std::string span = c1.substr(14197, 103);
    deletion.sequence[1] = revcomp(span.substr(0, 50) + span.substr(53));
    deletion.truth[1] = {true, 0, 14197, true, 103};
    deletion.proper = deletion.sampled = true;
    PlantedPair repeat = fragment("repeat", 0, 4800, 300, true);  // mate 2 on [5000, 5100), copied at 20000
    repeat.proper = true;
    PlantedPair rescued = fragment("rescued", 0, 25000, 300, true);  // mate 2 reverse on [25200, 25300)
    for (const std::size_t at : kRescueSubstitutions) {
      char& base = rescued.sequence[1][at];
      base = "CGTA"[std::string("ACGT").find(base)];
    }
    rescued.proper = true;
    PlantedPair start = fragment("contig_start", 0, 0, 300, true);
    PlantedPair end = fragment("contig_end", 1, 8000 - 300, 300, false);
    start.proper = end.proper = start.sampled = end.sampled = true;
    PlantedPair far = fragment("too_far", 0, 7000, 8000, true);
    far.sampled = true;  // FR within 10000: sampled, then an outlier of the quartiles
    PlantedPair rf = fragment("reverse_forward", 0, 9000, 300, true);
    // Mate 1 reverse at 9000, mate 2 forward at 9200: each 5' end points away from the other.
    rf.sequence[0] = revcomp(c1.substr(9000, kMateLength));
    rf.truth[0] = {true, 0, 9000, true};
    rf.sequence[1] = c1.substr(9200, kMateLength);
    rf.truth[1] = {true, 0, 9200, false};
    PlantedPair contigs = fragment("two_contigs", 0, 10000, 300, true);
    contigs.sequence[1] = revcomp(contigs_[1].sequence.substr(1000, kMateLength));
    contigs.truth[1] = {true, 1, 1000, true};
    PlantedPair lone = fragment("mate_unmapped", 0, 11000, 300, true);
    lone.sequence[1] = random_bases(rng, kMateLength);
    lone.truth[1] = MateTruth{};
    PlantedPair none;
    none.name = "both_unmapped";
    none.sequence[0] = random_bases(rng, kMateLength);
    none.sequence[1] = random_bases(rng, kMateLength);
    for (const PlantedPair& p : {deletion, repeat, rescued, start, end, far, rf, contigs, lone, none}) pairs_.push_back(p);
  }

  // `wtmap align -x ref <args> -o <output>` in the gapped mode (the default); the run must succeed.
  static fmtest::RunResult align(const std::string& args, const std::string& output) {
    const auto run = fmtest::run_wtmap(*dir_, "align -x " + shell_quote(dir_->file("ref")) + " -t 2 -o " +
                                                  shell_quote(output) + " " + args);
    EXPECT_EQ(run.exit_code, 0) << fmtest::describe(run);
    return run;
  }
  static std::string two_files() { return shell_quote(dir_->file("r1.fq")) + " " + shell_quote(dir_->file("r2.fq")); }
  static std::size_t index_of(const std::string& name) {
    std::size_t i = 0;
    while (pairs_[i].name != name) ++i;
    return i;
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::vector<TestContig> contigs_;
  static inline std::vector<PlantedPair> pairs_;
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
  const std::size_t r = index_of("repeat");
  const std::string single = dir_->file("single.sam");
  align(shell_quote(dir_->file("r2.fq")), single);
  const SamRecord alone = read_alignments(single).records[r];
  EXPECT_EQ(alone.name, "repeat");
  EXPECT_EQ(alone.mapq, 0);
  EXPECT_EQ(alone.xs, 100);  // the other copy
  const std::string paired = dir_->file("paired.sam");
  align(two_files(), paired);
  const SamRecord mate2 = read_alignments(paired).records[2 * r + 1];
  EXPECT_EQ(mate2.pos, 5000);
  EXPECT_EQ(mate2.flag & 0x2, 0x2);
  EXPECT_EQ(mate2.mapq, 40);
}

// The rescued mate: single-end it is unmapped (no seed); paired, the local alignment in the window
// its mate's hit allows finds it where it was planted, scoring what a full unbanded
// Smith-Waterman of it against its reference surroundings scores, 70.
TEST_F(AlignGappedPairs, MateWithoutSeedsIsRescuedInItsWindow) {
  const std::size_t r = index_of("rescued");
  const std::string single = dir_->file("single_rescue.sam");
  align(shell_quote(dir_->file("r2.fq")), single);
  EXPECT_EQ(read_alignments(single).records[r].flag & 0x4, 0x4) << "seeds found the mate: the test plants it wrong";
  const std::string paired = dir_->file("rescued.sam");
  align(two_files(), paired);
  const SamRecord mate2 = read_alignments(paired).records[2 * r + 1];
  EXPECT_EQ(mate2.flag, 0x1 | 0x2 | 0x10 | 0x80);
  EXPECT_EQ(mate2.pos, 25200);
  EXPECT_EQ(mate2.cigar, "100M");
  EXPECT_EQ(mate2.nm, static_cast<std::int64_t>(std::size(kRescueSubstitutions)));
  EXPECT_GT(mate2.mapq, 0);
  // The oracle: the mate (as the forward strand reads it) against 400 bases around its place.
  const std::string around = contigs_[0].sequence.substr(25000, 400);
  const test::GotohMatrices g = test::gotoh(fmtest::pattern_codes(revcomp(pairs_[r].sequence[1])),
                                            fmtest::pattern_codes(around), test::Scoring{}, test::OracleMode::local, 0,
                                            test::unbanded());
  EXPECT_EQ(test::local_answer(g).score, kRescuedScore);
  EXPECT_EQ(mate2.as, kRescuedScore);
}

TEST_F(AlignGappedPairs, NoUnpairedPenaltyPairsNothing) {
  // -U 0: a pair scores at most its mates' best scores (the log-likelihood of an insert size is
  // at most log4(2) / 2 < .5, rounded away), so it never beats them unpaired: none is proper.
  const std::string out = dir_->file("no_pairs.sam");
  const auto run = align("-U 0 " + two_files(), out);
  const SamContents sam = read_alignments(out);
  ASSERT_EQ(sam.records.size(), 2 * pairs_.size());
  for (const SamRecord& rec : sam.records) EXPECT_EQ(rec.flag & 0x2, 0) << rec.name;
  EXPECT_NE(run.err.find(std::to_string(pairs_.size()) + " pairs; 0 properly paired"), std::string::npos) << run.err;
}

TEST_F(AlignGappedPairs, InterleavedAnyBatchAndThreadsGiveTheSameRecords) {
  const std::string reference = dir_->file("reference.sam");
  align(two_files(), reference);
  const std::string expected = records_of(reference);
  ASSERT_FALSE(expected.empty());
  const std::string out = dir_->file("other.sam");
  align("-p " + shell_quote(dir_->file("il.fq")), out);
  EXPECT_EQ(records_of(out), expected) << "interleaved";
  for (const char* batch : {"1", "2", "7", "33"}) {
    align(std::string("--batch ") + batch + " " + two_files(), out);
    EXPECT_EQ(records_of(out), expected) << "--batch " << batch;
  }
  align("-t 1 " + two_files(), out);  // (align() passes -t 2 before)
  EXPECT_EQ(records_of(out), expected) << "-t 1";
}

TEST_F(AlignGappedPairs, SameRecordsOnCpuAndGpu) {
  if (!gpu_available()) GTEST_SKIP() << "no usable CUDA device";
  const std::string cpu = dir_->file("cpu.sam"), gpu = dir_->file("gpu.sam");
  align("--device cpu " + two_files(), cpu);
  align("--device gpu " + two_files(), gpu);
  EXPECT_EQ(records_of(gpu), records_of(cpu));
  align("--device gpu --batch 7 " + two_files(), gpu);
  EXPECT_EQ(records_of(gpu), records_of(cpu));
  align("--device gpu --batch 1 " + two_files(), gpu);
  EXPECT_EQ(records_of(gpu), records_of(cpu));
}

TEST_F(AlignGappedPairs, SamtoolsFixmateChangesNothingAndFlagstatAgrees) {
  const std::string out = dir_->file("fix_in.sam");
  align(two_files(), out);
  check_fixmate_and_flagstat(*dir_, out, pairs_);
}

}  // namespace
}  // namespace wtmap::altest
