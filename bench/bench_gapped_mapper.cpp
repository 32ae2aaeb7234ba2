// Gapped mapping throughput (aligner/gapped/gapped_mapper.hpp, issue 25): bwa mem's single-end
// algorithm -- seeds, locate, chains, extension, CIGAR/NM/MD -- on 150 bp reads with variation
// sampled from a generated genome, with a GPU index (gpu) and a CPU one (cpu), reads and results in
// host memory.
//
// The genome: uniform random bases in 8 contigs, a single N every 5,000 bases, 5 % of it copies of
// 300-base pieces at 2 % divergence. Reads: both strands, 0.5 % substitutions, 0.05 % indels of
// 1-10 bases, 0.01 % N. Benchmarks gapped/map/<gpu|cpu>/150bp: items = reads; counters mapped
// (share of reads mapped) and placed (share mapped within 20 bases of where they came from, on
// their strand). The GPU's alignments of every read must equal the CPU backend's (a difference
// fails the benchmark).
//
// Environment: WTMAP_BENCH_GAPPED_GENOME (bases; 2^26, quick 2^20), WTMAP_BENCH_GAPPED_READS (10^5,
// quick 10^3), WTMAP_BENCH_GAPPED_BATCH (reads a map() call; 10^5).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "wtmap/aligner/gapped/gapped_mapper.hpp"
#include "wtmap/fmindex/fm_index.hpp"

namespace wtmap::bench {
namespace {

using aligner::SeqRecord;
using aligner::gapped::GappedMapper;
using aligner::gapped::GappedReadAlignment;

constexpr std::uint32_t kReadLength = 150;
constexpr std::uint64_t kContigs = 8;
constexpr std::uint64_t kSingleNEvery = 5000;

// The genome's contigs as letters (N included), and the index's Reference of them.
struct Genome {
  std::vector<std::string> contigs;
  fmindex::Reference reference;
};

Genome generated_genome(std::uint64_t m) {
  std::mt19937_64 rng(20261127);
  std::string all(m, 'A');
  for (char& c : all) c = "ACGT"[rng() & 3];
  constexpr std::uint64_t kPiece = 300;
  for (std::uint64_t copied = 0; m > 4 * kPiece && copied < m / 20; copied += kPiece) {
    const std::uint64_t from = rng() % (m - kPiece), to = rng() % (m - kPiece);
    for (std::uint64_t i = 0; i < kPiece; ++i) all[to + i] = rng() % 50 == 0 ? "ACGT"[rng() & 3] : all[from + i];
  }
  Genome g;
  const std::uint64_t each = m / kContigs;
  for (std::uint64_t k = 0; k < kContigs; ++k) {
    std::string s = all.substr(k * each, each);
    for (std::uint64_t p = kSingleNEvery / 2; p < s.size(); p += kSingleNEvery) s[p] = 'N';
    g.reference.contigs.push_back({"c" + std::to_string(k), s.size()});
    // Fragments: the runs between the single Ns; the forward text joins them with separators.
    std::uint64_t start = 0;
    for (std::uint64_t p = 0; p <= s.size(); ++p) {
      if (p < s.size() && s[p] != 'N') continue;
      if (p > start) {
        g.reference.fragments.push_back({g.reference.forward.size(), p - start, start, static_cast<std::uint32_t>(k)});
        for (std::uint64_t i = start; i < p; ++i)
          g.reference.forward.push_back(static_cast<std::uint8_t>(std::string("ACGT").find(s[i])));
        g.reference.forward.push_back(fmindex::kSeparator);
      }
      if (p < s.size()) ++g.reference.ambiguous_bases;
      start = p + 1;
    }
    g.contigs.push_back(std::move(s));
  }
  g.reference.forward.pop_back();  // F ends with its last fragment
  return g;
}

struct Origin {
  std::uint32_t contig;
  std::uint64_t position;
  bool reverse;
};

void sample_reads(const Genome& g, std::uint64_t count, std::vector<SeqRecord>& reads, std::vector<Origin>& origins) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (std::uint64_t k = 0; k < count; ++k) {
    const auto contig = static_cast<std::uint32_t>(rng() % g.contigs.size());
    const std::string& c = g.contigs[contig];
    const std::uint64_t begin = rng() % (c.size() - 2 * kReadLength);
    std::string read;
    for (std::uint64_t p = begin; read.size() < kReadLength; ++p) {
      const double x = u(rng);
      char b = c[p];
      if (x < 0.005) b = "ACGT"[rng() & 3];
      if (x >= 0.005 && x < 0.00525) {  // a deletion
        p += rng() % 10;
        continue;
      }
      if (x >= 0.00525 && x < 0.0055) read.append(1 + rng() % 10, "ACGT"[rng() & 3]);  // an insertion
      read.push_back(x >= 0.0055 && x < 0.0056 ? 'N' : b);
    }
    read.resize(kReadLength);
    const bool reverse = rng() & 1;
    if (reverse) {
      std::reverse(read.begin(), read.end());
      for (char& b : read) b = b == 'A' ? 'T' : b == 'C' ? 'G' : b == 'G' ? 'C' : b == 'T' ? 'A' : 'N';
    }
    reads.push_back({"r" + std::to_string(k), read, ""});
    origins.push_back({contig, begin, reverse});
  }
}

struct Data {
  Genome genome;
  std::vector<SeqRecord> reads;
  std::vector<Origin> origins;
  std::unique_ptr<fmindex::FmIndex> index[2];      // by backend
  std::vector<GappedReadAlignment> results[2];     // the last run's, by backend
};

Data& data() {
  static Data d = [] {
    Data x;
    x.genome = generated_genome(env_u64("WTMAP_BENCH_GAPPED_GENOME", std::uint64_t{1} << 26, std::uint64_t{1} << 20));
    sample_reads(x.genome, env_u64("WTMAP_BENCH_GAPPED_READS", 100000, 1000), x.reads, x.origins);
    return x;
  }();
  return d;
}

const fmindex::FmIndex* index_on(Backend backend, Error& error) {
  auto& slot = data().index[static_cast<int>(backend)];
  if (!slot) {
    fmindex::FmIndexOptions options;
    options.backend = backend;
    auto built = fmindex::FmIndex::build(data().genome.reference, options);
    if (!built.ok()) {
      error = built.status().message();
      return nullptr;
    }
    slot = std::make_unique<fmindex::FmIndex>(std::move(built.value()));
  }
  return slot.get();
}

bool same(const aligner::gapped::GappedHit& a, const aligner::gapped::GappedHit& b) {
  return a.contig == b.contig && a.position == b.position && a.reference_end == b.reference_end &&
         a.reverse == b.reverse && a.query_begin == b.query_begin && a.query_end == b.query_end &&
         a.score == b.score && a.cigar == b.cigar && a.edit_distance == b.edit_distance && a.md == b.md &&
         a.mapq == b.mapq;
}
bool same(const GappedReadAlignment& a, const GappedReadAlignment& b) {
  auto same_list = [](const std::vector<aligner::gapped::GappedHit>& x, const std::vector<aligner::gapped::GappedHit>& y) {
    return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), [](const auto& p, const auto& q) { return same(p, q); });
  };
  return a.mapped == b.mapped && same(a.primary, b.primary) && a.sub_score == b.sub_score &&
         a.chain_sub_score == b.chain_sub_score && a.sub_count == b.sub_count && a.seed_coverage == b.seed_coverage &&
         a.repeat_fraction == b.repeat_fraction && a.mapq == b.mapq && a.flags == b.flags &&
         same_list(a.supplementary, b.supplementary) && same_list(a.alternatives, b.alternatives);
}

Error map_all(GappedMapper& mapper, std::uint64_t batch, std::vector<GappedReadAlignment>& out) {
  const std::vector<SeqRecord>& reads = data().reads;
  out.clear();
  std::vector<GappedReadAlignment> part;
  for (std::uint64_t i = 0; i < reads.size(); i += batch) {
    const std::vector<SeqRecord> slice(reads.begin() + i, reads.begin() + std::min<std::uint64_t>(reads.size(), i + batch));
    const Status s = mapper.map(slice, part);
    if (!s.ok()) return s.message();
    out.insert(out.end(), part.begin(), part.end());
  }
  return {};
}

void bm_map(benchmark::State& state, Backend backend) {
  if (backend == Backend::gpu && !gpu_present()) return state.SkipWithError(kNoGpu);
  Error error;
  const fmindex::FmIndex* index = index_on(backend, error);
  if (index == nullptr) return state.SkipWithError(error.c_str());
  auto mapper = GappedMapper::create(*index, {});
  if (!mapper.ok()) return state.SkipWithError(mapper.status().message().c_str());
  const std::uint64_t batch = env_u64("WTMAP_BENCH_GAPPED_BATCH", 100000, 100000);
  std::vector<GappedReadAlignment>& out = data().results[static_cast<int>(backend)];
  for (auto _ : state) {
    const double s = wall_seconds([&] { error = map_all(mapper.value(), batch, out); });
    if (!error.empty()) return state.SkipWithError(error.c_str());
    state.SetIterationTime(s);
  }
  // The other backend's run, when there was one, must have given the same alignments.
  const auto& other = data().results[backend == Backend::gpu ? 0 : 1];
  if (!other.empty()) {
    for (std::size_t i = 0; i < out.size(); ++i)
      if (!same(out[i], other[i])) return state.SkipWithError(("backends differ at read " + std::to_string(i)).c_str());
  }
  std::uint64_t mapped = 0, placed = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const Origin& o = data().origins[i];
    if (!out[i].mapped) continue;
    ++mapped;
    const auto& h = out[i].primary;
    const std::uint64_t distance = h.position > o.position ? h.position - o.position : o.position - h.position;
    placed += h.contig == o.contig && h.reverse == o.reverse && distance <= 20;
  }
  const double n = static_cast<double>(out.size());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
  state.counters["mapped"] = static_cast<double>(mapped) / n;
  state.counters["placed"] = static_cast<double>(placed) / n;
  // Where the time went: seconds per step of map() (gapped_mapper.hpp), per iteration.
  const aligner::gapped::GappedStageSeconds& t = mapper.value().stage_seconds();
  const double per = 1.0 / static_cast<double>(state.iterations());
  for (const auto& [name, seconds] : {std::pair{"s_seed", t.seed}, {"s_locate", t.locate}, {"s_chain", t.chain},
                                      {"s_extend", t.extend}, {"s_extend_dp", t.extend_dp}, {"s_choose", t.choose},
                                      {"s_cigar", t.cigar}, {"s_cigar_dp", t.cigar_dp}})
    state.counters[name] = seconds * per;
}

void register_all() {
  benchmark::AddCustomContext("wtmap_gapped_genome", std::to_string(data().genome.reference.forward.size()));
  for (Backend backend : {Backend::gpu, Backend::cpu}) {
    benchmark::RegisterBenchmark((std::string("gapped/map/") + backend_name(backend) + "/150bp").c_str(),
                                 [backend](benchmark::State& s) { bm_map(s, backend); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
}

}  // namespace
}  // namespace wtmap::bench

int main(int argc, char** argv) {
  return wtmap::bench::benchmark_main(argc, argv, "the CPU backend", wtmap::bench::register_all);
}
