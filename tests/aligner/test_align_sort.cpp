// `wtmap align --sort` run as a user runs it (issue 29): the sorted BAM holds the records of
// `samtools sort` of the unsorted output, in its order (checked record by record, ties in the
// unsorted file's order); spilled runs (a small --sort-mem) give the same records; the index
// answers region queries as `samtools index`'s and a scan do; the refusals; an interrupt while
// runs are spilled leaves no temporary file. Needs samtools (skipped without it).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "align_oracle.hpp"
#include "cli_support.hpp"
#include "cut_reads.hpp"
#include "fm_support.hpp"
#include "pair_support.hpp"
#include "sorted_bam_support.hpp"
#include "wtmap/aligner/seq_reader.hpp"

namespace wtmap::altest {
namespace {

using fmtest::describe;
using fmtest::Pattern;
using fmtest::RunResult;
using fmtest::shell_quote;
using fmtest::TempDir;
namespace fs = std::filesystem;

class AlignSort : public ::testing::Test {
 protected:
  void SetUp() override {
    fmtest::RandomReferenceSpec spec;
    spec.seed = 29;
    spec.contigs = 3;
    spec.min_length = 20000;
    spec.max_length = 30000;
    spec.n_run_rate = 0.0005;
    contigs_ = fmtest::random_reference(spec);
    const std::string fasta = dir_.file("ref.fa");
    fmtest::write_file(fasta, fmtest::fasta_text(contigs_, 60));
    prefix_ = dir_.file("idx");
    const RunResult r = fmtest::run_wtmap(dir_, "index " + shell_quote(fasta) + " -p " + shell_quote(prefix_) + " --device cpu");
    ASSERT_EQ(r.exit_code, 0) << describe(r);
  }

  // Reads from both strands, with ties (a read repeated), unmapped reads (random bases) and
  // chimeras of two contigs' pieces (a primary and a supplementary line): cut_reads.hpp.
  std::string single_reads(std::size_t n) const { return fmtest::fastq_text(mixed_reads(contigs_, n, 5)); }

  // Mates 1 and 2 of `n` fragments of 300 bases (FR); some second mates are random (unmapped,
  // placed at their mate).
  std::pair<std::string, std::string> pair_reads(std::size_t n) const {
    const auto [first, second] = fr_pairs(contigs_, n, 6);
    return {fmtest::fastq_text(first), fmtest::fastq_text(second)};
  }

  RunResult align(const std::string& options, const std::string& inputs) const {
    return fmtest::run_wtmap(dir_, "align -x " + shell_quote(prefix_) + " --device cpu -t 2 " + options + " " + inputs);
  }

  std::vector<std::string> temporaries() const {
    std::vector<std::string> found;
    for (const std::string& e : dir_.entries()) {
      if (e.find(".tmp.") != std::string::npos) found.push_back(e);
    }
    return found;
  }

  // Aligns `inputs` unsorted and sorted (with `sort_options`); the sorted file must hold
  // `samtools sort`'s records of the unsorted one.
  void expect_samtools_sort_of_unsorted(const std::string& inputs, const std::string& sort_options) {
    const std::string unsorted = dir_.file("un.bam"), sorted = dir_.file("sorted.bam"), reference = dir_.file("ref.bam");
    RunResult r = align("-o " + shell_quote(unsorted), inputs);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    r = align("--sort " + sort_options + " -o " + shell_quote(sorted), inputs);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    sort_stderr_ = r.err;
    records_ = std::to_string(read_bam(sorted).lines.size());
    ASSERT_EQ(std::system(("samtools sort -o " + shell_quote(reference) + " " + shell_quote(unsorted)).c_str()), 0);
    const BamContents ours = read_bam(sorted), theirs = read_bam(reference), input = read_bam(unsorted);
    EXPECT_EQ(ours.header.rfind("@HD\tVN:1.6\tSO:coordinate\n", 0), 0u) << ours.header;
    ASSERT_EQ(ours.lines.size(), input.lines.size());
    ASSERT_EQ(ours.lines.size(), theirs.lines.size());
    for (std::size_t i = 0; i < ours.lines.size(); ++i) ASSERT_EQ(ours.lines[i], theirs.lines[i]) << "record " << i;
    // Record by record: keys never fall, and equal keys keep the unsorted file's order.
    std::map<std::string, std::size_t> place;
    for (std::size_t i = 0; i < input.lines.size(); ++i) place[input.lines[i]] = i;
    ASSERT_EQ(place.size(), input.lines.size()) << "records not distinct";
    for (std::size_t i = 1; i < ours.records.size(); ++i) {
      const auto a = samtools_key(ours.records[i - 1].get()), b = samtools_key(ours.records[i].get());
      ASSERT_TRUE(a < b || (a == b && place[ours.lines[i - 1]] < place[ours.lines[i]]))
          << ours.lines[i - 1] << "\nbefore\n" << ours.lines[i];
    }
    EXPECT_EQ(temporaries(), std::vector<std::string>{});
    ASSERT_TRUE(fs::exists(sorted + ".bai"));
  }

  TempDir dir_;
  std::vector<fmtest::TestContig> contigs_;
  std::string prefix_, sort_stderr_, records_;  // the sorted run's stderr, and its records
};

TEST_F(AlignSort, SortedIsSamtoolsSortOfTheUnsortedOutput) {
  if (!samtools_available()) GTEST_SKIP() << "samtools is not installed";
  const std::string reads = dir_.file("reads.fq");
  fmtest::write_file(reads, single_reads(3000));
  expect_samtools_sort_of_unsorted(shell_quote(reads), "");
  EXPECT_NE(sort_stderr_.find("writing " + records_ + " records in coordinate order to " + dir_.file("sorted.bam")),
            std::string::npos) << sort_stderr_;
  EXPECT_NE(sort_stderr_.find(records_ + " records coordinate-sorted in memory; index " + dir_.file("sorted.bam.bai")),
            std::string::npos) << sort_stderr_;
}

TEST_F(AlignSort, SortedPairsAreSamtoolsSortOfTheUnsortedOutput) {
  if (!samtools_available()) GTEST_SKIP() << "samtools is not installed";
  const auto [first, second] = pair_reads(1500);
  fmtest::write_file(dir_.file("r1.fq"), first);
  fmtest::write_file(dir_.file("r2.fq"), second);
  expect_samtools_sort_of_unsorted(shell_quote(dir_.file("r1.fq")) + " " + shell_quote(dir_.file("r2.fq")), "");
}

// --sort-mem 1M holds some 1700 of these records a run: 12000 reads spill several runs, whose
// merge must give the same records as sorting in memory.
TEST_F(AlignSort, SpilledRunsGiveTheSameRecords) {
  if (!samtools_available()) GTEST_SKIP() << "samtools is not installed";
  const std::string reads = dir_.file("reads.fq");
  fmtest::write_file(reads, single_reads(12000));
  expect_samtools_sort_of_unsorted(shell_quote(reads), "--sort-mem 1M --batch 1000");
  EXPECT_NE(sort_stderr_.find(records_ + " records coordinate-sorted through "), std::string::npos) << sort_stderr_;
  EXPECT_EQ(sort_stderr_.find("through 1 runs"), std::string::npos) << sort_stderr_;
  const std::string in_memory = dir_.file("in-memory.bam");
  const RunResult r = align("--sort --batch 1000 -o " + shell_quote(in_memory), shell_quote(reads));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.err.find("coordinate-sorted in memory"), std::string::npos) << r.err;
  EXPECT_EQ(read_bam(in_memory).lines, read_bam(dir_.file("sorted.bam")).lines);
}

// Our index against `samtools index` of a copy of the same file, and against a scan, on random
// regions of every contig (some past its end, some whole).
TEST_F(AlignSort, TheIndexAnswersAsSamtoolsIndexDoes) {
  if (!samtools_available()) GTEST_SKIP() << "samtools is not installed";
  const std::string reads = dir_.file("reads.fq"), sorted = dir_.file("s.bam"), copy = dir_.file("copy.bam");
  fmtest::write_file(reads, single_reads(3000));
  const RunResult r = align("--sort -o " + shell_quote(sorted), shell_quote(reads));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  fs::copy_file(sorted, copy);
  ASSERT_EQ(std::system(("samtools index " + shell_quote(copy)).c_str()), 0);
  const BamContents all = read_bam(sorted);
  std::mt19937_64 rng(11);
  for (int q = 0; q < 300; ++q) {
    const int tid = q % 3;
    const auto length = static_cast<std::int64_t>(contigs_[tid].sequence.size());
    const auto begin = static_cast<std::int64_t>(rng() % length);
    const std::int64_t end = q % 10 == 0 ? length + 100 : begin + 1 + static_cast<std::int64_t>(rng() % 2000);
    SCOPED_TRACE(std::to_string(tid) + ":" + std::to_string(begin) + "-" + std::to_string(end));
    const std::vector<std::string> ours = query_lines(sorted, sorted + ".bai", tid, begin, end);
    EXPECT_EQ(ours, query_lines(copy, copy + ".bai", tid, begin, end));
    EXPECT_EQ(ours, scanned_lines(all, tid, begin, end));
  }
}

// A sorted x.bam replaces an older one: its index of the other kind (x.bam.csi, which htslib
// takes before x.bam.bai) goes, and queries answer from the new index.
TEST_F(AlignSort, AStaleIndexOfTheOtherKindIsRemoved) {
  const std::string reads = dir_.file("reads.fq"), sorted = dir_.file("s.bam");
  fmtest::write_file(reads, single_reads(500));
  fmtest::write_file(sorted, "an older file");
  fmtest::write_file(sorted + ".csi", "its index");
  const RunResult r = align("--sort -o " + shell_quote(sorted), shell_quote(reads));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_FALSE(fs::exists(sorted + ".csi"));
  const BamContents all = read_bam(sorted);
  const auto length = static_cast<std::int64_t>(contigs_[0].sequence.size());
  EXPECT_EQ(query_lines(sorted, "", 0, 0, length), scanned_lines(all, 0, 0, length));
}

// What --sort cannot do is refused in one line before any work, and nothing is made.
TEST_F(AlignSort, RefusalsSayWhyAndMakeNothing) {
  const std::string reads = dir_.file("reads.fq");
  fmtest::write_file(reads, single_reads(10));
  const std::string out = shell_quote(dir_.file("x"));
  const std::string see = "; see 'wtmap align --help'\n";
  const std::string not_sam = "--sort writes BAM or CRAM: give -o FILE.bam or FILE.cram (or -O bam|cram), not SAM";
  const std::string not_stdout = "--sort writes a file and its index: give -o FILE.bam or FILE.cram, not stdout";
  const std::pair<std::string, std::string> cases[] = {
      {"--sort -o " + out + ".sam", "[wtmap align] " + not_sam + see},
      {"--sort -O sam -o " + out + ".bam", "[wtmap align] " + not_sam + see},
      {"--sort", "[wtmap align] " + not_stdout + see},
      {"--sort -O bam -o -", "[wtmap align] " + not_stdout + see},
      {"--sort -O cram -o - --reference " + shell_quote(dir_.file("ref.fa")), "[wtmap align] " + not_stdout + see},
      {"--sort-mem 1G -o " + out + ".bam", "[wtmap align] --sort-mem sizes the memory of --sort, which is not given" + see},
      {"--sort --sort-mem 1023K -o " + out + ".bam", "[wtmap align] --sort-mem needs a size of at least 1M, e.g. 500M or 2G" + see},
      {"--sort --sort-mem 2X -o " + out + ".bam", "[wtmap align] --sort-mem needs a size of at least 1M, e.g. 500M or 2G" + see},
  };
  const std::vector<std::string> before = dir_.entries();
  for (const auto& [options, message] : cases) {
    const RunResult r = align(options, shell_quote(reads));
    EXPECT_EQ(r.exit_code, 1) << options;
    EXPECT_EQ(r.err, message) << options;
    EXPECT_EQ(dir_.entries(), before) << options;
  }
  const RunResult r = align("-q --sort -O bam -o /dev/null", shell_quote(reads));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "[wtmap align] error: /dev/null: --sort writes an index beside the output; -o must name a regular file\n");
}

// SIGINT once runs are on disk: the run files, the output's temporary and the index's go.
TEST_F(AlignSort, AnInterruptWhileSpillingLeavesNoTemporary) {
  const std::string fifo = dir_.file("in.fq"), out = dir_.file("out.bam");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const pid_t child = fmtest::start_wtmap(
      {"align", "-x", prefix_, "--device", "cpu", "-t", "2", "--batch", "500", "--sort", "--sort-mem", "1M", "-o", out, fifo});
  ASSERT_GE(child, 0);
  // More than the reader's first chunk of input (SeqReader::kChunkBytes), whose some 19000
  // reads fill several runs; then the FIFO stays open and the reader waits for more.
  const int writer = open(fifo.c_str(), O_WRONLY);
  const std::string records = single_reads(30000);
  ASSERT_GT(records.size(), aligner::SeqReader::kChunkBytes * 3 / 2);
  for (std::size_t done = 0; done < records.size();) {
    const ssize_t n = write(writer, records.data() + done, records.size() - done);
    ASSERT_GT(n, 0);
    done += static_cast<std::size_t>(n);
  }
  auto runs_on_disk = [&] {
    int runs = 0;
    for (const std::string& e : dir_.entries()) runs += e.rfind("out.bam.tmp.", 0) == 0 && e.find(".run") != std::string::npos;
    return runs;
  };
  for (int wait = 0; wait < 1500 && runs_on_disk() < 2; ++wait) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GE(runs_on_disk(), 2) << "no runs spilled within 30 s";
  EXPECT_FALSE(fs::exists(out + ".bai"));
  fmtest::expect_signal_ends(child, SIGINT);
  close(writer);
  for (const std::string& e : dir_.entries()) EXPECT_NE(e.rfind("out.bam", 0), 0u) << e << " left behind";
}

}  // namespace
}  // namespace wtmap::altest
