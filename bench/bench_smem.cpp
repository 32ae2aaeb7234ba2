// SMEM seeding throughput (fmindex/smem_seeder.hpp): bwa mem's seeding (SMEMs, re-seeding, the
// LAST-like pass; bwa_mem) or its first pass alone (first_pass), of 150 bp reads sampled from a
// generated genome: on the GPU with reads and seeds in host memory (gpu: SmemSeeder::find, copies
// included) or on the device (gpu_device: the kernel alone), and on the CPU backend (cpu).
//
// The genome: uniform random bases with 5 % of it copies of 300-base pieces at 2 % divergence (so
// that re-seeding has repeats to find). Reads: both strands, 0.5 % substitutions, 0.05 % short
// indels, 0.01 % N. Benchmarks smem/seed/<gpu_device|gpu|cpu>/<bwa_mem|first_pass>/150bp: items
// = reads, counters seeds_per_read and steps_per_read (extensions, one rank pair each). The GPU's
// seeds of the first 1000 reads must equal the CPU backend's (a mismatch fails the benchmark).
//
// Environment: WTMAP_BENCH_SMEM_GENOME (bases; 2^26, quick 2^20), WTMAP_BENCH_SMEM_READS (10^6,
// quick 10^4), WTMAP_BENCH_SMEM_CPU_READS (reads the CPU backend seeds; 10^5, quick 10^4),
// WTMAP_BENCH_SMEM_K (-k, 19).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "wtmap/fmindex/fm_index.hpp"
#include "wtmap/fmindex/smem_seeder.hpp"

namespace wtmap::bench {
namespace {

using fmindex::Seed;

constexpr std::uint32_t kReadLength = 150;
// Room for a read's seeds, and for the copies re-seeding finds before they are merged: at
// 2^26 bases most reads have one to three (a read that overflows is counted, seeds_overflowed).
constexpr std::uint32_t kSeedRoom = 48;

fmindex::Reference generated_genome(std::uint64_t m) {
  std::mt19937_64 rng(20260101);
  fmindex::Reference ref;
  ref.forward.resize(m);
  for (auto& c : ref.forward) c = static_cast<std::uint8_t>(rng() & 3);
  constexpr std::uint64_t kPiece = 300;
  for (std::uint64_t copied = 0; m > 4 * kPiece && copied < m / 20; copied += kPiece) {
    const std::uint64_t from = rng() % (m - kPiece), to = rng() % (m - kPiece);
    for (std::uint64_t i = 0; i < kPiece; ++i) {
      ref.forward[to + i] = rng() % 50 == 0 ? static_cast<std::uint8_t>(rng() & 3) : ref.forward[from + i];
    }
  }
  ref.contigs = {{"generated", m}};
  ref.fragments = {{0, m, 0, 0}};
  return ref;
}

struct Reads {
  std::vector<std::uint8_t> codes;
  std::vector<fmindex::SeedingRead> refs;
};

Reads sampled_reads(const fmindex::Reference& ref, std::uint64_t count) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  const std::uint64_t m = ref.forward.size();
  Reads r;
  r.codes.reserve(count * kReadLength);
  for (std::uint64_t k = 0; k < count; ++k) {
    std::vector<std::uint8_t> read;
    for (std::uint64_t p = rng() % (m - 2 * kReadLength); read.size() < kReadLength; ++p) {
      const double x = u(rng);
      std::uint8_t c = ref.forward[p];
      if (x < 0.005) c = static_cast<std::uint8_t>(rng() & 3);
      if (x >= 0.005 && x < 0.00525) continue;                                   // a deletion
      if (x >= 0.00525 && x < 0.0055) read.push_back(static_cast<std::uint8_t>(rng() & 3));  // an insertion
      read.push_back(x >= 0.0055 && x < 0.0056 ? 4 : c);
    }
    read.resize(kReadLength);
    if (rng() & 1) {
      std::reverse(read.begin(), read.end());
      for (auto& c : read) c = c < 4 ? static_cast<std::uint8_t>(3 - c) : c;
    }
    r.refs.push_back({r.codes.size(), k * kSeedRoom, kReadLength, kSeedRoom});
    r.codes.insert(r.codes.end(), read.begin(), read.end());
  }
  return r;
}

struct Data {
  fmindex::Reference reference;
  Reads reads;
  std::uint64_t cpu_reads = 0;
  std::unique_ptr<fmindex::FmIndex> index[2];  // by backend
  double build_s[2] = {0, 0};
};

Data& data() {
  static Data d = [] {
    Data x;
    x.reference = generated_genome(env_u64("WTMAP_BENCH_SMEM_GENOME", std::uint64_t{1} << 26, std::uint64_t{1} << 20));
    const std::uint64_t count = env_u64("WTMAP_BENCH_SMEM_READS", 1000000, 10000);
    x.reads = sampled_reads(x.reference, count);
    x.cpu_reads = std::min(count, env_u64("WTMAP_BENCH_SMEM_CPU_READS", 100000, 10000));
    return x;
  }();
  return d;
}

// The index on `backend`, built on first use.
const fmindex::FmIndex* index_on(Backend backend, Error& error) {
  Data& d = data();
  auto& slot = d.index[static_cast<int>(backend)];
  if (!slot) {
    fmindex::FmIndexOptions options;
    options.backend = backend;
    options.kmer_length = 0;  // seeding does not use the k-mer table
    auto built = Result<fmindex::FmIndex>(invalid_argument("not built"));
    d.build_s[static_cast<int>(backend)] = wall_seconds([&] { built = fmindex::FmIndex::build(d.reference, options); });
    if (!built.ok()) {
      error = built.status().message();
      return nullptr;
    }
    slot = std::make_unique<fmindex::FmIndex>(std::move(built.value()));
  }
  return slot.get();
}

struct Output {
  std::vector<Seed> seeds;
  std::vector<fmindex::SmemResult> results;
};

Error seed(fmindex::SmemSeeder& seeder, std::uint64_t count, const fmindex::SmemParams& params, Output& out) {
  const Reads& r = data().reads;
  out.seeds.resize(count * kSeedRoom);
  out.results.resize(count);
  return to_error(seeder.find(r.codes.data(), count * kReadLength, r.refs.data(), count, params, out.seeds.data(),
                              out.seeds.size(), out.results.data()));
}

// The GPU's seeds of the first reads against the CPU backend's.
Error check_against_cpu(const Output& gpu, const fmindex::SmemParams& params) {
  Error error;
  const fmindex::FmIndex* cpu = index_on(Backend::cpu, error);
  if (cpu == nullptr) return error;
  fmindex::SmemSeeder seeder(*cpu);
  Output want;
  const std::uint64_t count = std::min<std::uint64_t>(1000, gpu.results.size());
  BENCH_OK(seed(seeder, count, params, want));
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto& a = gpu.results[i];
    const auto& b = want.results[i];
    bool same = a.count == b.count && a.steps == b.steps && a.flags == b.flags;
    for (std::uint32_t s = 0; same && s < a.count; ++s) {
      const Seed& x = gpu.seeds[i * kSeedRoom + s];
      const Seed& y = want.seeds[i * kSeedRoom + s];
      same = x.begin == y.begin && x.end == y.end && x.bi.x0 == y.bi.x0 && x.bi.x1 == y.bi.x1 && x.bi.size == y.bi.size;
    }
    if (!same) return "read " + std::to_string(i) + ": the GPU's seeds differ from the CPU backend's";
  }
  return {};
}

// bwa mem's three passes (reseed), or the first alone.
fmindex::SmemParams params_for(bool reseed) {
  fmindex::SmemParams params;
  params.min_seed_len = static_cast<std::uint32_t>(env_u64("WTMAP_BENCH_SMEM_K", 19, 19));
  params.reseed = reseed;
  if (!reseed) params.max_mem_intv = 0;
  return params;
}

void set_counters(benchmark::State& state, Backend backend, const std::vector<fmindex::SmemResult>& results) {
  double seeds = 0, steps = 0, overflowed = 0;
  for (const auto& r : results) {
    seeds += r.count;
    steps += r.steps;
    overflowed += (r.flags & fmindex::kSeedsOverflow) != 0;
  }
  const auto count = static_cast<double>(results.size());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * results.size()));
  state.counters["reads"] = count;
  state.counters["seeds_per_read"] = seeds / count;
  state.counters["steps_per_read"] = steps / count;
  state.counters["seeds_overflowed"] = overflowed;
  state.counters["index_build_s"] = data().build_s[static_cast<int>(backend)];
}

// Reads and seeds in host memory (SmemSeeder::find: copies included).
void bm_seed(benchmark::State& state, Backend backend, bool reseed) {
  if (backend == Backend::gpu && !gpu_present()) {
    state.SkipWithError(kNoGpu);
    return;
  }
  Error error;
  const fmindex::FmIndex* index = index_on(backend, error);
  if (index == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  const fmindex::SmemParams params = params_for(reseed);
  const std::uint64_t count = backend == Backend::gpu ? data().reads.refs.size() : data().cpu_reads;
  fmindex::SmemSeeder seeder(*index);
  Output out;
  error = seed(seeder, count, params, out);  // untimed: device buffers, the workspace
  if (error.empty() && backend == Backend::gpu) error = check_against_cpu(out, params);
  for (auto _ : state) {
    if (!error.empty()) break;
    state.SetIterationTime(wall_seconds([&] { error = seed(seeder, count, params, out); }));
  }
  if (!error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  set_counters(state, backend, out.results);
}

// Reads, seeds and results already on the device (SmemSeeder::find_on_device): the seeding kernel.
Error seed_on_device(benchmark::State& state, bool reseed) {
  Error error;
  const fmindex::FmIndex* index = index_on(Backend::gpu, error);
  if (index == nullptr) return error;
  const Reads& r = data().reads;
  const std::uint64_t count = r.refs.size();
  const fmindex::SmemParams params = params_for(reseed);
  CudaArray<std::uint8_t> codes;
  CudaArray<fmindex::SeedingRead> reads;
  CudaArray<Seed> seeds;
  CudaArray<fmindex::SmemResult> results;
  BENCH_OK(codes.assign(CudaArray<std::uint8_t>::device, r.codes.data(), r.codes.size()));
  BENCH_OK(reads.assign(CudaArray<fmindex::SeedingRead>::device, r.refs.data(), count));
  BENCH_OK(seeds.allocate(CudaArray<Seed>::device, count * kSeedRoom));
  BENCH_OK(results.allocate(CudaArray<fmindex::SmemResult>::device, count));
  fmindex::SmemSeeder seeder(*index);
  auto run = [&] {
    return to_error(seeder.find_on_device(codes.data(), codes.size(), reads.data(), count, params, seeds.data(),
                                          seeds.size(), results.data()));
  };
  BENCH_OK(run());  // untimed
  Output out;
  out.results.resize(count);
  out.seeds.resize(std::min<std::uint64_t>(count, 1000) * kSeedRoom);
  BENCH_OK(cuda_to_host(out.results.data(), results.data(), count));
  BENCH_OK(cuda_to_host(out.seeds.data(), seeds.data(), out.seeds.size()));
  BENCH_OK(check_against_cpu(out, params));
  for (auto _ : state) {
    state.SetIterationTime(wall_seconds([&] { error = run(); }));
    BENCH_OK(error);
  }
  set_counters(state, Backend::gpu, out.results);
  return {};
}

void bm_seed_device(benchmark::State& state, bool reseed) {
  if (!gpu_present()) {
    state.SkipWithError(kNoGpu);
    return;
  }
  const Error error = seed_on_device(state, reseed);
  if (!error.empty()) state.SkipWithError(error.c_str());
}

void register_all() {
  benchmark::AddCustomContext("wtmap_smem_genome", std::to_string(data().reference.forward.size()));
  auto reg = [](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->UseManualTime()->Unit(benchmark::kMillisecond);
  };
  for (bool reseed : {true, false}) {
    const std::string what = std::string(reseed ? "/bwa_mem" : "/first_pass") + "/150bp";
    reg("smem/seed/gpu_device" + what, [reseed](benchmark::State& s) { bm_seed_device(s, reseed); });
    for (Backend backend : {Backend::gpu, Backend::cpu}) {
      reg(std::string("smem/seed/") + backend_name(backend) + what,
          [backend, reseed](benchmark::State& s) { bm_seed(s, backend, reseed); });
    }
  }
}

}  // namespace
}  // namespace wtmap::bench

int main(int argc, char** argv) {
  return wtmap::bench::benchmark_main(argc, argv, "the CPU backend", wtmap::bench::register_all);
}
