// Search-only timing of the gapped mode (issue 25): loads an index and every read of a FASTQ/FASTA
// file into host memory, then times GappedMapper::map over the reads in batches as `wtmap align`
// hands them to it (seeds, chains, extension, CIGAR/NM/MD and MAPQ; no parsing, no SAM/BAM). This is
// the number bench/run-gapped.sh holds against `bwa mem`.
//
//   bench_gapped_search PREFIX READS.fq[.gz] [--device gpu|cpu] [--batch N] [--repeat R] [--json OUT]
//
// --batch: reads per map() call (default 100,000, wtmap align's --batch). The first batch is
// mapped once untimed (allocations, first launches), then every batch R times over (default 3);
// the report is the median pass with the fastest and slowest, the process's CPU seconds per pass
// (user + system, all threads; the mean of the passes) and the seconds per step of map()
// (GappedMapper::stage_seconds, the mean of the passes). The mapper's options are the defaults of
// `wtmap align` (bwa mem's).
//
// Prints reads, mapped reads, index load and read seconds, the passes' seconds and reads/s, and
// the steps' seconds.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <sys/resource.h>

#include "wtmap/aligner/gapped/gapped_mapper.hpp"
#include "wtmap/aligner/seq_reader.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/fmindex/fm_index.hpp"

using namespace wtmap;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// User + system seconds of every thread of this process so far.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "bench_gapped_search: %s\n", msg.c_str());
  std::exit(1);
}

struct Arguments {
  std::string prefix, reads_path, device = "gpu", json_path;
  std::size_t batch = 100000;
  int repeat = 3;
};

Arguments parse(int argc, char** argv) {
  Arguments a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    const bool has_value = i + 1 < argc;
    if (s == "--device" && has_value) a.device = argv[++i];
    else if (s == "--batch" && has_value) a.batch = std::strtoull(argv[++i], nullptr, 10);
    else if (s == "--repeat" && has_value) a.repeat = std::atoi(argv[++i]);
    else if (s == "--json" && has_value) a.json_path = argv[++i];
    else if (a.prefix.empty()) a.prefix = s;
    else if (a.reads_path.empty()) a.reads_path = s;
    else die("unexpected argument " + s);
  }
  if (a.prefix.empty() || a.reads_path.empty() || a.batch == 0 || a.repeat < 1 || (a.device != "gpu" && a.device != "cpu"))
    die("usage: bench_gapped_search PREFIX READS.fq[.gz] [--device gpu|cpu] [--batch N>0] [--repeat R>0] [--json OUT]");
  return a;
}

std::vector<aligner::SeqRecord> read_all(const std::string& path) {
  auto reader = aligner::SeqReader::open(path);
  if (!reader.ok()) die(reader.status().message());
  std::vector<aligner::SeqRecord> reads;
  for (aligner::SeqRecord r;;) {
    auto got = reader->next(r);
    if (!got.ok()) die(got.status().message());
    if (!*got) return reads;
    reads.push_back(std::move(r));
  }
}

// One pass: every batch through map(); returns the mapped reads.
std::size_t map_pass(aligner::gapped::GappedMapper& mapper, const std::vector<std::vector<aligner::SeqRecord>>& batches,
                     std::vector<aligner::gapped::GappedReadAlignment>& out) {
  std::size_t mapped = 0;
  for (const auto& b : batches) {
    if (auto s = mapper.map(b, out); !s.ok()) die(s.message());
    for (const auto& a : out) mapped += a.mapped;
  }
  return mapped;
}

}  // namespace

int main(int argc, char** argv) {
  const Arguments args = parse(argc, argv);
  const Backend backend = args.device == "cpu" ? Backend::cpu : Backend::gpu;
  if (backend == Backend::gpu && !gpu_available()) die("--device gpu: no usable CUDA device");

  auto t0 = Clock::now();
  // No k-mer table: the gapped mode's seeding does not use it (wtmap align loads none either).
  auto index = fmindex::FmIndex::load(args.prefix + ".wtmap", backend, 0);
  if (!index.ok()) die(index.status().message());
  const double load_s = since(t0);

  t0 = Clock::now();
  std::vector<aligner::SeqRecord> reads = read_all(args.reads_path);
  const double read_s = since(t0);
  if (reads.empty()) die(args.reads_path + ": no reads");
  std::vector<std::vector<aligner::SeqRecord>> batches;
  for (std::size_t i = 0; i < reads.size(); i += args.batch) {
    const auto end = reads.begin() + static_cast<std::ptrdiff_t>(std::min(reads.size(), i + args.batch));
    batches.emplace_back(reads.begin() + static_cast<std::ptrdiff_t>(i), end);
  }

  auto mapper = aligner::gapped::GappedMapper::create(*index, {});
  if (!mapper.ok()) die(mapper.status().message());
  std::vector<aligner::gapped::GappedReadAlignment> out;
  if (auto s = mapper->map(batches.front(), out); !s.ok()) die(s.message());  // warm-up, untimed

  std::vector<double> passes;
  std::size_t mapped = 0;
  const aligner::gapped::GappedStageSeconds warm = mapper->stage_seconds();
  const double cpu_before = cpu_seconds();
  for (int r = 0; r < args.repeat; ++r) {
    t0 = Clock::now();
    mapped = map_pass(*mapper, batches, out);
    passes.push_back(since(t0));
  }
  const double cpu_per_pass = (cpu_seconds() - cpu_before) / args.repeat;
  // Where a pass's time went (gapped_mapper.hpp's steps), without the warm-up's.
  const aligner::gapped::GappedStageSeconds& all = mapper->stage_seconds();
  const std::pair<const char*, double> steps[] = {
      {"seed", all.seed - warm.seed},       {"locate", all.locate - warm.locate}, {"chain", all.chain - warm.chain},
      {"extend", all.extend - warm.extend}, {"choose", all.choose - warm.choose}, {"cigar", all.cigar - warm.cigar}};
  std::vector<double> sorted = passes;
  std::sort(sorted.begin(), sorted.end());
  const double median_s = sorted[(sorted.size() - 1) / 2];
  const double n = static_cast<double>(reads.size());
  std::printf("bench_gapped_search: %s, %zu reads in %zu batches of <= %zu, %zu mapped; index load %.2f s, read %.2f s; "
              "map %.4f s (median of %d: %.4f-%.4f), %.4g reads/s, CPU %.4f s a pass\n",
              args.device.c_str(), reads.size(), batches.size(), args.batch, mapped, load_s, read_s, median_s,
              args.repeat, sorted.front(), sorted.back(), n / median_s, cpu_per_pass);
  std::printf("bench_gapped_search: seconds a pass by step:");
  for (const auto& [name, seconds] : steps) std::printf(" %s %.4f", name, seconds / args.repeat);
  std::printf("\n");
  if (!args.json_path.empty()) {
    std::ofstream j(args.json_path);
    j << "{\"device\":\"" << args.device << "\",\"reads\":" << reads.size() << ",\"batch\":" << args.batch
      << ",\"mapped\":" << mapped << ",\"load_s\":" << load_s << ",\"read_s\":" << read_s << ",\"search_s\":" << median_s
      << ",\"reads_per_s\":" << n / median_s << ",\"cpu_s\":" << cpu_per_pass << ",\"search_runs_s\":[";
    for (std::size_t i = 0; i < passes.size(); ++i) j << (i ? "," : "") << passes[i];
    j << "],\"steps_s\":{";
    for (std::size_t i = 0; i < std::size(steps); ++i)
      j << (i ? "," : "") << '"' << steps[i].first << "\":" << steps[i].second / args.repeat;
    j << "}}\n";
    if (!j) die(args.json_path + ": cannot write");
  }
  return 0;
}
