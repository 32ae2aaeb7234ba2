// Helpers of the pair suites (test_align_pairs.cpp: the k-mismatch mode; test_align_gapped_pairs.cpp:
// the gapped mode with mate rescue): planted FR fragments, their FASTQ files (two files and one
// interleaved), and every pair field of a written mate recomputed from where the test planted
// it -- FLAG, POS and strand of an unmapped mate, RNEXT/PNEXT and MQ by bwa mem's rules
// (mem_aln2sam), TLEN and MC by samtools fixmate's -- then through samtools fixmate (which must
// change nothing) and samtools flagstat.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <utility>
#include <sstream>
#include <string>
#include <vector>

#include "align_oracle.hpp"
#include "cli_support.hpp"
#include "fm_support.hpp"
#include "sam_readback.hpp"
#include "wtmap/core/config.hpp"

namespace wtmap::altest {

constexpr std::size_t kMateLength = 100;

struct MateTruth {
  bool mapped = false;
  std::int32_t contig = -1;
  std::int64_t position = -1;
  bool reverse = false;
  std::int64_t span = kMateLength;  // reference bases the mate covers (a deletion adds to them)
  // 5' end, as samtools fixmate measures it: a reverse mate's end.
  std::int64_t five_prime() const { return reverse ? position + span : position; }
};

// samtools fixmate's TLEN of `self` (bam_mate.c): its mate's 5' end less its own; 0 off one
// contig or with a mate unmapped.
inline std::int64_t fixmate_tlen(const MateTruth& self, const MateTruth& mate) {
  if (!self.mapped || !mate.mapped || self.contig != mate.contig) return 0;
  return mate.five_prime() - self.five_prime();
}

struct PlantedPair {
  std::string name;
  std::string sequence[2];
  MateTruth truth[2];
  bool proper = false;
  bool sampled = false;  // confident, unique and FR within 10000: part of the insert-size estimate
};

// An FR fragment of `insert` bases at `position` of contig `contig`: the forward mate its first
// kMateLength bases, the reverse mate its last; mate 1 the forward one if `first_forward`.
inline PlantedPair fragment(const std::vector<TestContig>& contigs, const std::string& name, std::int32_t contig,
                            std::int64_t position, std::int64_t insert, bool first_forward) {
  const std::string& text = contigs[contig].sequence;
  PlantedPair p;
  p.name = name;
  const auto length = static_cast<std::int64_t>(kMateLength);
  const int fi = first_forward ? 0 : 1;
  p.sequence[fi] = text.substr(position, kMateLength);
  p.truth[fi] = {true, contig, position, false};
  p.sequence[1 - fi] = fmtest::revcomp(text.substr(position + insert - length, kMateLength));
  p.truth[1 - fi] = {true, contig, position + insert - length, true};
  return p;
}

// Mate names "<name>/1 comment" and "<name>/2 comment": both the suffix and the comment go.
inline void write_pair_reads(const std::vector<PlantedPair>& pairs, const std::string& r1, const std::string& r2,
                             const std::string& interleaved) {
  std::string text[2], both;
  for (const PlantedPair& p : pairs) {
    for (int m = 0; m < 2; ++m) {
      const std::string record = "@" + p.name + "/" + std::to_string(m + 1) + " comment\n" + p.sequence[m] + "\n+\n" +
                                 std::string(p.sequence[m].size(), 'I') + "\n";
      text[m] += record;
      both += record;
    }
  }
  fmtest::write_file(r1, text[0]);
  fmtest::write_file(r2, text[1]);
  fmtest::write_file(interleaved, both);
}

// The alignment lines of a SAM file.
inline std::string records_of(const std::string& sam) {
  std::istringstream in(fmtest::read_file(sam));
  std::string records;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '@') records += line + "\n";
  }
  return records;
}

inline bool samtools_available() { return std::system("samtools --version > /dev/null 2>&1") == 0; }

// Every pair field of mate `m` of `p`, recomputed from the planted truth; `mate` is the other
// mate's record (MC is its CIGAR, MQ its MAPQ). The MAPQs: 60 for the mates of a proper pair,
// `unpaired_mapq` (a unique mate's single-end MAPQ) for a mapped mate of a pair not proper;
// pairs named in `own_mapq` are checked by a test of their own.
inline void check_mate(const PlantedPair& p, int m, const SamRecord& self, const SamRecord& mate, int unpaired_mapq,
                       const std::vector<std::string>& own_mapq) {
  SCOPED_TRACE(p.name + "/" + std::to_string(m + 1));
  const MateTruth& t = p.truth[m];
  const MateTruth& o = p.truth[1 - m];
  EXPECT_EQ(self.name, p.name);
  int flag = 0x1 | (m == 0 ? 0x40 : 0x80);
  // bwa places an unmapped mate at its mapped one, on its strand: each record's 0x10 and 0x20 are
  // the strands of the mapped mate(s).
  const MateTruth& own_strand = t.mapped ? t : o;
  const MateTruth& mate_strand = o.mapped ? o : t;
  if (!t.mapped) flag |= 0x4;
  if (own_strand.mapped && own_strand.reverse) flag |= 0x10;
  if (!o.mapped) flag |= 0x8;
  if (mate_strand.mapped && mate_strand.reverse) flag |= 0x20;
  if (p.proper) flag |= 0x2;
  EXPECT_EQ(self.flag, flag);
  if (!t.mapped) {
    EXPECT_EQ(self.seq, own_strand.reverse ? fmtest::revcomp(p.sequence[m]) : p.sequence[m]);
  }
  // An unmapped mate of a mapped one stands at it; RNEXT/PNEXT name the mate's place, or this
  // mate's own where the mate is unmapped.
  const MateTruth& place = t.mapped ? t : o;
  EXPECT_EQ(self.tid, place.mapped ? place.contig : -1);
  EXPECT_EQ(self.pos, place.mapped ? place.position : -1);
  const MateTruth& next = o.mapped ? o : t;
  EXPECT_EQ(self.mate_tid, next.mapped ? next.contig : -1);
  EXPECT_EQ(self.mate_pos, next.mapped ? next.position : -1);
  EXPECT_EQ(self.tlen, fixmate_tlen(t, o));
  // MQ on every mate (bwa's MQ:i:0 for an unmapped one); MC where either is mapped (fixmate's:
  // "*" for an unmapped mate).
  EXPECT_EQ(self.mq, o.mapped ? mate.mapq : 0);
  EXPECT_EQ(self.mc, o.mapped   ? std::optional<std::string>(mate.cigar)
                     : t.mapped ? std::optional<std::string>("*")
                                : std::nullopt);
  if (std::find(own_mapq.begin(), own_mapq.end(), p.name) != own_mapq.end()) return;
  if (p.proper) {
    EXPECT_EQ(self.mapq, 60);  // unique mates of a proper pair
  } else if (t.mapped) {
    EXPECT_EQ(self.mapq, unpaired_mapq);
  }
}

// samtools fixmate leaves the records of `sam` as they are, byte for byte, and samtools flagstat
// counts the planted pairs (skipped where samtools is missing).
inline void check_fixmate_and_flagstat(const fmtest::TempDir& dir, const std::string& sam,
                                       const std::vector<PlantedPair>& pairs) {
  if (!samtools_available()) GTEST_SKIP() << "samtools is not installed";
  const std::string fixed = dir.file("fix_out.sam");
  ASSERT_EQ(std::system(("samtools fixmate -O sam " + fmtest::shell_quote(sam) + " " + fmtest::shell_quote(fixed)).c_str()), 0);
  EXPECT_EQ(records_of(fixed), records_of(sam));
  const std::string stats = dir.file("flagstat.txt");
  ASSERT_EQ(std::system(("samtools flagstat " + fmtest::shell_quote(sam) + " > " + fmtest::shell_quote(stats)).c_str()), 0);
  const std::string text = fmtest::read_file(stats);
  std::size_t proper = 0, both = 0, other_contig = 0, singletons = 0;
  for (const PlantedPair& p : pairs) {
    proper += p.proper;
    both += p.truth[0].mapped && p.truth[1].mapped;
    singletons += p.truth[0].mapped != p.truth[1].mapped;
    other_contig += p.truth[0].mapped && p.truth[1].mapped && p.truth[0].contig != p.truth[1].contig;
  }
  EXPECT_NE(text.find(std::to_string(2 * pairs.size()) + " + 0 paired in sequencing"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(2 * proper) + " + 0 properly paired"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(2 * both) + " + 0 with itself and mate mapped"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(singletons) + " + 0 singletons"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(2 * other_contig) + " + 0 with mate mapped to a different chr\n"),
            std::string::npos) << text;
}

// The pairs both suites plant, on a reference of two random contigs (c1 of 30000 bases, [5000,
// 5100) copied at 20000; c2 of 8000): 40 proper pairs of inserts 260..340 away from the repeat,
// the repeat's (mate 2 on either copy), pairs at both contig ends, one too far apart (8000), one
// in RF orientation, one on two contigs, one with a random (unmapped) mate, one of two random
// mates. A suite adds its own pairs after these.
class PlantedPairSuite : public ::testing::Test {
 protected:
  // Builds the reference and its index ("ref"), plants the pairs, then `extra`'s, writes r1.fq,
  // r2.fq and il.fq; align() passes `mode` (the mode's options).
  static void build(const std::string& mode, void (*extra)()) {
    dir_ = std::make_unique<fmtest::TempDir>();
    mode_ = mode;
    std::mt19937 rng(26);
    contigs_ = {{"c1", random_bases(rng, 30000)}, {"c2", random_bases(rng, 8000)}};
    contigs_[0].sequence.replace(20000, kMateLength, contigs_[0].sequence.substr(5000, kMateLength));  // a repeat
    fmtest::write_file(dir_->file("ref.fa"), fmtest::fasta_text(contigs_));
    const auto built = fmtest::run_wtmap(*dir_, "index -p " + fmtest::shell_quote(dir_->file("ref")) + " " +
                                                     fmtest::shell_quote(dir_->file("ref.fa")));
    ASSERT_EQ(built.exit_code, 0) << fmtest::describe(built);
    plant_pairs(rng);
    if (extra != nullptr) extra();
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
    PlantedPair repeat = fragment("repeat", 0, 4800, 300, true);  // mate 2 on [5000, 5100), copied at 20000
    repeat.proper = true;
    PlantedPair start = fragment("contig_start", 0, 0, 300, true);
    PlantedPair end = fragment("contig_end", 1, 8000 - 300, 300, false);
    start.proper = end.proper = start.sampled = end.sampled = true;
    PlantedPair far = fragment("too_far", 0, 7000, 8000, true);
    far.sampled = true;  // FR within 10000: sampled, then an outlier of the quartiles
    PlantedPair rf = fragment("reverse_forward", 0, 9000, 300, true);
    // Mate 1 reverse at 9000, mate 2 forward at 9200: each 5' end points away from the other.
    rf.sequence[0] = fmtest::revcomp(c1.substr(9000, kMateLength));
    rf.truth[0] = {true, 0, 9000, true};
    rf.sequence[1] = c1.substr(9200, kMateLength);
    rf.truth[1] = {true, 0, 9200, false};
    PlantedPair contigs = fragment("two_contigs", 0, 10000, 300, true);
    contigs.sequence[1] = fmtest::revcomp(contigs_[1].sequence.substr(1000, kMateLength));
    contigs.truth[1] = {true, 1, 1000, true};
    PlantedPair lone = fragment("mate_unmapped", 0, 11000, 300, true);
    lone.sequence[1] = random_bases(rng, kMateLength);
    lone.truth[1] = MateTruth{};
    PlantedPair none;
    none.name = "both_unmapped";
    none.sequence[0] = random_bases(rng, kMateLength);
    none.sequence[1] = random_bases(rng, kMateLength);
    for (const PlantedPair& p : {repeat, start, end, far, rf, contigs, lone, none}) pairs_.push_back(p);
  }

  // `wtmap align -x ref <mode> -t 2 -o <output> <args>`; the run must succeed.
  static fmtest::RunResult align(const std::string& args, const std::string& output) {
    const auto run = fmtest::run_wtmap(*dir_, "align -x " + fmtest::shell_quote(dir_->file("ref")) + " " + mode_ +
                                                  " -t 2 -o " + fmtest::shell_quote(output) + " " + args);
    EXPECT_EQ(run.exit_code, 0) << fmtest::describe(run);
    return run;
  }
  static std::string two_files() {
    return fmtest::shell_quote(dir_->file("r1.fq")) + " " + fmtest::shell_quote(dir_->file("r2.fq"));
  }
  // The records of the two files, of the interleaved one, for --batch 1, 2, 7, 33, for -t 1 and
  // from gzip files are the same.
  static void expect_same_records_for_any_input_batch_and_threads() {
    const std::string reference = dir_->file("reference.sam");
    align(two_files(), reference);
    const std::string expected = records_of(reference);
    ASSERT_FALSE(expected.empty());
    const std::string out = dir_->file("other.sam");
    align("-p " + fmtest::shell_quote(dir_->file("il.fq")), out);
    EXPECT_EQ(records_of(out), expected) << "interleaved";
    for (const char* batch : {"1", "2", "7", "33"}) {
      align(std::string("--batch ") + batch + " " + two_files(), out);
      EXPECT_EQ(records_of(out), expected) << "--batch " << batch;
    }
    align("-t 1 " + two_files(), out);  // (align() passes -t 2 before)
    EXPECT_EQ(records_of(out), expected) << "-t 1";
    const std::string gz1 = dir_->file("r1.fq.gz"), gz2 = dir_->file("r2.fq.gz");
    fmtest::write_gzip(gz1, fmtest::read_file(dir_->file("r1.fq")));
    fmtest::write_gzip(gz2, fmtest::read_file(dir_->file("r2.fq")));
    align(fmtest::shell_quote(gz1) + " " + fmtest::shell_quote(gz2), out);
    EXPECT_EQ(records_of(out), expected) << "gzip";
  }

  // The GPU's records equal the CPU's, for the default --batch, 7 and 1 (skipped without a GPU).
  static void expect_same_records_on_cpu_and_gpu() {
    if (!gpu_available()) GTEST_SKIP() << "no usable CUDA device";
    const std::string cpu = dir_->file("cpu.sam"), gpu = dir_->file("gpu.sam");
    align("--device cpu " + two_files(), cpu);
    for (const char* batch : {"", "--batch 7 ", "--batch 1 "}) {
      align(std::string("--device gpu ") + batch + two_files(), gpu);
      EXPECT_EQ(records_of(gpu), records_of(cpu)) << batch;
    }
  }

  // -U 0: a pair scores at most its mates' best scores (the log-likelihood of an insert size is
  // at most log4(2) / 2 < .5, rounded away), so it never beats them unpaired: none is proper.
  static void expect_no_proper_pair_without_unpaired_penalty() {
    const std::string out = dir_->file("no_pairs.sam");
    const auto run = align("-U 0 " + two_files(), out);
    const SamContents sam = read_alignments(out);
    ASSERT_EQ(sam.records.size(), 2 * pairs_.size());
    for (const SamRecord& rec : sam.records) EXPECT_EQ(rec.flag & 0x2, 0) << rec.name;
    EXPECT_NE(run.err.find(std::to_string(pairs_.size()) + " pairs; 0 properly paired"), std::string::npos) << run.err;
  }

  // Mate `m` (0 or 1) of the pair named `name`: its record when its file is aligned single-end,
  // and when the pairs are.
  static std::pair<SamRecord, SamRecord> alone_and_paired(const std::string& name, int m) {
    const std::size_t r = index_of(name);
    const std::string single = dir_->file("single.sam"), paired = dir_->file("paired.sam");
    align(fmtest::shell_quote(dir_->file(m == 0 ? "r1.fq" : "r2.fq")), single);
    align(two_files(), paired);
    return {read_alignments(single).records.at(r), read_alignments(paired).records.at(2 * r + m)};
  }

  static std::size_t index_of(const std::string& name) {
    std::size_t i = 0;
    while (i < pairs_.size() && pairs_[i].name != name) ++i;
    return i;
  }

  static inline std::unique_ptr<fmtest::TempDir> dir_;
  static inline std::string mode_;
  static inline std::vector<TestContig> contigs_;
  static inline std::vector<PlantedPair> pairs_;
};

}  // namespace wtmap::altest
