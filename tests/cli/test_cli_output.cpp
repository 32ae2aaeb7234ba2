// What `wtmap` does to the files around it, run as a user runs it (issue 23): outputs that are
// special files, links or inputs; modes; places refused before any work; cut BGZF input; signals;
// option values that must be refused. Each expectation is read off the file system afterwards.
#include <gtest/gtest.h>
#include <htslib/bgzf.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <fcntl.h>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.hpp"
#include "fm_support.hpp"

namespace wtmap::fmtest {
namespace {

bool is_temporary(const std::string& name) { return name.find(".tmp.") != std::string::npos; }

// A small reference, its index, and reads taken from it.
class CliOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    RandomReferenceSpec spec;
    spec.seed = 23;
    spec.contigs = 3;
    spec.min_length = 2000;
    spec.max_length = 3000;
    contigs_ = random_reference(spec);
    fasta_ = dir_.file("ref.fa");
    write_file(fasta_, fasta_text(contigs_, 60));
    prefix_ = dir_.file("idx");
    const RunResult r = run_wtmap(dir_, "index " + shell_quote(fasta_) + " -p " + shell_quote(prefix_) + " --device cpu");
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    std::vector<Pattern> reads;
    for (int i = 0; i < 400; ++i) {
      const std::string& s = contigs_[i % contigs_.size()].sequence;
      reads.push_back({"r" + std::to_string(i), s.substr((i * 37) % (s.size() - 100), 100)});
    }
    reads_text_ = fastq_text(reads);
    reads_ = dir_.file("reads.fq");
    write_file(reads_, reads_text_);
  }

  // `wtmap align` of the reads to `output` (shell-quoted here) with `extra` options.
  RunResult align_to(const std::string& output, const std::string& extra = "") const {
    return run_wtmap(dir_, "align -x " + shell_quote(prefix_) + " -k 4 --device cpu " + extra + " -o " + shell_quote(output) +
                               " " + shell_quote(reads_));
  }
  std::vector<std::string> temporaries() const {
    std::vector<std::string> found;
    for (const std::string& e : dir_.entries()) {
      if (is_temporary(e)) found.push_back(e);
    }
    return found;
  }

  TempDir dir_;
  std::vector<TestContig> contigs_;
  std::string fasta_, prefix_, reads_, reads_text_;
};

bool is_sam(const std::string& text) { return text.rfind("@HD\t", 0) == 0 && text.find("\nr399\t") != std::string::npos; }

// ---- 1. data loss --------------------------------------------------------------------------------

TEST_F(CliOutput, ACharacterDeviceStaysADeviceEvenForRoot) {
  // Run as root, `-o /dev/null` was renamed over: a private node of the same device stands in for it.
  if (geteuid() != 0) GTEST_SKIP() << "only root could replace a device node";
  const std::string node = dir_.file("null");
  ASSERT_EQ(mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  const RunResult r = align_to(node);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  struct stat st {};
  ASSERT_EQ(stat(node.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_TRUE(temporaries().empty());
}

TEST_F(CliOutput, DevStdoutWritesIntoWhatStdoutIs) {
  // A link of the test's own to /proc/self/fd/1, as /dev/stdout is: a regression must not be able
  // to replace the machine's /dev/stdout (as root, the rename would).
  const std::string link = dir_.file("stdout");
  ASSERT_EQ(symlink("/proc/self/fd/1", link.c_str()), 0);
  const RunResult r = align_to(link);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(is_sam(r.out)) << r.out.substr(0, 200);
  struct stat st {};
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_TRUE(temporaries().empty());
}

TEST_F(CliOutput, ASymbolicLinkIsWrittenThrough) {
  const std::string link = dir_.file("link.sam");
  ASSERT_EQ(symlink("target.sam", link.c_str()), 0);
  const RunResult r = align_to(link);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  struct stat st {};
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_TRUE(is_sam(read_file(dir_.file("target.sam"))));
}

TEST_F(CliOutput, ANamedPipeIsWrittenInPlace) {
  const std::string fifo = dir_.file("pipe.sam"), copy = dir_.file("copy.sam");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::thread reader([&] { write_file(copy, read_file(fifo)); });
  const RunResult r = align_to(fifo);
  reader.join();
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  struct stat st {};
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_TRUE(is_sam(read_file(copy)));
}

TEST_F(CliOutput, AnInputIsNeverOverwritten) {
  const std::string index_file = prefix_ + ".wtmap", index_bytes = read_file(index_file);
  for (const std::string& output : {reads_, index_file}) {
    const RunResult r = align_to(output);
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_NE(r.err.find("is also an input"), std::string::npos) << r.err;
  }
  EXPECT_EQ(read_file(reads_), reads_text_);
  EXPECT_EQ(read_file(index_file), index_bytes);
  // An index whose name links to its own reference: refused too.
  const std::string fasta_bytes = read_file(fasta_);
  const std::string alias = dir_.file("alias");
  ASSERT_EQ(symlink("ref.fa", (alias + ".wtmap").c_str()), 0);
  const RunResult onto = run_wtmap(dir_, "index " + shell_quote(fasta_) + " -p " + shell_quote(alias) + " --device cpu");
  EXPECT_EQ(onto.exit_code, 1) << describe(onto);
  EXPECT_EQ(read_file(fasta_), fasta_bytes);
  EXPECT_TRUE(temporaries().empty());
}

TEST_F(CliOutput, AReplacedOutputKeepsItsMode) {
  const std::string out = dir_.file("out.sam");
  write_file(out, "old");
  ASSERT_EQ(chmod(out.c_str(), 0600), 0);
  const RunResult r = align_to(out);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  struct stat st {};
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_TRUE(is_sam(read_file(out)));
}

// ---- 2. a cut BGZF input is an error, not a shorter run -------------------------------------------

// `pieces` as BGZF, one block each, cut after half of the blocks: a cut at a block boundary that
// is also a record boundary, so neither the decoder nor the parser can see it.
void write_cut_bgzf(const std::string& path, const std::vector<std::string>& pieces) {
  const std::string whole = path + ".whole";
  BGZF* out = bgzf_open(whole.c_str(), "w");
  std::vector<std::int64_t> ends;
  for (const std::string& piece : pieces) {
    ASSERT_EQ(bgzf_write(out, piece.data(), piece.size()), static_cast<ssize_t>(piece.size()));
    ASSERT_EQ(bgzf_flush(out), 0);
    ends.push_back(bgzf_tell(out) >> 16);
  }
  ASSERT_EQ(bgzf_close(out), 0);
  ASSERT_GE(ends.size(), 2u);
  write_file(path, read_file(whole).substr(0, static_cast<std::size_t>(ends[ends.size() / 2 - 1])));
  std::remove(whole.c_str());
}

TEST_F(CliOutput, ACutBgzfReadFileFailsOnAnyThreadsFromFileOrStdin) {
  const std::string cut = dir_.file("cut.fq.gz"), out = dir_.file("out.sam");
  std::vector<std::string> records;
  for (std::size_t at = 0; at < reads_text_.size();) {
    std::size_t end = at;
    for (int line = 0; line < 4; ++line) end = reads_text_.find('\n', end) + 1;
    records.push_back(reads_text_.substr(at, end - at));
    at = end;
  }
  write_cut_bgzf(cut, records);
  for (const char* threads : {"1", "4"}) {
    for (const bool from_stdin : {false, true}) {
      SCOPED_TRACE(std::string("-t ") + threads + (from_stdin ? " from stdin" : " from the file"));
      const std::string input = from_stdin ? "-" : shell_quote(cut);
      const RunResult r = run_wtmap(dir_, "align -x " + shell_quote(prefix_) + " -k 4 --device cpu -t " + threads + " -o " + shell_quote(out) + " " + input,
                                    from_stdin ? cut : "/dev/null");
      EXPECT_EQ(r.exit_code, 1) << describe(r);
      EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
      EXPECT_FALSE(fs::exists(out));
      EXPECT_TRUE(temporaries().empty());
    }
  }
}

TEST_F(CliOutput, ACutBgzfReferenceBuildsNoIndex) {
  const std::string cut = dir_.file("cut.fa.gz"), prefix = dir_.file("cut");
  std::vector<std::string> records;
  for (const TestContig& c : contigs_) records.push_back(fasta_text({c}, 60));
  write_cut_bgzf(cut, records);
  const RunResult r = run_wtmap(dir_, "index " + shell_quote(cut) + " -p " + shell_quote(prefix) + " --device cpu");
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(prefix + ".wtmap"));
}

// ---- 5. signals leave no temporary ----------------------------------------------------------------

// Starts `wtmap align` with its reads from a FIFO that never ends: it loads the index, opens its
// output and waits for reads. Once the temporary exists, `signal` must remove it and end the run.
void expect_signal_cleans_up(const std::string& prefix, const TempDir& dir, int signal) {
  const std::string fifo = dir.file("in-" + std::to_string(signal) + ".fq"), out = dir.file("sig.sam");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const pid_t child = start_wtmap({"align", "-x", prefix, "-k", "4", "--device", "cpu", "-o", out, fifo});
  ASSERT_GE(child, 0);
  // Some records (more than the 4 KiB htslib peeks at to tell the format), then the FIFO stays
  // open: the reader waits for more instead of seeing the end.
  const int writer = open(fifo.c_str(), O_WRONLY);
  const std::string records = fastq_text(std::vector<Pattern>(40, Pattern{"a", std::string(100, 'A')}));
  ASSERT_EQ(write(writer, records.data(), records.size()), static_cast<ssize_t>(records.size()));
  bool temporary_seen = false;
  for (int wait = 0; wait < 1000 && !temporary_seen; ++wait) {
    for (const std::string& e : dir.entries()) temporary_seen = temporary_seen || e.rfind("sig.sam.tmp.", 0) == 0;
    if (!temporary_seen) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(temporary_seen) << "no temporary output within 20 s";
  expect_signal_ends(child, signal);
  close(writer);
  for (const std::string& e : dir.entries()) EXPECT_FALSE(e.rfind("sig.sam", 0) == 0) << e << " left behind";
}

TEST_F(CliOutput, SigintLeavesNoTemporary) { expect_signal_cleans_up(prefix_, dir_, SIGINT); }
TEST_F(CliOutput, SigtermLeavesNoTemporary) { expect_signal_cleans_up(prefix_, dir_, SIGTERM); }
TEST_F(CliOutput, SighupLeavesNoTemporary) { expect_signal_cleans_up(prefix_, dir_, SIGHUP); }
TEST_F(CliOutput, SigpipeLeavesNoTemporary) { expect_signal_cleans_up(prefix_, dir_, SIGPIPE); }

// As a user meets SIGPIPE: stderr into `head -c 1`, which leaves after one byte; the progress
// lines that follow (one per batch of one read) write into the closed pipe. The run dies of
// SIGPIPE, as before, and its temporary goes with it.
TEST_F(CliOutput, StderrIntoAClosedPipeLeavesNoTemporary) {
  const std::string command = shell_quote(wtmap_program(WTMAP_EXECUTABLE)) + " align -x " + shell_quote(prefix_) +
                              " --device cpu --batch 1 --progress 0 -o " + shell_quote(dir_.file("piped.sam")) + " " +
                              shell_quote(reads_) + " 2>&1 > /dev/null | head -c 1 > /dev/null; exit ${PIPESTATUS[0]}";
  const int status = std::system(("bash -c " + shell_quote(command)).c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGPIPE);
  EXPECT_EQ(temporaries(), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(dir_.file("piped.sam")));
}

// ---- 6. invalid output with exit 0 ----------------------------------------------------------------

TEST_F(CliOutput, AReadGroupLineMustBeOneLineWithEscapedTabs) {
  const std::string out = dir_.file("out.sam");
  for (const std::string& rg : {std::string("@RG\\tID:x\n@CO\\tinjected"), std::string("@RG\tID:x"), std::string("@RG\\tID:")}) {
    const RunResult r = align_to(out, "-R " + shell_quote(rg));
    EXPECT_EQ(r.exit_code, 1) << rg << ": " << describe(r);
    EXPECT_FALSE(fs::exists(out)) << rg;
  }
  const RunResult good = align_to(out, "-R '@RG\\tID:lane1\\tSM:s'");
  ASSERT_EQ(good.exit_code, 0) << describe(good);
  EXPECT_NE(read_file(out).find("@RG\tID:lane1\tSM:s\n"), std::string::npos);
}

TEST_F(CliOutput, CountToAFullDiskFails) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  // Not run_wtmap, whose own redirection of stdout would come last and win.
  const std::string command = shell_quote(wtmap_program(WTMAP_EXECUTABLE)) + " count -x " + shell_quote(prefix_) + " --device cpu " +
                              shell_quote(reads_) + " > /dev/full 2> /dev/null";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

// ---- 7. late failures come first -------------------------------------------------------------------

TEST_F(CliOutput, ABadOutputPlaceFailsBeforeAnyWork) {
  for (const std::string& output : {dir_.path().string(), std::string(), dir_.file("missing/out.sam")}) {
    const RunResult r = align_to(output);
    EXPECT_EQ(r.exit_code, 1) << "'" << output << "': " << describe(r);
    EXPECT_EQ(r.err.find("index loaded"), std::string::npos) << r.err;  // failed before loading
  }
  const RunResult index = run_wtmap(dir_, "index " + shell_quote(fasta_) + " -p " + shell_quote(dir_.file("missing/idx")) + " --device cpu");
  EXPECT_EQ(index.exit_code, 1) << describe(index);
  EXPECT_EQ(index.err.find("reading"), std::string::npos) << index.err;  // before reading the reference
  EXPECT_TRUE(temporaries().empty());
}

// ---- 4 and 8: option values and messages -------------------------------------------------------------

TEST_F(CliOutput, OutOfRangeCountsAreRefused) {
  const std::string out = dir_.file("out.sam");
  for (const std::string option : {"-t 4294967296", "-t 0", "--batch 18446744073709551615", "--batch 100000001"}) {
    const RunResult r = align_to(out, option);
    EXPECT_EQ(r.exit_code, 1) << option << ": " << describe(r);
    EXPECT_FALSE(fs::exists(out)) << option;
  }
}

TEST_F(CliOutput, ALargeBatchOverAFewReadsTakesLittleMemory) {
  // --batch 10^7 over 400 reads once made room for 10^7 reads up front (4.7 GB).
  const std::string out = dir_.file("out.sam");
  const RunResult r = align_to(out, "-k 4 --batch 10000000");
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  struct rusage usage {};
  ASSERT_EQ(getrusage(RUSAGE_CHILDREN, &usage), 0);
  EXPECT_LT(usage.ru_maxrss, 1024 * 1024) << "KiB at the peak of the largest run so far";
  EXPECT_TRUE(is_sam(read_file(out)));
}

TEST_F(CliOutput, DoubleDashEndsTheOptions) {
  // A file whose name begins with '-', named after "--" (POSIX): an operand, not an option, for
  // each command.
  write_file(dir_.file("-ref.fa"), read_file(fasta_));
  write_file(dir_.file("-reads.fq"), reads_text_);
  const std::string program = shell_quote(wtmap_program(WTMAP_EXECUTABLE));
  const std::string in_dir = "cd " + shell_quote(dir_.path().string()) + " && ";
  EXPECT_EQ(std::system((in_dir + program + " index -p dash --device cpu -- -ref.fa 2> /dev/null").c_str()), 0);
  EXPECT_TRUE(fs::exists(dir_.file("dash.wtmap")));
  EXPECT_EQ(std::system((in_dir + program + " count -x dash --device cpu -- -reads.fq > counts.tsv 2> /dev/null").c_str()), 0);
  EXPECT_EQ(split(read_file(dir_.file("counts.tsv")), '\n').size(), 401u);  // 400 lines and the empty rest
  EXPECT_EQ(std::system((in_dir + program + " align -x dash --device cpu -o dash.sam -- -reads.fq 2> /dev/null").c_str()), 0);
  EXPECT_TRUE(is_sam(read_file(dir_.file("dash.sam"))));
  // Without "--" the same word is an unknown option.
  const int status = std::system((in_dir + program + " index -p dash2 --device cpu -ref.fa 2> /dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

TEST_F(CliOutput, AnUpperCaseBamExtensionWritesBam) {
  const std::string out = dir_.file("x.BAM");
  const RunResult r = align_to(out);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  gzFile in = gzopen(out.c_str(), "rb");
  ASSERT_NE(in, nullptr);
  char magic[4] = {};
  EXPECT_EQ(gzread(in, magic, 4), 4);
  gzclose(in);
  EXPECT_EQ(std::string(magic, 4), std::string("BAM\1", 4));
}

}  // namespace
}  // namespace wtmap::fmtest
