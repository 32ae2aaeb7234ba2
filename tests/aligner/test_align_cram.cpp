// `wtmap align` writing CRAM (issue 29), run as a user runs it: the CRAM file read back by htslib
// (against the reference, given) holds the records of the BAM output of the same run -- single
// gapped reads with indels, split and repeated reads, pairs, the k-mismatch mode -- its header
// BAM's with each @SQ's MD5 (computed here) and path; a read group's RG tag comes back last (CRAM
// keeps it apart); `samtools view` finds the reference through the file alone; sorted CRAM and its
// .crai answer region queries as the sorted BAM and its .bai do; -l is htslib's CRAM level; a
// bgzip reference gets its .fai and .gzi; a missing, mismatched or unusable reference is one line,
// exit 1 and nothing written (not even a .fai); an interrupt leaves no file.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <htslib/bgzf.h>
#include <htslib/faidx.h>
#include <htslib/hts.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.hpp"
#include "cut_reads.hpp"
#include "fm_support.hpp"
#include "pair_support.hpp"
#include "sorted_bam_support.hpp"
#include "wtmap/aligner/cram_reference.hpp"

namespace wtmap::altest {
namespace {

using fmtest::describe;
using fmtest::Pattern;
using fmtest::RunResult;
using fmtest::shell_quote;
using fmtest::TempDir;
namespace fs = std::filesystem;

// The MD5 of a reference sequence as the SAM specification defines @SQ M5: of its bases in upper
// case (ambiguity codes kept), line breaks left out.
std::string sequence_md5(const std::string& sequence) {
  std::string upper = sequence;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  hts_md5_context* md5 = hts_md5_init();
  hts_md5_update(md5, upper.data(), static_cast<unsigned long>(upper.size()));
  unsigned char digest[16];
  hts_md5_final(digest, md5);
  hts_md5_destroy(md5);
  char hex[33];
  hts_md5_hex(hex, digest);
  return hex;
}

// A record's SAM line with its RG:Z tag moved to the end of the line.
std::string with_read_group_last(const std::string& line) {
  std::vector<std::string> fields = fmtest::split(line, '\t'), tags, read_group;
  for (std::size_t i = 11; i < fields.size(); ++i) (fields[i].rfind("RG:Z:", 0) == 0 ? read_group : tags).push_back(fields[i]);
  std::string out;
  for (std::size_t i = 0; i < 11; ++i) out += (i ? "\t" : "") + fields[i];
  for (const std::string& t : tags) out += "\t" + t;
  for (const std::string& t : read_group) out += "\t" + t;
  return out;
}

class AlignCram : public ::testing::Test {
 protected:
  void SetUp() override {
    fmtest::RandomReferenceSpec spec;  // N runs, lower case, U and other ambiguity codes
    spec.seed = 31;
    spec.contigs = 3;
    spec.min_length = 20000;
    spec.max_length = 30000;
    spec.n_run_rate = 0.0005;
    contigs_ = fmtest::random_reference(spec);
    // A stretch of contig 0 again at the end of contig 2: reads from it map twice (XA, MAPQ 0).
    contigs_[2].sequence += contigs_[0].sequence.substr(kRepeatAt, kRepeatLength);
    fasta_ = dir_.file("ref.fa");
    fmtest::write_file(fasta_, fmtest::fasta_text(contigs_, 60));
    // `wtmap index ref.fa` writes ref.fa.wtmap: -x ref.fa names the index and its FASTA.
    const RunResult r = fmtest::run_wtmap(out_, "index --device cpu " + shell_quote(fasta_));
    ASSERT_EQ(r.exit_code, 0) << describe(r);
  }

  // mixed_reads (cut_reads.hpp: both strands, unmapped, ties, chimeras), and of every ten read 1
  // from the repeat, 4 with a deletion of 3 bases and 6 with an insertion of 3.
  std::string single_reads(std::size_t n) const {
    std::vector<Pattern> reads = mixed_reads(contigs_, n, 7);
    std::mt19937 rng(9);
    for (std::size_t i = 0; i < n; ++i) {
      std::string& s = reads[i].sequence;
      if (i % 10 == 1) s = contigs_[0].sequence.substr(kRepeatAt + rng() % (kRepeatLength - 100), 100);
      if (i % 10 == 4) s.erase(40, 3);
      if (i % 10 == 6) s.insert(50, "TTA");
    }
    return fmtest::fastq_text(reads);
  }

  // Mates of fragments of 300 bases (FR); some second mates random (unmapped, placed at their mate).
  void write_pairs(std::size_t n) const {
    const auto [first, second] = fr_pairs(contigs_, n, 8);
    fmtest::write_file(dir_.file("r1.fq"), fmtest::fastq_text(first));
    fmtest::write_file(dir_.file("r2.fq"), fmtest::fastq_text(second));
  }
  std::string pairs() const { return shell_quote(dir_.file("r1.fq")) + " " + shell_quote(dir_.file("r2.fq")); }
  std::string reads(std::size_t n) const {
    fmtest::write_file(dir_.file("reads.fq"), single_reads(n));
    return shell_quote(dir_.file("reads.fq"));
  }

  RunResult align(const std::string& options, const std::string& inputs, const std::string& x = "") const {
    return fmtest::run_wtmap(out_, "align -x " + shell_quote(x.empty() ? fasta_ : x) + " --device cpu -t 2 " + options + " " + inputs);
  }

  // BAM's header with M5 (the contig's MD5) and UR (the reference's path) added to each @SQ line,
  // and the @PG command line naming `cram` where the BAM run named `bam`.
  std::string expected_cram_header(std::string header, const std::string& bam, const std::string& cram,
                                   const std::string& reference) const {
    for (std::size_t at = header.find(bam); at != std::string::npos; at = header.find(bam, at + cram.size())) {
      header.replace(at, bam.size(), cram);
    }
    for (const fmtest::TestContig& c : contigs_) {
      const std::string line = "@SQ\tSN:" + c.name + "\tLN:" + std::to_string(c.sequence.size());
      const std::size_t at = header.find(line + "\n");
      if (at == std::string::npos) return "no line " + line + " in " + header;
      header.insert(at + line.size(), "\tM5:" + sequence_md5(c.sequence) + "\tUR:" + reference);
    }
    return header;
  }

  // Aligns `inputs` to out.bam and out.cram with `options` (and `cram_options` for CRAM) against
  // the index -x `x` names (empty: ref.fa); the CRAM file must be CRAM 3 and hold the BAM file's
  // header (expected_cram_header, `reference` its UR; empty: ref.fa) and records, RG tags last
  // where `read_group_last`. Leaves both files' contents in bam_ and cram_.
  void expect_cram_holds_bam_records(const std::string& options, const std::string& inputs, bool read_group_last = false,
                                     const std::string& x = "", std::string reference = "",
                                     const std::string& cram_options = "") {
    if (reference.empty()) reference = fasta_;
    const std::string bam = dir_.file("out.bam"), cram = dir_.file("out.cram");
    RunResult r = align(options + " -o " + shell_quote(bam), inputs, x);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    r = align(options + " " + cram_options + " -o " + shell_quote(cram), inputs, x);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    htsFile* f = hts_open(cram.c_str(), "r");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(hts_get_format(f)->format, htsExactFormat::cram);
    EXPECT_EQ(hts_get_format(f)->version.major, 3);
    hts_close(f);
    bam_ = read_bam(bam);
    cram_ = read_bam(cram, reference);
    std::string header = expected_cram_header(bam_.header, bam, cram, reference);
    if (!cram_options.empty()) header.replace(header.find(" -o " + cram), 0, " " + cram_options);
    EXPECT_EQ(cram_.header, header);
    ASSERT_EQ(cram_.lines.size(), bam_.lines.size());
    for (std::size_t i = 0; i < bam_.lines.size(); ++i) {
      ASSERT_EQ(cram_.lines[i], read_group_last ? with_read_group_last(bam_.lines[i]) : bam_.lines[i]) << "record " << i;
    }
    for (const std::string& e : dir_.entries()) EXPECT_EQ(e.find(".tmp."), std::string::npos) << e << " left behind";
  }

  // How many records of bam_ hold `text`.
  std::size_t records_with(const std::string& text) const {
    return static_cast<std::size_t>(std::count_if(bam_.lines.begin(), bam_.lines.end(),
                                                  [&](const std::string& l) { return l.find(text) != std::string::npos; }));
  }

  // How many records of bam_ have the CIGAR operation `op`.
  std::size_t records_with_cigar(char op) const {
    return static_cast<std::size_t>(std::count_if(bam_.lines.begin(), bam_.lines.end(), [&](const std::string& l) {
      return fmtest::split(l, '\t')[5].find(op) != std::string::npos;
    }));
  }

  static constexpr std::size_t kRepeatAt = 5000, kRepeatLength = 600;
  TempDir dir_;  // the reference, its index, the reads, the outputs
  TempDir out_;  // wtmap's standard output and error
  std::vector<fmtest::TestContig> contigs_;
  std::string fasta_;
  BamContents bam_, cram_;
};

TEST_F(AlignCram, GappedReadsAreTheBamRecords) {
  expect_cram_holds_bam_records("", reads(2000));
  // What the records must exercise: unmapped, reverse, indels, split and repeated reads.
  EXPECT_GT(records_with("\t4\t*\t0\t0\t*\t"), 100u);
  EXPECT_GT(records_with("\t16\t"), 400u);
  EXPECT_GT(records_with_cigar('D'), 50u);
  EXPECT_GT(records_with_cigar('I'), 50u);
  EXPECT_GT(records_with("SA:Z:"), 80u);
  EXPECT_GT(records_with("XA:Z:"), 100u);
  // The .fai made beside the reference: every contig, its length.
  const std::unique_ptr<faidx_t, void (*)(faidx_t*)> fai(fai_load3(fasta_.c_str(), nullptr, nullptr, 0), fai_destroy);
  ASSERT_TRUE(fai);
  ASSERT_EQ(faidx_nseq(fai.get()), 3);
  for (const fmtest::TestContig& c : contigs_) EXPECT_EQ(faidx_seq_len(fai.get(), c.name.c_str()), static_cast<int>(c.sequence.size()));
}

TEST_F(AlignCram, PairsAreTheBamRecords) {
  write_pairs(1000);
  expect_cram_holds_bam_records("", pairs());
  EXPECT_GT(records_with("\tMC:Z:"), 1000u);
  EXPECT_GT(records_with("\t=\t"), 1000u);
}

// -x naming the index file named after its FASTA (ref.fa.wtmap) makes ref.fa the reference too.
TEST_F(AlignCram, KMismatchRecordsAreTheBamRecords) {
  expect_cram_holds_bam_records("-k 2", reads(1000), false, fasta_ + ".wtmap");
  EXPECT_GT(records_with("X0:i:"), 100u);
}

// CRAM 3 keeps a read group in a data series of its own: the decoder gives it back as the last tag.
TEST_F(AlignCram, AReadGroupComesBackAsTheLastTag) {
  write_pairs(500);
  expect_cram_holds_bam_records("-R '@RG\\tID:lane1\\tSM:s'", pairs(), /*read_group_last=*/true);
  EXPECT_GT(records_with("RG:Z:lane1\tMQ:i:"), 500u);  // tags after RG in BAM, so the test moves some
  EXPECT_NE(cram_.header.find("\n@RG\tID:lane1\tSM:s\n"), std::string::npos) << cram_.header;
}

// samtools view, told nothing, finds the reference through the file's @SQ UR (REF_PATH pointed at
// an empty folder, so that it never asks the network by M5).
TEST_F(AlignCram, SamtoolsViewFindsTheReferenceThroughTheFile) {
  if (!samtools_available()) GTEST_SKIP() << "samtools is not installed";
  expect_cram_holds_bam_records("", reads(300));
  const std::string view = dir_.file("view.sam");
  ASSERT_EQ(std::system(("REF_PATH=" + shell_quote(dir_.file("no-such-cache/%s")) + " REF_CACHE= samtools view " +
                         shell_quote(dir_.file("out.cram")) + " > " + shell_quote(view)).c_str()), 0);
  std::vector<std::string> lines = fmtest::split(fmtest::read_file(view), '\n');
  ASSERT_EQ(lines.back(), "");
  lines.pop_back();
  EXPECT_EQ(lines, bam_.lines);
}

// --sort: the sorted CRAM holds the sorted BAM's records; its .crai, loaded by htslib, answers
// random regions (some past a contig's end) as the BAM's .bai does, and as a scan does.
TEST_F(AlignCram, SortedCramAndItsIndexAnswerAsTheSortedBam) {
  const std::string input = reads(3000);
  const std::string bam = dir_.file("s.bam"), cram = dir_.file("s.cram");
  RunResult r = align("--sort -o " + shell_quote(bam), input);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  r = align("--sort -o " + shell_quote(cram), input);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.err.find("coordinate-sorted in memory; index " + cram + ".crai"), std::string::npos) << r.err;
  EXPECT_EQ(dir_.entries(), (std::vector<std::string>{"reads.fq", "ref.fa", "ref.fa.fai", "ref.fa.wtmap", "s.bam", "s.bam.bai",
                                                      "s.cram", "s.cram.crai"}));
  const BamContents sorted_bam = read_bam(bam), sorted_cram = read_bam(cram, fasta_);
  EXPECT_EQ(sorted_cram.header.rfind("@HD\tVN:1.6\tSO:coordinate\n", 0), 0u) << sorted_cram.header;
  ASSERT_EQ(sorted_cram.lines, sorted_bam.lines);
  std::mt19937_64 rng(12);
  for (int q = 0; q < 200; ++q) {
    const int tid = q % 3;
    const auto length = static_cast<std::int64_t>(contigs_[tid].sequence.size());
    const auto begin = static_cast<std::int64_t>(rng() % length);
    const std::int64_t end = q % 10 == 0 ? length + 100 : begin + 1 + static_cast<std::int64_t>(rng() % 3000);
    SCOPED_TRACE(std::to_string(tid) + ":" + std::to_string(begin) + "-" + std::to_string(end));
    const std::vector<std::string> ours = query_lines(cram, cram + ".crai", tid, begin, end, fasta_);
    EXPECT_EQ(ours, query_lines(bam, bam + ".bai", tid, begin, end));
    EXPECT_EQ(ours, scanned_lines(sorted_cram, tid, begin, end));
  }
}

// -l is htslib's CRAM level: the records stay; 0 stores blocks uncompressed (the file holds at
// least every quality byte, which all other levels squeeze to almost nothing); 9 gives a smaller
// file than 1; without -l, htslib's own default, 5 (one thread: htslib's CRAM codec choices
// depend on the order its threads finish, the bytes of a run on one do not). The default's file
// differs from -l 5's by the @PG command line's "-l 5 " alone (a few bytes, in a compressed
// header block), and from -l 1's by hundreds.
TEST_F(AlignCram, DashLIsHtslibsCramLevel) {
  const std::string input = reads(1000), cram = dir_.file("out.cram");
  std::map<std::string, std::uintmax_t> size;
  std::vector<std::string> default_lines;
  for (const std::string level : {"", "-l 0", "-l 1", "-l 5", "-l 9"}) {
    const RunResult r = align(level + " -t 1 -o " + shell_quote(cram), input);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    size[level] = fs::file_size(cram);
    const std::vector<std::string> lines = read_bam(cram, fasta_).lines;
    if (level.empty()) default_lines = lines;
    EXPECT_EQ(lines, default_lines) << level;
  }
  std::uintmax_t quality_bytes = 0;
  for (const std::string& line : default_lines) quality_bytes += fmtest::split(line, '\t')[10].size();
  EXPECT_GE(size["-l 0"], quality_bytes);
  EXPECT_LT(size["-l 1"] * 4, quality_bytes);
  EXPECT_LT(size["-l 9"], size["-l 1"]);
  auto apart = [&](const char* level) { return std::abs(static_cast<double>(size[level]) - static_cast<double>(size[""])); };
  EXPECT_LE(apart("-l 5"), 8) << size["-l 5"] << " bytes at -l 5, " << size[""] << " by default";
  EXPECT_GE(apart("-l 1"), 100) << size["-l 1"] << " bytes at -l 1, " << size[""] << " by default";
}

// A bgzip-compressed FASTA serves as it is: -x ref.fa.gz names the index and the reference, whose
// .fai and .gzi are made beside it.
TEST_F(AlignCram, ABgzipReferenceGetsItsFaiAndGzi) {
  const std::string bgzipped = dir_.file("bgz.fa.gz"), text = fmtest::fasta_text(contigs_, 70);
  BGZF* out = bgzf_open(bgzipped.c_str(), "w");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(bgzf_write(out, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ASSERT_EQ(bgzf_close(out), 0);
  const RunResult r = fmtest::run_wtmap(out_, "index --device cpu " + shell_quote(bgzipped));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  expect_cram_holds_bam_records("", reads(300), false, bgzipped, bgzipped);
  EXPECT_TRUE(fs::exists(bgzipped + ".fai"));
  EXPECT_TRUE(fs::exists(bgzipped + ".gzi"));
}

// A reference with more contigs than the index, in another order, serves: the contigs are matched
// by name (each @SQ's M5 is its own contig's).
TEST_F(AlignCram, AReferenceWithMoreContigsInAnotherOrderServes) {
  std::vector<fmtest::TestContig> more(contigs_.rbegin(), contigs_.rend());
  more.insert(more.begin() + 1, fmtest::TestContig{"extra", contigs_[1].sequence.substr(0, 5000)});
  const std::string bigger = dir_.file("bigger.fa");
  fmtest::write_file(bigger, fmtest::fasta_text(more, 50));
  expect_cram_holds_bam_records("", reads(300), false, "", bigger, "--reference " + bigger);  // a path without specials
}

// What CRAM cannot take is refused on one line with exit status 1, before anything is written:
// no output, no temporary, no .fai beside a reference that does not serve.
TEST_F(AlignCram, ReferenceErrorsAreOneLineAndWriteNothing) {
  const std::string reads_path = reads(20);
  RunResult r = fmtest::run_wtmap(out_, "index --device cpu -p " + shell_quote(dir_.file("idx")) + " " + shell_quote(fasta_));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<fmtest::TestContig> shorter = contigs_, lacking(contigs_.begin() + 1, contigs_.end());
  shorter[1].sequence.pop_back();
  fmtest::write_file(dir_.file("shorter.fa"), fmtest::fasta_text(shorter, 60));
  fmtest::write_file(dir_.file("lacking.fa"), fmtest::fasta_text(lacking, 60));
  fmtest::write_gzip(dir_.file("plain.fa.gz"), fmtest::fasta_text(contigs_, 60));
  // An index older than its FASTA may describe another file.
  fs::copy_file(fasta_, dir_.file("stale.fa"));
  fmtest::write_file(dir_.file("stale.fa.fai"), "whatever\t1\t10\t60\t61\n");
  fs::last_write_time(dir_.file("stale.fa.fai"), fs::last_write_time(fasta_) - std::chrono::hours(1));
  const std::string out = " -o " + shell_quote(dir_.file("x.cram")), see = "; see 'wtmap align --help'\n";
  const std::string error = "[wtmap align] error: ", mismatch = " does not match the index (give the FASTA the index was built from): ";
  struct Case {
    std::string options, x, message;
  };
  const Case cases[] = {
      {out, dir_.file("idx"), "[wtmap align] CRAM output needs the reference FASTA it is encoded against: give --reference "
                              "FILE (an index does not record its FASTA; -x FILE.fa names it)" + see},
      {"-O cram", dir_.file("idx.wtmap"), "[wtmap align] CRAM output needs the reference FASTA it is encoded against: give "
                                          "--reference FILE (an index does not record its FASTA; -x FILE.fa names it)" + see},
      {"--reference " + shell_quote(fasta_) + " -o " + shell_quote(dir_.file("x.bam")), "",
       "[wtmap align] --reference is the reference of CRAM output, and the output is BAM (-O cram or -o FILE.cram writes CRAM)" + see},
      {"--reference " + shell_quote(dir_.file("missing.fa")) + out, "",
       error + dir_.file("missing.fa") + ": cannot open for reading (No such file or directory)\n"},
      {"--reference " + shell_quote(dir_.file("shorter.fa")) + out, dir_.file("idx"),
       error + dir_.file("shorter.fa") + mismatch + "contig " + contigs_[1].name + " has " +
           std::to_string(contigs_[1].sequence.size() - 1) + " bases there, " + std::to_string(contigs_[1].sequence.size()) +
           " in the index\n"},
      {"--reference " + shell_quote(dir_.file("lacking.fa")) + out, "",
       error + dir_.file("lacking.fa") + mismatch + "it has no contig " + contigs_[0].name + "\n"},
      {"--reference " + shell_quote(dir_.file("plain.fa.gz")) + out, "",
       error + dir_.file("plain.fa.gz") + " is gzip-compressed, which htslib cannot read at random places: give CRAM the "
                                          "FASTA uncompressed (gunzip) or compressed with bgzip\n"},
      {"--reference " + shell_quote(dir_.file("stale.fa")) + out, "",
       error + dir_.file("stale.fa.fai") + " is older than " + dir_.file("stale.fa") +
           ", so it may describe another file: remove it or rebuild it (samtools faidx " + dir_.file("stale.fa") + ")\n"},
      {"--reference -" + out, "", error + "the CRAM reference must be a FASTA file, not standard input\n"},
      {"--reference " + shell_quote(out_.path().string()) + out, "", error + out_.path().string() + ": is a directory, not a file\n"},
  };
  const std::vector<std::string> before = dir_.entries();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.options);
    r = align("-q " + c.options, reads_path, c.x);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, c.message);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(dir_.entries(), before);
  }
}

// A reference without its .fai in a folder this user cannot write: the .fai cannot be made, and
// the line says what to do (skipped as root, whom permissions do not stop).
TEST_F(AlignCram, AFaiThatCannotBeMadeIsOneLineWithWhatToDo) {
  if (geteuid() == 0) GTEST_SKIP() << "running as root: every folder is writable";
  TempDir locked;
  const std::string fasta = locked.file("ref.fa");
  fs::copy_file(fasta_, fasta);
  ASSERT_EQ(chmod(locked.path().c_str(), 0555), 0);
  const RunResult r = align("-q --reference " + shell_quote(fasta) + " -o " + shell_quote(dir_.file("x.cram")), reads(20));
  chmod(locked.path().c_str(), 0755);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "[wtmap align] error: " + fasta + " has no " + fasta + ".fai and it cannot be made beside it (" + fasta +
                       ".fai: cannot create files in " + locked.path().string() +
                       " (Permission denied)); copy or link the FASTA into a folder you can write\n");
  EXPECT_EQ(locked.entries(), std::vector<std::string>{"ref.fa"});
  EXPECT_FALSE(fs::exists(dir_.file("x.cram")));
}

// SIGINT while a CRAM file is written (the reads come through a FIFO that stays open): its
// temporary goes, and nothing named after the output is left.
TEST_F(AlignCram, AnInterruptLeavesNoFile) {
  const std::string fifo = dir_.file("in.fq"), cram = dir_.file("out.cram");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const pid_t child = fmtest::start_wtmap({"align", "-x", fasta_, "--device", "cpu", "-t", "2", "--batch", "100", "-o", cram, fifo});
  ASSERT_GE(child, 0);
  const int writer = open(fifo.c_str(), O_WRONLY);
  const std::string records = single_reads(500);
  ASSERT_EQ(write(writer, records.data(), records.size()), static_cast<ssize_t>(records.size()));
  auto temporary_made = [&] {
    for (const std::string& e : dir_.entries()) {
      if (e.rfind("out.cram.tmp.", 0) == 0) return true;
    }
    return false;
  };
  for (int wait = 0; wait < 1500 && !temporary_made(); ++wait) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(temporary_made()) << "no temporary within 30 s";
  fmtest::expect_signal_ends(child, SIGINT);
  close(writer);
  for (const std::string& e : dir_.entries()) EXPECT_NE(e.rfind("out.cram", 0), 0u) << e << " left behind";
}

}  // namespace
}  // namespace wtmap::altest
