// The command line a bwa, bowtie2 or samtools user already knows (issue 29), `wtmap` run as a
// user runs it: --version, what -x accepts, bwa's positional order answered with a hint, one-line
// option errors, -o x.sam.gz and -O sam|bam|cram read back by htslib and samtools, progress lines and
// -q, and --stats-json against the SAM counted again; each message and exit status exactly.
#include <gtest/gtest.h>
#include <htslib/hts.h>
#include <htslib/sam.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
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

  // `count` reads of 100 bases from contig 1 (1-based positions 101, 251, ...), in `path`.
  void write_reads(const std::string& path, int count) const {
    const std::string s = normalized(contigs_[1].sequence);
    std::string reads;
    for (int i = 0; i < count; ++i) reads += "@r" + std::to_string(i) + "\n" + s.substr(100 + 150 * i, 100) + "\n+\n" + std::string(100, 'I') + "\n";
    write_file(path, reads);
  }
  // Pairs in FR orientation, inserts of 300 bases, mate 1 in `path1`, mate 2 in `path2`.
  void write_pairs(const std::string& path1, const std::string& path2, int count) const {
    const std::string s = normalized(contigs_[1].sequence);
    std::string one, two;
    for (int i = 0; i < count; ++i) {
      const std::string name = "@q" + std::to_string(i) + "\n", quality = "\n+\n" + std::string(100, 'I') + "\n";
      one += name + s.substr(100 + 50 * i, 100) + quality;
      two += name + revcomp(s.substr(300 + 50 * i, 100)) + quality;
    }
    write_file(path1, one);
    write_file(path2, two);
  }

  TempDir dir_;  // the reference, its index, the reads
  TempDir out_;  // wtmap's standard output and error
  std::vector<TestContig> contigs_;
  std::string fasta_;
};

// ---- --version ---------------------------------------------------------------------------------

// samtools' form: "NAME VERSION", then the libraries (jemalloc where the program is linked with
// it: WTMAP_JEMALLOC, the default). The version is project()'s; the commit is
// the one CMake read from the source tree's git when it configured (none without git), and where
// that git holds it, it is one of its commits (a copied tree, such as the GPU host's, may carry an
// older .git).
void expect_version_text(const RunResult& r, const std::string& how) {
  SCOPED_TRACE(how);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, "");
  const std::regex form("wtmap " + std::regex_replace(std::string(WTMAP_PROJECT_VERSION), std::regex("\\."), "\\.") +
                        "( \\(commit ([0-9a-f]{12})\\))?\nUsing htslib " + std::regex_replace(std::string(hts_version()), std::regex("[.+]"), "\\$&") +
                        (WTMAP_WITH_JEMALLOC ? "\nUsing jemalloc [0-9][^\n]*" : "") + "\nBuilt with CUDA [0-9]+\\.[0-9]+\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(r.out, m, form)) << r.out;
  EXPECT_EQ(m[2].matched ? m[2].str() : std::string(), std::string(WTMAP_CONFIGURED_COMMIT));
  const std::string git = "git -C " + shell_quote(WTMAP_SOURCE_DIR) + " cat-file -e ";
  if (m[2].matched && shell(git + "HEAD 2>/dev/null") == 0 && shell(git + m[2].str() + "^{commit} 2>/dev/null") != 0) {
    std::printf("note: %s is no commit of %s's git (a copied tree?)\n", m[2].str().c_str(), WTMAP_SOURCE_DIR);
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
  write_reads(dir_.file("reads.fq"), 10);
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

// ---- bwa's order: `wtmap align ref.fa reads.fq` -------------------------------------------------

// The first of two operands names an index and -x is missing: one line with the command to type,
// exit 1, nothing run; the line it gives then runs.
TEST_F(CliHabits, BwaOrderIsAnsweredWithTheCommandToType) {
  index(shell_quote(fasta_));
  const std::string d = dir_.path().string() + "/";
  write_reads(d + "reads.fq", 10);
  RunResult r = run_wtmap(out_, "align " + d + "ref.fa " + d + "reads.fq");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "[wtmap align] the index comes with -x; did you mean: wtmap align -x " + d + "ref.fa " + d + "reads.fq\n");
  EXPECT_EQ(r.out, "");
  // Options stay where they were; a word the shell would split comes back quoted.
  write_pairs(d + "r 1.fq", d + "r2.fq", 10);
  r = run_wtmap(out_, "align -t 2 " + d + "ref.fa.wtmap " + shell_quote(d + "r 1.fq") + " " + d + "r2.fq --device cpu");
  EXPECT_EQ(r.exit_code, 1);
  const std::string suggested = "-x " + d + "ref.fa.wtmap -t 2 '" + d + "r 1.fq' " + d + "r2.fq --device cpu";
  EXPECT_EQ(r.err, "[wtmap align] the index comes with -x; did you mean: wtmap align " + suggested + "\n");
  r = run_wtmap(out_, "align " + suggested);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  // count, the same.
  r = run_wtmap(out_, "count " + d + "ref.fa " + d + "reads.fq");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "[wtmap count] the index comes with -x; did you mean: wtmap count -x " + d + "ref.fa " + d + "reads.fq\n");
}

// Without an index for the first operand nothing marks it as a reference (reads come as FASTA
// too): no hint. With -x, two operands are mates, whatever their names.
TEST_F(CliHabits, TwoReadFilesStayPairs) {
  const std::string d = dir_.path().string() + "/";
  write_pairs(d + "r1.fq", d + "r2.fq", 10);
  RunResult r = run_wtmap(out_, "align " + d + "ref.fa " + d + "r1.fq");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
  index(shell_quote(fasta_));
  // Even a read file that has an index beside it is a read file after -x.
  fs::copy_file(fasta_ + ".wtmap", d + "r1.fq.wtmap");
  r = run_wtmap(out_, "align --device cpu -x " + d + "ref.fa " + d + "r1.fq " + d + "r2.fq");
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  int paired = 0;
  for (const std::string& line : split(r.out, '\n')) {
    const std::vector<std::string> fields = split(line, '\t');
    if (line.empty() || line[0] == '@') continue;
    ASSERT_GE(fields.size(), 11u) << line;
    paired += (std::stoi(fields[1]) & 0x1) != 0;  // a mate of a pair
  }
  EXPECT_EQ(paired, 20) << r.out;
}

// ---- option errors, --help, no arguments ------------------------------------------------------

// One line: what is wrong, and where the options are; nothing on stdout, exit 1.
void expect_one_line_error(const TempDir& out, const std::string& args, const std::string& line) {
  SCOPED_TRACE(args);
  const RunResult r = run_wtmap(out, args);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, line + "\n");
  EXPECT_EQ(r.out, "");
}

TEST_F(CliHabits, AnOptionErrorIsOneLineWithWhereTheOptionsAre) {
  index(shell_quote(fasta_));
  const std::string x = "-x " + shell_quote(fasta_) + " ";
  write_reads(dir_.file("reads.fq"), 2);
  const std::string reads = " " + shell_quote(dir_.file("reads.fq"));
  expect_one_line_error(out_, "align " + x + "-k 5" + reads, "[wtmap align] -k needs an integer in 0..4; see 'wtmap align --help'");
  expect_one_line_error(out_, "align " + x + "--bogus" + reads,
                        "[wtmap align] unknown or incomplete option '--bogus'; see 'wtmap align --help'");
  expect_one_line_error(out_, "align " + x + "-t 0" + reads, "[wtmap align] -t needs an integer in 1..4096; see 'wtmap align --help'");
  expect_one_line_error(out_, "align " + x + "-I 1,x" + reads,
                        "[wtmap align] -I needs mean,std[,max[,min]] with mean > 0, std >= 0 and min <= max, not '1,x'; see 'wtmap align --help'");
  expect_one_line_error(out_, "align " + x + reads + reads + reads, "[wtmap align] more than two read files given; see 'wtmap align --help'");
  expect_one_line_error(out_, "align" + reads, "[wtmap align] no index given (-x INDEX); see 'wtmap align --help'");
  expect_one_line_error(out_, "align " + x, "[wtmap align] no read file given; see 'wtmap align --help'");
  expect_one_line_error(out_, "align " + x + "-x", "[wtmap align] unknown or incomplete option '-x'; see 'wtmap align --help'");
  expect_one_line_error(out_, "count " + x + "--bogus" + reads, "[wtmap count] unknown or incomplete option '--bogus'; see 'wtmap count --help'");
  expect_one_line_error(out_, "count " + x, "[wtmap count] no pattern file given; see 'wtmap count --help'");
  expect_one_line_error(out_, "index -s 0 " + shell_quote(fasta_), "[wtmap index] -s needs an integer in 1..1048576; see 'wtmap index --help'");
  expect_one_line_error(out_, "index -p x", "[wtmap index] no reference given; see 'wtmap index --help'");
  expect_one_line_error(out_, "bogus", "wtmap: unknown command 'bogus'; see 'wtmap --help'");
}

// --help and -h: the usage on stdout, exit 0; no arguments at all: the same usage on stderr,
// exit 1, as bwa answers.
TEST_F(CliHabits, HelpToStdoutNoArgumentsToStderr) {
  for (const std::string command : {"", "index", "count", "align"}) {  // "": wtmap itself
    SCOPED_TRACE("'" + command + "'");
    const RunResult help = run_wtmap(out_, command + " --help");
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_EQ(help.err, "");
    EXPECT_EQ(help.out.rfind(command.empty() ? "Usage: wtmap <command>" : "Usage: wtmap " + command + " ", 0), 0u) << help.out;
    const RunResult h = run_wtmap(out_, command + " -h");
    EXPECT_EQ(h.exit_code, 0);
    EXPECT_EQ(h.out, help.out);
    const RunResult bare = run_wtmap(out_, command);
    EXPECT_EQ(bare.exit_code, 1);
    EXPECT_EQ(bare.out, "");
    EXPECT_EQ(bare.err, help.out);
  }
}

// The overview names align's default mode, gapped local alignment, as `wtmap align --help` does.
TEST_F(CliHabits, TheOverviewSaysAlignIsGappedByDefault) {
  const RunResult overview = run_wtmap(out_, "--help");
  EXPECT_NE(overview.out.find("  align   align DNA reads (FASTQ or FASTA, single or pairs) and write SAM/BAM: gapped\n"
                              "          local alignment as bwa mem by default, every hit with up to k mismatches with -k\n"),
            std::string::npos)
      << overview.out;
  const RunResult align = run_wtmap(out_, "align --help");
  EXPECT_NE(align.out.find("  gapped (default)  local alignment with affine gaps, as `bwa mem` aligns"), std::string::npos) << align.out;
}

// ---- -o x.sam.gz, -o - with -O -----------------------------------------------------------------

// What htslib detects in a file: its format and compression.
htsFormat detected_format(const std::string& path) {
  htsFile* f = hts_open(path.c_str(), "r");
  if (f == nullptr) throw std::runtime_error("htslib cannot open " + path);
  const htsFormat format = *hts_get_format(f);
  hts_close(f);
  return format;
}

// Every record of a SAM, SAM.gz, BAM or CRAM file as htslib reads and formats it back; a CRAM
// file's against `reference` (given, so that htslib looks nowhere else for it).
std::vector<std::string> htslib_records(const std::string& path, const std::string& reference = "") {
  samFile* f = sam_open(path.c_str(), "r");
  if (f == nullptr) throw std::runtime_error("htslib cannot open " + path);
  if (!reference.empty() && hts_set_fai_filename(f, reference.c_str()) != 0) throw std::runtime_error("no reference " + reference);
  sam_hdr_t* header = sam_hdr_read(f);
  bam1_t* b = bam_init1();
  kstring_t line = KS_INITIALIZE;
  std::vector<std::string> records;
  int rc = 0;
  while (header != nullptr && (rc = sam_read1(f, header, b)) >= 0) {
    if (sam_format1(header, b, &line) < 0) break;
    records.emplace_back(line.s, line.l);
  }
  ks_free(&line);
  bam_destroy1(b);
  if (header != nullptr) sam_hdr_destroy(header);
  sam_close(f);
  if (header == nullptr || rc < -1) throw std::runtime_error("htslib cannot read " + path);
  return records;
}

// A SAM line's tab-separated fields.
std::vector<std::string> split_fields(const std::string& line) { return split(line, '\t'); }

// The record lines of a SAM text.
std::vector<std::string> sam_text_records(const std::string& sam) {
  std::vector<std::string> records;
  for (const std::string& line : split(sam, '\n')) {
    if (!line.empty() && line[0] != '@') records.push_back(line);
  }
  return records;
}

class CliHabitsOutput : public CliHabits {
 protected:
  void SetUp() override {
    CliHabits::SetUp();
    index(shell_quote(fasta_));
    write_reads(dir_.file("reads.fq"), 10);
    const RunResult plain = run_wtmap(out_, align_args("-o " + shell_quote(results_.file("plain.sam"))));
    ASSERT_EQ(plain.exit_code, 0) << describe(plain);
    plain_ = sam_text_records(read_file(results_.file("plain.sam")));
    ASSERT_EQ(plain_.size(), 10u);
  }
  std::string align_args(const std::string& options) const {
    return "align --device cpu -x " + shell_quote(fasta_) + " " + options + " " + shell_quote(dir_.file("reads.fq"));
  }

  TempDir results_;                 // what wtmap writes with -o, and nothing else
  std::vector<std::string> plain_;  // the records of a plain SAM run
};

// x.sam.gz is SAM in BGZF blocks, as samtools writes it: htslib detects it so and reads the plain
// run's records back, samtools view prints them, and the temporary is gone.
TEST_F(CliHabitsOutput, ASamGzPathWritesBgzfSam) {
  for (const std::string name : {"x.sam.gz", "y.SAM.GZ", "z.bgz"}) {
    SCOPED_TRACE(name);
    const std::string path = results_.file(name);
    const RunResult r = run_wtmap(out_, align_args("-o " + shell_quote(path)));
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const htsFormat format = detected_format(path);
    EXPECT_EQ(format.format, sam);
    EXPECT_EQ(format.compression, bgzf);
    EXPECT_EQ(htslib_records(path), plain_);
    if (shell("command -v samtools > /dev/null") == 0) {
      const std::string view = out_.file("view.txt");
      ASSERT_EQ(shell("samtools view " + shell_quote(path) + " > " + shell_quote(view)), 0);
      EXPECT_EQ(sam_text_records(read_file(view)), plain_);
    }
  }
  EXPECT_EQ(results_.entries(), (std::vector<std::string>{"plain.sam", "x.sam.gz", "y.SAM.GZ", "z.bgz"}));
}

// -o - writes to stdout, in the format -O (or --output-fmt) names: BAM for a pipe into samtools;
// CRAM against the FASTA -x names (tests/aligner/test_align_cram.cpp tests CRAM further).
TEST_F(CliHabitsOutput, DashWritesStdoutInTheFormatDashONames) {
  struct Case {
    const char* options;
    htsExactFormat format;
    htsCompression compression;
  };
  for (const Case& c : {Case{"-o - -O bam", bam, bgzf}, Case{"-o - -O BAM", bam, bgzf}, Case{"-o - --output-fmt bam", bam, bgzf},
                        Case{"-o - -O sam", sam, no_compression}, Case{"-O bam", bam, bgzf}, Case{"-O cram", cram, custom},
                        Case{"-o - --output-fmt CRAM", cram, custom}}) {
    SCOPED_TRACE(c.options);
    const RunResult r = run_wtmap(out_, align_args(c.options));
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const htsFormat format = detected_format(out_.file("stdout.txt"));
    EXPECT_EQ(format.format, c.format);
    EXPECT_EQ(format.compression, c.compression);
    EXPECT_EQ(htslib_records(out_.file("stdout.txt"), c.format == cram ? fasta_ : ""), plain_);
  }
  EXPECT_EQ(results_.entries(), std::vector<std::string>{"plain.sam"});
}

// An unknown format is refused on one line before any work (no index loaded, no file left).
TEST_F(CliHabitsOutput, AnUnknownFormatIsRefusedBeforeAnyWork) {
  const RunResult r = run_wtmap(out_, align_args("-O json -o " + shell_quote(results_.file("x.json"))));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "[wtmap align] the output format must be SAM, BAM or CRAM, not 'json'; see 'wtmap align --help'\n");
  EXPECT_EQ(results_.entries(), std::vector<std::string>{"plain.sam"});
}

// Before a number, -O stays bwa mem's gap open penalties.
TEST_F(CliHabitsOutput, DashOBeforeANumberIsTheGapOpenPenalty) {
  for (const std::string& value : {std::string("8"), std::string("8,8")}) {
    const RunResult r = run_wtmap(out_, align_args("-O " + value));
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_NE(r.err.find(" -O 8,8 -E 1,1 "), std::string::npos) << r.err;
    EXPECT_EQ(sam_text_records(r.out), plain_);  // exact reads: no gap, the same records
  }
}

// ---- progress and -q -------------------------------------------------------------------------

// `count` reads of 100 bases from random places of the reference, both strands.
std::string many_reads(const std::vector<TestContig>& contigs, int count) {
  std::mt19937 rng(11);
  std::string reads;
  for (int i = 0; i < count; ++i) {
    const std::string s = normalized(contigs[rng() % contigs.size()].sequence);
    const std::string read = s.substr(rng() % (s.size() - 100), 100);
    reads += "@m" + std::to_string(i) + "\n" + (i % 2 == 0 ? read : revcomp(read)) + "\n+\n" + std::string(100, 'I') + "\n";
  }
  return reads;
}

struct ProgressLine {
  unsigned long long reads = 0;
  int percent = -1;  // -1: the line gives no share of the input
};

// The progress lines of a run's stderr, in order; any other line that mentions reads/s but the
// closing summary fails the test.
std::vector<ProgressLine> progress_lines(const std::string& err) {
  const std::regex with_share(R"(\[wtmap align +[0-9.]+s\] ([0-9]+) reads, [0-9]+ reads/s; ([0-9]+)% of the input, about ([0-9]+ s|[0-9]+ min|[0-9.]+ h) left)");
  const std::regex without(R"(\[wtmap align +[0-9.]+s\] ([0-9]+) reads, [0-9]+ reads/s)");
  std::vector<ProgressLine> lines;
  for (const std::string& line : split(err, '\n')) {
    std::smatch m;
    if (std::regex_match(line, m, with_share)) {
      lines.push_back({std::stoull(m[1].str()), std::stoi(m[2].str())});
    } else if (std::regex_match(line, m, without)) {
      lines.push_back({std::stoull(m[1].str()), -1});
    } else {
      EXPECT_TRUE(line.find("reads/s") == std::string::npos || line.find(" mapped (") != std::string::npos) << line;
    }
  }
  return lines;
}

// --progress 0: a line after every batch, the reads written so far; from a file, the share of
// the input (exact here: the file is one chunk, so once parsing has reached its end the count of
// its reads is known), down to 100% and 0 s left after the last batch.
TEST_F(CliHabits, ProgressGivesTheReadsAndTheShareOfTheInput) {
  index(shell_quote(fasta_));
  const std::string reads = dir_.file("reads.fq");
  write_file(reads, many_reads(contigs_, 200));
  const RunResult r = run_wtmap(out_, "align --device cpu -x " + shell_quote(fasta_) + " --progress 0 --batch 20 -o " +
                                          shell_quote(dir_.file("x.sam")) + " " + shell_quote(reads));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const std::vector<ProgressLine> lines = progress_lines(r.err);
  ASSERT_EQ(lines.size(), 10u) << r.err;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    EXPECT_EQ(lines[k].reads, 20 * (k + 1)) << r.err;
    if (lines[k].percent >= 0) {
      EXPECT_EQ(lines[k].percent, static_cast<int>(10 * (k + 1))) << r.err;
    }
  }
  EXPECT_EQ(lines.back().percent, 100) << r.err;
  EXPECT_NE(r.err.find("] 200 reads, "), std::string::npos);
  EXPECT_NE(r.err.find("100% of the input, about 0 s left\n"), std::string::npos) << r.err;
}

// From a pipe the size is unknown: reads and reads/s only. By default (a line each 5 s) a run of a
// second prints none.
TEST_F(CliHabits, ProgressFromAPipeHasNoShareAndTheDefaultIsSeconds) {
  index(shell_quote(fasta_));
  const std::string reads = dir_.file("reads.fq");
  write_file(reads, many_reads(contigs_, 200));
  const std::string err = out_.file("piped.err");
  const std::string align = shell_quote(wtmap_program(WTMAP_EXECUTABLE)) + " align --device cpu -x " + shell_quote(fasta_) +
                            " --batch 20 -o " + shell_quote(dir_.file("x.sam"));
  ASSERT_EQ(shell("cat " + shell_quote(reads) + " | " + align + " --progress 0 - 2> " + shell_quote(err)), 0) << read_file(err);
  const std::vector<ProgressLine> lines = progress_lines(read_file(err));
  ASSERT_EQ(lines.size(), 10u) << read_file(err);
  for (std::size_t k = 0; k < lines.size(); ++k) {
    EXPECT_EQ(lines[k].reads, 20 * (k + 1));
    EXPECT_EQ(lines[k].percent, -1);
  }
  ASSERT_EQ(shell(align + " " + shell_quote(reads) + " 2> " + shell_quote(err)), 0) << read_file(err);
  EXPECT_EQ(progress_lines(read_file(err)).size(), 0u) << read_file(err);
}

// -q: nothing on stderr but errors, in every command.
TEST_F(CliHabits, QuietPrintsErrorsOnly) {
  write_reads(dir_.file("reads.fq"), 10);
  RunResult r = run_wtmap(out_, "index -q " + shell_quote(fasta_));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, "");
  r = run_wtmap(out_, "count --quiet -x " + shell_quote(fasta_) + " " + shell_quote(dir_.file("reads.fq")));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(split(r.out, '\n').size(), 11u) << r.out;
  r = run_wtmap(out_, "align -q --progress 0 --batch 2 -x " + shell_quote(fasta_) + " " + shell_quote(dir_.file("reads.fq")));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(sam_text_records(r.out).size(), 10u);
  r = run_wtmap(out_, "align -q -x " + shell_quote(dir_.file("none")) + " " + shell_quote(dir_.file("reads.fq")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "[wtmap align] error: no index for -x " + dir_.file("none") + ": tried " + dir_.file("none.wtmap") + "\n");
  r = run_wtmap(out_, "align -q -v -x " + shell_quote(fasta_) + " " + shell_quote(dir_.file("reads.fq")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "[wtmap align] -q and -v ask for opposite things; see 'wtmap align --help'\n");
  r = run_wtmap(out_, "align --progress -1 -x " + shell_quote(fasta_) + " " + shell_quote(dir_.file("reads.fq")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "[wtmap align] --progress needs seconds, 0 or more; see 'wtmap align --help'\n");
}

// ---- --stats-json -------------------------------------------------------------------------------

// A JSON file flattened by python3's json module (which refuses malformed JSON): "a.b" -> value,
// lists as their items joined by spaces, null as "null".
std::map<std::string, std::string> parsed_json(const TempDir& dir, const std::string& path) {
  const std::string script = dir.file("flatten.py"), flat = dir.file("flat.txt");
  write_file(script,
             "import json, sys\n"
             "def walk(path, v):\n"
             "    if isinstance(v, dict):\n"
             "        for k, x in v.items(): walk(path + [k], x)\n"
             "    elif isinstance(v, list): print('.'.join(path), ' '.join(str(x) for x in v))\n"
             "    else: print('.'.join(path), 'null' if v is None else v)\n"
             "walk([], json.load(open(sys.argv[1])))\n");
  std::map<std::string, std::string> values;
  if (shell("python3 " + shell_quote(script) + " " + shell_quote(path) + " > " + shell_quote(flat)) != 0) {
    ADD_FAILURE() << "python3 cannot parse " << path << ":\n" << read_file(path);
    return values;
  }
  for (const std::string& line : split(read_file(flat), '\n')) {
    const std::size_t space = line.find(' ');
    if (space != std::string::npos) values[line.substr(0, space)] = line.substr(space + 1);
  }
  return values;
}

// The summary recounted from the SAM file as htslib reads it.
struct SamCounts {
  std::uint64_t reads = 0, mapped = 0, mapq_above_0 = 0, split = 0;
  std::vector<std::uint64_t> mapq;  // mapped primaries by MAPQ
  std::uint64_t pairs = 0, proper = 0, both_mapped = 0, singletons = 0;
  double insert_sum = 0, insert_squares = 0;
};

SamCounts count_sam(const std::string& path) {
  SamCounts c;
  std::set<std::pair<std::string, int>> split;  // (name, mate) with a supplementary line
  for (const std::string& line : htslib_records(path)) {
    const std::vector<std::string> f = split_fields(line);
    const int flag = std::stoi(f[1]);
    const int mapq = std::stoi(f[4]);
    if (flag & 0x800) {
      split.insert({f[0], flag & 0xC0});
      continue;
    }
    if (flag & 0x100) continue;
    ++c.reads;
    if ((flag & 0x4) == 0) {
      ++c.mapped;
      c.mapq_above_0 += mapq > 0;
      if (c.mapq.size() <= static_cast<std::size_t>(mapq)) c.mapq.resize(mapq + 1, 0);
      ++c.mapq[mapq];
    }
    if ((flag & 0x1) && (flag & 0x40)) {  // a pair, counted at its first mate
      ++c.pairs;
      const bool self = (flag & 0x4) == 0, mate = (flag & 0x8) == 0;
      c.both_mapped += self && mate;
      c.singletons += self != mate;
      if (flag & 0x2) {
        ++c.proper;
        const double insert = std::fabs(std::stod(f[8]));
        c.insert_sum += insert;
        c.insert_squares += insert * insert;
      }
    }
  }
  c.split = split.size();
  return c;
}

std::string joined(const std::vector<std::uint64_t>& values) {
  std::string s;
  for (std::uint64_t v : values) s += (s.empty() ? "" : " ") + std::to_string(v);
  return s;
}

class CliHabitsStats : public CliHabits {
 protected:
  void SetUp() override {
    CliHabits::SetUp();
    if (shell("command -v python3 > /dev/null") != 0) GTEST_SKIP() << "no python3 to parse the JSON";
    index(shell_quote(fasta_));
  }
  RunResult align(const std::string& options) {
    return run_wtmap(out_, "align --device cpu -q -x " + shell_quote(fasta_) + " -o " + shell_quote(results_.file("x.sam")) +
                               " --stats-json " + shell_quote(results_.file("s.json")) + " " + options);
  }
  // r1.fq and r2.fq: 60 pairs of contig 1, inserts 250..349, every tenth mate 2 random (a singleton).
  void write_pairs() {
    const std::string s = normalized(contigs_[1].sequence);
    std::string one, two;
    std::mt19937 rng(8);
    for (int i = 0; i < 60; ++i) {
      const std::size_t insert = 250 + rng() % 100, start = rng() % (s.size() - insert);
      std::string mate2 = revcomp(s.substr(start + insert - 100, 100));
      if (i % 10 == 3) {
        for (char& base : mate2) base = "ACGT"[rng() % 4];
      }
      const std::string name = "@p" + std::to_string(i) + "\n", quality = "\n+\n" + std::string(100, 'I') + "\n";
      one += name + s.substr(start, 100) + quality;
      two += name + mate2 + quality;
    }
    write_file(dir_.file("r1.fq"), one);
    write_file(dir_.file("r2.fq"), two);
  }
  std::string pair_files() const { return shell_quote(dir_.file("r1.fq")) + " " + shell_quote(dir_.file("r2.fq")); }
  TempDir results_;  // the SAM and the JSON, and nothing else
};

// Single reads: placed, random (unmapped) and chimeric (split) ones; every number of the JSON
// against the SAM counted again.
TEST_F(CliHabitsStats, SingleReadsAgreeWithTheSamReadBack) {
  std::string reads = many_reads(contigs_, 150);
  std::mt19937 rng(5);
  for (int i = 0; i < 20; ++i) {
    std::string random;
    for (int k = 0; k < 100; ++k) random += "ACGT"[rng() % 4];
    reads += "@u" + std::to_string(i) + "\n" + random + "\n+\n" + std::string(100, 'I') + "\n";
  }
  const std::string a = normalized(contigs_[0].sequence), b = normalized(contigs_[2].sequence);
  for (int i = 0; i < 10; ++i) {
    const std::string chimera = a.substr(200 + 100 * i, 80) + b.substr(300 + 100 * i, 80);
    reads += "@c" + std::to_string(i) + "\n" + chimera + "\n+\n" + std::string(160, 'I') + "\n";
  }
  write_file(dir_.file("reads.fq"), reads);
  const RunResult r = align(shell_quote(dir_.file("reads.fq")));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(results_.entries(), (std::vector<std::string>{"s.json", "x.sam"}));
  const SamCounts sam = count_sam(results_.file("x.sam"));
  std::map<std::string, std::string> json = parsed_json(out_, results_.file("s.json"));
  EXPECT_EQ(sam.reads, 180u);
  EXPECT_GT(sam.split, 0u) << "no chimera was split: the test shows nothing of split_reads";
  EXPECT_EQ(json["reads"], std::to_string(sam.reads));
  EXPECT_EQ(json["mapped"], std::to_string(sam.mapped));
  EXPECT_EQ(json["mapq_above_0"], std::to_string(sam.mapq_above_0));
  EXPECT_EQ(json["split_reads"], std::to_string(sam.split));
  EXPECT_EQ(json["mapq_histogram"], joined(sam.mapq));
  EXPECT_EQ(json["pairs"], "null");
  EXPECT_EQ(json["mode"], "gapped");
  EXPECT_EQ(json["version"], WTMAP_PROJECT_VERSION);
}

// Pairs, some with a random mate 2 (singletons): the pair numbers and the proper pairs' insert
// size against the SAM; -I gives the model, whose bounds are mean -+ 4 sd.
TEST_F(CliHabitsStats, PairsAgreeWithTheSamReadBack) {
  write_pairs();
  const RunResult r = align("-I 300,30 " + pair_files());
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const SamCounts sam = count_sam(results_.file("x.sam"));
  std::map<std::string, std::string> json = parsed_json(out_, results_.file("s.json"));
  EXPECT_EQ(sam.pairs, 60u);
  EXPECT_GT(sam.singletons, 0u);
  EXPECT_GT(sam.proper, 0u);
  EXPECT_EQ(json["reads"], "120");
  EXPECT_EQ(json["mapped"], std::to_string(sam.mapped));
  EXPECT_EQ(json["mapq_above_0"], std::to_string(sam.mapq_above_0));
  EXPECT_EQ(json["mapq_histogram"], joined(sam.mapq));
  EXPECT_EQ(json["pairs.pairs"], "60");
  EXPECT_EQ(json["pairs.properly_paired"], std::to_string(sam.proper));
  EXPECT_EQ(json["pairs.both_mapped"], std::to_string(sam.both_mapped));
  EXPECT_EQ(json["pairs.singletons"], std::to_string(sam.singletons));
  EXPECT_EQ(json["pairs.insert_size_model.source"], "given");
  EXPECT_EQ(std::stod(json["pairs.insert_size_model.mean"]), 300.0);
  EXPECT_EQ(std::stod(json["pairs.insert_size_model.sd"]), 30.0);
  EXPECT_EQ(json["pairs.insert_size_model.proper_low"], "180");
  EXPECT_EQ(json["pairs.insert_size_model.proper_high"], "420");
  const double n = static_cast<double>(sam.proper), mean = sam.insert_sum / n;
  EXPECT_EQ(json["pairs.proper_insert_size.pairs"], std::to_string(sam.proper));
  EXPECT_NEAR(std::stod(json["pairs.proper_insert_size.mean"]), mean, 1e-5);
  EXPECT_NEAR(std::stod(json["pairs.proper_insert_size.sd"]), std::sqrt(sam.insert_squares / n - mean * mean), 1e-5);
}

// insert_size_model.option, given back as -I, reproduces the estimated model: the same records
// and the same option; -I none pairs nothing, as a run that sampled too few pairs.
TEST_F(CliHabitsStats, InsertSizeOptionGivesTheEstimatedModelBack) {
  write_pairs();
  RunResult r = align(pair_files());
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::map<std::string, std::string> json = parsed_json(out_, results_.file("s.json"));
  ASSERT_EQ(json["pairs.insert_size_model.source"], "estimated");
  const std::string option = json["pairs.insert_size_model.option"];
  const std::vector<std::string> estimated = htslib_records(results_.file("x.sam"));
  ASSERT_GT(std::stoull(json["pairs.properly_paired"]), 0u);
  r = align("-I " + option + " " + pair_files());
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  json = parsed_json(out_, results_.file("s.json"));
  EXPECT_EQ(json["pairs.insert_size_model.source"], "given");
  EXPECT_EQ(json["pairs.insert_size_model.option"], option);
  EXPECT_EQ(htslib_records(results_.file("x.sam")), estimated);
  r = align("-I none " + pair_files());
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  json = parsed_json(out_, results_.file("s.json"));
  EXPECT_EQ(json["pairs.insert_size_model.source"], "given");
  EXPECT_EQ(json["pairs.insert_size_model.option"], "none");
  EXPECT_EQ(json.count("pairs.insert_size_model.mean"), 0u);
  EXPECT_EQ(json["pairs.properly_paired"], "0");
  EXPECT_EQ(count_sam(results_.file("x.sam")).proper, 0u);
}

// The JSON is a result file like -o's: none when the run fails, never the -o file itself.
TEST_F(CliHabitsStats, AFailedRunLeavesNoJson) {
  write_file(dir_.file("bad.fq"), many_reads(contigs_, 30) + "@bad\nACGT\n+\nII\n");
  RunResult r = align(shell_quote(dir_.file("bad.fq")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("record 31: sequence and quality differ in length"), std::string::npos) << r.err;
  EXPECT_EQ(results_.entries(), std::vector<std::string>{});
  r = run_wtmap(out_, "align --device cpu -x " + shell_quote(fasta_) + " -o " + shell_quote(results_.file("x.sam")) +
                          " --stats-json " + shell_quote(results_.path().string() + "/./x.sam") + " " + shell_quote(dir_.file("bad.fq")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "[wtmap align] --stats-json and -o name the same file; see 'wtmap align --help'\n");
  EXPECT_EQ(results_.entries(), std::vector<std::string>{});
}

}  // namespace
}  // namespace wtmap::fmtest
