// DNA rank: does a 4-ary (quad-vector) wavelet-tree level make a rank on a 4-letter BWT cost one
// memory transaction? (issue "core: 4-ary wavelet tree levels, so a DNA rank costs one memory
// transaction"). On one uniformly random text over {0,1,2,3} (2^32 symbols by default) it compares
//   quad_level   WaveletTree<uint8_t, 4>, sigma 4 (one quad-vector level): view.levels[0].rank(c, i)
//   quad_tree    the same tree through the tree view: view.rank(c, i)
//   binary_tree  WaveletTree<uint8_t, 2>, sigma 4 (two binary levels): view.rank(c, i)
//   occ128       bwa's interleaved occurrence table (bwt.c, OCC_INTERVAL 128): per 128 symbols one
//                64-byte line of four 64-bit absolute counts and 4 x 64 bits of packed symbols,
//                written here (OccTable) as the baseline
// measuring, with device-resident queries and CUDA events:
//   dna/rank/*         10^8 independent random (c, i) ranks, one per thread (items/s = ranks/s)
//   dna/rank_all/*     the four ranks at i (quad: rank_all; binary: four view.rank; occ: bwa's occ4)
//   dna/access_rank/*  T[i] and rank(T[i], i) (quad: access_rank; binary: access then rank)
//   dna/chain/*        dependent ranks, the LF-step shape of backward search:
//                      i <- C[c] + rank(c, i) with c from a hash of (chain, step), 64 steps per
//                      chain; 2^20 chains (loaded) and one warp per SM (unloaded); counters
//                      ns_per_rank (time / (steps x chains per thread)) and ranks/s (items/s)
//   dna/gather32|64/*  the card's limit: bench_common's random-gather kernel over a buffer of each
//                      structure's size (loads/s); summarize_dna.py prints rank/s / loads/s
//   dna/space/*        bits_per_symbol = bytes * 8 / n and overhead_pct over 2 bits per symbol
// The first 10^4 answers of every batch (and the end points of the first 10^4 chains) are checked
// against a naive prefix count on the host (a plain scan from a table of counts every 1024
// symbols); a mismatch fails the benchmark.
//
// Without a GPU the GPU benchmarks skip with a message, and dna/host_check/* run every variant's
// query code on the host (trees built with the CPU backend) against the same naive counts.
//
// Sizes: WTMAP_BENCH_DNA_LOG2N (32; quick 24), WTMAP_BENCH_DNA_QUERIES (1e8; quick 1e6),
// WTMAP_BENCH_DNA_CHAINS (2^20; quick 2^16), WTMAP_BENCH_DNA_STEPS (64),
// WTMAP_BENCH_DNA_ITERATIONS (0 = Google Benchmark decides; profile-dna-rank.sh sets 1).
// The text size is reduced, with a message, when host or GPU memory cannot hold it.
#include <cuda_runtime_api.h>
#include <omp.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "bench_common.hpp"
#include "wtmap/core/quad_vector_view.hpp"
#include "wtmap/core/rank_select_view.hpp"
#include "wtmap/core/wavelet_tree.hpp"

#define DNA_HD __host__ __device__ __forceinline__
#if defined(__CUDA_ARCH__)
#define DNA_UNROLL _Pragma("unroll")
#else
#define DNA_UNROLL
#endif

namespace wtmap::bench {
namespace {

// ---- Queries, hashing, cumulative counts ---------------------------------------------------

// A query is i | c << 62 (i < n <= 2^62).
constexpr std::uint64_t kPosMask = (std::uint64_t{1} << 62) - 1;
DNA_HD unsigned query_symbol(std::uint64_t q) { return static_cast<unsigned>(q >> 62); }
DNA_HD std::uint64_t query_pos(std::uint64_t q) { return q & kPosMask; }

DNA_HD std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// C[c] = symbols < c in the text; C[4] = n.
struct Cumulative {
  std::uint64_t c[5];
};

struct SymbolRank {
  unsigned symbol;
  std::uint64_t rank;
};

// ---- The baseline: bwa's interleaved occurrence table ----------------------------------------

// bwa (bwt.h/bwt.c, OCC_INTERVAL 0x80): every 128 symbols, the absolute counts of the four symbols
// before the interval, followed by the interval's symbols at 2 bits each -- one 64-byte line. bwa
// packs 16 bases per 32-bit word high bits first; here 32 per 64-bit word low bits first, as the
// quad vector, so both use the same match-mask/popcount step (quad::match_mask).
struct alignas(64) OccLine {
  std::uint64_t count[4];
  std::uint64_t words[4];
};
static_assert(sizeof(OccLine) == 64, "one occ line is one 64-byte cache line");

struct OccView {
  const OccLine* lines = nullptr;

  DNA_HD std::uint64_t rank(unsigned c, std::uint64_t i) const {
    const OccLine& line = lines[i >> 7];
    const unsigned j = static_cast<unsigned>(i & 127);
    std::uint64_t r = line.count[c];
DNA_UNROLL
    for (unsigned w = 0; w < 4; ++w) {
      if (w <= j / 32) {
        const unsigned take = w < j / 32 ? 32u : j % 32;
        r += static_cast<unsigned>(bits::popcount64(quad::match_mask(line.words[w], c) & bits::low_mask64(2 * take)));
      }
    }
    return r;
  }
  // bwa's bwt_occ4: all four counts from the line.
  DNA_HD void rank_all(std::uint64_t i, std::uint64_t out[4]) const {
    const OccLine& line = lines[i >> 7];
    const unsigned j = static_cast<unsigned>(i & 127);
    unsigned partial[3] = {0, 0, 0};
DNA_UNROLL
    for (unsigned w = 0; w < 4; ++w) {
      if (w <= j / 32) {
        const unsigned take = w < j / 32 ? 32u : j % 32;
        const std::uint64_t mask = bits::low_mask64(2 * take);
DNA_UNROLL
        for (unsigned c = 0; c < 3; ++c) {
          partial[c] += static_cast<unsigned>(bits::popcount64(quad::match_mask(line.words[w], c) & mask));
        }
      }
    }
    out[0] = line.count[0] + partial[0];
    out[1] = line.count[1] + partial[1];
    out[2] = line.count[2] + partial[2];
    out[3] = line.count[3] + (j - partial[0] - partial[1] - partial[2]);
  }
  DNA_HD SymbolRank access_rank(std::uint64_t i) const {
    const OccLine& line = lines[i >> 7];
    const unsigned j = static_cast<unsigned>(i & 127);
    const unsigned c = static_cast<unsigned>(line.words[j / 32] >> (2 * (j % 32))) & 3u;
    return {c, rank(c, i)};
  }
};

// Host construction (a baseline: its speed is not measured).
std::vector<OccLine> build_occ(const std::uint8_t* text, std::uint64_t n) {
  const std::uint64_t num_lines = n / 128 + 1;
  std::vector<OccLine> lines(num_lines);
  const auto m = static_cast<std::int64_t>(num_lines);
#pragma omp parallel for schedule(static)
  for (std::int64_t l = 0; l < m; ++l) {
    OccLine& line = lines[static_cast<std::size_t>(l)];
    const std::uint64_t first = static_cast<std::uint64_t>(l) * 128;
    for (unsigned c = 0; c < 4; ++c) line.count[c] = 0;  // in-line counts for now
    for (unsigned w = 0; w < 4; ++w) {
      std::uint64_t word = 0;
      for (unsigned j = 0; j < 32; ++j) {
        const std::uint64_t p = first + 32 * w + j;
        if (p >= n) break;
        word |= std::uint64_t{text[p] & 3u} << (2 * j);
        ++line.count[text[p] & 3u];
      }
      line.words[w] = word;
    }
  }
  std::uint64_t running[4] = {0, 0, 0, 0};
  for (OccLine& line : lines) {  // in-line counts -> absolute counts before the line
    for (unsigned c = 0; c < 4; ++c) {
      const std::uint64_t here = line.count[c];
      line.count[c] = running[c];
      running[c] += here;
    }
  }
  return lines;
}

// ---- The structures behind one interface (rank, rank_all, access_rank) ----------------------

using QuadTreeView = WaveletTreeView<std::uint8_t, 4>;
using BinaryTreeView = WaveletTreeView<std::uint8_t, 2>;

struct QuadLevel {  // (a) the quad-vector level itself
  QuadVectorView v;
  DNA_HD std::uint64_t rank(unsigned c, std::uint64_t i) const { return v.rank(c, i); }
  DNA_HD void rank_all(std::uint64_t i, std::uint64_t out[4]) const { v.rank_all(i, out); }
  DNA_HD SymbolRank access_rank(std::uint64_t i) const {
    const QuadVectorView::SymbolRank r = v.access_rank(i);
    return {r.symbol, r.rank};
  }
};
struct QuadTree {  // (a) through the tree view (node start and node rank lookups on top)
  QuadTreeView v;
  DNA_HD std::uint64_t rank(unsigned c, std::uint64_t i) const { return v.rank(static_cast<std::uint8_t>(c), i); }
  DNA_HD void rank_all(std::uint64_t i, std::uint64_t out[4]) const { v.rank_all(i, out); }
  DNA_HD SymbolRank access_rank(std::uint64_t i) const {
    const QuadTreeView::SymbolRank r = v.access_rank(i);
    return {r.symbol, r.rank};
  }
};
struct BinaryTree {  // (b) two binary levels
  BinaryTreeView v;
  DNA_HD std::uint64_t rank(unsigned c, std::uint64_t i) const { return v.rank(static_cast<std::uint8_t>(c), i); }
  // The binary tree has no rank_all: the four ranks, as k-mismatch search would ask them.
  DNA_HD void rank_all(std::uint64_t i, std::uint64_t out[4]) const {
DNA_UNROLL
    for (unsigned c = 0; c < 4; ++c) out[c] = v.rank(static_cast<std::uint8_t>(c), i);
  }
  // ... and no access_rank: access, then rank.
  DNA_HD SymbolRank access_rank(std::uint64_t i) const {
    const unsigned c = v.access(i);
    return {c, v.rank(static_cast<std::uint8_t>(c), i)};
  }
};
struct Occ128 {  // (c) the baseline
  OccView v;
  DNA_HD std::uint64_t rank(unsigned c, std::uint64_t i) const { return v.rank(c, i); }
  DNA_HD void rank_all(std::uint64_t i, std::uint64_t out[4]) const { v.rank_all(i, out); }
  DNA_HD SymbolRank access_rank(std::uint64_t i) const { return v.access_rank(i); }
};

// Query adapters: one 64-bit answer per 64-bit query (the kernel's template argument, so the
// profiler tells the kernels apart by these names).
template <class S>
struct RankQ {
  S s;
  DNA_HD std::uint64_t operator()(std::uint64_t q) const { return s.rank(query_symbol(q), query_pos(q)); }
};
template <class S>
struct RankAllQ {
  S s;
  DNA_HD std::uint64_t operator()(std::uint64_t q) const {
    std::uint64_t r[4];
    s.rank_all(query_pos(q), r);
    return fold4(r);
  }
};
template <class S>
struct AccessRankQ {
  S s;
  DNA_HD std::uint64_t operator()(std::uint64_t q) const {
    const SymbolRank r = s.access_rank(query_pos(q));
    return (r.rank << 2) | r.symbol;
  }
};

// One dependent chain: `steps` LF-like steps i <- C[c] + rank(c, i), c from a hash. i stays in
// [0, n] since C[c] + rank(c, i) <= C[c + 1].
DNA_HD std::uint64_t chain_start(std::uint64_t t, std::uint64_t n) { return mix64(t * 0x9E3779B97F4A7C15ull + 0xC4A1) % n; }
DNA_HD std::uint64_t chain_seed(std::uint64_t t) { return mix64(t ^ 0x5DEECE66Dull); }
DNA_HD unsigned chain_symbol(std::uint64_t seed, unsigned k) { return static_cast<unsigned>(mix64(seed + k) & 3u); }
template <class S>
DNA_HD std::uint64_t run_chain(const S& s, const Cumulative& C, std::uint64_t t, std::uint64_t n, unsigned steps) {
  std::uint64_t i = chain_start(t, n);
  const std::uint64_t seed = chain_seed(t);
  for (unsigned k = 0; k < steps; ++k) {
    const unsigned c = chain_symbol(seed, k);
    i = C.c[c] + s.rank(c, i);
  }
  return i;
}

// ---- Kernels -------------------------------------------------------------------------------

constexpr unsigned kThreads = 256;

template <class Op>
__global__ void __launch_bounds__(kThreads)
    dna_query_kernel(Op op, const std::uint64_t* queries, std::uint64_t* out, std::uint64_t count) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t k = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < count; k += stride) {
    out[k] = op(queries[k]);
  }
}

template <class S>
__global__ void __launch_bounds__(kThreads)
    dna_chain_kernel(S s, Cumulative C, std::uint64_t n, unsigned steps, std::uint64_t* out, std::uint64_t chains) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t t = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; t < chains; t += stride) {
    out[t] = run_chain(s, C, t, n, steps);
  }
}

int num_sms() {
  static int sms = 0;
  if (sms == 0) {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      sms = 1;
    }
  }
  return sms;
}

// A persistent grid (as bench_common's gather kernel and the library's query kernels use).
template <class Kernel>
Error persistent_blocks(Kernel kernel, int& blocks) {
  int per_sm = 0;
  BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  blocks = std::max(1, per_sm) * num_sms();
  return {};
}

template <class Op>
Error launch_queries(const Op& op, const std::uint64_t* q, std::uint64_t* out, std::uint64_t count, cudaStream_t stream) {
  static int grid = 0;
  if (grid == 0) BENCH_OK(persistent_blocks(dna_query_kernel<Op>, grid));
  const int blocks = static_cast<int>(std::min<std::uint64_t>(grid, (count + kThreads - 1) / kThreads));
  dna_query_kernel<Op><<<blocks, kThreads, 0, stream>>>(op, q, out, count);
  BENCH_CUDA(cudaGetLastError());
  return {};
}

// Chains: 256-thread blocks on a persistent grid, or for few chains one 32-thread block (one warp)
// per SM. `rounds` = chains each thread runs one after the other.
template <class S>
Error launch_chains(const S& s, const Cumulative& C, std::uint64_t n, unsigned steps, std::uint64_t* out,
                    std::uint64_t chains, cudaStream_t stream, std::uint64_t* rounds) {
  static int grid = 0;
  if (grid == 0) BENCH_OK(persistent_blocks(dna_chain_kernel<S>, grid));
  const unsigned threads = chains >= std::uint64_t{kThreads} * num_sms() ? kThreads : 32u;
  const std::uint64_t max_blocks = threads == kThreads ? static_cast<std::uint64_t>(grid) : static_cast<std::uint64_t>(num_sms());
  const int blocks = static_cast<int>(std::min<std::uint64_t>(max_blocks, (chains + threads - 1) / threads));
  const std::uint64_t total = std::uint64_t{static_cast<unsigned>(blocks)} * threads;
  if (rounds != nullptr) *rounds = (chains + total - 1) / total;
  dna_chain_kernel<S><<<blocks, threads, 0, stream>>>(s, C, n, steps, out, chains);
  BENCH_CUDA(cudaGetLastError());
  return {};
}

// ---- The data: text, naive reference, structures -------------------------------------------

constexpr std::size_t kChecked = 10000;  // answers checked per batch
constexpr unsigned kCheckpointShift = 10;

enum class Impl { quad_level, quad_tree, binary_tree, occ128 };
constexpr Impl kImpls[] = {Impl::quad_level, Impl::quad_tree, Impl::binary_tree, Impl::occ128};
const char* impl_name(Impl i) {
  switch (i) {
    case Impl::quad_level: return "quad_level";
    case Impl::quad_tree: return "quad_tree";
    case Impl::binary_tree: return "binary_tree";
    default: return "occ128";
  }
}
enum class Op { rank, rank_all, access_rank };
const char* op_name(Op o) { return o == Op::rank ? "rank" : o == Op::rank_all ? "rank_all" : "access_rank"; }

std::uint64_t mem_available_bytes() {  // host: MemAvailable
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return ~std::uint64_t{0};
}

struct Config {
  unsigned log2n = 32;
  std::uint64_t queries = 0, chains = 0;
  unsigned steps = 64;
  std::uint64_t iterations = 0;
  std::string size_note;
};
Config g_cfg;

// Largest log2 n <= requested that fits host and GPU memory (estimates with margins: the GPU
// build needs the text twice plus the radix sort's temporary storage; afterwards the three
// structures, ~1.06 n bytes, a gather buffer of up to n / 2, queries and answers, gather indices).
unsigned fit_log2n(unsigned requested, std::uint64_t queries, bool gpu, std::string& note) {
  const std::uint64_t host_free = mem_available_bytes();
  std::size_t gpu_free = ~std::size_t{0}, gpu_total = 0;
  if (gpu && cudaMemGetInfo(&gpu_free, &gpu_total) != cudaSuccess) gpu_free = ~std::size_t{0};
  const std::uint64_t gib = std::uint64_t{1} << 30;
  unsigned l = requested;
  for (; l > 16; --l) {
    const double n = static_cast<double>(std::uint64_t{1} << l);
    const double host_need = n * (1.0 + 0.5 + 1.0 / 32 + (gpu ? 0.0 : 0.6)) + 16.0 * static_cast<double>(queries) + gib;
    const double gpu_build = 4.6 * n + gib;
    const double gpu_steady = 1.6 * n + 32.0 * static_cast<double>(queries) + gib;
    const bool host_ok = host_need <= static_cast<double>(host_free);
    const bool gpu_ok = !gpu || std::max(gpu_build, gpu_steady) <= static_cast<double>(gpu_free);
    if (host_ok && gpu_ok) break;
  }
  if (l != requested) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "WTMAP_BENCH_DNA_LOG2N=%u does not fit (host MemAvailable %.1f GiB, GPU free %.1f GiB): using 2^%u symbols",
                  requested, static_cast<double>(host_free) / gib,
                  gpu ? static_cast<double>(gpu_free) / gib : 0.0, l);
    note = buf;
    std::fprintf(stderr, "note: %s\n", buf);
  }
  return l;
}

class DnaData {
 public:
  Error init() {
    if (ready_) return error_;
    ready_ = true;
    error_ = build();
    if (!error_.empty()) std::fprintf(stderr, "dna data: %s\n", error_.c_str());
    return error_;
  }
  std::uint64_t n() const { return n_; }
  Backend backend() const { return backend_; }
  const Cumulative& cumulative() const { return C_; }
  const std::vector<std::uint64_t>& host_queries() const { return queries_; }
  const std::uint64_t* device_queries() const { return d_queries_.data(); }

  // Naive occurrences of c in [0, i): counts at the 1024-symbol checkpoint, then a plain scan.
  std::uint64_t naive_rank(unsigned c, std::uint64_t i) const {
    const std::uint64_t b = i >> kCheckpointShift;
    std::uint64_t r = checkpoints_[4 * b + c];
    for (std::uint64_t p = b << kCheckpointShift; p < i; ++p) r += text_[p] == c;
    return r;
  }
  // Reference answers for the first queries of an operation, and chain end points.
  const std::vector<std::uint64_t>& reference(Op op) {
    auto& ref = reference_[static_cast<int>(op)];
    if (ref.empty()) {
      ref.resize(std::min(kChecked, queries_.size()));
      const auto m = static_cast<std::int64_t>(ref.size());
#pragma omp parallel for schedule(dynamic, 64)
      for (std::int64_t k = 0; k < m; ++k) {
        const std::uint64_t q = queries_[static_cast<std::size_t>(k)];
        const std::uint64_t i = query_pos(q);
        std::uint64_t r[4];
        switch (op) {
          case Op::rank: ref[k] = naive_rank(query_symbol(q), i); break;
          case Op::rank_all:
            for (unsigned c = 0; c < 4; ++c) r[c] = naive_rank(c, i);
            ref[k] = fold4(r);
            break;
          case Op::access_rank: ref[k] = (naive_rank(text_[i], i) << 2) | text_[i]; break;
        }
      }
    }
    return ref;
  }
  const std::vector<std::uint64_t>& chain_reference(std::uint64_t chains, unsigned steps) {
    auto& ref = chain_reference_[{chains, steps}];
    if (ref.empty()) {
      ref.resize(std::min<std::uint64_t>(kChecked, chains));
      const auto m = static_cast<std::int64_t>(ref.size());
#pragma omp parallel for schedule(dynamic, 16)
      for (std::int64_t t = 0; t < m; ++t) {  // run_chain with the naive rank
        std::uint64_t i = chain_start(static_cast<std::uint64_t>(t), n_);
        const std::uint64_t seed = chain_seed(static_cast<std::uint64_t>(t));
        for (unsigned k = 0; k < steps; ++k) {
          const unsigned c = chain_symbol(seed, k);
          i = C_.c[c] + naive_rank(c, i);
        }
        ref[t] = i;
      }
    }
    return ref;
  }

  QuadLevel quad_level() const { return {quad_->view().levels[0]}; }
  QuadTree quad_tree() const { return {quad_->view()}; }
  BinaryTree binary_tree() const { return {binary_->view()}; }
  Occ128 occ128() const { return {OccView{backend_ == Backend::gpu ? d_occ_.data() : occ_.data()}}; }

  // Bytes of each structure: whole (as allocated) and what rank alone needs.
  std::uint64_t bytes(Impl impl) const {
    switch (impl) {
      case Impl::quad_level:
        return QuadVectorLayout::total_bytes(n_);
      case Impl::quad_tree: return quad_->size_in_bytes();
      case Impl::binary_tree: return binary_->size_in_bytes();
      default: return occ_bytes_;
    }
  }
  std::uint64_t rank_only_bytes(Impl impl) const {
    switch (impl) {
      case Impl::quad_level:
      case Impl::quad_tree: return QuadVectorLayout::blocks_bytes(n_) + QuadVectorLayout::supers_bytes(n_);
      case Impl::binary_tree: {
        std::uint64_t b = 0;
        for (unsigned l = 0; l < binary_->num_levels(); ++l) {
          b += RankSelectLayout::bits_bytes(n_) + RankSelectLayout::records_bytes(n_);
        }
        return b;
      }
      default: return occ_bytes_;
    }
  }
  double build_seconds(Impl impl) const {
    return impl == Impl::binary_tree ? binary_build_s_ : impl == Impl::occ128 ? occ_build_s_ : quad_build_s_;
  }

 private:
  Error build() {
    backend_ = gpu_present() ? Backend::gpu : Backend::cpu;
    n_ = std::uint64_t{1} << g_cfg.log2n;
    std::fprintf(stderr, "dna data: n = 2^%u symbols, %" PRIu64 " queries, backend %s\n", g_cfg.log2n, g_cfg.queries,
                 backend_name(backend_));
    text_.resize(n_);
    parallel_generate(text_.data(), n_, 0xD7Aull, [](Rng& r) { return static_cast<std::uint8_t>(r() >> 62); });

    // Checkpoint counts (the naive reference) and the cumulative counts C.
    const std::uint64_t blocks = (n_ >> kCheckpointShift) + 1;
    checkpoints_.assign(4 * blocks, 0);
    const auto mb = static_cast<std::int64_t>(blocks);
#pragma omp parallel for schedule(static)
    for (std::int64_t b = 0; b < mb - 1; ++b) {
      std::uint64_t cnt[4] = {0, 0, 0, 0};
      const std::uint64_t first = static_cast<std::uint64_t>(b) << kCheckpointShift;
      for (std::uint64_t p = first; p < first + (std::uint64_t{1} << kCheckpointShift) && p < n_; ++p) ++cnt[text_[p]];
      for (unsigned c = 0; c < 4; ++c) checkpoints_[4 * (b + 1) + c] = cnt[c];
    }
    for (std::uint64_t b = 1; b < blocks; ++b) {
      for (unsigned c = 0; c < 4; ++c) checkpoints_[4 * b + c] += checkpoints_[4 * (b - 1) + c];
    }
    std::uint64_t totals[4];
    for (unsigned c = 0; c < 4; ++c) totals[c] = naive_rank(c, n_);
    C_.c[0] = 0;
    for (unsigned c = 0; c < 4; ++c) C_.c[c + 1] = C_.c[c] + totals[c];

    queries_.resize(g_cfg.queries);
    const std::uint64_t n = n_;
    parallel_generate(queries_.data(), queries_.size(), 0x9E7Aull,
                      [n](Rng& r) { return r.below(n) | (std::uint64_t{r() >> 62} << 62); });

    // The wtmap trees (GPU backend, or the CPU backend for the host checks), sigma 4 given.
    const WaveletTreeOptions options{backend_, 4};
    {
      std::optional<Result<WaveletTree<std::uint8_t, 2>>> b;
      binary_build_s_ = wall_seconds([&] { static_cast<void>(b.emplace(WaveletTree<std::uint8_t, 2>::build(text_.data(), n_, options))); });
      if (!b->ok()) return "binary tree: " + b->status().message();
      binary_ = std::make_unique<WaveletTree<std::uint8_t, 2>>(std::move(*b).value());
    }
    {
      std::optional<Result<WaveletTree<std::uint8_t, 4>>> q;
      quad_build_s_ = wall_seconds([&] { static_cast<void>(q.emplace(WaveletTree<std::uint8_t, 4>::build(text_.data(), n_, options))); });
      if (!q->ok()) return "quad tree: " + q->status().message();
      quad_ = std::make_unique<WaveletTree<std::uint8_t, 4>>(std::move(*q).value());
    }
    if (quad_->num_levels() != 1 || binary_->num_levels() != 2) {
      return "unexpected level counts: quad " + std::to_string(quad_->num_levels()) + ", binary " +
             std::to_string(binary_->num_levels());
    }
    occ_build_s_ = wall_seconds([&] { occ_ = build_occ(text_.data(), n_); });
    occ_bytes_ = occ_.size() * sizeof(OccLine);
    if (backend_ == Backend::gpu) {
      BENCH_OK(d_occ_.assign(CudaArray<OccLine>::device, occ_.data(), occ_.size()));
      std::vector<OccLine>().swap(occ_);  // the host copy is not needed any more
      BENCH_OK(d_queries_.assign(CudaArray<std::uint64_t>::device, queries_.data(), queries_.size()));
    }
    std::fprintf(stderr, "dna data: built (binary %.2f s, quad %.2f s, occ on the host %.2f s)\n", binary_build_s_,
                 quad_build_s_, occ_build_s_);
    return {};
  }

  bool ready_ = false;
  Error error_;
  Backend backend_ = Backend::gpu;
  std::uint64_t n_ = 0;
  std::vector<std::uint8_t> text_;
  std::vector<std::uint64_t> checkpoints_;
  Cumulative C_{};
  std::vector<std::uint64_t> queries_;
  CudaArray<std::uint64_t> d_queries_;
  std::unique_ptr<WaveletTree<std::uint8_t, 2>> binary_;
  std::unique_ptr<WaveletTree<std::uint8_t, 4>> quad_;
  std::vector<OccLine> occ_;
  CudaArray<OccLine> d_occ_;
  std::uint64_t occ_bytes_ = 0;
  double binary_build_s_ = 0, quad_build_s_ = 0, occ_build_s_ = 0;
  std::vector<std::uint64_t> reference_[3];
  std::map<std::pair<std::uint64_t, unsigned>, std::vector<std::uint64_t>> chain_reference_;
};

DnaData& data() {
  static DnaData d;
  return d;
}

// Calls f with the structure object of `impl`.
template <class F>
void with_structure(Impl impl, F&& f) {
  DnaData& d = data();
  switch (impl) {
    case Impl::quad_level: return f(d.quad_level());
    case Impl::quad_tree: return f(d.quad_tree());
    case Impl::binary_tree: return f(d.binary_tree());
    default: return f(d.occ128());
  }
}

void space_counters(benchmark::State& state, Impl impl) {
  const DnaData& d = data();
  const double n = static_cast<double>(d.n());
  const double bps = static_cast<double>(d.bytes(impl)) * 8 / n;
  const double rank_bps = static_cast<double>(d.rank_only_bytes(impl)) * 8 / n;
  state.counters["n"] = n;
  state.counters["bits_per_symbol"] = bps;
  state.counters["overhead_pct"] = (bps / 2 - 1) * 100;
  state.counters["rank_bits_per_symbol"] = rank_bps;
  state.counters["rank_overhead_pct"] = (rank_bps / 2 - 1) * 100;
  state.counters["structure_MiB"] = static_cast<double>(d.bytes(impl)) / (1 << 20);
}

// Times `launch(count, stream)` with run_timed (CUDA events); also returns the mean seconds of
// the timed launches (for counters derived from the time).
template <class Launch>
double timed(benchmark::State& state, cudaStream_t stream, std::uint64_t count, Launch&& launch) {
  cudaEvent_t a = nullptr, b = nullptr;
  if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess) {
    state.SkipWithError("cudaEventCreate failed");
    return 0;
  }
  double total = 0;
  std::uint64_t calls = 0;
  run_timed(state, Clock::cuda_events, stream, count, count, [&](std::size_t n) -> Error {
    BENCH_CUDA(cudaEventRecord(a, stream));
    BENCH_OK(launch(n, stream));
    BENCH_CUDA(cudaEventRecord(b, stream));
    BENCH_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
    if (calls++ > 0) total += ms * 1e-3;  // the first call is run_timed's warm-up
    return {};
  });
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return calls > 1 ? total / static_cast<double>(calls - 1) : 0;
}

// check_prefix, with the reference named for what it is here.
Error check_naive(const std::uint64_t* got, const std::vector<std::uint64_t>& ref, const std::string& what) {
  Error e = check_prefix(got, ref.size(), ref, what.c_str());
  const auto at = e.find("(SDSL)");
  if (at != std::string::npos) e.replace(at, 6, "(naive prefix count)");
  return e;
}

// ---- Benchmarks ----------------------------------------------------------------------------

void bm_space(benchmark::State& state, Impl impl) {
  if (Error e = data().init(); !e.empty()) return state.SkipWithError(e.c_str());
  for (auto _ : state) state.SetIterationTime(1e-9);
  space_counters(state, impl);
  state.counters["build_s"] = data().build_seconds(impl);
}

template <template <class> class Q>
void bm_queries(benchmark::State& state, Op op, Impl impl) {
  if (!gpu_present()) return state.SkipWithError(kNoGpu);
  DnaData& d = data();
  if (Error e = d.init(); !e.empty()) return state.SkipWithError(e.c_str());
  const std::uint64_t count = d.host_queries().size();
  const auto& ref = d.reference(op);
  CudaArray<std::uint64_t> out;
  cudaStream_t stream = nullptr;
  auto setup = [&]() -> Error {
    BENCH_OK(out.allocate(CudaArray<std::uint64_t>::device, count));
    BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return {};
  };
  if (Error e = setup(); !e.empty()) return state.SkipWithError(e.c_str());
  with_structure(impl, [&](const auto& s) {
    using S = std::decay_t<decltype(s)>;
    const Q<S> q{s};
    timed(state, stream, count, [&](std::size_t n, cudaStream_t st) { return launch_queries(q, d.device_queries(), out.data(), n, st); });
  });
  if (!state.error_occurred()) {
    std::vector<std::uint64_t> got(ref.size());
    Error e = cuda_to_host(got.data(), out.data(), got.size());
    if (e.empty()) e = check_naive(got.data(), ref, std::string(impl_name(impl)) + " " + op_name(op));
    if (!e.empty()) state.SkipWithError(e.c_str());
  }
  cudaStreamDestroy(stream);
  space_counters(state, impl);
  state.counters["queries"] = static_cast<double>(count);
}

void bm_chain(benchmark::State& state, Impl impl, std::uint64_t chains, unsigned steps) {
  if (!gpu_present()) return state.SkipWithError(kNoGpu);
  DnaData& d = data();
  if (Error e = d.init(); !e.empty()) return state.SkipWithError(e.c_str());
  const auto& ref = d.chain_reference(chains, steps);
  CudaArray<std::uint64_t> out;
  cudaStream_t stream = nullptr;
  auto setup = [&]() -> Error {
    BENCH_OK(out.allocate(CudaArray<std::uint64_t>::device, chains));
    BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return {};
  };
  if (Error e = setup(); !e.empty()) return state.SkipWithError(e.c_str());
  std::uint64_t rounds = 1;
  double seconds = 0;
  with_structure(impl, [&](const auto& s) {
    // items = dependent ranks: chains x steps per launch.
    seconds = timed(state, stream, chains * steps, [&](std::size_t, cudaStream_t st) {
      return launch_chains(s, d.cumulative(), d.n(), steps, out.data(), chains, st, &rounds);
    });
  });
  if (!state.error_occurred()) {
    std::vector<std::uint64_t> got(ref.size());
    Error e = cuda_to_host(got.data(), out.data(), got.size());
    if (e.empty()) e = check_naive(got.data(), ref, std::string(impl_name(impl)) + " chain end");
    if (!e.empty()) state.SkipWithError(e.c_str());
  }
  cudaStreamDestroy(stream);
  state.counters["chains"] = static_cast<double>(chains);
  state.counters["steps"] = steps;
  state.counters["rounds"] = static_cast<double>(rounds);
  // Time of one dependent rank as a thread sees it: the launch's time over the ranks each thread
  // does one after the other.
  state.counters["ns_per_rank"] = seconds * 1e9 / (static_cast<double>(steps) * static_cast<double>(rounds));
  space_counters(state, impl);
}

void bm_gather(benchmark::State& state, Impl impl, unsigned load_bytes) {
  if (!gpu_present()) return state.SkipWithError(kNoGpu);
  DnaData& d = data();
  if (Error e = d.init(); !e.empty()) return state.SkipWithError(e.c_str());
  gather_benchmark(state, d.bytes(impl), load_bytes, d.host_queries().size());
  state.counters["n"] = static_cast<double>(d.n());
}

// No GPU: every variant's query and chain code on the host against the naive counts.
void bm_host_check(benchmark::State& state, Impl impl) {
  DnaData& d = data();
  if (Error e = d.init(); !e.empty()) return state.SkipWithError(e.c_str());
  if (d.backend() != Backend::cpu) return state.SkipWithError("host check runs only without a GPU");
  Error error;
  for (auto _ : state) {
    error.clear();
    with_structure(impl, [&](const auto& s) {
      using S = std::decay_t<decltype(s)>;
      auto check = [&](Op op, auto q) {
        const auto& ref = d.reference(op);
        std::vector<std::uint64_t> got(ref.size());
        for (std::size_t k = 0; k < got.size(); ++k) got[k] = q(d.host_queries()[k]);
        if (error.empty()) error = check_naive(got.data(), ref, std::string(impl_name(impl)) + " " + op_name(op));
      };
      check(Op::rank, RankQ<S>{s});
      check(Op::rank_all, RankAllQ<S>{s});
      check(Op::access_rank, AccessRankQ<S>{s});
      const std::uint64_t chains = std::min<std::uint64_t>(g_cfg.chains, 1000);
      const auto& ref = d.chain_reference(chains, g_cfg.steps);
      std::vector<std::uint64_t> got(ref.size());
      for (std::size_t t = 0; t < got.size(); ++t) got[t] = run_chain(s, d.cumulative(), t, d.n(), g_cfg.steps);
      if (error.empty()) error = check_naive(got.data(), ref, std::string(impl_name(impl)) + " chain");
    });
    state.SetIterationTime(1e-9);
  }
  if (!error.empty()) return state.SkipWithError(error.c_str());
  state.counters["checked"] = static_cast<double>(d.reference(Op::rank).size());
  space_counters(state, impl);
}

void register_all() {
  unsigned log2n = static_cast<unsigned>(env_u64("WTMAP_BENCH_DNA_LOG2N", 32, 24));
  g_cfg.queries = env_u64("WTMAP_BENCH_DNA_QUERIES", 100000000, 1000000);
  g_cfg.chains = env_u64("WTMAP_BENCH_DNA_CHAINS", std::uint64_t{1} << 20, std::uint64_t{1} << 16);
  g_cfg.steps = static_cast<unsigned>(env_u64("WTMAP_BENCH_DNA_STEPS", 64, 64));
  g_cfg.iterations = env_u64("WTMAP_BENCH_DNA_ITERATIONS", 0, 0);
  if (log2n > 40) log2n = 40;
  g_cfg.log2n = fit_log2n(log2n, g_cfg.queries, gpu_present(), g_cfg.size_note);
  benchmark::AddCustomContext("wtmap_dna_n", std::to_string(std::uint64_t{1} << g_cfg.log2n));
  benchmark::AddCustomContext("wtmap_dna_requested_log2n", std::to_string(log2n));
  benchmark::AddCustomContext("wtmap_dna_queries", std::to_string(g_cfg.queries));
  if (!g_cfg.size_note.empty()) benchmark::AddCustomContext("wtmap_dna_size_note", g_cfg.size_note);

  auto reg = [](const std::string& name, auto fn) {
    auto* b = benchmark::RegisterBenchmark(name.c_str(), fn)->UseManualTime()->Unit(benchmark::kMillisecond);
    if (g_cfg.iterations > 0) b->Iterations(static_cast<benchmark::IterationCount>(g_cfg.iterations));
    return b;
  };
  const std::string n = "/n=" + pretty_count(std::uint64_t{1} << g_cfg.log2n);
  const std::string q = "/q=" + pretty_count(g_cfg.queries);

  if (!gpu_present()) {
    for (Impl impl : kImpls) {
      reg(std::string("dna/host_check/") + impl_name(impl) + n, [=](benchmark::State& st) { bm_host_check(st, impl); })
          ->Iterations(1);
    }
  }
  for (Impl impl : kImpls) {
    reg(std::string("dna/space/") + impl_name(impl) + n, [=](benchmark::State& st) { bm_space(st, impl); })->Iterations(1);
  }
  for (Impl impl : kImpls) {
    reg(std::string("dna/rank/") + impl_name(impl) + n + q,
        [=](benchmark::State& st) { bm_queries<RankQ>(st, Op::rank, impl); });
  }
  for (Impl impl : kImpls) {
    reg(std::string("dna/rank_all/") + impl_name(impl) + n + q,
        [=](benchmark::State& st) { bm_queries<RankAllQ>(st, Op::rank_all, impl); });
  }
  for (Impl impl : kImpls) {
    reg(std::string("dna/access_rank/") + impl_name(impl) + n + q,
        [=](benchmark::State& st) { bm_queries<AccessRankQ>(st, Op::access_rank, impl); });
  }
  // Loaded (many chains) and unloaded (one warp per SM) dependent chains.
  const std::uint64_t few = gpu_present() ? std::uint64_t{32} * static_cast<std::uint64_t>(num_sms()) : 32;
  for (std::uint64_t chains : {g_cfg.chains, few}) {
    for (Impl impl : kImpls) {
      reg(std::string("dna/chain/") + impl_name(impl) + n + "/chains=" + pretty_count(chains) + "/steps=" +
              std::to_string(g_cfg.steps),
          [=](benchmark::State& st) { bm_chain(st, impl, chains, g_cfg.steps); });
    }
  }
  for (unsigned bytes : {32u, 64u}) {
    for (Impl impl : {Impl::quad_tree, Impl::binary_tree, Impl::occ128}) {
      reg(std::string("dna/gather") + std::to_string(bytes) + "/" + impl_name(impl) + n + q,
          [=](benchmark::State& st) { bm_gather(st, impl, bytes); });
    }
  }
}

}  // namespace
}  // namespace wtmap::bench

int main(int argc, char** argv) {
  return wtmap::bench::benchmark_main(argc, argv, "the host checks and the space rows", wtmap::bench::register_all);
}
