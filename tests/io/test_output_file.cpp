// io/output_file.hpp and io/bgzf_input.hpp against what the file system says afterwards (stat,
// lstat, the bytes read back): modes, links, special files, inputs, refused places, signals; and a
// BGZF file cut at a block boundary, read as a file and as a stream, on one thread and several.
#include <gtest/gtest.h>
#include <htslib/bgzf.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fm_support.hpp"
#include "wtmap/io/bgzf_input.hpp"
#include "wtmap/io/output_file.hpp"

namespace wtmap::io {
namespace {

using fmtest::read_file;
using fmtest::TempDir;
using fmtest::write_file;

struct stat stat_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st;
}

bool lexists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

// Writes `bytes` to the output as a writer would: open write_path(), write, close, commit.
Status write_through(OutputFile& out, const std::string& bytes) {
  {
    std::ofstream f(out.write_path(), std::ios::binary | std::ios::trunc);
    f << bytes;
    if (!f) return {StatusCode::io_error, "write failed"};
  }
  return out.commit();
}

TEST(OutputFile, NewFileAppearsOnlyAtCommitWithTheModeOpenWouldGive) {
  TempDir dir;
  const std::string path = dir.file("out.sam");
  const mode_t mask = umask(027);
  Result<OutputFile> out = OutputFile::create(path);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_FALSE(lexists(path));
  EXPECT_TRUE(lexists(out->write_path()));
  ASSERT_TRUE(write_through(*out, "complete\n").ok());
  umask(mask);
  EXPECT_EQ(read_file(path), "complete\n");
  EXPECT_EQ(stat_of(path).st_mode & 07777, 0666u & ~027u);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.sam"});
}

TEST(OutputFile, ReplacedFileKeepsItsMode) {
  TempDir dir;
  const std::string path = dir.file("out.sam");
  write_file(path, "old");
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  Result<OutputFile> out = OutputFile::create(path);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(read_file(path), "old");  // untouched until the commit
  ASSERT_TRUE(write_through(*out, "new").ok());
  EXPECT_EQ(read_file(path), "new");
  EXPECT_EQ(stat_of(path).st_mode & 07777, 0600u);
}

TEST(OutputFile, AFailedWriterLeavesTheOldFileAndNoTemporary) {
  TempDir dir;
  const std::string path = dir.file("out.sam");
  write_file(path, "old");
  {
    Result<OutputFile> out = OutputFile::create(path);
    ASSERT_TRUE(out.ok());
    write_file(out->write_path(), "half");
  }  // destroyed without a commit
  EXPECT_EQ(read_file(path), "old");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.sam"});
}

TEST(OutputFile, SymbolicLinksAreWrittenThrough) {
  TempDir dir;
  const std::string target = dir.file("target.sam"), link = dir.file("link.sam"), dangling = dir.file("dangling.sam");
  write_file(target, "old");
  ASSERT_EQ(symlink("target.sam", link.c_str()), 0);
  ASSERT_EQ(symlink("later.sam", dangling.c_str()), 0);
  for (const std::string& path : {link, dangling}) {
    Result<OutputFile> out = OutputFile::create(path);
    ASSERT_TRUE(out.ok()) << out.status().message();
    ASSERT_TRUE(write_through(*out, "new").ok());
    struct stat st {};
    ASSERT_EQ(lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode)) << path << " is no longer a link";
  }
  EXPECT_EQ(read_file(target), "new");
  EXPECT_EQ(read_file(dir.file("later.sam")), "new");
}

TEST(OutputFile, AFifoIsWrittenInPlace) {
  TempDir dir;
  const std::string fifo = dir.file("pipe.sam");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read_file(fifo); });
  Result<OutputFile> out = OutputFile::create(fifo);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(out->in_place());
  EXPECT_EQ(out->write_path(), fifo);
  ASSERT_TRUE(write_through(*out, "through the pipe").ok());
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(S_ISFIFO(stat_of(fifo).st_mode));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"pipe.sam"});
}

TEST(OutputFile, ACharacterDeviceIsWrittenInPlace) {
  // As root, a private node of /dev/null's device, so that a regression cannot replace the
  // machine's /dev/null; otherwise /dev/null itself, which no other user could replace.
  TempDir dir;
  std::string device = "/dev/null";
  if (geteuid() == 0) {
    device = dir.file("null");
    ASSERT_EQ(mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  }
  Result<OutputFile> out = OutputFile::create(device);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(out->in_place());
  ASSERT_TRUE(write_through(*out, "discarded").ok());
  EXPECT_TRUE(S_ISCHR(stat_of(device).st_mode));
}

TEST(OutputFile, TheKernelsLinksAreWrittenInPlace) {
  // /dev/stdout is a link to /proc/self/fd/1: whatever stdout is, even a regular file, it is
  // written through the descriptor, never replaced. A private link stands in for /dev/stdout.
  TempDir dir;
  const std::string link = dir.file("stdout");
  ASSERT_EQ(symlink("/proc/self/fd/1", link.c_str()), 0);
  Result<OutputFile> out = OutputFile::create(link);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(out->in_place());
  EXPECT_EQ(out->write_path(), link);
}

TEST(OutputFile, AnInputIsNeverTheOutput) {
  TempDir dir;
  const std::string reads = dir.file("reads.fq"), link = dir.file("alias.fq"), hard = dir.file("hard.fq");
  write_file(reads, "@r\nACGT\n+\nIIII\n");
  ASSERT_EQ(symlink("reads.fq", link.c_str()), 0);
  ASSERT_EQ(::link(reads.c_str(), hard.c_str()), 0);
  for (const std::string& path : {reads, link, hard}) {
    const Status checked = check_output_path(path, {"-", reads});
    EXPECT_EQ(checked.code(), StatusCode::invalid_argument) << path;
    EXPECT_NE(checked.message().find("is also an input"), std::string::npos) << checked.message();
    EXPECT_FALSE(OutputFile::create(path, {reads}).ok()) << path;
  }
  EXPECT_EQ(read_file(reads), "@r\nACGT\n+\nIIII\n");
  EXPECT_TRUE(check_output_path(dir.file("other.sam"), {reads}).ok());
}

TEST(OutputFile, PlacesThatCannotTakeAFileAreRefusedBeforeAnyWork) {
  TempDir dir;
  struct Case {
    std::string path, says;
  };
  const std::vector<Case> cases = {
      {"", "empty"},
      {dir.path().string(), "is a directory"},
      {dir.file("missing/out.sam"), "does not exist"},
  };
  for (const Case& c : cases) {
    const Status checked = check_output_path(c.path);
    EXPECT_FALSE(checked.ok()) << c.path;
    EXPECT_NE(checked.message().find(c.says), std::string::npos) << checked.message();
    EXPECT_FALSE(OutputFile::create(c.path).ok()) << c.path;
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(OutputFile, AReadOnlyFolderIsRefused) {
  if (geteuid() == 0) GTEST_SKIP() << "root may write anywhere";
  TempDir dir;
  const std::string folder = dir.file("ro");
  ASSERT_EQ(mkdir(folder.c_str(), 0500), 0);
  const Status checked = check_output_path(folder + "/out.sam");
  EXPECT_EQ(checked.code(), StatusCode::io_error);
  EXPECT_NE(checked.message().find("cannot create files"), std::string::npos) << checked.message();
  chmod(folder.c_str(), 0700);
}

// A child makes a temporary, then receives `signal`: the temporary must be gone and the child must
// have died of that signal.
void expect_signal_removes_temporary(int signal) {
  TempDir dir;
  const std::string path = dir.file("out.sam");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(signal, SIG_DFL);  // as a shell leaves it for a foreground job
    install_signal_cleanup();
    Result<OutputFile> out = OutputFile::create(path);
    if (!out.ok()) _exit(3);
    std::FILE* f = std::fopen(out->write_path().c_str(), "w");
    std::fputs("partial", f);
    std::fclose(f);
    raise(signal);
    _exit(4);  // not reached: the signal ends the process
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), signal);
  EXPECT_TRUE(dir.entries().empty()) << dir.entries().front();
}

TEST(OutputFile, SigintRemovesTheTemporary) { expect_signal_removes_temporary(SIGINT); }
TEST(OutputFile, SigtermRemovesTheTemporary) { expect_signal_removes_temporary(SIGTERM); }
TEST(OutputFile, SighupRemovesTheTemporary) { expect_signal_removes_temporary(SIGHUP); }
TEST(OutputFile, SigpipeRemovesTheTemporary) { expect_signal_removes_temporary(SIGPIPE); }

// A sorted output's runs (io::TemporaryFile): named from their stem, mode 0600, removed by the
// destructor once (not by a moved-from one), and refused with the name where the folder is missing.
TEST(TemporaryFile, NamedFromItsStemAndRemovedByItsDestructor) {
  TempDir dir;
  const std::string stem = dir.file("out.bam.tmp.abc.run0");
  std::string made;
  {
    Result<TemporaryFile> first = TemporaryFile::create(stem);
    ASSERT_TRUE(first.ok()) << first.status().message();
    made = first->path();
    EXPECT_EQ(made.rfind(stem + ".", 0), 0u) << made;
    EXPECT_EQ(made.size(), stem.size() + 17);  // "." and 16 random letters
    EXPECT_EQ(stat_of(made).st_mode & 07777, 0600u);
    TemporaryFile moved = std::move(*first);
    EXPECT_EQ(moved.path(), made);
    EXPECT_TRUE(lexists(made));
  }
  EXPECT_FALSE(lexists(made));
  EXPECT_TRUE(dir.entries().empty());
  const Result<TemporaryFile> missing = TemporaryFile::create(dir.file("no/such/stem"));
  EXPECT_EQ(missing.status().code(), StatusCode::io_error);
  EXPECT_NE(missing.status().message().find(dir.file("no/such/stem.XXXXXX")), std::string::npos) << missing.status().message();
}

// SIGINT removes every temporary file of the process: an output's and 20 runs.
TEST(TemporaryFile, ASignalRemovesThemAll) {
  TempDir dir;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGINT, SIG_DFL);
    install_signal_cleanup();
    Result<OutputFile> out = OutputFile::create(dir.file("out.bam"));
    if (!out.ok()) _exit(3);
    std::vector<TemporaryFile> runs;
    for (int i = 0; i < 20; ++i) {
      Result<TemporaryFile> run = TemporaryFile::create(out->write_path() + ".run" + std::to_string(i));
      if (!run.ok()) _exit(3);
      runs.push_back(std::move(*run));
    }
    raise(SIGINT);
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGINT);
  EXPECT_TRUE(dir.entries().empty()) << dir.entries().size() << " left, " << dir.entries().front();
}

TEST(OutputFile, AnIgnoredSignalStaysIgnored) {
  // nohup: SIGHUP ignored before the run; the run must go on ignoring it.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGHUP, SIG_IGN);
    install_signal_cleanup();
    raise(SIGHUP);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// ---- BGZF end-of-file marker --------------------------------------------------------------------

// A BGZF file of `blocks` blocks of text (flushed one by one), without its end-of-file marker
// when `cut`: as a download or a copy cut at a block boundary leaves it.
std::string bgzf_blocks(const TempDir& dir, int blocks, bool cut) {
  const std::string full = dir.file("full.gz");
  BGZF* out = bgzf_open(full.c_str(), "w");
  std::vector<std::int64_t> ends;
  for (int b = 0; b < blocks; ++b) {
    const std::string text = "block " + std::to_string(b) + "\n";
    EXPECT_EQ(bgzf_write(out, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    EXPECT_EQ(bgzf_flush(out), 0);
    ends.push_back(bgzf_tell(out) >> 16);
  }
  EXPECT_EQ(bgzf_close(out), 0);
  if (!cut) return full;
  const std::string bytes = read_file(full);
  const std::string path = dir.file("cut.gz");
  write_file(path, bytes.substr(0, static_cast<std::size_t>(ends[blocks / 2])));
  return path;
}

// Reads the whole of `file` (on `threads` threads) and returns what check_bgzf_ended says.
Status read_to_end(BGZF* file, int threads) {
  if (threads > 1) {
    EXPECT_EQ(bgzf_mt(file, threads, 64), 0);
  }
  char buffer[4096];
  while (bgzf_read(file, buffer, sizeof buffer) > 0) {
  }
  return check_bgzf_ended(file, "input");
}

TEST(BgzfInput, ACutFileIsRefusedBeforeReading) {
  TempDir dir;
  const std::string whole = bgzf_blocks(dir, 8, false), cut = bgzf_blocks(dir, 8, true);
  BGZF* good = bgzf_open(whole.c_str(), "r");
  BGZF* bad = bgzf_open(cut.c_str(), "r");
  EXPECT_TRUE(check_bgzf_marker(good, whole).ok());
  const Status refused = check_bgzf_marker(bad, cut);
  EXPECT_EQ(refused.code(), StatusCode::corrupt_data);
  EXPECT_NE(refused.message().find("truncated"), std::string::npos) << refused.message();
  bgzf_close(good);
  bgzf_close(bad);
}

TEST(BgzfInput, ACutStreamIsRefusedAtItsEndOnAnyNumberOfThreads) {
  TempDir dir;
  const std::string whole = bgzf_blocks(dir, 8, false), cut = bgzf_blocks(dir, 8, true);
  for (const int threads : {1, 4}) {
    for (const std::string& path : {whole, cut}) {
      // Through a pipe: a stream whose marker cannot be looked for first.
      int fds[2];
      ASSERT_EQ(pipe(fds), 0);
      const std::string bytes = read_file(path);
      std::thread writer([&] {
        ASSERT_EQ(write(fds[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
        close(fds[1]);
      });
      BGZF* in = bgzf_dopen(fds[0], "r");
      EXPECT_TRUE(check_bgzf_marker(in, path).ok());  // cannot tell yet
      const Status ended = read_to_end(in, threads);
      writer.join();
      EXPECT_EQ(ended.ok(), path == whole) << path << " on " << threads << " threads: " << ended.message();
      bgzf_close(in);
    }
  }
}

}  // namespace
}  // namespace wtmap::io
