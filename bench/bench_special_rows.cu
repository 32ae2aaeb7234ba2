// Special rows: how the FM-index corrects the BWT rows stored as A that hold # or $ (issue: justify
// the sorted table against a rank bit vector, with a measurement). On a random DNA text of n
// symbols with S random positions set to A and declared special, occ_all(i) (the four base
// counts in BWT[0, i)) is computed three ways, one query per thread, device-resident queries,
// CUDA events (items/s = queries/s):
//   special/occ_all/none       quad level rank_all alone: the floor (no correction)
//   special/occ_all/table      the production FmIndexView::occ_all: rank_all, then A minus a
//                              per-65,536-row bucket count plus a scan of the sorted special rows
//   special/occ_all/bitvector  rank_all, then A minus RankSelectView::rank1(i) of a bit vector
//                              over all n rows marking the special rows
// Counters: S (special), bytes and bits_per_symbol of the correction structure, slowdown = mean
// launch time / that of `none`. The first 10^5 answers of table and bitvector are compared with
// each other and with a naive count on the host (checkpoints every 1024 symbols, a scan, minus
// the specials below i); `none` against the naive count without the subtraction. Without a GPU
// the GPU rows skip and special/host_check runs the three on the host (CPU backend, n <= 2^24).
// All S share one text and tree: the positions of the largest S are all A, a smaller S declares a
// random subset of them special (so `none` is one row).
//
// Sizes: WTMAP_BENCH_SPECIAL_LOG2N (31; quick 24), WTMAP_BENCH_SPECIAL_COUNTS (1e4,1e6; quick
// 1e3), WTMAP_BENCH_SPECIAL_QUERIES (1e8; quick 1e6).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "bench_common.hpp"
#include "wtmap/core/bit_vector.hpp"
#include "wtmap/core/wavelet_tree.hpp"
#include "wtmap/fmindex/fm_index_view.hpp"

namespace wtmap::bench {
namespace {

using fmindex::FmIndexView;
constexpr unsigned kThreads = 256;
constexpr std::size_t kChecked = 100000;
constexpr unsigned kCheckpointShift = 10;
constexpr unsigned kHostLog2n = 24;  // the text size without a GPU

enum class Variant { none, table, bitvector };
const char* variant_name(Variant v) { return v == Variant::none ? "none" : v == Variant::table ? "table" : "bitvector"; }

// occ_all(i) folded, the variant's way. `fm` holds the tree (and for `table` the special rows).
template <Variant V>
struct OccAll {
  FmIndexView fm;
  RankSelectView special;  // bitvector: the special rows as bits
  WTMAP_HD std::uint64_t operator()(std::uint64_t i) const {
    std::uint64_t r[4];
    if constexpr (V == Variant::table) {
      fm.occ_all(i, r);
    } else {
      fm.bwt.levels[0].rank_all(i, r);
      if constexpr (V == Variant::bitvector) r[0] -= special.rank1(i);
    }
    return fold4(r);
  }
};
// f(OccAll<v>{fm, special}) for a variant known at run time.
template <class F>
Error with_op(Variant v, const FmIndexView& fm, const RankSelectView& special, F&& f) {
  if (v == Variant::none) return f(OccAll<Variant::none>{fm, special});
  if (v == Variant::table) return f(OccAll<Variant::table>{fm, special});
  return f(OccAll<Variant::bitvector>{fm, special});
}

template <class Op>
__global__ void __launch_bounds__(kThreads) occ_kernel(Op op, const std::uint64_t* pos, std::uint64_t* out, std::uint64_t count) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t k = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < count; k += stride) out[k] = op(pos[k]);
}

// One launch on a persistent grid, waited for; `seconds` (if given) gets its time from CUDA events.
template <class Op>
Error launch(const Op& op, const std::uint64_t* pos, std::uint64_t* out, std::uint64_t count, cudaStream_t stream,
             double* seconds = nullptr) {
  static int grid = 0;
  if (grid == 0) {
    int per_sm = 0, dev = 0, sms = 0;
    BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, occ_kernel<Op>, kThreads, 0));
    BENCH_CUDA(cudaGetDevice(&dev));
    BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    grid = std::max(1, per_sm) * sms;
  }
  const int blocks = static_cast<int>(std::min<std::uint64_t>(grid, (count + kThreads - 1) / kThreads));
  static cudaEvent_t a = nullptr, b = nullptr;
  if (a == nullptr) BENCH_CUDA(cudaEventCreate(&a));
  if (b == nullptr) BENCH_CUDA(cudaEventCreate(&b));
  float ms = 0;
  BENCH_CUDA(cudaEventRecord(a, stream));
  occ_kernel<Op><<<blocks, kThreads, 0, stream>>>(op, pos, out, count);
  BENCH_CUDA(cudaGetLastError());
  BENCH_CUDA(cudaEventRecord(b, stream));
  BENCH_CUDA(cudaEventSynchronize(b));
  BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
  if (seconds != nullptr) *seconds = ms * 1e-3;
  return {};
}

struct Config {
  unsigned log2n = 31;
  std::uint64_t queries = 0;
  std::vector<std::uint64_t> counts;
} g_cfg;

// The special rows of one count S, both ways, and the naive answers for them (S = 0: `none`).
struct Correction {
  std::vector<std::uint64_t> rows, before;  // sorted special rows; specials below each bucket
  CudaArray<std::uint64_t> d_rows, d_before;
  std::optional<RankSelectBitVector> bits;
  FmIndexView fm;
  std::vector<std::uint64_t> ref;
  double bytes(Variant v) const {  // of the correction structure
    if (v == Variant::none) return 0;
    return static_cast<double>(v == Variant::table ? (rows.size() + before.size()) * 8 : bits->size_in_bytes());
  }
};

class Data {
 public:
  Error init() {
    if (!ready_) {
      ready_ = true;
      error_ = build();
    }
    return error_;
  }
  std::uint64_t n() const { return n_; }
  const std::vector<std::uint64_t>& queries() const { return queries_; }  // the checked prefix
  const std::uint64_t* device_queries() const { return d_queries_.data(); }

  // The correction structures for S specials: the first S of the random special positions.
  Error correction(std::uint64_t S, Correction*& out) {
    auto& slot = corrections_[S];
    if (!slot) {
      auto c = std::make_unique<Correction>();
      BENCH_OK(build_correction(S, *c));
      slot = std::move(c);
    }
    out = slot.get();
    return {};
  }

 private:
  // Counts of the four symbols in text[0, i): checkpoint, then a scan.
  void naive_all(std::uint64_t i, std::uint64_t r[4]) const {
    const std::uint64_t b = i >> kCheckpointShift;
    for (unsigned c = 0; c < 4; ++c) r[c] = checkpoints_[4 * b + c];
    for (std::uint64_t p = b << kCheckpointShift; p < i; ++p) ++r[text_[p]];
  }
  // fold4 of the naive counts, A less the specials below i (none: `rows` empty).
  std::vector<std::uint64_t> reference(const std::vector<std::uint64_t>& rows) const {
    std::vector<std::uint64_t> ref(queries_.size());
#pragma omp parallel for schedule(dynamic, 256)
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(ref.size()); ++k) {
      const std::uint64_t i = queries_[static_cast<std::size_t>(k)];
      std::uint64_t r[4];
      naive_all(i, r);
      r[0] -= static_cast<std::uint64_t>(std::lower_bound(rows.begin(), rows.end(), i) - rows.begin());
      ref[static_cast<std::size_t>(k)] = fold4(r);
    }
    return ref;
  }

  Error build() {
    backend_ = gpu_present() ? Backend::gpu : Backend::cpu;
    n_ = std::uint64_t{1} << g_cfg.log2n;
    const std::uint64_t max_s = *std::max_element(g_cfg.counts.begin(), g_cfg.counts.end());
    if (max_s > n_ / 2) return "more special rows asked for than n / 2";
    std::fprintf(stderr, "special rows: n = 2^%u, S up to %" PRIu64 ", %" PRIu64 " queries, backend %s\n", g_cfg.log2n,
                 max_s, g_cfg.queries, backend_name(backend_));
    text_.resize(n_);
    parallel_generate(text_.data(), n_, 0x5EC1A1ull, [](Rng& r) { return static_cast<std::uint8_t>(r() >> 62); });
    // Distinct special positions in random order (a prefix is a random subset), stored as A.
    std::unordered_set<std::uint64_t> seen;
    Rng rng{0x5BEC1A15ull};
    while (specials_.size() < max_s) {
      const std::uint64_t p = rng.below(n_);
      if (seen.insert(p).second) specials_.push_back(p);
    }
    for (std::uint64_t p : specials_) text_[p] = 0;

    const std::uint64_t blocks = (n_ >> kCheckpointShift) + 1;
    checkpoints_.assign(4 * blocks, 0);
#pragma omp parallel for schedule(static)
    for (std::int64_t b = 1; b < static_cast<std::int64_t>(blocks); ++b) {
      const std::uint64_t first = static_cast<std::uint64_t>(b - 1) << kCheckpointShift;
      for (std::uint64_t p = first; p < first + (std::uint64_t{1} << kCheckpointShift); ++p) ++checkpoints_[4 * b + text_[p]];
    }
    for (std::uint64_t k = 4; k < checkpoints_.size(); ++k) checkpoints_[k] += checkpoints_[k - 4];

    std::vector<std::uint64_t> q(g_cfg.queries);
    const std::uint64_t n = n_;
    parallel_generate(q.data(), q.size(), 0x9E7A5ull, [n](Rng& r) { return r.below(n + 1); });
    if (backend_ == Backend::gpu) BENCH_OK(d_queries_.assign(CudaArray<std::uint64_t>::device, q.data(), q.size()));
    queries_.assign(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(std::min(kChecked, q.size())));

    auto tree = WaveletTree<std::uint8_t, 4>::build(text_.data(), n_, {backend_, 4});
    if (!tree.ok()) return "quad tree: " + tree.status().message();
    tree_ = std::make_unique<WaveletTree<std::uint8_t, 4>>(std::move(tree).value());
    if (tree_->num_levels() != 1) return "the quad tree of a sigma-4 text should have one level";
    return {};
  }

  Error build_correction(std::uint64_t S, Correction& c) {
    c.rows.assign(specials_.begin(), specials_.begin() + static_cast<std::ptrdiff_t>(S));
    std::sort(c.rows.begin(), c.rows.end());
    // (a) the production table, laid out as FmIndex::bind (fmindex/src/fm_index.cu) does.
    const std::uint64_t buckets = (n_ >> FmIndexView::kBucketShift) + 1;
    c.before.assign(buckets, 0);
    for (std::uint64_t b = 0, j = 0; b < buckets; ++b) {
      while (j < c.rows.size() && c.rows[j] < (b << FmIndexView::kBucketShift)) ++j;
      c.before[b] = j;
    }
    const std::uint64_t *rows = c.rows.data(), *before = c.before.data();
    if (backend_ == Backend::gpu) {
      if (S > 0) BENCH_OK(c.d_rows.assign(CudaArray<std::uint64_t>::device, rows, S));
      BENCH_OK(c.d_before.assign(CudaArray<std::uint64_t>::device, before, buckets));
      rows = c.d_rows.data();
      before = c.d_before.data();
    }
    c.fm.bwt = tree_->view();
    c.fm.rows = n_;
    c.fm.special_rows = rows;
    c.fm.num_special = S;
    c.fm.special_before_bucket = before;
    // (b) the alternative: a rank bit vector over all n rows.
    std::vector<std::uint32_t> words((n_ + 31) / 32, 0);
    for (std::uint64_t r : c.rows) words[r / 32] |= 1u << (r % 32);
    auto bits = RankSelectBitVector::build(words.data(), n_, backend_);
    if (!bits.ok()) return "special bit vector: " + bits.status().message();
    c.bits.emplace(std::move(bits).value());
    c.ref = reference(c.rows);
    return {};
  }

  bool ready_ = false;
  Error error_;
  Backend backend_ = Backend::gpu;
  std::uint64_t n_ = 0;
  std::vector<std::uint8_t> text_;
  std::vector<std::uint64_t> specials_, checkpoints_, queries_;
  CudaArray<std::uint64_t> d_queries_;
  std::unique_ptr<WaveletTree<std::uint8_t, 4>> tree_;
  std::map<std::uint64_t, std::unique_ptr<Correction>> corrections_;
};

Data& data() {
  static Data d;
  return d;
}

double g_none_seconds = 0;  // mean launch time of `none`, for the slowdown counters

// One timed launch of variant v over the first `count` queries.
Error time_launch(Variant v, const Correction& c, std::uint64_t* out, std::uint64_t count, cudaStream_t stream, double& s) {
  return with_op(v, c.fm, c.bits->view(),
                 [&](const auto& op) { return launch(op, data().device_queries(), out, count, stream, &s); });
}

// Variant v's answers to the checked queries: a kernel (GPU) or a loop (no GPU, CPU backend).
Error answers(Variant v, const Correction& c, std::vector<std::uint64_t>& out, cudaStream_t stream) {
  const auto& q = data().queries();
  out.resize(q.size());
  return with_op(v, c.fm, c.bits->view(), [&](const auto& op) -> Error {
    if (!gpu_present()) {
      for (std::size_t k = 0; k < q.size(); ++k) out[k] = op(q[k]);
      return {};
    }
    CudaArray<std::uint64_t> d;
    BENCH_OK(d.allocate(CudaArray<std::uint64_t>::device, q.size()));
    BENCH_OK(launch(op, data().device_queries(), d.data(), q.size(), stream));
    return cuda_to_host(out.data(), d.data(), q.size());
  });
}

// none: its answers against the naive counts; else table and bitvector for S specials against
// each other and the naive counts. Names the first bad query.
Error check(Variant v, std::uint64_t S, cudaStream_t stream) {
  Correction* c = nullptr;
  BENCH_OK(data().correction(v == Variant::none ? 0 : S, c));
  std::vector<std::uint64_t> t, b;
  BENCH_OK(answers(v == Variant::none ? v : Variant::table, *c, t, stream));
  if (v != Variant::none) BENCH_OK(answers(Variant::bitvector, *c, b, stream));
  for (std::size_t k = 0; k < t.size(); ++k) {
    const bool t_bad = t[k] != c->ref[k], b_bad = v != Variant::none && b[k] != c->ref[k];
    if (!t_bad && !b_bad) continue;
    auto hex = [](std::uint64_t x) {
      char buf[24];
      std::snprintf(buf, sizeof buf, "%016" PRIx64, x);
      return std::string(buf);
    };
    std::string msg = "S=" + pretty_count(S) + ": first bad query " + std::to_string(k) + " (row " +
                      std::to_string(data().queries()[k]) + "): " + (v == Variant::none ? "none " : "table ") + hex(t[k]) +
                      (t_bad ? " WRONG" : "");
    if (v != Variant::none) msg += ", bitvector " + hex(b[k]) + (b_bad ? " WRONG" : "");
    return msg + ", naive reference " + hex(c->ref[k]);
  }
  return {};
}

void bm_host_check(benchmark::State& state) {
  if (Error e = data().init(); !e.empty()) return state.SkipWithError(e.c_str());
  Error error;
  for (auto _ : state) {
    error = check(Variant::none, 0, nullptr);
    for (std::uint64_t S : g_cfg.counts) {
      if (error.empty()) error = check(Variant::table, S, nullptr);
    }
    state.SetIterationTime(1e-9);
  }
  if (!error.empty()) return state.SkipWithError(error.c_str());
  state.counters["checked"] = static_cast<double>(data().queries().size());
}

void bm_occ_all(benchmark::State& state, Variant v, std::uint64_t S) {
  if (!gpu_present()) return state.SkipWithError(kNoGpu);
  Data& d = data();
  Correction *c = nullptr, *c0 = nullptr;
  const std::uint64_t count = g_cfg.queries;
  CudaArray<std::uint64_t> out;
  cudaStream_t stream = nullptr;
  Error e = d.init();
  if (e.empty()) e = d.correction(S, c);
  if (e.empty()) e = d.correction(0, c0);
  if (e.empty()) e = out.allocate(CudaArray<std::uint64_t>::device, count);
  if (e.empty() && cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) e = "cudaStreamCreate failed";
  if (!e.empty()) return state.SkipWithError(e.c_str());
  double total = 0, s = 0;
  std::uint64_t calls = 0;
  run_timed(state, Clock::cuda_events, stream, count, count, [&](std::size_t k) -> Error {
    BENCH_OK(time_launch(v, *c, out.data(), k, stream, s));
    if (calls++ > 0) total += s;  // the first call is the warm-up
    return {};
  });
  const double seconds = calls > 1 ? total / static_cast<double>(calls - 1) : 0;
  if (v == Variant::none) g_none_seconds = seconds;
  if (!state.error_occurred() && g_none_seconds == 0) {  // `none` filtered out: time it here
    double sum = 0;
    for (int k = 0; k < 3 && e.empty(); ++k) {
      e = time_launch(Variant::none, *c0, out.data(), count, stream, s);
      if (k > 0) sum += s;  // the first launch is a warm-up
    }
    if (e.empty()) g_none_seconds = sum / 2;
  }
  if (!state.error_occurred() && e.empty()) e = check(v, S, stream);
  if (!e.empty()) state.SkipWithError(e.c_str());
  cudaStreamDestroy(stream);
  const double n = static_cast<double>(d.n());
  state.counters["n"] = n;
  state.counters["S"] = static_cast<double>(S);
  state.counters["bytes"] = c->bytes(v);
  state.counters["bits_per_symbol"] = c->bytes(v) * 8 / n;
  if (g_none_seconds > 0) state.counters["slowdown"] = seconds / g_none_seconds;
}

void register_all() {
  g_cfg.log2n = static_cast<unsigned>(std::min<std::uint64_t>(env_u64("WTMAP_BENCH_SPECIAL_LOG2N", 31, 24), 40));
  if (!gpu_present()) g_cfg.log2n = std::min(g_cfg.log2n, kHostLog2n);
  g_cfg.queries = std::max<std::uint64_t>(1, env_u64("WTMAP_BENCH_SPECIAL_QUERIES", 100000000, 1000000));
  g_cfg.counts = env_list("WTMAP_BENCH_SPECIAL_COUNTS", {10000, 1000000}, {1000});
  if (g_cfg.counts.empty()) g_cfg.counts = {1000};
  benchmark::AddCustomContext("wtmap_special_n", std::to_string(std::uint64_t{1} << g_cfg.log2n));
  benchmark::AddCustomContext("wtmap_special_queries", std::to_string(g_cfg.queries));

  const std::string n = "/n=" + pretty_count(std::uint64_t{1} << g_cfg.log2n), q = "/q=" + pretty_count(g_cfg.queries);
  if (!gpu_present()) benchmark::RegisterBenchmark(("special/host_check" + n).c_str(), bm_host_check)->UseManualTime()->Iterations(1);
  auto reg = [&](Variant v, std::uint64_t S, const std::string& s) {
    benchmark::RegisterBenchmark(("special/occ_all/" + std::string(variant_name(v)) + n + s + q).c_str(),
                                 [=](benchmark::State& st) { bm_occ_all(st, v, S); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  };
  reg(Variant::none, 0, "");
  for (std::uint64_t S : g_cfg.counts) {
    for (Variant v : {Variant::table, Variant::bitvector}) reg(v, S, "/S=" + pretty_count(S));
  }
}

}  // namespace
}  // namespace wtmap::bench

int main(int argc, char** argv) {
  return wtmap::bench::benchmark_main(argc, argv, "special/host_check", wtmap::bench::register_all);
}
