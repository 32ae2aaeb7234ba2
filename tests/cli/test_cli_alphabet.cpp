// `wtmap index --alphabet protein|byte` and `wtmap count` on such an index, as a user runs them:
// the TSV of `count --locate` compared with a naive scan of the records done here; bad bytes in
// the reference (the record and line named, no index file left); `wtmap align` refusing a protein
// index; --alphabet dna writing today's DNA index; and what --help says.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cli_support.hpp"
#include "fm_support.hpp"
#include "general_support.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/fmindex/fm_index_base.hpp"

namespace wtmap::fmtest {
namespace {

std::vector<TestContig> protein_reference() {
  auto records = random_records(2025, 5, 80, 600, protein_letters(), SymbolKind::protein);
  records.push_back({"repeat", std::string(30, 'W') + "MKVMKVMKVMKV*" + std::string(5, 'w')});
  records.push_back({"one", "M"});
  return records;
}

std::vector<TestContig> byte_reference() {
  std::string odd;  // every byte but '\n', '\r' and '>' -- a record's line may not begin with '>'
  for (int b = 0; b < 256; ++b) {
    if (b != '\n' && b != '\r' && b != '>') odd += static_cast<char>(b);
  }
  auto records = random_records(2026, 4, 100, 500, odd, SymbolKind::byte);
  records.push_back({"text", "the cat; the hat.\tthe end @ 42 > 7"});
  records.push_back({"nul", std::string("\0\0\xff", 3)});
  return records;
}

// Random substrings (as written, so protein ones in mixed case), record starts and ends, the
// end of one record joined to the start of the next, single symbols, and patterns holding a
// symbol the reference lacks; named p1, p2, ...
std::vector<Pattern> patterns_for(const std::vector<TestContig>& records, SymbolKind kind) {
  std::mt19937 rng(77);
  std::vector<std::string> seqs;
  for (int i = 0; i < 120; ++i) {
    const std::string& s = records[rng() % records.size()].sequence;
    const std::size_t pos = rng() % s.size(), len = 1 + rng() % std::min<std::size_t>(20, s.size() - pos);
    seqs.push_back(s.substr(pos, len));
  }
  for (std::size_t k = 0; k < records.size(); ++k) {
    const std::string& s = records[k].sequence;
    const std::string& next = records[(k + 1) % records.size()].sequence;
    seqs.push_back(s.substr(0, 8));
    seqs.push_back(s.substr(s.size() - std::min<std::size_t>(8, s.size())));
    seqs.push_back(s.substr(s.size() - std::min<std::size_t>(4, s.size())) + next.substr(0, 4));
  }
  if (kind == SymbolKind::protein) {
    for (const char* p : {"M", "m", "W", "*", "MKV", "mkv", "MK1", "M-K", "WW.", "12", "wwwww"}) seqs.push_back(p);
  } else {
    for (const char* p : {"the", "The", "the cat", "\t", "@ 42 >", "zz\x7f\x01zz"}) seqs.push_back(p);
    seqs.push_back(std::string(1, '\0'));
  }
  std::vector<Pattern> patterns;
  for (const std::string& s : seqs) {
    // A line's last '\r' would be read as a CRLF line end, and a pattern starting with '>' in a
    // FASTA file as a header: neither is a pattern a file can hold.
    if (!s.empty() && s.back() == '\r') continue;
    patterns.push_back({"p" + std::to_string(patterns.size() + 1), s});
  }
  return patterns;
}

// Every output line against the naive scan, in input order (every hit on strand '+'); some but
// not all patterns occur.
void expect_count_output(const std::string& out, const std::vector<TestContig>& records,
                         const std::vector<Pattern>& patterns, SymbolKind kind, bool located) {
  int found = 0;
  expect_count_lines(out, records, patterns, located,
                     [&](const std::string& p) { return naive_symbol_hits(records, p, kind); }, &found);
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_GT(found, static_cast<int>(patterns.size()) / 2) << "most patterns should occur";
  EXPECT_LT(found, static_cast<int>(patterns.size())) << "some patterns should not occur";
}

class CliAlphabet : public ::testing::Test {
 protected:
  // Writes `records` as a gzip FASTA and runs `wtmap index --alphabet <alphabet>` on it.
  RunResult index(const std::vector<TestContig>& records, const std::string& alphabet, const std::string& device = "cpu") {
    fasta_ = dir_.file("ref.fa.gz");
    write_gzip(fasta_, symbol_fasta_text(records, 50));
    return run_wtmap(dir_, "index --alphabet " + alphabet + " " + shell_quote(fasta_) + " -p " + shell_quote(prefix_) +
                               " -s 4 --device " + device);
  }
  RunResult count(const std::string& input, const std::string& extra, const std::string& stdin_path = "/dev/null") {
    return run_wtmap(dir_, "count -x " + shell_quote(prefix_) + " " + extra + " " + shell_quote(input), stdin_path);
  }

  TempDir dir_;
  std::string fasta_, prefix_ = dir_.file("idx");
};

TEST_F(CliAlphabet, ProteinIndexThenCountLocateMatchesNaiveScan) {
  const auto records = protein_reference();
  const RunResult built = index(records, "protein");
  ASSERT_EQ(built.exit_code, 0) << describe(built);
  EXPECT_EQ(dir_.entries(), (std::vector<std::string>{"idx.wtmap", "ref.fa.gz", "stderr.txt", "stdout.txt"}));
  EXPECT_EQ(fmindex::read_index_alphabet(prefix_ + ".wtmap").value(), fmindex::Alphabet::protein);

  const auto patterns = patterns_for(records, SymbolKind::protein);
  write_file(dir_.file("p.fq"), fastq_text(patterns));
  write_file(dir_.file("p.fa"), fasta_text(patterns, 5));  // protein patterns never begin with '>'
  for (const auto& [input, stdin_path, extra] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {dir_.file("p.fq"), "/dev/null", ""}, {dir_.file("p.fa"), "/dev/null", " --batch 7"}, {"-", dir_.file("p.fq"), ""}}) {
    SCOPED_TRACE(input + extra);
    const RunResult r = count(input, "--locate --max-hits 100000 --device cpu" + extra, stdin_path);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    expect_count_output(r.out, records, patterns, SymbolKind::protein, true);
  }
  const RunResult counts_only = count(dir_.file("p.fq"), "--device cpu");
  ASSERT_EQ(counts_only.exit_code, 0) << describe(counts_only);
  expect_count_output(counts_only.out, records, patterns, SymbolKind::protein, false);
}

TEST_F(CliAlphabet, ByteIndexThenCountLocateMatchesNaiveScan) {
  const auto records = byte_reference();
  const RunResult built = index(records, "byte");
  ASSERT_EQ(built.exit_code, 0) << describe(built);
  EXPECT_EQ(fmindex::read_index_alphabet(prefix_ + ".wtmap").value(), fmindex::Alphabet::byte);
  const auto patterns = patterns_for(records, SymbolKind::byte);
  write_file(dir_.file("p.fq"), fastq_text(patterns));
  const RunResult r = count(dir_.file("p.fq"), "--locate --max-hits 100000 --device cpu");
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  expect_count_output(r.out, records, patterns, SymbolKind::byte, true);
}

TEST_F(CliAlphabet, GpuDeviceMatchesNaiveScan) {
  if (!gpu_available()) GTEST_SKIP() << "no usable CUDA device";
  const auto records = protein_reference();
  const RunResult built = index(records, "protein", "gpu");
  ASSERT_EQ(built.exit_code, 0) << describe(built);
  const auto patterns = patterns_for(records, SymbolKind::protein);
  write_file(dir_.file("p.fq"), fastq_text(patterns));
  const RunResult r = count(dir_.file("p.fq"), "--locate --max-hits 100000 --device gpu");
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  expect_count_output(r.out, records, patterns, SymbolKind::protein, true);
}

// A byte that is no amino-acid code stops the build naming the file, the line, the record and
// the byte; nothing is left behind, not even a temporary file.
TEST_F(CliAlphabet, BadProteinByteNamesRecordAndLineAndLeavesNoFile) {
  fasta_ = dir_.file("bad.fa");
  write_file(fasta_, ">p1\nMKVL\nAAGH\n>p2 second\nWWW\nMK1V\n");
  const RunResult r = run_wtmap(dir_, "index --alphabet protein " + shell_quote(fasta_) + " -p " + shell_quote(prefix_) +
                                          " --device cpu");
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find(fasta_ + ":6:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'p2'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'1'"), std::string::npos) << r.err;
  EXPECT_EQ(dir_.entries(), (std::vector<std::string>{"bad.fa", "stderr.txt", "stdout.txt"}));
}

TEST_F(CliAlphabet, CarriageReturnInsideAByteLineIsAnError) {
  fasta_ = dir_.file("bad.fa");
  write_file(fasta_, ">b1\nabc\n>b2\nab\rc\n");
  const RunResult r = run_wtmap(dir_, "index --alphabet byte " + shell_quote(fasta_) + " -p " + shell_quote(prefix_) +
                                          " --device cpu");
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find(fasta_ + ":4:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'b2'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(prefix_ + ".wtmap"));
}

TEST_F(CliAlphabet, AlignOnAProteinIndexFailsCleanly) {
  const RunResult built = index(protein_reference(), "protein");
  ASSERT_EQ(built.exit_code, 0) << describe(built);
  write_file(dir_.file("reads.fq"), "@r1\nACGTACGTACGTACGTACGT\n+\nIIIIIIIIIIIIIIIIIIII\n");
  const std::string sam = dir_.file("out.sam");
  const RunResult r = run_wtmap(dir_, "align -x " + shell_quote(prefix_) + " -k 4 -o " + shell_quote(sam) + " --device cpu " +
                                          shell_quote(dir_.file("reads.fq")));
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.exit_code, -1) << "killed by a signal";
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(fs::exists(sam)) << "no output file for a run that aligned nothing";
  const auto lines = split(r.err, '\n');
  std::vector<std::string> errors;
  for (const auto& l : lines) {
    if (l.find("error") != std::string::npos) errors.push_back(l);
  }
  ASSERT_EQ(errors.size(), 1u) << r.err;
  EXPECT_NE(errors[0].find("protein index"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("DNA index"), std::string::npos) << errors[0];
}

// --alphabet dna is the default: the same DNA index file, byte for byte, and a DNA index still
// counts both strands.
TEST_F(CliAlphabet, DnaIsTheDefault) {
  fasta_ = dir_.file("dna.fa");
  write_file(fasta_, ">c1\nACGTTGCANNACGT\n>c2\nGGGCCC\n");
  const RunResult a = run_wtmap(dir_, "index " + shell_quote(fasta_) + " -p " + shell_quote(dir_.file("a")) + " --device cpu");
  const RunResult b = run_wtmap(dir_, "index --alphabet dna " + shell_quote(fasta_) + " -p " + shell_quote(dir_.file("b")) +
                                          " --device cpu");
  ASSERT_EQ(a.exit_code, 0) << describe(a);
  ASSERT_EQ(b.exit_code, 0) << describe(b);
  EXPECT_TRUE(read_file(dir_.file("a.wtmap")) == read_file(dir_.file("b.wtmap")));
  EXPECT_EQ(fmindex::read_index_alphabet(dir_.file("a.wtmap")).value(), fmindex::Alphabet::dna);
  write_file(dir_.file("p.fa"), ">gcc\nGCC\n");
  prefix_ = dir_.file("b");
  const RunResult r = count(dir_.file("p.fa"), "--locate --device cpu");
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "gcc\t2\tc2:2:-,c2:3:+\n");  // GGC (its reverse complement) at 2, GCC at 3
}

TEST_F(CliAlphabet, UnknownAlphabetIsAUsageError) {
  fasta_ = dir_.file("ref.fa");
  write_file(fasta_, ">p\nMKV\n");
  const RunResult r = run_wtmap(dir_, "index --alphabet rna " + shell_quote(fasta_) + " -p " + shell_quote(prefix_));
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find("--alphabet"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(prefix_ + ".wtmap"));
}

TEST_F(CliAlphabet, HelpTellsOfTheAlphabets) {
  const RunResult i = run_wtmap(dir_, "index --help");
  EXPECT_EQ(i.exit_code, 0);
  for (const char* word : {"--alphabet", "dna, protein or byte", "one strand", "[dna]"}) {
    EXPECT_NE(i.out.find(word), std::string::npos) << word << " missing from:\n" << i.out;
  }
  const RunResult c = run_wtmap(dir_, "count --help");
  EXPECT_EQ(c.exit_code, 0);
  for (const char* word : {"protein or byte index", "strand always +", "counts 0"}) {
    EXPECT_NE(c.out.find(word), std::string::npos) << word << " missing from:\n" << c.out;
  }
  const RunResult a = run_wtmap(dir_, "align --help");
  EXPECT_NE(a.out.find("DNA index"), std::string::npos) << a.out;
}

}  // namespace
}  // namespace wtmap::fmtest
