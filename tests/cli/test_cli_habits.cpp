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

}  // namespace
}  // namespace wtmap::fmtest
