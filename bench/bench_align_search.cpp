// Search-only timing of the wtmap aligner: loads the index, reads every read into memory,
// then times BatchAligner::search and finish over the reads in batches, pipelined as `wtmap align`
// runs them (no parsing, no SAM/BAM output).
// This is the number to hold against `bwa aln` (which also only searches and writes .sai).
//
//   bench_align_search PREFIX READS.fq[.gz] [-k K] [--batch N] [--device gpu|cpu] [--slice NODES]
//                      [--kmer LEN] [--timeline] [--resident] [--json OUT.json]
//
// --slice: AlignOptions::thread_work_slice (default: default_thread_work_slice of the index).
// --kmer: the k-mer table length (default: as `wtmap align` loads it, search_kmer_length; 0: no
// table). --timeline: when each batch's search() and finish() began and ended, in ms from the
// start of the timed loop (on stderr), to see which stage holds the pipeline. --resident (GPU):
// also all reads as one batch, three times after a warm-up, timed on the device from the reads'
// arrival there to the results' in host memory (StageSeconds::device): the search of reads
// already on the GPU, locate included, as the aligner issue defines search only; the pipelined
// time also holds the host's gathering of the first batch's letters and the last batch's finish.
//
// Prints reads, mapped, search seconds (first batch run untimed once as warm-up), reads/s.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "wtmap/aligner/batch_aligner.hpp"
#include "wtmap/aligner/seq_reader.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/fmindex/fm_index.hpp"

using namespace wtmap;
using Clock = std::chrono::steady_clock;

static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

[[noreturn]] static void die(const std::string& msg) {
  std::fprintf(stderr, "bench_align_search: %s\n", msg.c_str());
  std::exit(1);
}

int main(int argc, char** argv) {
  std::string prefix, reads_path, device = "gpu", json_path;
  unsigned k = 4;
  std::size_t batch = 500000;
  std::uint32_t slice = 0;  // 0: AlignOptions' default
  long kmer = -1;               // -1: search_kmer_length
  bool timeline = false, resident = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-k" && i + 1 < argc) k = static_cast<unsigned>(std::atoi(argv[++i]));
    else if (a == "--batch" && i + 1 < argc) batch = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--device" && i + 1 < argc) device = argv[++i];
    else if (a == "--slice" && i + 1 < argc) slice = static_cast<std::uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    else if (a == "--json" && i + 1 < argc) json_path = argv[++i];
    else if (a == "--kmer" && i + 1 < argc) kmer = std::atol(argv[++i]);
    else if (a == "--timeline") timeline = true;
    else if (a == "--resident") resident = true;
    else if (prefix.empty()) prefix = a;
    else if (reads_path.empty()) reads_path = a;
    else die("unexpected argument " + a);
  }
  if (prefix.empty() || reads_path.empty() || batch == 0)
    die("usage: bench_align_search PREFIX READS.fq[.gz] [-k K] [--batch N] [--device gpu|cpu] [--slice NODES] [--kmer LEN] [--timeline] [--resident] [--json OUT]");
  Backend backend = device == "cpu" ? Backend::cpu : Backend::gpu;
  if (backend == Backend::gpu && !gpu_available()) die("--device gpu: no usable CUDA device");

  auto t0 = Clock::now();
  auto index = fmindex::FmIndex::load(prefix + ".wtmap", backend, 0);
  if (!index.ok()) die(index.status().message());
  const auto kmer_length = static_cast<std::uint32_t>(kmer >= 0 ? kmer : aligner::search_kmer_length(index->view().rows));
  if (auto s = index->set_kmer_length(kmer_length); !s.ok()) die(s.message());
  const double load_s = since(t0);

  t0 = Clock::now();
  auto reader = aligner::SeqReader::open(reads_path);
  if (!reader.ok()) die(reader.status().message());
  std::vector<std::vector<aligner::SeqRecord>> batches(1);
  std::size_t n = 0;
  while (true) {
    aligner::SeqRecord r;
    auto got = reader->next(r);
    if (!got.ok()) die(got.status().message());
    if (!*got) break;
    if (batches.back().size() == batch) batches.emplace_back();
    batches.back().push_back(std::move(r));
    ++n;
  }
  const double read_s = since(t0);

  aligner::AlignOptions options;
  options.search.max_mismatches = static_cast<std::uint8_t>(k);
  if (slice != 0) options.thread_work_slice = slice;
  aligner::BatchAligner al(*index, options);
  // As `wtmap align` runs them: batch i + 1 is searched (GPU) while batch i is finished (its
  // results collected and placed) on a second thread, with two sets of buffers.
  aligner::SearchedBatch searched[2];
  std::vector<aligner::ReadAlignment> alignments[2];
  // Warm-up, untimed: the first batch through both buffer sets (allocations, page faults, the
  // workspace, first kernel launches).
  for (int slot = 0; slot < 2; ++slot) {
    if (auto s = al.search(batches[0], searched[slot]); !s.ok()) die(s.message());
    if (auto s = al.finish(batches[0], searched[slot], alignments[slot]); !s.ok()) die(s.message());
  }
  std::size_t mapped = 0;
  const aligner::BatchAligner::StageSeconds warm = al.stage_seconds();
  std::future<std::size_t> finishing;  // mapped reads of the batch being finished
  // Per batch: search() began, ended; finish() began, ended (seconds from t0).
  std::vector<std::array<double, 4>> times(batches.size());
  t0 = Clock::now();
  for (std::size_t i = 0; i < batches.size(); ++i) {
    times[i][0] = since(t0);
    if (auto s = al.search(batches[i], searched[i % 2]); !s.ok()) die(s.message());
    times[i][1] = since(t0);
    if (finishing.valid()) mapped += finishing.get();
    finishing = std::async(std::launch::async, [&, &batch = batches[i], &work = searched[i % 2], &out = alignments[i % 2],
                                                &when = times[i]] {
      when[2] = since(t0);
      if (auto s = al.finish(batch, work, out); !s.ok()) die(s.message());
      when[3] = since(t0);
      std::size_t m = 0;
      for (const auto& a : out) m += a.mapped;
      return m;
    });
  }
  if (finishing.valid()) mapped += finishing.get();
  const double search_s = since(t0);
  if (timeline) {
    for (std::size_t i = 0; i < times.size(); ++i) {
      std::fprintf(stderr, "bench_align_search: batch %zu: search %.1f-%.1f ms, finish %.1f-%.1f ms\n", i,
                   1e3 * times[i][0], 1e3 * times[i][1], 1e3 * times[i][2], 1e3 * times[i][3]);
    }
  }
  const double rate = search_s > 0 ? n / search_s : 0.0;
  const aligner::BatchAligner::StageSeconds all = al.stage_seconds();  // (a copy: --resident adds to it)
  const double nodes = static_cast<double>(all.search_nodes - warm.search_nodes);
  const double search_stage_s = all.search - warm.search;
  std::printf("bench_align_search: stages (s): encode %.3f, search %.3f, choose hits %.3f, locate and place %.3f\n",
              all.encode - warm.encode, search_stage_s, all.choose - warm.choose, all.locate - warm.locate);
  // Each search node costs two rank_all calls: set against the quad-vector rank_all rate of
  // bench_dna_rank, this is how close the search runs to the memory system's limit.
  std::printf("bench_align_search: %.4g search nodes, %.1f per read, %.4g nodes/s in the search stage (%.4g rank_all/s)\n",
              nodes, n > 0 ? nodes / static_cast<double>(n) : 0.0, search_stage_s > 0 ? nodes / search_stage_s : 0.0,
              search_stage_s > 0 ? 2 * nodes / search_stage_s : 0.0);
  const double long_reads = static_cast<double>(all.long_reads - warm.long_reads);
  const double long_nodes = static_cast<double>(all.long_read_nodes - warm.long_read_nodes);
  std::printf("bench_align_search: %.0f reads (%.3g %%) need more than %u nodes of one thread; their group "
              "searches hold %.3g %% of all nodes\n",
              long_reads, n > 0 ? 100 * long_reads / static_cast<double>(n) : 0.0, al.options().thread_work_slice,
              nodes > 0 ? 100 * long_nodes / nodes : 0.0);
  std::printf("bench_align_search: at most %llu nodes a read; %llu reads stopped by the work cap (%u nodes)\n",
              static_cast<unsigned long long>(all.max_read_nodes),
              static_cast<unsigned long long>(all.capped_reads - warm.capped_reads), options.search.work_cap);
  std::printf("bench_align_search: %s, k=%u, k-mer table %u, %zu reads in %zu batches; index load %.2f s, read %.2f s; "
              "search %.3f s, %.4g reads/s, %zu mapped\n",
              device.c_str(), k, index->kmer_length(), n, batches.size(), load_s, read_s, search_s, rate, mapped);
  // Reads already on the GPU: one batch of all of them, batches one at a time (the median of
  // three runs after a warm-up).
  double resident_s = 0;
  std::vector<double> resident_runs;
  if (resident && backend == Backend::gpu) {
    std::vector<aligner::SeqRecord> every_read;
    every_read.reserve(n);
    for (const auto& b : batches) every_read.insert(every_read.end(), b.begin(), b.end());
    aligner::SearchedBatch one;
    std::vector<aligner::ReadAlignment> out;
    for (int run = 0; run < 4; ++run) {
      const double before = al.stage_seconds().device;
      if (auto s = al.search(every_read, one); !s.ok()) die(s.message());
      if (auto s = al.finish(every_read, one, out); !s.ok()) die(s.message());
      if (run > 0) resident_runs.push_back(al.stage_seconds().device - before);
    }
    std::sort(resident_runs.begin(), resident_runs.end());
    resident_s = resident_runs[resident_runs.size() / 2];
    std::printf("bench_align_search: resident: %zu reads in one batch, device %.4f s (runs %.4f-%.4f), %.4g reads/s\n",
                n, resident_s, resident_runs.front(), resident_runs.back(), resident_s > 0 ? n / resident_s : 0.0);
  }
  if (!json_path.empty()) {
    std::ofstream j(json_path);
    j << "{\"device\":\"" << device << "\",\"k\":" << k << ",\"reads\":" << n << ",\"search_s\":" << search_s
      << ",\"reads_per_s\":" << rate << ",\"mapped\":" << mapped << ",\"load_s\":" << load_s
      << ",\"search_nodes\":" << nodes << ",\"search_stage_s\":" << search_stage_s
      << ",\"encode_s\":" << all.encode - warm.encode << ",\"long_reads\":" << long_reads
      << ",\"long_read_nodes\":" << long_nodes << ",\"choose_s\":" << all.choose - warm.choose
      << ",\"locate_s\":" << all.locate - warm.locate << ",\"max_read_nodes\":" << all.max_read_nodes
      << ",\"capped_reads\":" << all.capped_reads - warm.capped_reads << ",\"device_s\":" << all.device - warm.device
      << ",\"thread_work_slice\":" << al.options().thread_work_slice << ",\"kmer_length\":" << index->kmer_length();
    if (resident_s > 0) j << ",\"resident_s\":" << resident_s;
    j << "}\n";
  }
  return 0;
}
