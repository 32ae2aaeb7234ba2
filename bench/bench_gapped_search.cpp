// Search-only timing of the gapped mode (issue 25): loads an index and every read of a FASTQ/FASTA
// file into host memory, then times the mapping of the reads as `wtmap align`'s search stage runs
// it -- batches through GappedSearchEngine (search() encodes a batch and queues it for the mapping
// threads, each with a GappedMapper; finish() waits for the oldest), at most kMostMappers batches
// between search() and finish() as the pipeline holds them -- without parsing or SAM/BAM. This is
// the number bench/run-gapped.sh holds against `bwa mem`.
//
//   bench_gapped_search PREFIX READS.fq[.gz] [--device gpu|cpu] [--batch N] [--mappers M]
//                       [--repeat R] [--steps] [--json OUT]
//
// --batch: reads per batch (default wtmap align's in the gapped mode, kDefaultBatchReads).
// --mappers: mapping threads (default GappedSearchEngine's, as wtmap align starts it). The first
// batches (one per mapper) are mapped once untimed (allocations, first launches), then every
// batch R times over (default 3); the report is the median pass with the fastest and slowest,
// and the process's CPU seconds per pass (user + system, all threads; the mean of the passes).
// --steps: then one more pass with a single GappedMapper::map, timed, with its seconds by step
// (GappedMapper::stage_seconds): where a mapper's time goes. The mappers' options are the
// defaults of `wtmap align` (bwa mem's).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <sys/resource.h>

#include "wtmap/aligner/align_pipeline.hpp"
#include "wtmap/aligner/align_stages.hpp"
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
  std::size_t batch = aligner::GappedSearchEngine::kDefaultBatchReads;
  unsigned mappers = aligner::GappedSearchEngine::kMostMappers;
  int repeat = 3;
  bool steps = false;
};

Arguments parse(int argc, char** argv) {
  Arguments a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    const bool has_value = i + 1 < argc;
    if (s == "--device" && has_value) a.device = argv[++i];
    else if (s == "--batch" && has_value) a.batch = std::strtoull(argv[++i], nullptr, 10);
    else if (s == "--mappers" && has_value) a.mappers = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    else if (s == "--repeat" && has_value) a.repeat = std::atoi(argv[++i]);
    else if (s == "--steps") a.steps = true;
    else if (s == "--json" && has_value) a.json_path = argv[++i];
    else if (a.prefix.empty()) a.prefix = s;
    else if (a.reads_path.empty()) a.reads_path = s;
    else die("unexpected argument " + s);
  }
  if (a.prefix.empty() || a.reads_path.empty() || a.batch == 0 || a.repeat < 1 || (a.device != "gpu" && a.device != "cpu"))
    die("usage: bench_gapped_search PREFIX READS.fq[.gz] [--device gpu|cpu] [--batch N>0] [--mappers M] [--repeat R>0] "
        "[--steps] [--json OUT]");
  return a;
}

// Every read of the file, in batches of `batch` reads.
std::vector<aligner::ReadBatch> read_batches(const std::string& path, std::size_t batch) {
  auto reader = aligner::SeqReader::open(path);
  if (!reader.ok()) die(reader.status().message());
  std::vector<aligner::ReadBatch> batches;
  for (;;) {
    if (batches.empty() || batches.back().size() == batch) batches.emplace_back();
    auto got = reader->next(batches.back().next_record());
    if (!got.ok()) die(got.status().message());
    if (!*got) break;
    batches.back().keep_record();
  }
  for (auto& b : batches) b.end_filling();
  if (batches.back().size() == 0) batches.pop_back();
  return batches;
}

// Batches [begin, end) through the engine as the pipeline passes them (at most `in_flight` between
// search() and finish()); returns the mapped reads.
std::size_t engine_pass(aligner::GappedSearchEngine& engine, std::vector<aligner::ReadBatch>& batches, std::size_t begin,
                        std::size_t end, std::size_t in_flight) {
  std::size_t mapped = 0, finished = begin;
  auto finish_oldest = [&] {
    aligner::ReadBatch& b = batches[finished++];
    if (auto s = engine.finish(b); !s.ok()) die(s.message());
    for (const auto& a : b.gapped_alignments) mapped += a.mapped;
  };
  for (std::size_t i = begin; i < end; ++i) {
    if (i - finished == in_flight) finish_oldest();
    if (auto s = engine.search(batches[i]); !s.ok()) die(s.message());
  }
  while (finished < end) finish_oldest();
  return mapped;
}

// --steps: one pass of a single GappedMapper over the batches; its wall seconds and seconds by step.
std::pair<double, std::vector<std::pair<const char*, double>>> one_mapper_pass(const fmindex::FmIndex& index,
                                                                              const std::vector<aligner::ReadBatch>& batches) {
  auto mapper = aligner::gapped::GappedMapper::create(index, {});
  if (!mapper.ok()) die(mapper.status().message());
  std::vector<aligner::gapped::GappedReadAlignment> out;
  if (auto s = mapper->map(batches.front().reads, out); !s.ok()) die(s.message());  // warm-up, untimed
  const aligner::gapped::GappedStageSeconds warm = mapper->stage_seconds();
  const auto t0 = Clock::now();
  for (const auto& b : batches)
    if (auto s = mapper->map(b.reads, out); !s.ok()) die(s.message());
  const double wall = since(t0);
  const aligner::gapped::GappedStageSeconds& all = mapper->stage_seconds();
  return {wall, {{"seed", all.seed - warm.seed}, {"locate", all.locate - warm.locate}, {"chain", all.chain - warm.chain},
                 {"extend", all.extend - warm.extend}, {"choose", all.choose - warm.choose}, {"cigar", all.cigar - warm.cigar}}};
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
  std::vector<aligner::ReadBatch> batches = read_batches(args.reads_path, args.batch);
  const double read_s = since(t0);
  if (batches.empty()) die(args.reads_path + ": no reads");
  std::size_t reads = 0;
  for (const auto& b : batches) reads += b.size();

  aligner::GappedSearchEngine engine;
  if (auto s = engine.start(*index, {}, args.mappers); !s.ok()) die(s.message());
  const std::size_t in_flight = aligner::GappedSearchEngine::kMostMappers;
  engine_pass(engine, batches, 0, std::min<std::size_t>(batches.size(), args.mappers), in_flight);  // warm-up

  std::vector<double> passes;
  std::size_t mapped = 0;
  const double cpu_before = cpu_seconds();
  for (int r = 0; r < args.repeat; ++r) {
    t0 = Clock::now();
    mapped = engine_pass(engine, batches, 0, batches.size(), in_flight);
    passes.push_back(since(t0));
  }
  const double cpu_per_pass = (cpu_seconds() - cpu_before) / args.repeat;
  engine.release();  // its device memory, before a --steps mapper takes its own
  std::vector<double> sorted = passes;
  std::sort(sorted.begin(), sorted.end());
  const double median_s = sorted[(sorted.size() - 1) / 2];
  const double n = static_cast<double>(reads);
  std::printf("bench_gapped_search: %s, %zu reads in %zu batches of <= %zu, %u mappers, %zu mapped; index load %.2f s, "
              "read %.2f s; search %.4f s (median of %d: %.4f-%.4f), %.4g reads/s, CPU %.4f s a pass\n",
              args.device.c_str(), reads, batches.size(), args.batch, args.mappers, mapped, load_s, read_s, median_s,
              args.repeat, sorted.front(), sorted.back(), n / median_s, cpu_per_pass);
  std::pair<double, std::vector<std::pair<const char*, double>>> one{0, {}};
  if (args.steps) {
    one = one_mapper_pass(*index, batches);
    std::printf("bench_gapped_search: one GappedMapper: %.4f s; seconds by step:", one.first);
    for (const auto& [name, seconds] : one.second) std::printf(" %s %.4f", name, seconds);
    std::printf("\n");
  }
  if (!args.json_path.empty()) {
    std::ofstream j(args.json_path);
    j << "{\"device\":\"" << args.device << "\",\"reads\":" << reads << ",\"batch\":" << args.batch
      << ",\"mappers\":" << args.mappers << ",\"mapped\":" << mapped << ",\"load_s\":" << load_s << ",\"read_s\":" << read_s
      << ",\"search_s\":" << median_s << ",\"reads_per_s\":" << n / median_s << ",\"cpu_s\":" << cpu_per_pass
      << ",\"search_runs_s\":[";
    for (std::size_t i = 0; i < passes.size(); ++i) j << (i ? "," : "") << passes[i];
    j << "]";
    if (args.steps) {
      j << ",\"one_mapper_s\":" << one.first << ",\"steps_s\":{";
      for (std::size_t i = 0; i < one.second.size(); ++i) j << (i ? "," : "") << '"' << one.second[i].first << "\":" << one.second[i].second;
      j << "}";
    }
    j << "}\n";
    if (!j) die(args.json_path + ": cannot write");
  }
  return 0;
}
