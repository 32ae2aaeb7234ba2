// `--gpus all|N|i,j,...` of `wtmap align`, `count` and `index` (issue 28), run as a user runs it:
// every malformed or impossible value is one line on stderr, exit status 1, nothing on stdout and
// no output file, on any machine (messages asserted exactly, the visible GPUs counted here); on a
// GPU host, every choice of GPUs writes the bytes of one GPU and of the CPU backend (gapped and
// k-mismatch, single and paired reads, batches small enough that every GPU takes many), and
// `count` on all GPUs gives a naive scan's lines. The GPU tests skip themselves with fewer GPUs
// than they need; the CPU backend run as three lanes (WTMAP_CPU_LANES) checks the lanes' wiring
// on any machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "fm_support.hpp"
#include "gpu_memory_limit.hpp"
#include "wtmap/core/gpu_selection.hpp"

namespace wtmap::fmtest {
namespace {

const char* const kCommands[] = {"index", "count", "align"};
const std::string kForms = "; use all, a count N (the first N GPUs) or a list of distinct device ordinals i,j,...";

// A reference of three contigs and its index (built on the CPU); reads and pairs cut from it with
// substitutions and a few indels, and random reads that map nowhere.
class GpusCli : public ::testing::Test {
 protected:
  void SetUp() override {
    RandomReferenceSpec spec;
    spec.seed = 28;
    spec.contigs = 3;
    spec.min_length = 20000;
    spec.max_length = 40000;
    spec.n_run_rate = 0.0002;
    contigs_ = random_reference(spec);
    fasta_ = dir_.file("ref.fa");
    write_file(fasta_, fasta_text(contigs_, 60));
    const RunResult r = run_wtmap(out_, "index -q --device cpu -p " + shell_quote(dir_.file("ref")) + " " + shell_quote(fasta_));
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    write_reads();
  }

  // `count` reads of 100 bases in reads.fq, 1 in 10 random; pairs (FR, inserts of 250-450) in
  // r1.fq and r2.fq.
  void write_reads() {
    std::mt19937 rng(2028);
    auto mutate = [&](std::string s) {
      for (char& c : s) {
        if (rng() % 50 == 0) c = "ACGT"[rng() % 4];
      }
      if (rng() % 8 == 0) s.erase(20 + rng() % 60, 1 + rng() % 3);  // a deletion from the read
      return s;
    };
    auto quality = [](std::size_t n) { return "\n+\n" + std::string(n, 'I') + "\n"; };
    std::string single, one, two;
    for (int i = 0; i < 1500; ++i) {
      const std::string s = normalized(contigs_[rng() % contigs_.size()].sequence);
      std::string read;
      if (i % 10 == 9) {
        for (int k = 0; k < 100; ++k) read += "ACGT"[rng() % 4];
      } else {
        read = mutate(s.substr(rng() % (s.size() - 100), 100));
        if (rng() % 2 == 0) read = revcomp(read);
      }
      single += "@s" + std::to_string(i) + "\n" + read + quality(read.size());
      const std::size_t insert = 250 + rng() % 200, at = rng() % (s.size() - insert);
      const std::string mate1 = mutate(s.substr(at, 100)), mate2 = mutate(revcomp(s.substr(at + insert - 100, 100)));
      one += "@p" + std::to_string(i) + "/1\n" + mate1 + quality(mate1.size());
      two += "@p" + std::to_string(i) + "/2\n" + mate2 + quality(mate2.size());
    }
    write_file(dir_.file("reads.fq"), single);
    write_file(dir_.file("r1.fq"), one);
    write_file(dir_.file("r2.fq"), two);
  }

  std::string index_prefix() const { return shell_quote(dir_.file("ref")); }
  std::string reads() const { return shell_quote(dir_.file("reads.fq")); }

  // The command line of `command` with `gpus_args` that must fail before any work: its output.
  RunResult refused(const std::string& command, const std::string& gpus_args) {
    std::string line = command + " " + gpus_args + " ";
    if (command == "index") line += "-p " + shell_quote(out_.file("made")) + " " + shell_quote(fasta_);
    if (command == "count") line += "-x " + index_prefix() + " " + reads();
    if (command == "align") line += "-x " + index_prefix() + " -o " + shell_quote(out_.file("made.sam")) + " " + reads();
    return run_wtmap(out_, line);
  }
  // One line on stderr, `expected`, exit status 1, nothing on stdout, no output file.
  void expect_refused(const std::string& command, const std::string& gpus_args, const std::string& expected) {
    SCOPED_TRACE(command + " " + gpus_args);
    const RunResult r = refused(command, gpus_args);
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_EQ(r.err, expected);
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(out_.file("made.wtmap")));
    EXPECT_FALSE(fs::exists(out_.file("made.sam")));
  }

  // `wtmap align` with `args` into a SAM file: its lines but @PG (whose CL: is the command line).
  std::vector<std::string> aligned(const std::string& args, std::string* err = nullptr) {
    const std::string sam = out_.file("aligned.sam");
    const RunResult r = run_wtmap(out_, "align -x " + index_prefix() + " -o " + shell_quote(sam) + " " + args);
    EXPECT_EQ(r.exit_code, 0) << args << ": " << describe(r);
    if (err != nullptr) *err = r.err;
    std::vector<std::string> lines;
    for (const std::string& line : split(read_file(sam), '\n')) {
      if (line.rfind("@PG\t", 0) != 0) lines.push_back(line);
    }
    return lines;
  }

  // Each read mode: gapped and k-mismatch, single reads and pairs, in batches of 64 reads.
  std::vector<std::string> modes() const {
    const std::string pairs = shell_quote(dir_.file("r1.fq")) + " " + shell_quote(dir_.file("r2.fq"));
    return {"--batch 64 " + reads(), "--batch 64 " + pairs, "--batch 64 -k 2 " + reads(), "--batch 64 -k 3 " + pairs};
  }

  TempDir dir_;  // the reference, its index, the reads
  TempDir out_;  // wtmap's standard output and error, and what it writes
  std::vector<TestContig> contigs_;
  std::string fasta_;
};

// ---- errors, on any machine ---------------------------------------------------------------------

TEST_F(GpusCli, MalformedValuesAreOneLineUsageErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"0", "a run needs at least one GPU (--device cpu runs on the CPU)"},
      {"x", "not a count"},
      {"ALL", "not a count"},
      {"-1", "not a count"},
      {"1.5", "not a count"},
      {"99999999999", "not a count"},
      {"0,", "'' is not a device ordinal"},
      {",1", "'' is not a device ordinal"},
      {"1,-2", "'-2' is not a device ordinal"},
      {"0,x", "'x' is not a device ordinal"}};
  for (const char* command : kCommands) {
    for (const auto& [value, why] : cases) {
      expect_refused(command, "--gpus " + value,
                     std::string("[wtmap ") + command + "] --gpus " + value + ": " + why + kForms + "; see 'wtmap " +
                         command + " --help'\n");
    }
  }
}

TEST_F(GpusCli, AGpuListedTwiceIsAUsageError) {
  for (const char* command : kCommands) {
    for (const auto& [value, twice] : std::vector<std::pair<std::string, std::string>>{{"0,0", "0"}, {"1,0,1", "1"}, {"3,2,1,2", "2"}}) {
      expect_refused(command, "--gpus " + value,
                     std::string("[wtmap ") + command + "] --gpus " + value + ": GPU " + twice + " is listed twice" + kForms +
                         "; see 'wtmap " + command + " --help'\n");
    }
  }
}

TEST_F(GpusCli, GpusWithDeviceCpuIsAnError) {
  for (const char* command : kCommands) {
    for (const char* order : {"--device cpu --gpus 1", "--gpus all --device cpu"}) {
      const std::string value = std::string(order).find("all") != std::string::npos ? "all" : "1";
      expect_refused(command, order,
                     std::string("[wtmap ") + command + "] error: --gpus " + value +
                         " selects GPUs, but --device cpu runs on the CPU\n");
    }
  }
}

// More GPUs than there are, or an ordinal past them: said against the visible count (none on a
// machine without a GPU, where --gpus never falls back to the CPU).
TEST_F(GpusCli, BeyondTheVisibleGpusIsAnError) {
  const int visible = visible_gpu_count();
  const std::string count = std::to_string(visible) + (visible == 1 ? " GPU is visible" : " GPUs are visible");
  for (const char* command : kCommands) {
    const std::string prefix = std::string("[wtmap ") + command + "] error: ";
    if (visible == 0) {
      expect_refused(command, "--gpus 64", prefix + "--gpus 64: no usable CUDA device\n");
      expect_refused(command, "--gpus 0,63", prefix + "--gpus 0,63: no usable CUDA device\n");
      expect_refused(command, "--gpus all", prefix + "--gpus all: no usable CUDA device\n");
      expect_refused(command, "--device gpu --gpus 1", prefix + "--device gpu: no usable CUDA device (driver or card missing)\n");
      continue;
    }
    expect_refused(command, "--gpus 64", prefix + "--gpus 64: only " + count + "\n");
    expect_refused(command, "--gpus " + std::to_string(visible + 1), prefix + "--gpus " + std::to_string(visible + 1) + ": only " + count + "\n");
    expect_refused(command, "--gpus 0," + std::to_string(visible),
                   prefix + "--gpus 0," + std::to_string(visible) + ": there is no GPU " + std::to_string(visible) + " (" +
                       count + ", ordinals 0.." + std::to_string(visible - 1) + ")\n");
  }
}

TEST_F(GpusCli, GpusWithoutAValueIsAnError) {
  for (const char* command : kCommands) {
    const std::string operands = std::string(command) == "index" ? shell_quote(fasta_) : "-x " + index_prefix() + " " + reads();
    const RunResult r = run_wtmap(out_, std::string(command) + " " + operands + " --gpus");
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_EQ(r.err, std::string("[wtmap ") + command + "] unknown or incomplete option '--gpus'; see 'wtmap " + command +
                         " --help'\n");
  }
}

TEST_F(GpusCli, HelpDescribesTheOption) {
  for (const char* command : kCommands) {
    const RunResult r = run_wtmap(out_, std::string(command) + " --help");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("\n  --gpus S "), std::string::npos) << command << ":\n" << r.out;
    EXPECT_NE(r.out.find("all, N (the first N GPUs) or i,j,... (those device ordinals"), std::string::npos) << command;
  }
  EXPECT_NE(run_wtmap(out_, "index --help").out.find("built on the first of them"), std::string::npos);
}

// ---- the lanes on the CPU ----------------------------------------------------------------------

// WTMAP_CPU_LANES (a test's setting) for the processes started while it lives.
class ScopedCpuLanes {
 public:
  explicit ScopedCpuLanes(int lanes) { setenv("WTMAP_CPU_LANES", std::to_string(lanes).c_str(), 1); }
  ~ScopedCpuLanes() { unsetenv("WTMAP_CPU_LANES"); }
  ScopedCpuLanes(const ScopedCpuLanes&) = delete;
  ScopedCpuLanes& operator=(const ScopedCpuLanes&) = delete;
};

// The CPU backend run as three lanes, each with its own index copy and engine, as --gpus runs
// three GPUs: the bytes of one lane in every mode (gapped pairs' rescue included), and count's
// lines likewise -- the lanes' wiring checked on any machine.
TEST_F(GpusCli, ThreeCpuLanesWriteTheBytesOfOne) {
  for (const std::string& mode : modes()) {
    SCOPED_TRACE(mode);
    const std::vector<std::string> one = aligned("--device cpu " + mode);
    ASSERT_GT(one.size(), 1500u);
    std::string err;
    {
      const ScopedCpuLanes lanes(3);
      EXPECT_EQ(aligned("--device cpu -v -t 4 " + mode, &err), one);
    }
    if (mode.find("-k") == std::string::npos) {  // the gapped engines' mapping threads: -t's 4 a lane
      EXPECT_NE(err.find("seconds summed over 12 mapping threads"), std::string::npos) << err;
    }
  }
  const std::string count = "count --locate --batch 7 --device cpu -x " + index_prefix() + " " + reads();
  const RunResult one = run_wtmap(out_, count);
  ASSERT_EQ(one.exit_code, 0) << describe(one);
  const ScopedCpuLanes lanes(3);
  const RunResult three = run_wtmap(out_, count);
  ASSERT_EQ(three.exit_code, 0) << describe(three);
  EXPECT_EQ(three.out, one.out);
}

// ---- on a GPU host ------------------------------------------------------------------------------

// Every choice of GPUs -- one, all, the list in reverse -- writes the bytes of one GPU, in every
// mode; the information line names the GPUs used.
TEST_F(GpusCli, AllGpusWriteTheBytesOfOne) {
  const int visible = visible_gpu_count();
  if (visible < 2) GTEST_SKIP() << "needs 2 GPUs or more, " << visible << " visible";
  std::string all_gpus, reversed;
  for (int g = 0; g < visible; ++g) all_gpus += (g > 0 ? "," : "") + std::to_string(g);
  for (int g = visible - 1; g >= 0; --g) reversed += std::to_string(g) + (g > 0 ? "," : "");
  for (const std::string& mode : modes()) {
    SCOPED_TRACE(mode);
    const std::vector<std::string> one = aligned("--gpus 1 " + mode);
    ASSERT_GT(one.size(), 1500u);
    std::string err;
    EXPECT_EQ(aligned("--gpus all " + mode, &err), one);
    EXPECT_NE(err.find("] on GPUs " + all_gpus + " (" + std::to_string(visible) + " of " + std::to_string(visible) +
                       " visible): one index copy each"),
              std::string::npos)
        << err;
    EXPECT_EQ(aligned(mode, &err), one);  // all by default
    EXPECT_EQ(aligned("--gpus " + reversed + " " + mode), one);
    EXPECT_EQ(aligned("--gpus 2 " + mode + " --batch 4"), one);  // the last --batch holds: 4 reads, or 2 pairs
  }
}

// One GPU writes the CPU backend's bytes, in every mode.
TEST_F(GpusCli, OneGpuWritesTheBytesOfTheCpu) {
  if (visible_gpu_count() < 1) GTEST_SKIP() << "no usable CUDA device";
  for (const std::string& mode : modes()) {
    SCOPED_TRACE(mode);
    const std::vector<std::string> cpu = aligned("--device cpu " + mode);
    ASSERT_GT(cpu.size(), 1500u);
    EXPECT_EQ(aligned("--gpus 1 " + mode), cpu);
    EXPECT_EQ(aligned("--device gpu --gpus 1 " + mode), cpu);
  }
}

// `wtmap index` on a GPU (auto: the blockwise sort with its rounds and sample ranks on the GPU) and
// on one GPU of a list writes the bytes of the CPU's divsufsort build; its lines say where the
// steps ran.
TEST_F(GpusCli, IndexOnAGpuWritesTheBytesOfTheCpusDivsufsort) {
  if (visible_gpu_count() < 1) GTEST_SKIP() << "no usable CUDA device";
  const std::string cpu = dir_.file("cpu"), gpu = dir_.file("gpu"), listed = dir_.file("listed");
  ASSERT_EQ(run_wtmap(out_, "index -q --device cpu --sa-builder divsufsort -p " + shell_quote(cpu) + " " + shell_quote(fasta_))
                .exit_code, 0);
  const RunResult on_gpu = run_wtmap(out_, "index --device gpu -t 1 -p " + shell_quote(gpu) + " " + shell_quote(fasta_));
  ASSERT_EQ(on_gpu.exit_code, 0) << describe(on_gpu);
  EXPECT_NE(on_gpu.err.find("ranking the difference-cover sample (period 1024) on the gpu"), std::string::npos) << on_gpu.err;
  EXPECT_NE(on_gpu.err.find("sorted on the gpu"), std::string::npos) << on_gpu.err;
  ASSERT_EQ(run_wtmap(out_, "index -q --gpus 1 -p " + shell_quote(listed) + " " + shell_quote(fasta_)).exit_code, 0);
  const std::string expected = read_file(cpu + ".wtmap");
  EXPECT_TRUE(read_file(gpu + ".wtmap") == expected);
  EXPECT_TRUE(read_file(listed + ".wtmap") == expected);
}

// A GPU that fails mid-run -- here each is made too short of memory for a single read by
// WTMAP_GPU_MEM_LIMIT, just above what the index and the engine hold (-v's line, the GPU holding
// the most) -- stops the run: exit status 1, the error naming the GPU it came from, and no output
// file or temporary left behind, SAM or sorted BAM. (The gapped mode: the k-mismatch mode's k-mer
// table would take a shorter k under such a limit and leave room for the batches.)
TEST_F(GpusCli, AFailingGpuStopsTheRunAndLeavesNoOutput) {
  const int visible = visible_gpu_count();
  if (visible < 2) GTEST_SKIP() << "needs 2 GPUs or more, " << visible << " visible";
  for (const std::string& mode : {"--batch 64 " + reads(), "--batch 7 " + reads()}) {
    SCOPED_TRACE(mode);
    std::string err;
    ASSERT_GT(aligned("-v " + mode, &err).size(), 1500u);
    const std::optional<altest::GpuMemoryUse> use = altest::gpu_memory_use(err);
    ASSERT_TRUE(use) << err;
    EXPECT_NE(err.find(", on the GPU holding the most"), std::string::npos) << err;
    TempDir out;
    for (const std::string& output : {out.file("out.sam"), out.file("out.bam --sort")}) {
      RunResult r;
      {
        const altest::ScopedGpuMemoryLimit limit(std::max(use->before_batches, use->loading_peak) + 4096);
        r = run_wtmap(out_, "align -x " + index_prefix() + " -o " + output + " " + mode);
      }
      EXPECT_EQ(r.exit_code, 1) << describe(r);
      std::smatch m;
      EXPECT_TRUE(std::regex_search(r.err, m, std::regex(R"(\[wtmap align\] error: GPU \d+: a single read does not fit)")))
          << r.err;
      EXPECT_EQ(out.entries(), std::vector<std::string>{}) << "an output or temporary file was left behind";
    }
  }
}

// `count --locate` on every GPU: the naive scan's lines, in input order, and the bytes of one GPU
// and of the CPU; small batches so that every GPU takes many.
TEST_F(GpusCli, CountOnEveryGpuGivesTheNaiveScansLinesInOrder) {
  std::mt19937 rng(9);
  std::vector<Pattern> patterns;
  for (int i = 0; i < 400; ++i) {
    const std::string s = normalized(contigs_[rng() % contigs_.size()].sequence);
    const std::size_t length = 12 + rng() % 20, pos = rng() % (s.size() - length);
    patterns.push_back({"c" + std::to_string(i), i % 3 == 0 ? revcomp(s.substr(pos, length)) : s.substr(pos, length)});
  }
  write_file(dir_.file("patterns.fq"), fastq_text(patterns));
  const std::string args = "count --locate --batch 7 -x " + index_prefix() + " " + shell_quote(dir_.file("patterns.fq"));
  const RunResult cpu = run_wtmap(out_, args + " --device cpu");
  ASSERT_EQ(cpu.exit_code, 0) << describe(cpu);
  expect_count_lines(cpu.out, contigs_, patterns, true, [&](const std::string& p) { return naive_hits(contigs_, p); });
  const int visible = visible_gpu_count();
  if (visible < 1) GTEST_SKIP() << "no usable CUDA device (the CPU's lines were checked)";
  for (const std::string& gpus : {std::string("1"), std::string("all")}) {
    const RunResult r = run_wtmap(out_, args + " --gpus " + gpus);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(r.out, cpu.out) << "--gpus " << gpus;
  }
  if (visible < 2) GTEST_SKIP() << "needs 2 GPUs for more than one searcher, " << visible << " visible";
}

}  // namespace
}  // namespace wtmap::fmtest
