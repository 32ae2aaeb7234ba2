// The command line a bwa, bowtie2 or samtools user already knows (issue 29), `wtmap` run as a
// user runs it: --version, what -x accepts, bwa's positional order answered with a hint, one-line
// option errors, and each message and exit status asserted exactly.
#include <gtest/gtest.h>
#include <htslib/hts.h>
#include <sys/wait.h>

#include <cstdlib>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "fm_support.hpp"

#ifndef WTMAP_PROJECT_VERSION
#error "WTMAP_PROJECT_VERSION must be project()'s version"
#endif
#ifndef WTMAP_SOURCE_DIR
#error "WTMAP_SOURCE_DIR must name the source tree"
#endif

namespace wtmap::fmtest {
namespace {

// Exit status of a shell command, -1 if a signal ended it.
int shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A reference of three contigs, its FASTA in a folder of its own; reads cut from it.
class CliHabits : public ::testing::Test {
 protected:
  void SetUp() override {
    RandomReferenceSpec spec;
    spec.seed = 29;
    spec.contigs = 3;
    spec.min_length = 2000;
    spec.max_length = 4000;
    spec.n_run_rate = 0.0005;
    contigs_ = random_reference(spec);
    fasta_ = dir_.file("ref.fa");
    write_file(fasta_, fasta_text(contigs_, 60));
  }

  // `wtmap index <args>` on the CPU; the run must succeed.
  void index(const std::string& args) {
    const RunResult r = run_wtmap(out_, "index --device cpu " + args);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
  }

  TempDir dir_;  // the reference, its index, the reads
  TempDir out_;  // wtmap's standard output and error
  std::vector<TestContig> contigs_;
  std::string fasta_;
};

// ---- --version ---------------------------------------------------------------------------------

// samtools' form: "NAME VERSION", then the libraries. The version is project()'s; a commit, where
// the build names one, is a commit of this source tree.
void expect_version_text(const RunResult& r, const std::string& how) {
  SCOPED_TRACE(how);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, "");
  const std::regex form("wtmap " + std::regex_replace(std::string(WTMAP_PROJECT_VERSION), std::regex("\\."), "\\.") +
                        "( \\(commit ([0-9a-f]{12})\\))?\nUsing htslib " + std::regex_replace(std::string(hts_version()), std::regex("[.+]"), "\\$&") +
                        "\nBuilt with CUDA [0-9]+\\.[0-9]+\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(r.out, m, form)) << r.out;
  if (m[2].matched) {
    EXPECT_EQ(shell("git -C " + shell_quote(WTMAP_SOURCE_DIR) + " cat-file -e " + m[2].str() + "^{commit} 2>/dev/null"), 0)
        << m[2].str() << " is no commit of " << WTMAP_SOURCE_DIR;
  }
}

TEST_F(CliHabits, VersionOnItsOwnAndAfterEveryCommand) {
  for (const char* args : {"--version", "-V", "index --version", "count --version", "align --version"}) {
    expect_version_text(run_wtmap(out_, args), args);
  }
}

// --version wins over what else the line holds, as --help does: nothing runs.
TEST_F(CliHabits, VersionAfterOtherOptionsRunsNothing) {
  expect_version_text(run_wtmap(out_, "index --version " + shell_quote(fasta_)), "index");
  EXPECT_FALSE(fs::exists(fasta_ + ".wtmap"));
}

// ---- what -x accepts --------------------------------------------------------------------------

// Patterns cut from both strands of the reference, for `wtmap count`, checked by a naive scan.
std::vector<Pattern> some_patterns(const std::vector<TestContig>& contigs) {
  std::mt19937 rng(7);
  std::vector<Pattern> patterns;
  for (int i = 0; i < 20; ++i) {
    const std::string s = normalized(contigs[rng() % contigs.size()].sequence);
    const std::size_t length = 12 + rng() % 20, pos = rng() % (s.size() - length);
    const std::string p = s.substr(pos, length);
    patterns.push_back({"p" + std::to_string(i + 1), i % 2 == 0 ? p : revcomp(p)});
  }
  return patterns;
}

// `wtmap count --locate -x <x>` must find the index and give the naive scan's hits.
void expect_count_through(const TempDir& out, const std::string& x, const std::string& patterns_path,
                          const std::vector<TestContig>& contigs, const std::vector<Pattern>& patterns) {
  SCOPED_TRACE("-x " + x);
  const RunResult r = run_wtmap(out, "count --device cpu --locate -x " + shell_quote(x) + " " + shell_quote(patterns_path));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  expect_count_lines(r.out, contigs, patterns, true, [&](const std::string& p) { return naive_hits(contigs, p); });
}

// `wtmap index ref.fa` writes ref.fa.wtmap (bwa's naming); -x takes ref.fa (the prefix it is),
// ref.fa.wtmap (the file), and, once only `-p ref` wrote ref.wtmap, ref.fa (the FASTA) again.
TEST_F(CliHabits, XTakesThePrefixTheIndexFileOrTheFasta) {
  const std::vector<Pattern> patterns = some_patterns(contigs_);
  const std::string patterns_path = dir_.file("patterns.fa");
  write_file(patterns_path, fasta_text(patterns, 60));
  index(shell_quote(fasta_));
  ASSERT_TRUE(fs::exists(fasta_ + ".wtmap"));
  expect_count_through(out_, fasta_, patterns_path, contigs_, patterns);
  expect_count_through(out_, fasta_ + ".wtmap", patterns_path, contigs_, patterns);

  fs::remove(fasta_ + ".wtmap");
  index("-p " + shell_quote(dir_.file("ref")) + " " + shell_quote(fasta_));
  ASSERT_TRUE(fs::exists(dir_.file("ref.wtmap")));
  expect_count_through(out_, dir_.file("ref"), patterns_path, contigs_, patterns);
  expect_count_through(out_, dir_.file("ref.wtmap"), patterns_path, contigs_, patterns);
  expect_count_through(out_, fasta_, patterns_path, contigs_, patterns);
  // A FASTA extension in any case, compressed or not, names the same index.
  fs::copy_file(fasta_, dir_.file("ref.FASTA.gz"));
  expect_count_through(out_, dir_.file("ref.FASTA.gz"), patterns_path, contigs_, patterns);
}

// The prefix comes first: an index named x.wtmap.wtmap (what -x x.wtmap read before) still wins
// over x.wtmap, so a command line that worked keeps its meaning.
TEST_F(CliHabits, XThePrefixWinsOverTheFileOfThatName) {
  const std::vector<Pattern> patterns = some_patterns(contigs_);
  const std::string patterns_path = dir_.file("patterns.fa");
  write_file(patterns_path, fasta_text(patterns, 60));
  index("-p " + shell_quote(dir_.file("x.wtmap")) + " " + shell_quote(fasta_));
  write_file(dir_.file("x.wtmap"), "not an index");
  expect_count_through(out_, dir_.file("x.wtmap"), patterns_path, contigs_, patterns);
}

// `wtmap align -x` resolves as count does: the index file's name gives the prefix's records.
TEST_F(CliHabits, AlignTakesTheIndexFile) {
  index(shell_quote(fasta_));
  std::string reads;
  const std::string s = normalized(contigs_[1].sequence);
  for (int i = 0; i < 10; ++i) reads += "@r" + std::to_string(i) + "\n" + s.substr(100 + 150 * i, 100) + "\n+\n" + std::string(100, 'I') + "\n";
  write_file(dir_.file("reads.fq"), reads);
  const RunResult by_prefix = run_wtmap(out_, "align --device cpu -x " + shell_quote(fasta_) + " " + shell_quote(dir_.file("reads.fq")));
  ASSERT_EQ(by_prefix.exit_code, 0) << describe(by_prefix);
  const RunResult by_file = run_wtmap(out_, "align --device cpu -x " + shell_quote(fasta_ + ".wtmap") + " " + shell_quote(dir_.file("reads.fq")));
  ASSERT_EQ(by_file.exit_code, 0) << describe(by_file);
  // The records alike (the @PG line holds the command line, which differs).
  auto records = [](const std::string& sam) {
    std::string kept;
    for (const std::string& line : split(sam, '\n')) {
      if (!line.empty() && line[0] != '@') kept += line + "\n";
    }
    return kept;
  };
  EXPECT_EQ(records(by_file.out), records(by_prefix.out));
  EXPECT_EQ(split(records(by_file.out), '\n').size(), 11u) << by_file.out;
  EXPECT_NE(records(by_file.out).find("\t" + contigs_[1].name + "\t101\t60\t100M\t"), std::string::npos) << by_file.out;
}

// No index under any of the names: one line naming every path tried, and how to build one when
// -x names an existing FASTA.
TEST_F(CliHabits, XWithoutAnIndexNamesWhatWasTried) {
  write_file(dir_.file("p.fa"), ">p\nACGTACGT\n");
  const std::string d = dir_.path().string() + "/";
  RunResult r = run_wtmap(out_, "count --device cpu -x " + shell_quote(fasta_) + " " + shell_quote(d + "p.fa"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "[wtmap count] error: no index for -x " + d + "ref.fa: tried " + d + "ref.fa.wtmap and " + d +
                       "ref.wtmap; 'wtmap index " + d + "ref.fa' builds one\n");
  EXPECT_EQ(r.out, "");
  r = run_wtmap(out_, "align --device cpu -x " + shell_quote(d + "none.wtmap") + " " + shell_quote(d + "p.fa"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "[wtmap align] error: no index for -x " + d + "none.wtmap: tried " + d + "none.wtmap.wtmap and " + d +
                       "none.wtmap\n");
  r = run_wtmap(out_, "align --device cpu -x " + shell_quote(d + "none") + " " + shell_quote(d + "p.fa"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "[wtmap align] error: no index for -x " + d + "none: tried " + d + "none.wtmap\n");
}

}  // namespace
}  // namespace wtmap::fmtest
