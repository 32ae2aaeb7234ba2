// The `wtmap` executable as a user runs it: `wtmap index` on a FASTA.gz, `wtmap count --locate`
// on FASTQ, FASTA and standard input, its TSV compared with a naive scan; malformed input,
// missing index, failed index builds and usage.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "fm_support.hpp"
#include "index_file_editor.hpp"
#include "wtmap/core/config.hpp"

namespace wtmap::fmtest {
namespace {

// ---- the reference and the patterns ---------------------------------------------------------

std::vector<TestContig> cli_reference() {
  RandomReferenceSpec spec;
  spec.seed = 2024;
  spec.contigs = 4;
  spec.min_length = 300;
  spec.max_length = 900;
  spec.n_run_rate = 0.01;
  auto contigs = random_reference(spec);
  contigs.push_back({"tandem", std::string(40, 'A') + "ACGTTACGTTACGTTACGTT" + "NNNN" + "ACGTT"});
  return contigs;
}

// Random substrings and their reverse complements, contig ends, patterns across contig ends,
// single bases, patterns with N, absent patterns; named p1, p2, ...
std::vector<Pattern> cli_patterns(const std::vector<TestContig>& contigs) {
  std::mt19937 rng(99);
  std::vector<std::string> seqs = {"A", "C", "G", "T", "ACGTT", "NACGT", "ACNGT", "acgtt", "GGGGGGGGGGGGGGGGGGGGGGGGG"};
  for (int i = 0; i < 80; ++i) {
    const std::string s = normalized(contigs[rng() % contigs.size()].sequence);
    const std::size_t pos = rng() % s.size(), len = 1 + rng() % std::min<std::size_t>(25, s.size() - pos);
    seqs.push_back(s.substr(pos, len));
    seqs.push_back(revcomp(seqs.back()));
  }
  for (std::size_t k = 0; k < contigs.size(); ++k) {
    const std::string s = normalized(contigs[k].sequence);
    seqs.push_back(s.substr(0, 10));
    seqs.push_back(s.substr(s.size() - 10));
    if (k + 1 < contigs.size()) seqs.push_back(s.substr(s.size() - 6) + normalized(contigs[k + 1].sequence).substr(0, 6));
  }
  std::vector<Pattern> patterns;
  for (const std::string& s : seqs) patterns.push_back({"p" + std::to_string(patterns.size() + 1), s});
  return patterns;
}

// Every output line against the naive scan, in input order.
void expect_count_output(const std::string& out, const std::vector<TestContig>& contigs,
                         const std::vector<Pattern>& patterns, bool located) {
  expect_count_lines(out, contigs, patterns, located, [&](const std::string& p) { return naive_hits(contigs, p); });
}

// ---- the tests -------------------------------------------------------------------------------

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    contigs_ = cli_reference();
    fasta_ = dir_.file("ref.fa.gz");
    write_gzip(fasta_, fasta_text(contigs_, 60));
    prefix_ = dir_.file("idx");
  }
  void index(const std::string& device = "cpu") {
    const RunResult r = run_wtmap(dir_, "index " + shell_quote(fasta_) + " -p " + shell_quote(prefix_) + " --device " + device);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(fs::exists(prefix_ + ".wtmap")) << describe(r);
  }

  TempDir dir_;
  std::vector<TestContig> contigs_;
  std::string fasta_, prefix_;
};

TEST_F(Cli, IndexWritesOnlyTheIndexFile) {
  index();
  const auto entries = dir_.entries();
  EXPECT_EQ(entries, (std::vector<std::string>{"idx.wtmap", "ref.fa.gz", "stderr.txt", "stdout.txt"}));
}

// --sa-builder blockwise writes divsufsort's file byte for byte, on one thread and on several, and
// says which sorter ran; auto (the default) picks blockwise wherever -t leaves two threads; an
// unknown sorter is a usage error that writes nothing.
TEST_F(Cli, BlockwiseSuffixSorterWritesTheSameIndexFile) {
  const std::string reference = dir_.file("divsufsort");
  const RunResult made = run_wtmap(dir_, "index --sa-builder divsufsort " + shell_quote(fasta_) + " -p " +
                                             shell_quote(reference) + " --device cpu");
  ASSERT_EQ(made.exit_code, 0) << describe(made);
  EXPECT_NE(made.err.find("(divsufsort)"), std::string::npos) << made.err;
  const std::string expected = read_file(reference + ".wtmap");
  for (const char* threads : {"1", "3"}) {
    const std::string prefix = dir_.file(std::string("blockwise") + threads);
    const RunResult r = run_wtmap(dir_, "index --sa-builder blockwise -t " + std::string(threads) + " " +
                                            shell_quote(fasta_) + " -p " + shell_quote(prefix) + " --device cpu");
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_NE(r.err.find("(blockwise)"), std::string::npos) << r.err;
    EXPECT_TRUE(read_file(prefix + ".wtmap") == expected) << "-t " << threads;
  }
  // auto (and no --sa-builder): blockwise with two threads or more, divsufsort with one.
  for (const char* choice : {"", "--sa-builder auto "}) {
    for (const char* threads : {"1", "2"}) {
      const std::string prefix = dir_.file(std::string("auto") + threads);
      const RunResult r = run_wtmap(dir_, "index " + std::string(choice) + "-t " + threads + " " + shell_quote(fasta_) +
                                              " -p " + shell_quote(prefix) + " --device cpu");
      ASSERT_EQ(r.exit_code, 0) << describe(r);
      const char* expected_builder = std::string(threads) == "1" ? "(divsufsort)" : "(blockwise)";
      EXPECT_NE(r.err.find(expected_builder), std::string::npos) << choice << "-t " << threads << ": " << r.err;
      EXPECT_TRUE(read_file(prefix + ".wtmap") == expected) << choice << "-t " << threads;
    }
  }
  const RunResult bad = run_wtmap(dir_, "index --sa-builder qsort " + shell_quote(fasta_) + " -p " +
                                            shell_quote(dir_.file("bad")));
  EXPECT_EQ(bad.exit_code, 1) << describe(bad);
  EXPECT_NE(bad.err.find("--sa-builder"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir_.file("bad.wtmap")));
  const RunResult help = run_wtmap(dir_, "index --help");
  EXPECT_NE(help.out.find("--sa-builder S  auto, divsufsort or blockwise"), std::string::npos) << help.out;
}

// How the patterns reach `wtmap count`.
enum class Input { fastq, fastq_gz, fasta, stdin_fastq, fastq_small_batches };

std::string input_name(Input input) {
  switch (input) {
    case Input::fastq: return "Fastq";
    case Input::fastq_gz: return "FastqGz";
    case Input::fasta: return "Fasta";
    case Input::stdin_fastq: return "StdinFastq";
    case Input::fastq_small_batches: return "FastqSmallBatches";
  }
  return "?";
}

void PrintTo(Input input, std::ostream* os) { *os << input_name(input); }

class CliCount : public Cli, public ::testing::WithParamInterface<Input> {};

INSTANTIATE_TEST_SUITE_P(Cli, CliCount,
                         ::testing::Values(Input::fastq, Input::fastq_gz, Input::fasta, Input::stdin_fastq,
                                           Input::fastq_small_batches),
                         [](const auto& info) { return input_name(info.param); });

TEST_P(CliCount, LocateMatchesNaiveScan) {
  index();
  const auto patterns = cli_patterns(contigs_);
  std::string input, stdin_path = "/dev/null", extra;
  switch (GetParam()) {
    case Input::fastq:
    case Input::fastq_small_batches:
      input = dir_.file("patterns.fq");
      write_file(input, fastq_text(patterns));
      if (GetParam() == Input::fastq_small_batches) extra = " --batch 7";
      break;
    case Input::fastq_gz:
      input = dir_.file("patterns.fq.gz");
      write_gzip(input, fastq_text(patterns));
      break;
    case Input::fasta:
      input = dir_.file("patterns.fa");
      write_file(input, fasta_text(patterns, 7));
      break;
    case Input::stdin_fastq:
      stdin_path = dir_.file("patterns.fq");
      write_file(stdin_path, fastq_text(patterns));
      input = "-";
      break;
  }
  const RunResult r = run_wtmap(dir_, "count -x " + shell_quote(prefix_) + " --locate --max-hits 100000 --device cpu " + shell_quote(input) + extra,
                          stdin_path);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  expect_count_output(r.out, contigs_, patterns, true);
}

TEST_F(Cli, CountWithoutLocatePrintsCounts) {
  index();
  const auto patterns = cli_patterns(contigs_);
  write_file(dir_.file("p.fq"), fastq_text(patterns));
  const RunResult r = run_wtmap(dir_, "count -x " + shell_quote(prefix_) + " --device cpu " + shell_quote(dir_.file("p.fq")));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  expect_count_output(r.out, contigs_, patterns, false);
}

TEST_F(Cli, MaxHitsLimitsPositionsNotCounts) {
  index();
  const std::vector<Pattern> patterns = {{"a", "A"}, {"acgtt", "ACGTT"}, {"none", "GGGGGGGGGGGGGGGGGGGGGGGGGGGGGG"}};
  write_file(dir_.file("p.fa"), fasta_text(patterns, 7));
  const RunResult r = run_wtmap(dir_, "count -x " + shell_quote(prefix_) + " --locate --max-hits 3 --device cpu " + shell_quote(dir_.file("p.fa")));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<CountLine> lines;
  ASSERT_NO_THROW(lines = parse_count_output(r.out, contigs_)) << r.out;
  ASSERT_EQ(lines.size(), patterns.size());
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const auto expected = naive_hits(contigs_, patterns[i].sequence);
    EXPECT_EQ(lines[i].count, expected.size()) << patterns[i].name;
    EXPECT_EQ(lines[i].hits.size(), std::min<std::size_t>(expected.size(), 3)) << patterns[i].name;
    for (const Hit& h : lines[i].hits) {
      EXPECT_TRUE(std::binary_search(expected.begin(), expected.end(), h)) << patterns[i].name << " " << h;
    }
  }
}

// A record without bases (FASTA header followed by a header; FASTQ with empty sequence and
// quality lines) matches nothing: either its line says 0 with no positions, or the run stops
// naming the record. Never a count of every suffix with positions past the contig ends.
TEST_F(Cli, EmptyRecordsMatchNothing) {
  index();
  for (const auto& [file, text] : std::vector<std::pair<std::string, std::string>>{
           {"empty.fa", ">e1\n>p2\nACGT\n"}, {"empty.fq", "@e1\n\n+\n\n@p2\nACGT\n+\nIIII\n"}}) {
    SCOPED_TRACE(file);
    write_file(dir_.file(file), text);
    const RunResult r = run_wtmap(dir_, "count -x " + shell_quote(prefix_) + " --locate --device cpu " + shell_quote(dir_.file(file)));
    if (r.exit_code != 0) {
      EXPECT_NE(r.err.find("record 1"), std::string::npos) << describe(r);
      continue;
    }
    std::vector<CountLine> lines;
    ASSERT_NO_THROW(lines = parse_count_output(r.out, contigs_)) << r.out;
    ASSERT_EQ(lines.size(), 2u) << r.out;
    EXPECT_EQ(lines[0].name, "e1");
    EXPECT_EQ(lines[0].count, 0u) << "the empty pattern's line begins: " << r.out.substr(0, 80);
    EXPECT_TRUE(lines[0].hits.empty());
    EXPECT_EQ(lines[1].count, naive_hits(contigs_, "ACGT").size());
  }
}

TEST_F(Cli, GpuDeviceMatchesNaiveScan) {
  if (!gpu_available()) GTEST_SKIP() << "no usable CUDA device";
  index("gpu");
  const auto patterns = cli_patterns(contigs_);
  write_file(dir_.file("p.fq"), fastq_text(patterns));
  const RunResult r = run_wtmap(dir_, "count -x " + shell_quote(prefix_) + " --locate --max-hits 100000 --device gpu " + shell_quote(dir_.file("p.fq")));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  expect_count_output(r.out, contigs_, patterns, true);
}

TEST_F(Cli, GpuDeviceWithoutCudaFailsCleanly) {
  if (gpu_available()) GTEST_SKIP() << "a CUDA device is usable here";
  const RunResult r = run_wtmap(dir_, "index " + shell_quote(fasta_) + " -p " + shell_quote(prefix_) + " --device gpu");
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find("CUDA"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(prefix_ + ".wtmap"));
}

// Malformed FASTQ: record `bad` is wrong; the run stops with its number.
struct BadFastq {
  const char* name;
  std::string text;
  int bad;
};

void PrintTo(const BadFastq& b, std::ostream* os) { *os << b.name; }

class CliBadInput : public Cli, public ::testing::WithParamInterface<BadFastq> {};

const std::string kGood = "@r1\nACGT\n+\nIIII\n@r2\nGGCA\n+r2\nIIII\n";

INSTANTIATE_TEST_SUITE_P(Cli, CliBadInput,
                         ::testing::Values(BadFastq{"MissingPlusLine", kGood + "@r3\nACGT\nIIII\n@r4\nACGT\n+\nIIII\n", 3},
                                           BadFastq{"QualityLengthMismatch", kGood + "@r3\nACGTA\n+\nIIII\n", 3},
                                           BadFastq{"TruncatedRecord", kGood + "@r3\nACGT\n", 3},
                                           BadFastq{"TruncatedAfterPlus", "@r1\nACGT\n+\n", 1},
                                           BadFastq{"NotFastq", "ACGT\n", 1}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_P(CliBadInput, FailsNamingTheRecord) {
  index();
  const std::string input = dir_.file("bad.fq");
  write_file(input, GetParam().text);
  const RunResult r = run_wtmap(dir_, "count -x " + shell_quote(prefix_) + " --device cpu " + shell_quote(input));
  EXPECT_NE(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.exit_code, -1) << "killed by a signal";
  EXPECT_NE(r.err.find("record " + std::to_string(GetParam().bad)), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(input), std::string::npos) << r.err;
}

TEST_F(Cli, MissingIndex) {
  write_file(dir_.file("p.fq"), kGood);
  const RunResult r = run_wtmap(dir_, "count -x " + shell_quote(dir_.file("nothing")) + " --device cpu " + shell_quote(dir_.file("p.fq")));
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find(dir_.file("nothing.wtmap")), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("error"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

// Issue 23, item 3: `count --locate` on an index whose C array was zeroed and its checksum
// recomputed (index_file_editor.hpp) looped forever; it must fail at once, naming the invariant.
// Run under timeout(1), so that a hang fails the test (exit 124) instead of stalling it.
TEST_F(Cli, CountLocateOnACraftedIndexFailsNamingTheInvariant) {
  index();
  IndexFileEditor crafted(read_file(prefix_ + ".wtmap"));
  crafted.payload("CARR").assign(32, '\0');
  write_file(prefix_ + ".wtmap", crafted.file());
  write_file(dir_.file("p.fq"), kGood);
  const std::string err = dir_.file("crafted.err");
  const std::string command = "timeout 60 " + shell_quote(wtmap_program(WTMAP_EXECUTABLE)) + " count --locate -x " +
                              shell_quote(prefix_) + " --device cpu " + shell_quote(dir_.file("p.fq")) +
                              " > /dev/null 2> " + shell_quote(err);
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << "killed by a signal";
  EXPECT_EQ(WEXITSTATUS(status), 1) << "124 is a hang; stderr: " << read_file(err);
  EXPECT_NE(read_file(err).find("C array"), std::string::npos) << read_file(err);
}

TEST_F(Cli, IndexOfBadFastaLeavesNoFile) {
  write_gzip(fasta_, ">a\nACGT\n>b\nGGCC\n>a\nTTTT\n");
  const RunResult r = run_wtmap(dir_, "index " + shell_quote(fasta_) + " -p " + shell_quote(prefix_) + " --device cpu");
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find("duplicate"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(fasta_ + ":5:"), std::string::npos) << r.err;
  EXPECT_EQ(dir_.entries(), (std::vector<std::string>{"ref.fa.gz", "stderr.txt", "stdout.txt"}));
}

TEST_F(Cli, NoArgumentsPrintsUsageAndFails) {
  const RunResult r = run_wtmap(dir_, "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Usage: wtmap"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(Cli, CountHelpPrintsUsageAndSucceeds) {
  const RunResult r = run_wtmap(dir_, "count --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Usage: wtmap count"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--locate"), std::string::npos) << r.out;
}

TEST_F(Cli, CountWithoutArgumentsPrintsUsageAndFails) {
  const RunResult r = run_wtmap(dir_, "count");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Usage: wtmap count"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(Cli, UnknownCommandAndOptionFail) {
  RunResult r = run_wtmap(dir_, "align x");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("align"), std::string::npos) << r.err;
  r = run_wtmap(dir_, "count -x " + shell_quote(prefix_) + " --bogus p.fq");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace wtmap::fmtest
