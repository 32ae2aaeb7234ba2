// `wtmap align` on pairs (issue 26), run as a user runs it: planted pairs of every kind -- exact
// mates, a mate in a repeat rescued by its unique mate, discordant pairs (too far, RF, different
// contigs), an unmapped mate, both unmapped, pairs at contig ends -- their SAM records read back
// through htslib and every pair field recomputed here from where the test planted the mates
// (FLAG, POS of an unmapped mate, RNEXT/PNEXT, TLEN between 5' ends, MC, MQ), then through
// samtools fixmate (which must change nothing) and samtools flagstat; the same records from two
// files and from one interleaved file, for any --batch and on either device; bad pair input
// failing with its message and no output file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "align_oracle.hpp"
#include "cli_support.hpp"
#include "fm_support.hpp"
#include "pair_support.hpp"
#include "sam_readback.hpp"
#include "wtmap/core/config.hpp"

namespace wtmap::altest {
namespace {

namespace fs = std::filesystem;
using fmtest::revcomp;
using fmtest::shell_quote;
using fmtest::TempDir;

constexpr std::size_t kLength = kMateLength;

class AlignPairs : public PlantedPairSuite {
 protected:
  static void SetUpTestSuite() { build("-k 4", nullptr); }
  static void write_reads(const std::vector<PlantedPair>& pairs, const std::string& r1, const std::string& r2,
                          const std::string& interleaved) {
    write_pair_reads(pairs, r1, r2, interleaved);
  }
};

// Every pair field of mate `m` of `p` (pair_support.hpp): MC "100M" for every mapped mate, a
// unique unpaired mate MAPQ 37 (bwa aln's); the repeat's mate checked on its own.
void check_mate(const PlantedPair& p, int m, const SamRecord& self, const SamRecord& mate) {
  altest::check_mate(p, m, self, mate, 37, {"repeat"});
  if (p.truth[1 - m].mapped) {
    EXPECT_EQ(self.mc, std::to_string(kLength) + "M") << p.name;
  }
}

TEST_F(AlignPairs, PairFieldsMatchThePlantedPairs) {
  const std::string out = dir_->file("pairs.sam");
  const auto run = align(two_files(), out);
  const SamContents sam = read_alignments(out);
  ASSERT_EQ(sam.records.size(), 2 * pairs_.size());
  for (std::size_t i = 0; i < pairs_.size(); ++i) {
    for (int m = 0; m < 2; ++m) check_mate(pairs_[i], m, sam.records[2 * i + m], sam.records[2 * i + 1 - m]);
  }
  std::size_t proper = 0, sampled = 0;
  for (const PlantedPair& p : pairs_) proper += p.proper, sampled += p.sampled;
  EXPECT_NE(run.err.find(std::to_string(pairs_.size()) + " pairs; " + std::to_string(proper) + " properly paired"),
            std::string::npos) << run.err;
  EXPECT_NE(run.err.find("1 singletons"), std::string::npos) << run.err;
  std::size_t positive = 0;  // every mapped mate: all are unique, or rescued by their mate
  for (const SamRecord& r : sam.records) positive += (r.flag & 0x4) == 0 && r.mapq > 0;
  std::size_t mapped = 0;
  for (const PlantedPair& p : pairs_) mapped += p.truth[0].mapped + p.truth[1].mapped;
  EXPECT_EQ(positive, mapped);
  EXPECT_NE(run.err.find(std::to_string(positive) + " mates with MAPQ > 0 after pairing"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("insert size (FR, from " + std::to_string(sampled) + " pairs)"), std::string::npos) << run.err;
}

// The repeat's mate 2 has two exact copies: alone it has MAPQ 0 and either copy; paired, it takes
// the copy 300 bases from its unique mate and a MAPQ of its own.
TEST_F(AlignPairs, RepetitiveMateIsPlacedAndRaisedByItsUniqueMate) {
  const auto [alone, mate2] = alone_and_paired("repeat", 1);
  EXPECT_EQ(alone.name, "repeat");  // single-end names lose "/2" too
  EXPECT_EQ(alone.mapq, 0);
  EXPECT_EQ(alone.x0, 2);
  EXPECT_EQ(mate2.pos, 5000);
  EXPECT_EQ(mate2.flag & 0x2, 0x2);
  EXPECT_GE(mate2.mapq, 20);
}

TEST_F(AlignPairs, GivenInsertSizeSetsTheBounds) {
  // -I 300,5: proper within [280, 320] exactly, in bwa's distance (the fragment less one).
  const std::string out = dir_->file("given.sam");
  const auto run = align("-I 300,5 " + two_files(), out);
  EXPECT_NE(run.err.find("given by -I"), std::string::npos) << run.err;
  const SamContents sam = read_alignments(out);
  ASSERT_EQ(sam.records.size(), 2 * pairs_.size());
  for (std::size_t i = 0; i < pairs_.size(); ++i) {
    PlantedPair p = pairs_[i];
    if (p.proper) {
      const std::int64_t fragment = std::max(p.truth[0].five_prime(), p.truth[1].five_prime()) -
                                    std::min(p.truth[0].five_prime(), p.truth[1].five_prime());
      p.proper = fragment - 1 >= 280 && fragment - 1 <= 320;
    }
    for (int m = 0; m < 2; ++m) EXPECT_EQ(sam.records[2 * i + m].flag & 0x2, p.proper ? 0x2 : 0) << p.name;
  }
}

TEST_F(AlignPairs, NoUnpairedPenaltyPairsNothing) { expect_no_proper_pair_without_unpaired_penalty(); }

TEST_F(AlignPairs, InterleavedGzipAnyBatchAndThreadsGiveTheSameRecords) { expect_same_records_for_any_input_batch_and_threads(); }

TEST_F(AlignPairs, SameRecordsOnCpuAndGpu) { expect_same_records_on_cpu_and_gpu(); }

TEST_F(AlignPairs, SamtoolsFixmateChangesNothingAndFlagstatAgrees) {
  const std::string out = dir_->file("fix_in.sam");
  align(two_files(), out);
  check_fixmate_and_flagstat(*dir_, out, pairs_);
}

// Bad pair input: exit status 1, a message naming both inputs, the record and the names, and no
// output file (nor its temporary).
struct BadPairs {
  const char* name;
  std::size_t first_pairs, second_pairs;  // records of r1, r2 (of the planted pairs, in order)
  bool rename_second;                     // mate 2 of the second pair renamed
  bool interleaved;                       // -p, the interleaved file cut to an odd record count
  std::vector<std::string> message;       // fragments of the message, "{r1}" and "{r2}" the paths
};

void PrintTo(const BadPairs& b, std::ostream* os) { *os << b.name; }

class AlignBadPairs : public AlignPairs, public ::testing::WithParamInterface<BadPairs> {};

INSTANTIATE_TEST_SUITE_P(
    Cli, AlignBadPairs,
    ::testing::Values(
        BadPairs{"second_shorter", 5, 3, false, false, {"{r1} has more reads than {r2}", "{r1}: record 4", "'pair3/1'", "no mate"}},
        BadPairs{"first_shorter", 3, 5, false, false, {"{r2} has more reads than {r1}", "{r2}: record 4", "'pair3/2'", "no mate"}},
        BadPairs{"names_differ", 5, 5, true, false, {"mates' names differ", "{r1}: record 2 is 'pair1/1'", "{r2}: record 2 is 'other/2'"}},
        BadPairs{"odd_interleaved", 3, 3, false, true, {"{r1}: record 5", "'pair2/1'", "has no mate", "even number of records"}}),
    [](const ::testing::TestParamInfo<BadPairs>& info) { return std::string(info.param.name); });

TEST_P(AlignBadPairs, FailsNamingTheRecordAndLeavesNoOutput) {
  const BadPairs& bad = GetParam();
  const TempDir work;
  std::vector<PlantedPair> first(pairs_.begin(), pairs_.begin() + bad.first_pairs);
  std::vector<PlantedPair> second(pairs_.begin(), pairs_.begin() + bad.second_pairs);
  if (bad.rename_second) second[1].name = "other";
  const std::string r1 = work.file("bad_1.fq"), r2 = work.file("bad_2.fq"), il = work.file("bad_il.fq");
  const std::string unused = work.file("unused.fq");
  write_reads(first, r1, unused, il);
  write_reads(second, unused, r2, unused);
  std::string args = shell_quote(r1) + " " + shell_quote(r2);
  std::string paths[2] = {r1, r2};
  if (bad.interleaved) {  // the interleaved file without its last record
    std::istringstream in(fmtest::read_file(il));
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::string text;
    for (std::size_t l = 0; l + 4 < lines.size(); ++l) text += lines[l] + "\n";
    fmtest::write_file(il, text);
    args = "-p " + shell_quote(il);
    paths[0] = paths[1] = il;
  }
  fs::remove(unused);
  const std::vector<std::string> before = work.entries();
  const std::string out = work.file("out.sam");
  const auto run = fmtest::run_wtmap(work, "align -x " + shell_quote(dir_->file("ref")) + " -k 4 -o " + shell_quote(out) + " " + args);
  EXPECT_EQ(run.exit_code, 1) << fmtest::describe(run);
  for (std::string fragment : bad.message) {
    for (const auto& [key, path] : {std::pair<std::string, std::string>{"{r1}", paths[0]}, {"{r2}", paths[1]}}) {
      for (auto at = fragment.find(key); at != std::string::npos; at = fragment.find(key)) fragment.replace(at, key.size(), path);
    }
    EXPECT_NE(run.err.find(fragment), std::string::npos) << "missing '" << fragment << "' in:\n" << run.err;
  }
  std::vector<std::string> after = work.entries();
  after.erase(std::remove_if(after.begin(), after.end(), [](const std::string& e) { return e == "stdout.txt" || e == "stderr.txt"; }),
              after.end());
  EXPECT_EQ(after, before);  // no output, no temporary left
}

}  // namespace
}  // namespace wtmap::altest
