// `wtmap index` + `wtmap align` run as a user runs them: SAM and BAM output read back through
// htslib and every record recomputed from the reference and the read (FLAG, POS, CIGAR, NM, MD,
// X0, X1, XA, MAPQ, SEQ/QUAL orientation, RG) plus the header; records identical across batch
// sizes, thread counts and devices; malformed input and options failing cleanly without leaving
// an output file; reads too short, too long or all N kept unmapped and counted.
#include <gtest/gtest.h>
#include <htslib/sam.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "align_oracle.hpp"
#include "bgzf_support.hpp"
#include "fm_support.hpp"
#include "gpu_memory_limit.hpp"
#include "sam_readback.hpp"
#include "wtmap/core/config.hpp"

#ifndef WTMAP_EXECUTABLE
#error "WTMAP_EXECUTABLE must name the wtmap program"
#endif

namespace wtmap::altest {
namespace {

namespace fs = std::filesystem;
using fmtest::TempDir;
using fmtest::shell_quote;

// ---- running wtmap ----------------------------------------------------------------------------

struct WtmapRun {
  int exit_code = -1;  // -1: killed by a signal
  std::string out, err;
};

// The shell command `wtmap <args>`, each argument passed verbatim, its standard output and error
// going to <tag>.out and <tag>.err in `capture`: a directory of their own, so the directories a
// test inspects hold only what wtmap wrote.
std::string wtmap_command(const std::vector<std::string>& args, const std::string& stdin_path, const TempDir& capture,
                          const std::string& tag) {
  std::string command = shell_quote(fmtest::wtmap_program(WTMAP_EXECUTABLE));
  for (const std::string& a : args) command += " " + shell_quote(a);
  return command + " < " + shell_quote(stdin_path) + " > " + shell_quote(capture.file(tag + ".out")) + " 2> " +
         shell_quote(capture.file(tag + ".err"));
}

WtmapRun captured_run(int exit_code, const TempDir& capture, const std::string& tag) {
  WtmapRun r;
  r.exit_code = exit_code;
  r.out = fmtest::read_file(capture.file(tag + ".out"));
  r.err = fmtest::read_file(capture.file(tag + ".err"));
  return r;
}

WtmapRun run_wtmap(const std::vector<std::string>& args, const std::string& stdin_path = "/dev/null") {
  const TempDir capture;
  const int status = std::system(wtmap_command(args, stdin_path, capture, "run").c_str());
  return captured_run(WIFEXITED(status) ? WEXITSTATUS(status) : -1, capture, "run");
}

// `copies` runs of `wtmap <args>` started at once, as users share one GPU between processes.
std::vector<WtmapRun> run_wtmap_concurrently(const std::vector<std::string>& args, unsigned copies) {
  const TempDir capture;
  std::string script;
  for (unsigned i = 0; i < copies; ++i) {
    const std::string tag = "run" + std::to_string(i);
    script += "(" + wtmap_command(args, "/dev/null", capture, tag) + "; echo $? > " + shell_quote(capture.file(tag + ".rc")) + ") & ";
  }
  script += "wait";
  const int status = std::system(script.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << script;
  std::vector<WtmapRun> runs;
  for (unsigned i = 0; i < copies; ++i) {
    const std::string tag = "run" + std::to_string(i);
    const std::string rc = fmtest::read_file(capture.file(tag + ".rc"));  // "<exit status>\n"; 128 + n: signal n
    const int exit_code = rc.empty() ? -1 : std::stoi(rc);
    runs.push_back(captured_run(exit_code > 128 ? -1 : exit_code, capture, tag));
  }
  return runs;
}

std::string describe(const WtmapRun& r) { return "exit " + std::to_string(r.exit_code) + ", stderr:\n" + r.err; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The alignment records of a SAM text (its lines not starting with '@').
std::vector<std::string> record_lines(const std::string& sam) {
  std::vector<std::string> records;
  for (const std::string& line : lines_of(sam)) {
    if (line.empty() || line[0] != '@') records.push_back(line);
  }
  return records;
}

// XA:Z:chr,+pos,<len>M,NM;... as windows (0-based positions).
std::vector<Window> parse_xa(const std::string& xa, const std::map<std::string, std::uint32_t>& contig_ids,
                             std::size_t length) {
  std::vector<Window> windows;
  std::istringstream in(xa);
  for (std::string entry; std::getline(in, entry, ';');) {
    std::istringstream fields(entry);
    std::string contig, pos, cigar, nm;
    if (!std::getline(fields, contig, ',') || !std::getline(fields, pos, ',') || !std::getline(fields, cigar, ',') ||
        !std::getline(fields, nm, ',') || contig_ids.count(contig) == 0 || pos.size() < 2 ||
        (pos[0] != '+' && pos[0] != '-') || cigar != std::to_string(length) + "M") {
      throw std::runtime_error("malformed XA entry '" + entry + "'");
    }
    windows.push_back({contig_ids.at(contig), std::stoull(pos.substr(1)) - 1, pos[0] == '-',
                       static_cast<unsigned>(std::stoul(nm))});
  }
  return windows;
}

// ---- the fixture: a reference with repeats and near copies, its index, planted reads -----------------

struct Read {
  std::string name, sequence, quality;
};

std::string fastq_text(const std::vector<Read>& reads) {
  std::string s;
  for (const Read& r : reads) s += "@" + r.name + " some comment\n" + r.sequence + "\n+\n" + r.quality + "\n";
  return s;
}

// Qualities that differ along the read, so a reversal shows.
std::string varied_quality(std::size_t length, std::size_t salt) {
  std::string q;
  for (std::size_t i = 0; i < length; ++i) q += static_cast<char>('!' + (i * 7 + salt) % 41);
  return q;
}

constexpr unsigned kCliMismatches = 3;
const std::string kReadGroup = "@RG\\tID:g1\\tSM:s1";  // as typed on the command line

class AlignCli : public ::testing::Test {
 protected:
  void SetUp() override {
    contigs_ = make_reference(Shape::near_copy);
    for (Shape shape : {Shape::tandem, Shape::repeat_family}) {
      for (TestContig& c : make_reference(shape)) contigs_.push_back(std::move(c));
    }
    contigs_.push_back(make_reference(Shape::random_with_n)[0]);  // IUPAC codes and lower case
    fmtest::write_file(input_.file("ref.fa"), fmtest::fasta_text(contigs_, 70));
    const WtmapRun r = run_wtmap({"index", input_.file("ref.fa"), "-p", prefix(), "--device", "cpu"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    for (std::size_t length : {36, 100, 150}) {
      for (const std::string& s : planted_reads(contigs_, length, kCliMismatches, static_cast<std::uint32_t>(7 * length), 30)) {
        std::string sequence = s;
        if (reads_.size() % 7 == 3) {  // some in lower case: SEQ is upper case
          for (char& c : sequence) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        reads_.push_back({"r" + std::to_string(reads_.size() + 1), sequence, varied_quality(s.size(), reads_.size())});
      }
    }
    fmtest::write_file(reads_path(), fastq_text(reads_));
  }

  std::string prefix() const { return input_.file("idx"); }
  std::string reads_path() const { return input_.file("reads.fq"); }

  // `wtmap align -x <index> <options> <reads>`, in the k-mismatch mode these tests are about: with
  // -k 4 (the mode's former default) where the options select no k.
  WtmapRun align(std::vector<std::string> options, const std::string& reads) const {
    std::vector<std::string> args = {"align", "-x", prefix()};
    args.insert(args.end(), options.begin(), options.end());
    if (std::find(options.begin(), options.end(), "-k") == options.end()) args.insert(args.end(), {"-k", "4"});
    args.push_back(reads);
    return run_wtmap(args);
  }

  // The SAM records of an alignment of the planted reads with extra options, through stdout.
  std::vector<std::string> records_with(std::vector<std::string> options) const {
    options.insert(options.end(), {"-k", std::to_string(kCliMismatches)});
    const WtmapRun r = align(options, reads_path());
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    return record_lines(r.out);
  }

  TempDir input_;   // reference, index, reads
  TempDir output_;  // what wtmap writes, and nothing else
  std::vector<TestContig> contigs_;
  std::vector<Read> reads_;
};

// ---- output read back and recomputed ---------------------------------------------------------------

enum class Output { sam_file, bam_file, bam_by_option, sam_stdout };

const char* output_name(Output o) {
  switch (o) {
    case Output::sam_file: return "SamFile";
    case Output::bam_file: return "BamFile";
    case Output::bam_by_option: return "BamByOutputFmt";
    case Output::sam_stdout: return "SamStdout";
  }
  return "?";
}

void PrintTo(Output o, std::ostream* os) { *os << output_name(o); }

class AlignOutput : public AlignCli, public ::testing::WithParamInterface<Output> {};

INSTANTIATE_TEST_SUITE_P(Cli, AlignOutput,
                         ::testing::Values(Output::sam_file, Output::bam_file, Output::bam_by_option, Output::sam_stdout),
                         [](const auto& info) { return std::string(output_name(info.param)); });

// One record against the read and the oracle; empty when right.
std::string check_record(const SamRecord& rec, const Read& read, const BruteForce& oracle,
                         const std::map<std::string, std::uint32_t>& contig_ids) {
  std::ostringstream why;
  const Expected e = oracle.expect(read.sequence, kCliMismatches);
  if (rec.rg != std::optional<std::string>("g1")) why << "RG:Z " << rec.rg.value_or("(none)") << "; ";
  if (!e.mapped) {
    if (rec.flag != 4 || rec.tid != -1 || rec.pos != -1 || rec.mapq != 0 || !rec.cigar.empty()) {
      why << "unmapped read as flag " << rec.flag << " tid " << rec.tid << " pos " << rec.pos << " MAPQ " << rec.mapq
          << " CIGAR " << rec.cigar << "; expected flag 4, no position, MAPQ 0, no CIGAR; ";
    }
    if (rec.seq != BruteForce::oriented(read.sequence, false) || rec.qual != read.quality) why << "unmapped SEQ/QUAL changed; ";
    if (rec.nm || rec.md || rec.x0 || rec.x1 || rec.xa) why << "unmapped read with alignment tags; ";
    return why.str();
  }
  const bool reverse = (rec.flag & 16) != 0;
  if (rec.flag != (reverse ? 16 : 0)) return "flag " + std::to_string(rec.flag) + " for a mapped read";
  if (rec.tid < 0) return "mapped read without a reference";
  const Window w{static_cast<std::uint32_t>(rec.tid), static_cast<std::uint64_t>(rec.pos), reverse, e.mismatches};
  if (!e.is_best(w)) why << "placed at " << w << ", not a best window of " << describe(e.reportable) << "; ";
  if (rec.cigar != std::to_string(read.sequence.size()) + "M") why << "CIGAR " << rec.cigar << "; ";
  const unsigned d = oracle.distance(read.sequence, w.contig, w.position, w.reverse);
  if (rec.nm != std::optional<std::int64_t>(d)) why << "NM " << rec.nm.value_or(-1) << ", the placement has " << d << "; ";
  const std::string md = oracle.md(read.sequence, w.contig, w.position, w.reverse);
  if (rec.md != md) why << "MD " << rec.md.value_or("(none)") << ", expected " << md << "; ";
  if (rec.x0 != std::optional<std::int64_t>(e.x0) || rec.x1 != std::optional<std::int64_t>(e.x1)) {
    why << "X0 " << rec.x0.value_or(-1) << " X1 " << rec.x1.value_or(-1) << ", expected " << e.x0 << " " << e.x1 << "; ";
  }
  const int mapq = expected_mapq(true, e.x0, e.x1, e.mismatches, kCliMismatches);
  if (rec.mapq != mapq) why << "MAPQ " << rec.mapq << ", expected " << mapq << "; ";
  const std::string seq = BruteForce::oriented(read.sequence, reverse);
  const std::string qual = reverse ? std::string(read.quality.rbegin(), read.quality.rend()) : read.quality;
  if (rec.seq != seq) why << "SEQ " << rec.seq << ", expected " << seq << "; ";
  if (rec.qual != qual) why << "QUAL " << rec.qual << ", expected " << qual << "; ";
  const bool listed = e.x0 + e.x1 <= 3 && e.x0 + e.x1 > 1;  // -N 3: every other hit in XA
  if (listed != rec.xa.has_value()) {
    why << (listed ? "no XA" : "XA " + rec.xa.value_or("")) << " with X0 + X1 = " << e.x0 + e.x1 << "; ";
  } else if (listed) {
    try {
      std::vector<Window> all = parse_xa(*rec.xa, contig_ids, read.sequence.size());
      for (const Window& alt : all) {
        const unsigned alt_d = oracle.distance(read.sequence, alt.contig, alt.position, alt.reverse);
        if (alt_d != alt.distance) why << "XA entry " << alt << " is at distance " << alt_d << "; ";
      }
      all.push_back(w);
      std::sort(all.begin(), all.end());
      if (all != e.reportable) why << "placement and XA give " << describe(all) << ", expected " << describe(e.reportable) << "; ";
    } catch (const std::exception& ex) {
      why << ex.what() << "; ";
    }
  }
  return why.str();
}

TEST_P(AlignOutput, RecordsMatchTheReferenceAndTheReads) {
  std::vector<std::string> options = {"-k", std::to_string(kCliMismatches), "-R", kReadGroup, "--device", "cpu"};
  std::string path = output_.file("out.sam");
  switch (GetParam()) {
    case Output::sam_file: break;
    case Output::bam_file: path = output_.file("out.bam"); break;
    case Output::bam_by_option: path = output_.file("out.alignments"); options.insert(options.end(), {"--output-fmt", "BAM"}); break;
    case Output::sam_stdout: break;
  }
  if (GetParam() != Output::sam_stdout) options.insert(options.end(), {"-o", path});
  const WtmapRun r = align(options, reads_path());
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  if (GetParam() == Output::sam_stdout) {
    fmtest::write_file(path, r.out);
  } else {
    EXPECT_TRUE(r.out.empty());
    EXPECT_EQ(output_.entries(), std::vector<std::string>{fs::path(path).filename().string()}) << "no temporary file left";
  }
  const std::string bytes = fmtest::read_file(path);
  const bool bam = GetParam() == Output::bam_file || GetParam() == Output::bam_by_option;
  EXPECT_EQ(bytes.substr(0, 2), bam ? std::string("\x1f\x8b") : std::string("@H")) << "wrong output format";

  SamContents sam;
  ASSERT_NO_THROW(sam = read_alignments(path));
  // Header: @HD first, every contig with its length (ambiguity codes included), @RG, @PG with CL.
  const auto header = lines_of(sam.header);
  ASSERT_FALSE(header.empty());
  EXPECT_EQ(header[0].rfind("@HD\tVN:", 0), 0u) << header[0];
  ASSERT_EQ(sam.targets.size(), contigs_.size());
  std::map<std::string, std::uint32_t> contig_ids;
  for (std::uint32_t c = 0; c < contigs_.size(); ++c) {
    EXPECT_EQ(sam.targets[c].first, contigs_[c].name);
    EXPECT_EQ(sam.targets[c].second, static_cast<std::int64_t>(contigs_[c].sequence.size())) << contigs_[c].name;
    contig_ids[contigs_[c].name] = c;
  }
  EXPECT_NE(std::find(header.begin(), header.end(), "@RG\tID:g1\tSM:s1"), header.end()) << sam.header;
  const auto pg = std::find_if(header.begin(), header.end(), [](const std::string& l) { return l.rfind("@PG\t", 0) == 0; });
  ASSERT_NE(pg, header.end()) << sam.header;
  EXPECT_NE(pg->find("\tID:wtmap"), std::string::npos) << *pg;
  EXPECT_NE(pg->find("\tCL:wtmap align -x " + prefix() + " -k 3"), std::string::npos) << *pg;
  EXPECT_NE(pg->find(reads_path()), std::string::npos) << *pg;

  // Records: one per read, in input order, each recomputed.
  ASSERT_EQ(sam.records.size(), reads_.size());
  const BruteForce oracle(contigs_);
  std::size_t wrong = 0, mapped = 0, reverse = 0, unmapped = 0;
  for (std::size_t i = 0; i < reads_.size(); ++i) {
    const SamRecord& rec = sam.records[i];
    ASSERT_EQ(rec.name, reads_[i].name) << "record " << i + 1 << " out of input order";
    const std::string why = check_record(rec, reads_[i], oracle, contig_ids);
    mapped += rec.flag != 4;
    reverse += (rec.flag & 16) != 0;
    unmapped += rec.flag == 4;
    if (!why.empty() && ++wrong <= 10) ADD_FAILURE() << rec.name << " " << reads_[i].sequence << ": " << why;
  }
  EXPECT_EQ(wrong, 0u) << "records that disagree with the reference, of " << reads_.size();
  EXPECT_GT(reverse, 0u);
  EXPECT_GT(mapped - reverse, 0u);
  EXPECT_GT(unmapped, 0u);
}

// ---- determinism ----------------------------------------------------------------------------------

TEST_F(AlignCli, RecordsIdenticalForAnyBatchSize) {
  const auto reference = records_with({"--device", "cpu"});
  ASSERT_EQ(reference.size(), reads_.size());
  for (const char* batch : {"1", "7"}) {
    EXPECT_EQ(records_with({"--device", "cpu", "--batch", batch}), reference) << "--batch " << batch;
  }
}

TEST_F(AlignCli, RecordsIdenticalForAnyThreadCount) {
  const auto one = records_with({"--device", "cpu", "-t", "1"});
  ASSERT_EQ(one.size(), reads_.size());
  EXPECT_EQ(records_with({"--device", "cpu", "-t", "2", "--batch", "50"}), one);
  EXPECT_EQ(records_with({"--device", "cpu", "-t", "2"}), one);
  // From 4 threads on, new batches are made ahead on two threads of their own (BatchWarmer).
  EXPECT_EQ(records_with({"--device", "cpu", "-t", "4", "--batch", "7"}), one);
}

// BGZF reads (bgzip's blocked gzip) inflate on several threads; -v adds the stage times.
TEST_F(AlignCli, BgzfInputGivesTheSameRecordsAndVerboseNamesTheStages) {
  const auto plain = records_with({"--device", "cpu", "-t", "1"});
  ASSERT_EQ(plain.size(), reads_.size());
  write_bgzf(input_.file("reads.bgzf.fq.gz"), fastq_text(reads_));
  const WtmapRun r = align({"--device", "cpu", "-t", "4", "-v", "-k", std::to_string(kCliMismatches)},
                           input_.file("reads.bgzf.fq.gz"));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(record_lines(r.out), plain);
  EXPECT_NE(r.err.find("stages, busy seconds"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("inflate"), std::string::npos) << r.err;
}

// -v -v adds when the start-up steps ended, and each batch's reads and when each stage began and
// ended it: one line per batch, in order, --batch reads each but the last; a batch passes the
// stages one after another, and each stage takes the batches one after another.
TEST_F(AlignCli, VerboseTwiceGivesEachBatchTimeline) {
  const std::size_t batch = 7;
  const WtmapRun r = align({"--device", "cpu", "-t", "2", "--batch", std::to_string(batch), "-v", "-v"}, reads_path());
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const std::regex timeline(
      R"(batch (\d+) \((\d+) reads\): parse ([\d.]+)-([\d.]+), search ([\d.]+)-([\d.]+), finish ([\d.]+)-([\d.]+), write ([\d.]+)-([\d.]+)$)");
  std::vector<std::array<double, 8>> batches;  // parse, search, finish, write: begin and end
  for (const std::string& line : lines_of(r.err)) {
    std::smatch m;
    if (!std::regex_search(line, m, timeline)) continue;
    const std::size_t b = batches.size();
    EXPECT_EQ(std::stoul(m[1]), b + 1) << line;
    EXPECT_EQ(std::stoul(m[2]), std::min(batch, reads_.size() - std::min(reads_.size(), b * batch))) << line;
    std::array<double, 8> t{};
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = std::stod(m[i + 3]);
    batches.push_back(t);
  }
  ASSERT_EQ(batches.size(), (reads_.size() + batch - 1) / batch) << r.err;
  for (std::size_t b = 0; b < batches.size(); ++b) {
    for (std::size_t i = 0; i + 1 < 8; ++i) EXPECT_LE(batches[b][i], batches[b][i + 1]) << "batch " << b + 1 << ", time " << i;
    for (std::size_t stage = 0; b > 0 && stage < 4; ++stage) {
      EXPECT_LE(batches[b - 1][2 * stage + 1], batches[b][2 * stage]) << "batch " << b + 1 << ", stage " << stage;
    }
  }
  EXPECT_NE(r.err.find("output closed"), std::string::npos) << r.err;
  // The start-up before them: the backend, the index, the engines, in that order, before the
  // first batch's search.
  const std::regex start_line(R"(start: backend chosen by ([\d.]+) s, index loaded by ([\d.]+) s, engines started by ([\d.]+) s)");
  std::smatch start;
  ASSERT_TRUE(std::regex_search(r.err, start, start_line)) << r.err;
  const double backend = std::stod(start[1]), index = std::stod(start[2]), engines = std::stod(start[3]);
  EXPECT_LE(backend, index);
  EXPECT_LE(index, engines);
  EXPECT_LE(engines, batches[0][2]);
}

// -l sets the BAM compression level: the records read back are the same, the stored (level 0)
// file is the larger.
TEST_F(AlignCli, CompressionLevelChangesTheSizeNotTheRecords) {
  std::vector<std::vector<SamRecord>> records;
  std::vector<std::uintmax_t> sizes;
  for (const char* level : {"0", "9"}) {
    const std::string path = output_.file(std::string("level") + level + ".bam");
    const WtmapRun r = align({"--device", "cpu", "-l", level, "-o", path}, reads_path());
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    SamContents sam;
    ASSERT_NO_THROW(sam = read_alignments(path));
    ASSERT_EQ(sam.records.size(), reads_.size());
    records.push_back(sam.records);
    sizes.push_back(fs::file_size(path));
  }
  auto same = [](const SamRecord& a, const SamRecord& b) {
    return std::tie(a.name, a.flag, a.tid, a.pos, a.mapq, a.cigar, a.seq, a.qual, a.nm, a.x0, a.x1, a.md, a.xa, a.rg) ==
           std::tie(b.name, b.flag, b.tid, b.pos, b.mapq, b.cigar, b.seq, b.qual, b.nm, b.x0, b.x1, b.md, b.xa, b.rg);
  };
  EXPECT_TRUE(std::equal(records[0].begin(), records[0].end(), records[1].begin(), records[1].end(), same));
  EXPECT_GT(sizes[0], sizes[1]) << "level 0 stores the blocks uncompressed";
  const WtmapRun bad = align({"--device", "cpu", "-l", "10", "-o", output_.file("bad.bam")}, reads_path());
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("-l needs an integer in 0..9"), std::string::npos) << bad.err;
}

TEST_F(AlignCli, RecordsIdenticalOnCpuAndGpu) {
  if (!gpu_available()) GTEST_SKIP() << "no usable CUDA device";
  const auto cpu = records_with({"--device", "cpu"});
  ASSERT_EQ(cpu.size(), reads_.size());
  EXPECT_EQ(records_with({"--device", "gpu"}), cpu);
  EXPECT_EQ(records_with({"--device", "gpu", "--batch", "7"}), cpu);
}

// Several processes on one GPU at once, each with two batches in flight: every one writes what a
// lone CPU run writes. (Device memory that a process zero-filled on the legacy stream was once
// read by its non-blocking streams before the fill had landed, and under this contention whole
// batches came out unmapped.)
TEST_F(AlignCli, ConcurrentGpuRunsMatchACpuRun) {
  if (!gpu_available()) GTEST_SKIP() << "no usable CUDA device";
  std::string many;  // enough batches of 50 for every launch slot to be reused
  for (int copy = 0; copy < 20; ++copy) {
    std::vector<Read> renamed = reads_;
    for (Read& r : renamed) r.name += "_" + std::to_string(copy);
    many += fastq_text(renamed);
  }
  fmtest::write_file(input_.file("many.fq"), many);
  const std::vector<std::string> args = {"align", "-x", prefix(), "-k", std::to_string(kCliMismatches), "--batch", "50",
                                         input_.file("many.fq")};
  std::vector<std::string> cpu_args = args;
  cpu_args.insert(cpu_args.end() - 1, {"--device", "cpu"});
  const WtmapRun cpu = run_wtmap(cpu_args);
  ASSERT_EQ(cpu.exit_code, 0) << describe(cpu);
  const std::vector<std::string> expected = record_lines(cpu.out);
  ASSERT_EQ(expected.size(), 20 * reads_.size());
  std::vector<std::string> gpu_args = args;
  gpu_args.insert(gpu_args.end() - 1, {"--device", "gpu"});
  const std::vector<WtmapRun> runs = run_wtmap_concurrently(gpu_args, 3);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    ASSERT_EQ(runs[i].exit_code, 0) << "run " << i << ": " << describe(runs[i]);
    const std::vector<std::string> got = record_lines(runs[i].out);
    ASSERT_EQ(got.size(), expected.size()) << "run " << i;
    std::size_t differ = 0;
    for (std::size_t j = 0; j < got.size(); ++j) differ += got[j] != expected[j];
    EXPECT_EQ(differ, 0u) << "run " << i << ": records differing from the CPU run";
  }
}

// A GPU short of memory: WTMAP_GPU_MEM_LIMIT between what the input in one batch needs and what
// one read needs (each measured by a run with -v), and above what the load needs and what keeps
// the k-mer table's k (half the memory available after the index is the table's). The run searches in smaller batches and
// writes the unlimited run's output byte for byte, with one line saying so.
TEST_F(AlignCli, GpuShortOfMemoryWritesTheSameOutputInSmallerBatches) {
  if (!gpu_available()) GTEST_SKIP() << "no usable CUDA device";
  std::string many;  // one batch of some 25,000 reads, which needs far more than one read
  for (int copy = 0; copy < 100; ++copy) {
    std::vector<Read> renamed = reads_;
    for (Read& r : renamed) r.name += "_" + std::to_string(copy);
    many += fastq_text(renamed);
  }
  fmtest::write_file(input_.file("many.fq"), many);
  const std::vector<std::string> args = {"align", "-x", prefix(), "-k", std::to_string(kCliMismatches), "--device",
                                         "gpu", "-v", input_.file("many.fq")};
  std::vector<std::string> one_read_args = args;  // each read alone (the copies' originals)
  one_read_args.back() = reads_path();
  one_read_args.insert(one_read_args.end() - 1, {"--batch", "1"});
  const WtmapRun whole = run_wtmap(args), one_read = run_wtmap(one_read_args);
  ASSERT_EQ(whole.exit_code, 0) << describe(whole);
  ASSERT_EQ(one_read.exit_code, 0) << describe(one_read);
  ASSERT_EQ(record_lines(whole.out).size(), 100 * reads_.size());
  const std::optional<GpuMemoryUse> batch_use = gpu_memory_use(whole.err), read_use = gpu_memory_use(one_read.err);
  ASSERT_TRUE(batch_use && read_use) << whole.err;
  std::smatch k;
  ASSERT_TRUE(std::regex_search(whole.err, k, std::regex(R"(k-mer table of k = (\d+))"))) << whole.err;
  const std::uint64_t table_bytes = std::uint64_t{16} << (2 * std::stoul(k[1]));
  const std::uint64_t floor =
      std::max({read_use->peak, batch_use->before_batches + table_bytes, batch_use->loading_peak});
  ASSERT_LT(floor, batch_use->peak) << "one batch of the input needs too little for the test";
  const std::uint64_t limit = floor + (batch_use->peak - floor) / 2;
  WtmapRun limited;
  {
    const ScopedGpuMemoryLimit scoped(limit);
    limited = run_wtmap(args);
  }
  ASSERT_EQ(limited.exit_code, 0) << describe(limited);
  EXPECT_EQ(limited.out, whole.out);
  EXPECT_EQ(shortage_lines(limited.err), 1u) << limited.err;
  EXPECT_NE(limited.err.find("k-mer table of k = " + std::string(k[1])), std::string::npos) << limited.err;
  const std::optional<GpuMemoryUse> limited_use = gpu_memory_use(limited.err);
  ASSERT_TRUE(limited_use) << limited.err;
  EXPECT_LE(limited_use->peak, limit);
  EXPECT_EQ(shortage_lines(whole.err), 0u) << whole.err;
}

// A WTMAP_GPU_MEM_LIMIT that is no byte count stops a GPU run at its first device allocation,
// naming the variable and its value; no output is left behind.
TEST_F(AlignCli, GpuMemoryLimitThatIsNoByteCountIsRefused) {
  if (!gpu_available()) GTEST_SKIP() << "no usable CUDA device";
  const std::string out = output_.file("out.sam");
  WtmapRun r;
  {
    const ScopedGpuMemoryLimit scoped("12 MB");
    r = align({"--device", "gpu", "-o", out}, reads_path());
  }
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find("WTMAP_GPU_MEM_LIMIT='12 MB' is not a byte count"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// A bad record after many good ones stops the run while batches are in every stage, on either
// backend: the record's number and reason, and no output left behind.
TEST_F(AlignCli, BadRecordDeepInTheInputStopsEveryStage) {
  fmtest::write_file(input_.file("late.fq"), fastq_text(reads_) + "@broken\nACGTACGTACGT\n+\nIIII\n");
  std::vector<const char*> devices = {"cpu"};
  if (gpu_available()) devices.push_back("gpu");
  for (const char* device : devices) {
    const WtmapRun r = align({"--device", device, "--batch", "7", "-o", output_.file("out.bam")}, input_.file("late.fq"));
    EXPECT_NE(r.exit_code, 0) << device << ": " << describe(r);
    EXPECT_NE(r.exit_code, -1) << device << ": killed by a signal";
    EXPECT_NE(r.err.find("record " + std::to_string(reads_.size() + 1) + ": sequence and quality differ in length"),
              std::string::npos)
        << device << ": " << r.err;
    EXPECT_EQ(output_.entries(), std::vector<std::string>{}) << device << ": an output or temporary file was left behind";
  }
}

// ---- bad input and options --------------------------------------------------------------------------

struct BadRun {
  const char* name;
  std::string input;               // bytes of the reads file (empty: the planted reads)
  bool gzip_suffix = false;        // name it reads.fq.gz
  std::vector<std::string> options;
  std::string message;             // expected in stderr
};

void PrintTo(const BadRun& b, std::ostream* os) { *os << b.name; }

// 200 good records first, aligned in batches of one, so output was being written when the run fails.
std::string good_records() {
  std::vector<Read> reads;
  std::mt19937 rng(3);
  for (int i = 0; i < 200; ++i) {
    const std::string s = random_bases(rng, 40);
    reads.push_back({"g" + std::to_string(i + 1), s, std::string(40, 'I')});
  }
  return fastq_text(reads);
}

std::string corrupt_gzip() {
  std::string bytes = {'\x1f', '\x8b', '\x08', '\x00', '\x00', '\x00', '\x00', '\x00', '\x00', '\x03'};
  std::mt19937 rng(9);
  for (int i = 0; i < 4000; ++i) bytes += static_cast<char>(rng() & 0xff);
  return bytes;
}

class AlignBadRun : public AlignCli, public ::testing::WithParamInterface<BadRun> {};

INSTANTIATE_TEST_SUITE_P(
    Cli, AlignBadRun,
    ::testing::Values(
        BadRun{"TruncatedRecord", good_records() + "@bad\nACGTACGTACGT\n", false, {}, "record 201: truncated record"},
        BadRun{"QualityLength", good_records() + "@bad\nACGTACGTACGT\n+\nIIII\n", false, {},
               "record 201: sequence and quality differ in length"},
        BadRun{"MissingPlus", good_records() + "@bad\nACGTACGTACGT\nIIIIIIIIIIII\n", false, {},
               "record 201: missing the '+' separator line"},
        BadRun{"BinaryLine", good_records() + std::string("\x7f" "ELF\x02\x01\x01\x00\xff\xfe\n", 11), false, {},
               "record 201: expected a '>' or '@' header line"},
        BadRun{"BinaryInSequence", good_records() + std::string("@bad\nACGT\x01GTACGT\n+\nIIIIIIIIIII\n"), false, {},
               "record 201: byte 1 at sequence position 5 is not a base letter"},
        BadRun{"CorruptGzip", corrupt_gzip(), true, {}, "bad.fq.gz"},
        BadRun{"MissingIndex", "", false, {"-x", "/nonexistent/wtmap-test/none"}, "/nonexistent/wtmap-test/none.wtmap"},
        BadRun{"MismatchesAboveFour", "", false, {"-k", "5"}, "-k needs an integer in 0..4"},
        BadRun{"ReadGroupWithoutAt", "", false, {"-R", "ID:g1\\tSM:s1"}, "-R must look like"},
        BadRun{"ReadGroupWithoutId", "", false, {"-R", "@RG\\tSM:s1"}, "-R must look like"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_P(AlignBadRun, FailsWithMessageAndLeavesNoOutput) {
  const BadRun& bad = GetParam();
  std::string reads = reads_path();
  if (!bad.input.empty()) {
    reads = input_.file(bad.gzip_suffix ? "bad.fq.gz" : "bad.fq");
    fmtest::write_file(reads, bad.input);
  }
  std::vector<std::string> options = {"--device", "cpu", "--batch", "1", "-o", output_.file("out.sam")};
  options.insert(options.end(), bad.options.begin(), bad.options.end());  // a later -x wins
  const WtmapRun r = align(options, reads);
  EXPECT_NE(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.exit_code, -1) << "killed by a signal";
  EXPECT_NE(r.err.find(bad.message), std::string::npos) << "expected '" << bad.message << "' in:\n" << r.err;
  if (!bad.input.empty()) {
    EXPECT_NE(r.err.find(reads), std::string::npos) << "the message names the file:\n" << r.err;
  }
  EXPECT_EQ(output_.entries(), std::vector<std::string>{}) << "an output or temporary file was left behind";
}

// A corrupt gzip stream is reported as such (not as a parse error of inflated garbage).
TEST_F(AlignCli, CorruptGzipIsReportedAsGzipError) {
  fmtest::write_file(input_.file("bad.fq.gz"), corrupt_gzip());
  const WtmapRun r = align({"--device", "cpu", "-o", output_.file("out.bam")}, input_.file("bad.fq.gz"));
  EXPECT_NE(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.exit_code, -1) << "killed by a signal";
  EXPECT_NE(r.err.find("gzip"), std::string::npos) << r.err;
  EXPECT_EQ(output_.entries(), std::vector<std::string>{});
}

// Reads the search does not take are kept, unmapped, and counted; never a crash.
TEST_F(AlignCli, ShortLongAndAllNReadsAreUnmappedAndCounted) {
  const std::string original = normalized(contigs_[0].sequence);  // 1500 bases, no N
  const std::vector<Read> reads = {
      {"empty", "", ""},
      {"short9", original.substr(100, 9), std::string(9, 'I')},
      {"len10", original.substr(100, 10), std::string(10, 'I')},
      {"len512", original.substr(300, 512), std::string(512, 'I')},
      {"long513", original.substr(300, 513), std::string(513, 'I')},
      {"allN", std::string(100, 'N'), std::string(100, 'I')},
  };
  fmtest::write_file(input_.file("edge.fq"), fastq_text(reads));
  const WtmapRun r = align({"--device", "cpu", "-o", output_.file("edge.sam")}, input_.file("edge.fq"));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  SamContents sam;
  ASSERT_NO_THROW(sam = read_alignments(output_.file("edge.sam")));
  ASSERT_EQ(sam.records.size(), reads.size());
  const std::vector<int> flags = {4, 4, -1, 0, 4, 4};  // -1: mapped, either strand
  for (std::size_t i = 0; i < reads.size(); ++i) {
    EXPECT_EQ(sam.records[i].name, reads[i].name);
    if (flags[i] == -1) {
      EXPECT_NE(sam.records[i].flag, 4) << reads[i].name;
    } else {
      EXPECT_EQ(sam.records[i].flag, flags[i]) << reads[i].name;
    }
  }
  EXPECT_EQ(sam.records[3].pos, 300) << "len512";
  EXPECT_NE(r.err.find("6 reads; 2 mapped"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 shorter than 10"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 longer than 512"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace wtmap::altest
