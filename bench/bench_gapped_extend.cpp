// Gapped alignment throughput (issue 25): GappedAligner's batches of seed extensions and of global
// alignments with CIGAR, on the GPU (one thread per alignment) and on the CPU backend, for 150 bp
// reads from a random reference with 2 mismatches, and in half of them an indel of 1-5 bases,
// seeded at bases [30, 60): each read gives a left extension (30 bases, reversed, 130 of
// reference) and a right one (90 bases, 190 of reference), then a global alignment of the whole
// read with its reference window in a band of 10; and a local alignment of the whole read in its
// whole window (350 bases, unbanded, with the tandem pass), as mate rescue searches a window -- a
// few hundred such a batch, where one thread per alignment leaves most of the GPU idle. Host
// memory in and out, copies included (each batch size has its own reads and reference windows,
// all of whose codes a call copies).
//
//   bench_gapped_extend [--benchmark_filter=...]     (Google Benchmark's flags)
//
// Reported: tasks/s (items_per_second). The GPU runs skip themselves without a usable device.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "wtmap/aligner/gapped/gapped_batch.hpp"
#include "wtmap/core/config.hpp"

namespace {

using namespace wtmap;
using namespace wtmap::aligner::gapped;

constexpr std::uint32_t kReadLength = 150, kSeedBegin = 30, kSeedEnd = 60, kPad = 100;

struct Workload {
  std::vector<std::uint8_t> reads, reference;
  std::vector<ExtendTask> extensions;
  std::vector<GlobalTask> globals;
  std::uint64_t cigar_size = 0;
  CodeArrays codes() const { return {reads.data(), reads.size(), reference.data(), reference.size()}; }
};

// `count` reads, each from its own reference window (read window + kPad on each side).
Workload make_workload(std::uint32_t count) {
  Workload w;
  std::mt19937_64 rng(2026);
  for (std::uint32_t r = 0; r < count; ++r) {
    const std::uint64_t window = w.reference.size();
    for (std::uint32_t i = 0; i < kReadLength + 2 * kPad; ++i)
      w.reference.push_back(static_cast<std::uint8_t>(rng() % 4));
    std::vector<std::uint8_t> read(w.reference.begin() + static_cast<std::ptrdiff_t>(window + kPad),
                                   w.reference.begin() + static_cast<std::ptrdiff_t>(window + kPad + kReadLength));
    for (int k = 0; k < 2; ++k) read[kSeedEnd + rng() % (kReadLength - kSeedEnd)] ^= 1;  // mismatches
    const std::uint32_t indel = r % 2 ? 1 + static_cast<std::uint32_t>(rng() % 5) : 0;
    const std::uint32_t at = kSeedEnd + 10 + static_cast<std::uint32_t>(rng() % 60);
    if (r % 4 == 1) {  // insertion
      for (std::uint32_t k = 0; k < indel; ++k) read.insert(read.begin() + at, static_cast<std::uint8_t>(rng() % 4));
    } else if (r % 4 == 3) {  // deletion
      read.erase(read.begin() + at, read.begin() + at + indel);
    }
    read.resize(kReadLength, 0);
    const std::uint64_t offset = w.reads.size(), seed_ref = window + kPad + kSeedBegin;
    w.reads.insert(w.reads.end(), read.begin(), read.end());
    // h0: the seed's score, kSeedEnd - kSeedBegin matches.
    const ExtendTask left{offset, seed_ref - (kSeedBegin + kPad), kSeedBegin, kSeedBegin + kPad, kSeedEnd - kSeedBegin,
                          1};
    const ExtendTask right{offset + kSeedEnd,      window + kPad + kSeedEnd,
                           kReadLength - kSeedEnd, kReadLength - kSeedEnd + kPad,
                           kSeedEnd - kSeedBegin,  0};
    w.extensions.push_back(left);
    w.extensions.push_back(right);
    GlobalTask g{offset, window + kPad, kReadLength, kReadLength, 10, w.cigar_size};
    w.globals.push_back(g);
    w.cigar_size += global_max_cigar_ops(kReadLength, kReadLength);
  }
  return w;
}

// The workload of `reads` reads, made once per size (every call copies all of its codes).
const Workload& workload(std::uint32_t reads) {
  static std::map<std::uint32_t, Workload> made;
  auto it = made.find(reads);
  if (it == made.end()) it = made.emplace(reads, make_workload(reads)).first;
  return it->second;
}

void skip_without(benchmark::State& state, Backend backend) {
  if (backend == Backend::gpu && !gpu_available()) state.SkipWithError("no usable CUDA device");
}

// Times call() (one batch of `count` tasks on the aligner, results into `out`) as the benchmark's
// iterations, tasks/s.
template <class Result, class Call>
void time_batches(benchmark::State& state, std::uint64_t count, std::vector<Result>& out, Call call) {
  for (auto _ : state) {
    const Status s = call();
    if (!s.ok()) state.SkipWithError(s.message().c_str());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * count));
}

void BM_Extend(benchmark::State& state, Backend backend) {
  skip_without(state, backend);
  const Workload& w = workload(static_cast<std::uint32_t>(state.range(0) / 2));  // two extensions a read
  const std::uint64_t count = w.extensions.size();
  GappedAligner aligner(backend);
  std::vector<ExtendResult> out(count);
  time_batches(state, count, out,
               [&] { return aligner.extend(Scoring{}, w.codes(), w.extensions.data(), out.data(), count); });
}

void BM_Global(benchmark::State& state, Backend backend) {
  skip_without(state, backend);
  const Workload& w = workload(static_cast<std::uint32_t>(state.range(0)));
  const std::uint64_t count = w.globals.size();
  GappedAligner aligner(backend);
  std::vector<GlobalResult> out(count);
  std::vector<std::uint32_t> cigar(w.cigar_size);
  time_batches(state, count, out, [&] {
    return aligner.align_global(Scoring{}, w.codes(), w.globals.data(), out.data(), count, cigar.data(), cigar.size());
  });
}

// Mate rescue's windows (GappedMapper's search_windows): the read against its whole window,
// unbanded, bwa's csub pass with its floor (19 * A) for every find of 30 or more.
void BM_Local(benchmark::State& state, Backend backend) {
  skip_without(state, backend);
  const Workload& w = workload(static_cast<std::uint32_t>(state.range(0)));
  const std::uint64_t count = w.globals.size();
  std::vector<LocalTask> tasks;
  for (const GlobalTask& g : w.globals)
    tasks.push_back({g.query_offset, g.target_offset - kPad, kReadLength, kReadLength + 2 * kPad, 19, 30});
  Scoring scoring;
  scoring.band = kReadLength + 2 * kPad;
  GappedAligner aligner(backend);
  std::vector<LocalResult> out(count);
  time_batches(state, count, out,
               [&] { return aligner.align_local(scoring, w.codes(), tasks.data(), out.data(), count); });
}

BENCHMARK_CAPTURE(BM_Extend, cpu, Backend::cpu)->Arg(1 << 14)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Extend, gpu, Backend::gpu)
    ->Arg(1 << 14)
    ->Arg(1 << 20)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Global, cpu, Backend::cpu)->Arg(1 << 13)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Global, gpu, Backend::gpu)
    ->Arg(1 << 13)
    ->Arg(1 << 19)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Local, cpu, Backend::cpu)->Arg(1 << 9)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Local, gpu, Backend::gpu)
    ->Arg(1 << 9)
    ->Arg(1 << 14)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
