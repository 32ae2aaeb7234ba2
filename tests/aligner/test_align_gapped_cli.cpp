// `wtmap align` in its default, gapped mode, run as a user runs it (issue 25).
//
// GappedCliOptions: the command line -- --help on both modes, bwa mem's options validated with
// clear errors, a mode's options refused in the other mode, -h with and without a number, and
// --mismatches as -k. These hold whatever the mapper does.
//
// GappedCliAlignment: planted reads against a pseudo-random reference, their SAM read back through
// htslib and checked against what was planted: an exact read maps with CIGAR 100M on either
// strand, a read with a 3-base deletion gets 3D with AS 91, a read with a garbage tail gets S, NM
// and MD recomputed from the reference. They need the real GappedMapper (branch gapped-mapper):
// written before it landed, they are meant to pass once it is merged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "../cli/cli_support.hpp"
#include "gapped_sam_support.hpp"
#include "gpu_memory_limit.hpp"
#include "sam_readback.hpp"
#include "wtmap/core/config.hpp"

namespace wtmap::altest {
namespace {

using fmtest::describe;
using fmtest::RunResult;
using fmtest::shell_quote;
using fmtest::TempDir;

const std::string kContig = pseudo_random_bases(20000, 3);

class GappedCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    fmtest::write_file(dir_->file("ref.fa"), fmtest::fasta_text(std::vector<fmtest::Pattern>{{"chr1", kContig}}, 70));
    const RunResult r = fmtest::run_wtmap(*dir_, "index " + shell_quote(dir_->file("ref.fa")) + " -p " +
                                                     shell_quote(dir_->file("idx")) + " --device cpu");
    ASSERT_EQ(r.exit_code, 0) << describe(r);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  // `wtmap align -x idx --device cpu <options> reads.fq` over `reads`.
  RunResult align(const std::vector<fmtest::Pattern>& reads, const std::string& options) const {
    fmtest::write_file(dir_->file("reads.fq"), fmtest::fastq_text(reads));
    return fmtest::run_wtmap(*dir_, "align -x " + shell_quote(dir_->file("idx")) + " --device cpu " + options + " " +
                                        shell_quote(dir_->file("reads.fq")));
  }
  RunResult align(const std::string& options) const { return align({{"r", kContig.substr(100, 100)}}, options); }

  static TempDir* dir_;
};
TempDir* GappedCli::dir_ = nullptr;

using GappedCliOptions = GappedCli;
using GappedCliAlignment = GappedCli;

TEST_F(GappedCliOptions, HelpTellsBothModes) {
  const RunResult r = fmtest::run_wtmap(*dir_, "align --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* words : {"gapped (default)", "bwa mem", "-k INT", "--mismatches", "--min-seed INT", "-A INT", "-B INT",
                            "-O INT[,INT]", "-E INT[,INT]", "-L INT[,INT]", "-w INT", "-d INT", "-T INT", "-c INT",
                            "-D FLOAT", "-h INT", "-Y", "existing command lines"}) {
    EXPECT_NE(r.out.find(words), std::string::npos) << words << " missing from:\n" << r.out;
  }
  // -h without a number is help, as for every command.
  const RunResult h = fmtest::run_wtmap(*dir_, "align -h");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_EQ(h.out, r.out);
}

TEST_F(GappedCliOptions, BadValuesAreRefusedByName) {
  const std::pair<const char*, const char*> cases[] = {
      {"-A 0", "-A needs"},          {"-A x", "-A needs"},           {"-B 1001", "-B needs"},
      {"-O 6,x", "-O needs"},        {"-O -1", "-O needs"},          {"-E 1,1,1", "-E needs"},
      {"-L ,5", "-L needs"},         {"-w 1001", "-w needs"},        {"-d 1000001", "-d needs"},
      {"-T -5", "-T needs"},         {"-c 0", "-c needs"},           {"-D 1.5", "-D needs"},
      {"-D nan", "-D needs"},        {"-h 1001", "-h needs"},        {"--min-seed 0", "--min-seed needs"},
      {"-k 5", "-k needs"},          {"--mismatches 9", "--mismatches needs"}};
  for (const auto& [option, message] : cases) {
    SCOPED_TRACE(option);
    const RunResult r = align(option);
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

TEST_F(GappedCliOptions, AModesOptionsAreRefusedInTheOther) {
  for (const char* options : {"-k 2 -A 2", "-B 3 -k 2", "--mismatches 1 --min-seed 15", "-k 3 -Y", "-k 1 -h 3"}) {
    SCOPED_TRACE(options);
    const RunResult r = align(options);
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_NE(r.err.find("is an option of the gapped mode"), std::string::npos) << r.err;
  }
  for (const char* options : {"-N 2", "--max-work 100", "-A 2 -N 1"}) {
    SCOPED_TRACE(options);
    const RunResult r = align(options);
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_NE(r.err.find("is an option of the k-mismatch mode"), std::string::npos) << r.err;
  }
}

TEST_F(GappedCliOptions, UnpairedPenaltyIsBounded) {
  // -U (bwa mem's unpaired penalty, pairs of either mode) takes 0..1000.
  for (const char* options : {"-U 1001", "-U x", "-U -1"}) {
    SCOPED_TRACE(options);
    const RunResult r = align(options);
    EXPECT_EQ(r.exit_code, 1) << describe(r);
    EXPECT_NE(r.err.find("-U needs an integer in 0..1000"), std::string::npos) << r.err;
  }
}

TEST_F(GappedCliOptions, MismatchesIsMinusK) {
  const std::vector<fmtest::Pattern> reads = {{"a", kContig.substr(10, 60)}, {"b", fmtest::revcomp(kContig.substr(500, 80))}};
  const RunResult k = align(reads, "-k 2");
  const RunResult m = align(reads, "--mismatches 2");
  ASSERT_EQ(k.exit_code, 0) << describe(k);
  ASSERT_EQ(m.exit_code, 0) << describe(m);
  // The same records; the headers differ in @PG CL only.
  auto records = [](const std::string& sam) { return sam.substr(sam.find("\na\t") + 1); };
  EXPECT_EQ(records(k.out), records(m.out));
  EXPECT_NE(k.out.find("\na\t0\tchr1\t11\t"), std::string::npos) << k.out;
}

TEST_F(GappedCliOptions, BwaMemOptionsAreAccepted) {
  const RunResult r = align("-A 2 -B 6 -O 5,7 -E 2,1 -L 3,4 -w 50 -d 80 -T 20 -c 100 -D 0.25 -h 3,  -Y --min-seed 15");
  EXPECT_EQ(r.exit_code, 1) << "-h takes one number";
  EXPECT_NE(r.err.find("-h needs"), std::string::npos) << r.err;
  const RunResult ok = align("-A 2 -B 6 -O 5,7 -E 2,1 -L 3,4 -w 50 -d 80 -T 20 -c 100 -D 0.25 -h 3 -Y --min-seed 15");
  EXPECT_EQ(ok.exit_code, 0) << describe(ok);
  EXPECT_NE(ok.err.find("-A 2 -B 6 -O 5,7 -E 2,1 -L 3,4 -w 50 -d 80 -T 20 --min-seed 15"), std::string::npos) << ok.err;
}

// ---- planted reads (need the real GappedMapper) ------------------------------------------------

struct Planted {
  std::string name, read;
};

TEST_F(GappedCliAlignment, PlantedReadsGetTheirCigars) {
  std::string garbage_tail;  // every base differs from the reference's there: no extension through it
  for (const char c : kContig.substr(3080, 20)) garbage_tail += c == 'A' ? 'C' : 'A';
  const std::vector<fmtest::Pattern> reads = {
      {"exact_forward", kContig.substr(1000, 100)},
      {"exact_reverse", fmtest::revcomp(kContig.substr(5000, 100))},
      {"deletion", kContig.substr(2000, 50) + kContig.substr(2053, 50)},
      {"garbage_tail", kContig.substr(3000, 80) + garbage_tail},
      {"random", pseudo_random_bases(100, 99)}};
  const RunResult r = align(reads, "-o " + shell_quote(dir_->file("out.sam")));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const SamContents back = read_alignments(dir_->file("out.sam"));
  ASSERT_EQ(back.records.size(), reads.size());
  for (const SamRecord& rec : back.records) {
    if (rec.flag & 4) continue;
    SCOPED_TRACE(rec.name);
    const MdTags md = recompute_md(kContig, rec.pos, rec.cigar, rec.seq);
    EXPECT_EQ(rec.nm, md.nm);
    EXPECT_EQ(rec.md, md.md);
  }
  const SamRecord& forward = back.records[0];
  EXPECT_EQ(forward.flag, 0);
  EXPECT_EQ(forward.pos, 1000);
  EXPECT_EQ(forward.cigar, "100M");
  EXPECT_EQ(forward.as, 100);
  EXPECT_EQ(forward.mapq, 60);
  const SamRecord& reverse = back.records[1];
  EXPECT_EQ(reverse.flag, 16);
  EXPECT_EQ(reverse.pos, 5000);
  EXPECT_EQ(reverse.cigar, "100M");
  EXPECT_EQ(reverse.seq, kContig.substr(5000, 100));
  const SamRecord& deletion = back.records[2];
  EXPECT_EQ(deletion.pos, 2000);
  // Where the 3 deleted bases repeat next to the gap, the gap may sit a few bases either way.
  EXPECT_TRUE(std::regex_match(deletion.cigar, std::regex("[0-9]+M3D[0-9]+M"))) << deletion.cigar;
  EXPECT_EQ(deletion.as, 100 - (6 + 3 * 1));
  EXPECT_EQ(deletion.nm, 3);
  const SamRecord& clipped = back.records[3];
  EXPECT_EQ(clipped.pos, 3000);
  EXPECT_EQ(clipped.cigar, "80M20S");
  EXPECT_EQ(clipped.as, 80);
  EXPECT_EQ(back.records[4].flag, 4) << "a random read maps nowhere";
  EXPECT_NE(r.err.find("4 mapped (80.00%)"), std::string::npos) << r.err;
}

// A chimeric read: 60 bases of one place, then 60 of another 3 kbp on, reverse complemented.
// bwa mem writes the primary (either part: they score the same) and a supplementary line,
// hard-clipped, with SA on both. The places are chosen so that neither part's alignment can
// extend into the other: the two bases past each part's end differ from the reference's there.
TEST_F(GappedCliAlignment, ChimericReadGetsASupplementaryLine) {
  std::size_t first = 6000, second = 9000;
  auto parts_end_sharply = [&] {
    const std::string one = kContig.substr(first, 60), two = fmtest::revcomp(kContig.substr(second, 60));
    const std::string two_forward = kContig.substr(second, 60), one_reverse = fmtest::revcomp(one);
    return two[0] != kContig[first + 60] && two[1] != kContig[first + 61] && one_reverse[0] != kContig[second + 60] &&
           one_reverse[1] != kContig[second + 61];
  };
  while (!parts_end_sharply()) ++first, ++second;
  const std::string read = kContig.substr(first, 60) + fmtest::revcomp(kContig.substr(second, 60));
  const RunResult r = align({{"chimeric", read}}, "-o " + shell_quote(dir_->file("chimeric.sam")));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const SamContents back = read_alignments(dir_->file("chimeric.sam"));
  ASSERT_EQ(back.records.size(), 2u);
  const SamRecord& primary = back.records[0];
  const SamRecord& supplementary = back.records[1];
  EXPECT_EQ(primary.flag & 0x800, 0);
  EXPECT_EQ(supplementary.flag & 0x800, 0x800);
  // The forward part: 60M60S; the reverse part: on the forward strand the read's second half
  // comes first, so 60M60S too.
  const bool forward_first = primary.pos == static_cast<std::int64_t>(first);
  const SamRecord& forward = forward_first ? primary : supplementary;
  const SamRecord& reverse = forward_first ? supplementary : primary;
  EXPECT_EQ(forward.pos, static_cast<std::int64_t>(first));
  EXPECT_EQ(forward.flag & 16, 0);
  EXPECT_EQ(reverse.pos, static_cast<std::int64_t>(second));
  EXPECT_EQ(reverse.flag & 16, 16);
  EXPECT_EQ(primary.cigar, "60M60S");
  EXPECT_EQ(supplementary.cigar, "60M60H");
  EXPECT_EQ(primary.seq, forward_first ? read : fmtest::revcomp(read));
  EXPECT_EQ(supplementary.seq, forward_first ? kContig.substr(second, 60) : kContig.substr(first, 60));
  EXPECT_LE(supplementary.mapq, primary.mapq);
  const std::string sa_of_primary = "chr1," + std::to_string(supplementary.pos + 1) + (forward_first ? ",-," : ",+,") +
                                    "60M60S," + std::to_string(supplementary.mapq) + ",0;";
  EXPECT_EQ(primary.sa, sa_of_primary);
  const std::string sa_of_supplementary = "chr1," + std::to_string(primary.pos + 1) + (forward_first ? ",+," : ",-,") +
                                          "60M60S," + std::to_string(primary.mapq) + ",0;";
  EXPECT_EQ(supplementary.sa, sa_of_supplementary);
  EXPECT_NE(r.err.find("1 split reads"), std::string::npos) << r.err;
}

// 40 reads along the contig, some reverse complemented, some with a 2-base deletion.
std::vector<fmtest::Pattern> varied_reads() {
  std::vector<fmtest::Pattern> reads;
  for (int i = 0; i < 40; ++i) {
    std::string read = kContig.substr(300 * i + 7, 90 + i);
    if (i % 3 == 1) read = fmtest::revcomp(read);
    if (i % 4 == 2) read.erase(40, 2);
    reads.push_back({"r" + std::to_string(i), read});
  }
  return reads;
}

// The records of a run's SAM (the header's @PG line names the command line).
std::string records_of(const std::string& sam) { return sam.substr(sam.find("\nr0\t") + 1); }

TEST_F(GappedCliAlignment, CpuOutputDoesNotDependOnBatchOrThreads) {
  const std::vector<fmtest::Pattern> reads = varied_reads();
  const RunResult one = align(reads, "--batch 1 -t 1");
  const RunResult seven = align(reads, "--batch 7 -t 2");
  const RunResult whole = align(reads, "");
  ASSERT_EQ(one.exit_code, 0) << describe(one);
  EXPECT_EQ(records_of(one.out), records_of(seven.out));
  EXPECT_EQ(records_of(one.out), records_of(whole.out));
  const std::string records = records_of(one.out);
  EXPECT_EQ(std::count(records.begin(), records.end(), '\n'), 40) << "a record per read, none split";
}

// WTMAP_FIRST_BATCH: batches from 2 reads, a fifth larger each (rounded up) to --batch 9 -- 2, 3,
// 4, 5, 6, 8, then 9s, as -v -v lists them -- and the records of a run without the ramp.
TEST_F(GappedCliAlignment, FirstBatchesRampUpToTheBatchSizeWithTheSameRecords) {
  const std::vector<fmtest::Pattern> reads = varied_reads();  // 40
  ASSERT_EQ(setenv("WTMAP_FIRST_BATCH", "2", 1), 0);
  const RunResult ramped = align(reads, "--batch 9 -t 2 -v -v");
  unsetenv("WTMAP_FIRST_BATCH");
  const RunResult plain = align(reads, "--batch 9 -t 2");
  ASSERT_EQ(ramped.exit_code, 0) << describe(ramped);
  EXPECT_EQ(records_of(ramped.out), records_of(plain.out));
  std::vector<std::size_t> sizes;
  const std::regex batch_line("\\] batch [0-9]+ \\(([0-9]+) reads\\)");
  for (auto it = std::sregex_iterator(ramped.err.begin(), ramped.err.end(), batch_line); it != std::sregex_iterator(); ++it) {
    sizes.push_back(std::stoul((*it)[1].str()));
  }
  EXPECT_EQ(sizes, (std::vector<std::size_t>{2, 3, 4, 5, 6, 8, 9, 3})) << ramped.err;
}

// WTMAP_TRACE (cli/run_trace.hpp), read back by python3's json module: every batch's four stages
// in order (parsed, then searched, then finished, then written), the mapping threads named (two: -t 2 on the CPU)
// and their steps one at a time, each step once a batch, each device call inside its step, every step inside the mapping's span, and
// each step's spans summing to -v's seconds for it.
TEST_F(GappedCliAlignment, TraceHoldsTheStagesAndEveryMappingThreadsSteps) {
  const std::string trace = dir_->file("trace.json"), err = dir_->file("trace-stderr.txt");
  const std::string script = dir_->file("check_trace.py"), verdict = dir_->file("verdict.txt");
  fmtest::write_file(script, R"(import json, re, sys
events = json.load(open(sys.argv[1]))['traceEvents']
names = {e['tid']: e['args']['name'] for e in events if e['ph'] == 'M' and e['name'] == 'thread_name'}
tracks = {}
for e in events:
    if e['ph'] == 'X':
        tracks.setdefault(names[e['tid']], []).append((e['ts'], e['ts'] + e['dur'], e['name']))
bad = []
def check(ok, what):
    if not ok: bad.append(what)
stages = [tracks.get(s, []) for s in ('parse', 'search', 'finish', 'write')]
batches = int(sys.argv[3])
check([len(s) for s in stages[1:]] == [batches, batches, batches + 1], 'spans per stage %s' % [len(s) for s in stages])
check(stages[3] and stages[3][-1][2] == 'close', 'the write stage ends with the close')
for b in range(min(batches, *[len(s) for s in stages])):
    for before, after in zip(stages, stages[1:]):
        check(after[b][0] >= before[b][1] - 1e-3, 'batch %d: a stage began before the one before it ended' % (b + 1))
named = sorted(n for n in names.values() if 'mapping thread' in n)
check(named == ['CPU mapping thread %d' % k for k in range(1, 3)], 'mapping tracks %s' % named)
mapping = [n for n in named if n in tracks]  # a thread that took no batch has no span
check(len(mapping) > 0, 'no mapping thread took a batch')
begin, end = stages[1][0][0], stages[2][-1][1]
sums = {}
parents = {'extension: device call': 'extension', 'CIGARs: device call': 'CIGAR and tags'}
for n in mapping:
    spans = sorted(tracks[n])
    steps = [s for s in spans if ':' not in s[2]]
    for a, b in zip(steps, steps[1:]):
        check(b[0] >= a[1] - 1e-3, n + ': steps overlap')
    for s in spans:
        sums[s[2]] = sums.get(s[2], 0) + (s[1] - s[0]) / 1e6
        check(begin - 1e-3 <= s[0] and s[1] <= end + 1e-3, n + ': ' + s[2] + ' outside the mapping')
        if s[2] in parents:
            check(any(p[2] == parents[s[2]] and p[0] - 1e-3 <= s[0] and s[1] <= p[1] + 1e-3 for p in steps),
                  n + ': ' + s[2] + ' outside its step')
counts = {}
for n in mapping:
    for s in tracks[n]: counts[s[2]] = counts.get(s[2], 0) + 1
for step in ('seeds', 'locate', 'chains', 'extension', 'region choice', 'CIGAR and tags'):
    check(counts.get(step) == batches, '%s: %s spans for %d batches' % (step, counts.get(step), batches))
check(counts.get('extension: device call', 0) >= batches, 'extension device calls: %s' % counts.get('extension: device call'))
line = [l for l in open(sys.argv[2]) if 'gapped mapping, seconds summed' in l][0]
said = {k: float(v) for k, v in re.findall(r'(seeds|locate|chains|extension|region choice|CIGAR and tags) ([0-9.]+)', line)}
said['extension: device call'], said['CIGARs: device call'] = map(float, re.findall(r'device calls ([0-9.]+)', line))
for step, seconds in said.items():
    check(abs(sums.get(step, 0) - seconds) <= 0.006, '%s: spans sum to %.4f s, -v says %.2f' % (step, sums.get(step, 0), seconds))
print('\n'.join(bad) if bad else 'ok')
)");
  ASSERT_EQ(setenv("WTMAP_TRACE", trace.c_str(), 1), 0);
  const RunResult r = align(varied_reads(), "--batch 7 -t 2 -v -o " + shell_quote(dir_->file("traced.sam")));
  unsetenv("WTMAP_TRACE");
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  fmtest::write_file(err, r.err);
  const std::string check = "python3 " + shell_quote(script) + " " + shell_quote(trace) + " " + shell_quote(err) +
                            " 6 > " + shell_quote(verdict) + " 2>&1";
  EXPECT_EQ(std::system(check.c_str()), 0) << fmtest::read_file(verdict);
  EXPECT_EQ(fmtest::read_file(verdict), "ok\n") << r.err;
  // Without the variable, no trace and the same records.
  const RunResult plain = align(varied_reads(), "--batch 7 -t 2");
  EXPECT_EQ(records_of(plain.out), records_of(fmtest::read_file(dir_->file("traced.sam"))));
}

// `--device gpu` writes the CPU backend's bytes (the later --device wins over align()'s cpu).
TEST_F(GappedCliAlignment, GpuOutputMatchesCpu) {
  if (!gpu_available()) GTEST_SKIP() << "no usable CUDA device";
  const std::vector<fmtest::Pattern> reads = varied_reads();
  const RunResult cpu = align(reads, "--batch 7");
  const RunResult gpu = align(reads, "--batch 7 --device gpu");
  ASSERT_EQ(cpu.exit_code, 0) << describe(cpu);
  ASSERT_EQ(gpu.exit_code, 0) << describe(gpu);
  EXPECT_EQ(records_of(cpu.out), records_of(gpu.out));
}

// Reads from all over the contig, 100..150 bases, some reverse-complemented, some with a
// deletion or a substitution: `count` of them.
std::vector<fmtest::Pattern> many_reads(std::size_t count) {
  std::vector<fmtest::Pattern> reads;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t length = 100 + i % 51;
    std::string read = kContig.substr(i * 7919 % (kContig.size() - length), length);
    if (i % 4 == 2) read.erase(40, 2);
    if (i % 5 == 3) read[60] = read[60] == 'A' ? 'C' : 'A';
    if (i % 3 == 1) read = fmtest::revcomp(read);
    reads.push_back({"m" + std::to_string(i), read});
  }
  return reads;
}

// A GPU short of memory: WTMAP_GPU_MEM_LIMIT between what the input in one batch needs and what
// one read needs (each measured by a run with -v): the run maps in smaller batches and writes the
// unlimited run's output byte for byte, with one line saying so. With no room beyond what the
// index and the mapper hold before the first batch, not even one read fits: the run fails saying
// so, and leaves no output file.
TEST_F(GappedCliAlignment, GpuShortOfMemoryWritesTheSameOutputInSmallerBatches) {
  if (!gpu_available()) GTEST_SKIP() << "no usable CUDA device";
  const std::vector<fmtest::Pattern> reads = many_reads(4000);
  const RunResult whole = align(reads, "--device gpu -v");
  const RunResult one_read = align(reads, "--device gpu -v --batch 1");
  ASSERT_EQ(whole.exit_code, 0) << describe(whole);
  ASSERT_EQ(one_read.exit_code, 0) << describe(one_read);
  const std::optional<GpuMemoryUse> batch_use = gpu_memory_use(whole.err), read_use = gpu_memory_use(one_read.err);
  ASSERT_TRUE(batch_use && read_use) << whole.err;
  const std::uint64_t floor = std::max(read_use->peak, batch_use->loading_peak);
  ASSERT_LT(floor, batch_use->peak) << "one batch of the input needs too little for the test";
  const std::uint64_t limit = floor + (batch_use->peak - floor) / 2;
  RunResult limited;
  {
    const ScopedGpuMemoryLimit scoped(limit);
    limited = align(reads, "--device gpu -v");
  }
  ASSERT_EQ(limited.exit_code, 0) << describe(limited);
  EXPECT_EQ(limited.out, whole.out);
  EXPECT_GT(std::count(whole.out.begin(), whole.out.end(), '\n'), 4000);
  EXPECT_EQ(shortage_lines(limited.err), 1u) << limited.err;
  EXPECT_EQ(shortage_lines(whole.err), 0u) << whole.err;
  const std::optional<GpuMemoryUse> limited_use = gpu_memory_use(limited.err);
  ASSERT_TRUE(limited_use) << limited.err;
  EXPECT_LE(limited_use->peak, limit);
  // Room for the load and no more: a case only where loading needs less than a read beside what
  // the index and the mapper hold.
  const std::uint64_t load_only = std::max(batch_use->before_batches, batch_use->loading_peak);
  if (load_only >= read_use->peak) {
    std::fprintf(stderr, "note: loading needs as much as one read; no limit between them to try\n");
    return;
  }
  const std::string out = dir_->file("too_little.sam");
  RunResult too_little;
  {
    const ScopedGpuMemoryLimit scoped(load_only);
    too_little = align(reads, "--device gpu -o " + shell_quote(out));
  }
  EXPECT_EQ(too_little.exit_code, 1) << describe(too_little);
  EXPECT_NE(too_little.err.find("a single read does not fit in the GPU's memory"), std::string::npos) << too_little.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace wtmap::altest
