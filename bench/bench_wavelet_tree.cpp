// Wavelet tree: GPU construction time on uniformly random texts (sigma 4, 256: uint8_t text;
// 20000: uint16_t text), and batches of access/rank/select queries answered by wtmap on the GPU
// (queries on the device: kernel throughput; from pageable or pinned host memory: wall time of
// the whole call, copies included), by wtmap's CPU backend, and by SDSL's wt_int with OpenMP over
// all host cores; plus the card's limit (random gathers over a buffer of the tree's size).
// Sizes: see README.md (WTMAP_BENCH_* variables).
#include <sdsl/bit_vectors.hpp>
#include <sdsl/construct.hpp>
#include <sdsl/wavelet_trees.hpp>

#include <omp.h>

#include <cstdio>
#include <memory>
#include <optional>

#include "bench_common.hpp"
#include "wtmap/core/wavelet_tree.hpp"

namespace wtmap::bench {
namespace {

using SdslTree = sdsl::wt_int<sdsl::bit_vector, sdsl::rank_support_v5<>, sdsl::select_support_mcl<1>,
                              sdsl::select_support_mcl<0>>;

enum class Op { access, rank, select };
const char* op_name(Op op) { return op == Op::access ? "access" : op == Op::rank ? "rank" : "select"; }

// Who answers: wtmap on the GPU (by query source), wtmap's CPU backend, or SDSL.
enum class Impl { gpu_device, gpu_pageable, gpu_pinned, wtmap_cpu, sdsl };
const char* impl_name(Impl i) {
  switch (i) {
    case Impl::gpu_device: return "wtmap_gpu_device";
    case Impl::gpu_pageable: return "wtmap_gpu_pageable";
    case Impl::gpu_pinned: return "wtmap_gpu_pinned";
    case Impl::wtmap_cpu: return "wtmap_cpu";
    default: return "sdsl";
  }
}
bool is_gpu(Impl i) { return i == Impl::gpu_device || i == Impl::gpu_pageable || i == Impl::gpu_pinned; }
Source source_of(Impl i) {
  return i == Impl::gpu_device ? Source::device : i == Impl::gpu_pinned ? Source::pinned : Source::pageable;
}

constexpr std::size_t kReferenceQueries = 1000;

unsigned levels_for(std::uint64_t sigma) {
  unsigned l = 0;
  while ((std::uint64_t{1} << l) < sigma) ++l;
  return l;
}

// A uniformly random text over [0, sigma).
template <class Symbol>
std::vector<Symbol> random_text(std::uint64_t n, std::uint64_t sigma, std::uint64_t seed) {
  std::vector<Symbol> text(n);
  parallel_generate(text.data(), n, seed, [sigma](Rng& r) { return static_cast<Symbol>(r.below(sigma)); });
  return text;
}

struct TreeDataBase {
  virtual ~TreeDataBase() = default;
};

// One random text with its queries and, built on first use, the trees that answer them.
// Only one is alive at a time.
template <class Symbol>
class TreeData : public TreeDataBase {
 public:
  TreeData(std::uint64_t n, std::uint64_t sigma, std::size_t queries)
      : n_(n), sigma_(sigma), text_(random_text<Symbol>(n, sigma, 0x7E47ull + sigma)) {
    std::vector<std::uint64_t> counts(sigma, 0);
    for (Symbol c : text_) ++counts[c];
    const Symbol* t = text_.data();
    access_.resize(queries);
    rank_.resize(queries);
    select_.resize(queries);
    parallel_generate(access_.data(), queries, 0xACC5ull, [n](Rng& r) { return r.below(n); });
    // Symbols of rank and select queries are drawn from the text, so each occurs at least once.
    parallel_generate(rank_.data(), queries, 0x4A4Bull,
                      [n, t](Rng& r) { return RankQuery<Symbol>{r.below(n + 1), t[r.below(n)]}; });
    parallel_generate(select_.data(), queries, 0x5E1Eull, [n, t, &counts](Rng& r) {
      const Symbol c = t[r.below(n)];
      return SelectQuery<Symbol>{1 + r.below(counts[c]), c};
    });
  }

  std::uint64_t n() const { return n_; }
  const std::vector<std::uint64_t>& access_queries() const { return access_; }
  const std::vector<RankQuery<Symbol>>& rank_queries() const { return rank_; }
  const std::vector<SelectQuery<Symbol>>& select_queries() const { return select_; }

  // The SDSL tree and the reference answers to the first queries (computed with it).
  const SdslTree& sdsl() {
    if (!sdsl_) {
      sdsl::int_vector<> iv(n_, 0, static_cast<std::uint8_t>(std::max(1u, levels_for(sigma_))));
      for (std::uint64_t i = 0; i < n_; ++i) iv[i] = text_[i];
      sdsl_.emplace();
      sdsl_build_seconds_ = wall_seconds([&] { sdsl::construct_im(*sdsl_, std::move(iv), 0); });
      const SdslTree& wt = *sdsl_;
      auto fill = [&](Op op, std::size_t m, auto answer) {
        auto& ref = reference_[static_cast<int>(op)];
        ref.resize(std::min(m, kReferenceQueries));
        for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = answer(i);
      };
      fill(Op::access, access_.size(), [&](std::size_t i) { return wt[access_[i]]; });
      fill(Op::rank, rank_.size(), [&](std::size_t i) { return wt.rank(rank_[i].position, rank_[i].symbol); });
      fill(Op::select, select_.size(), [&](std::size_t i) { return wt.select(select_[i].k, select_[i].symbol); });
    }
    return *sdsl_;
  }
  // SDSL's wt_int::select writes to per-tree scratch arrays (mutable m_path_off), so parallel
  // selects need one tree per thread: copy t of the tree for OpenMP thread t (0: the original).
  const SdslTree& sdsl_for_thread(int t) const { return t == 0 ? *sdsl_ : *copies_[t - 1]; }
  void make_sdsl_copies() {
    sdsl();
    copies_.resize(std::max(0, host_threads() - 1));
#pragma omp parallel for schedule(static, 1)
    for (std::size_t t = 0; t < copies_.size(); ++t) {
      if (!copies_[t]) copies_[t] = std::make_unique<SdslTree>(*sdsl_);  // first touch by the threads
    }
  }
  const std::vector<std::uint64_t>& reference(Op op) {
    sdsl();
    return reference_[static_cast<int>(op)];
  }
  double sdsl_build_seconds() const { return sdsl_build_seconds_; }

  Result<const WaveletTree<Symbol>*> wtmap(Backend backend) {
    auto& slot = wtmap_[static_cast<int>(backend)];
    if (!slot) {
      std::optional<Result<WaveletTree<Symbol>>> built;
      build_seconds_[static_cast<int>(backend)] = wall_seconds([&] {
        built.emplace(WaveletTree<Symbol>::build(text_.data(), n_, WaveletTreeOptions{backend, sigma_}));
      });
      if (!built->ok()) return built->status();
      slot = std::make_unique<WaveletTree<Symbol>>(std::move(*built).value());
    }
    return static_cast<const WaveletTree<Symbol>*>(slot.get());
  }
  double wtmap_build_seconds(Backend b) const { return build_seconds_[static_cast<int>(b)]; }

 private:
  std::uint64_t n_, sigma_;
  std::vector<Symbol> text_;
  std::vector<std::uint64_t> access_;
  std::vector<RankQuery<Symbol>> rank_;
  std::vector<SelectQuery<Symbol>> select_;
  std::optional<SdslTree> sdsl_;
  std::vector<std::unique_ptr<SdslTree>> copies_;
  double sdsl_build_seconds_ = 0;
  std::vector<std::uint64_t> reference_[3];
  std::unique_ptr<WaveletTree<Symbol>> wtmap_[2];
  double build_seconds_[2] = {0, 0};
};

std::uint64_t g_tree_n = 0;
std::size_t g_max_batch = 0;

template <class Symbol>
TreeData<Symbol>& data(std::uint64_t sigma) {
  static std::unique_ptr<TreeDataBase> current;
  static std::uint64_t current_sigma = 0;
  if (!current || current_sigma != sigma) {
    current.reset();  // free the previous one first
    current = std::make_unique<TreeData<Symbol>>(g_tree_n, sigma, g_max_batch);
    current_sigma = sigma;
  }
  return static_cast<TreeData<Symbol>&>(*current);
}

// One query benchmark: `count` queries of kind `op` on the text of alphabet size sigma.
template <class Symbol>
void bm_query(benchmark::State& state, std::uint64_t sigma, Op op, Impl impl, std::size_t count) {
  if (is_gpu(impl) && !gpu_present()) return state.SkipWithError(kNoGpu);
  TreeData<Symbol>& d = data<Symbol>(sigma);
  const auto& ref = d.reference(op);  // builds the SDSL tree
  state.counters["levels"] = levels_for(sigma);
  state.counters["n"] = static_cast<double>(d.n());

  // Runs the batch on whichever implementation, given the per-operation calls.
  auto run = [&](const auto& queries, auto out_tag, auto host_call, auto device_call, auto sdsl_answer) {
    using In = typename std::decay_t<decltype(queries)>::value_type;
    using Out = decltype(out_tag);
    if (impl == Impl::sdsl) {
      if (op == Op::select) d.make_sdsl_copies();
      run_omp_batch<Out>(state, count, ref, [&](std::size_t i) {
        return static_cast<Out>(sdsl_answer(d.sdsl_for_thread(op == Op::select ? omp_get_thread_num() : 0), queries[i]));
      });
      state.counters["build_s"] = d.sdsl_build_seconds();
      return;
    }
    const Backend backend = is_gpu(impl) ? Backend::gpu : Backend::cpu;
    auto tree = d.wtmap(backend);
    if (!tree.ok()) return state.SkipWithError(tree.status().message().c_str());
    const WaveletTree<Symbol>& t = **tree;
    run_wtmap_batch<In, Out>(
        state, is_gpu(impl), source_of(impl), queries, count, ref,
        [&](const In* in, Out* out, std::size_t c) { return host_call(t, in, out, c); },
        [&](const In* in, Out* out, std::size_t c, cudaStream_t s) { return device_call(t, in, out, c, s); });
    state.counters["build_s"] = d.wtmap_build_seconds(backend);
    state.counters["structure_MiB"] = static_cast<double>(t.size_in_bytes()) / (1 << 20);
  };
  using T = WaveletTree<Symbol>;
  switch (op) {
    case Op::access:
      return run(d.access_queries(), Symbol{},
                 [](const T& t, const std::uint64_t* in, Symbol* out, std::size_t c) { return t.access(in, out, c); },
                 [](const T& t, const std::uint64_t* in, Symbol* out, std::size_t c, cudaStream_t s) {
                   return t.access_device(in, out, c, s);
                 },
                 [](const SdslTree& wt, std::uint64_t i) { return wt[i]; });
    case Op::rank:
      return run(d.rank_queries(), std::uint64_t{},
                 [](const T& t, const RankQuery<Symbol>* in, std::uint64_t* out, std::size_t c) { return t.rank(in, out, c); },
                 [](const T& t, const RankQuery<Symbol>* in, std::uint64_t* out, std::size_t c, cudaStream_t s) {
                   return t.rank_device(in, out, c, s);
                 },
                 [](const SdslTree& wt, const RankQuery<Symbol>& q) { return wt.rank(q.position, q.symbol); });
    case Op::select:
      return run(d.select_queries(), std::uint64_t{},
                 [](const T& t, const SelectQuery<Symbol>* in, std::uint64_t* out, std::size_t c) { return t.select(in, out, c); },
                 [](const T& t, const SelectQuery<Symbol>* in, std::uint64_t* out, std::size_t c, cudaStream_t s) {
                   return t.select_device(in, out, c, s);
                 },
                 [](const SdslTree& wt, const SelectQuery<Symbol>& q) { return wt.select(q.k, q.symbol); });
  }
}

// The card's limit for this tree: random loads over a buffer of the GPU tree's size.
template <class Symbol>
void bm_gather(benchmark::State& state, std::uint64_t sigma, unsigned load_bytes) {
  if (!gpu_present()) return state.SkipWithError(kNoGpu);
  auto tree = data<Symbol>(sigma).wtmap(Backend::gpu);
  if (!tree.ok()) return state.SkipWithError(tree.status().message().c_str());
  gather_benchmark(state, (*tree)->size_in_bytes(), load_bytes, g_max_batch);
  state.counters["levels"] = levels_for(sigma);
}

// Construction from a host text of n symbols, whole or in chunks of `chunk` symbols (the build of a
// text larger than the device; 0: as build() chooses). The API only builds from host memory, so
// the time includes the text's host-to-device copy; the text copy is measured on its own
// afterwards and reported as text_h2d_s (the copy floor), with build_minus_h2d_s = mean build
// time - text_h2d_s and over_h2d = mean build time / text_h2d_s.
template <class Symbol>
void bm_build(benchmark::State& state, std::uint64_t n, std::uint64_t sigma, Backend backend, bool given_alphabet,
              std::uint64_t chunk) {
  if (backend == Backend::gpu && !gpu_present()) return state.SkipWithError(kNoGpu);
  const std::vector<Symbol> text = random_text<Symbol>(n, sigma, 0xB0117ull + sigma);
  WaveletTreeOptions options{backend, given_alphabet ? sigma : 0};
  options.chunk = chunk;
  std::optional<Result<WaveletTree<Symbol>>> tree;
  double total = 0;  // of the timed builds (the warm-up build is the first call)
  std::uint64_t calls = 0;
  run_timed(
      state, Clock::wall, nullptr, n, n,
      [&](std::size_t) -> Error {
        const double s = wall_seconds([&] { tree.emplace(WaveletTree<Symbol>::build(text.data(), n, options)); });
        if (!tree->ok()) return tree->status().message();
        if (calls++ > 0) total += s;
        return {};
      },
      [&] { tree.reset(); });  // freeing the tree is not part of the build
  if (state.error_occurred()) return;
  const double mean = total / static_cast<double>(std::max<benchmark::IterationCount>(1, state.iterations()));
  state.counters["build_s"] = mean;
  state.counters["levels"] = levels_for(sigma);
  if (backend != Backend::gpu) return;
  CudaArray<Symbol> d_text;
  double copy = 0;
  auto measure = [&]() -> Error {
    BENCH_OK(d_text.allocate(CudaArray<Symbol>::device, n));
    BENCH_CUDA(cudaMemcpy(d_text.data(), text.data(), n * sizeof(Symbol), cudaMemcpyHostToDevice));  // warm-up
    for (int i = 0; i < 3; ++i) {
      cudaError_t err = cudaSuccess;
      copy += wall_seconds([&] { err = cudaMemcpy(d_text.data(), text.data(), n * sizeof(Symbol), cudaMemcpyHostToDevice); });
      BENCH_CUDA(err);
    }
    copy /= 3;
    return {};
  };
  if (Error e = measure(); !e.empty()) return state.SkipWithError(e.c_str());
  state.counters["text_h2d_s"] = copy;
  state.counters["build_minus_h2d_s"] = mean - copy;
  state.counters["over_h2d"] = mean / copy;
}

void register_all() {
  const std::uint64_t build_n = std::uint64_t{1} << env_u64("WTMAP_BENCH_WT_BUILD_LOG2N", 30, 22);
  g_tree_n = std::uint64_t{1} << env_u64("WTMAP_BENCH_WT_LOG2N", 28, 20);
  const auto sigmas = env_list("WTMAP_BENCH_WT_SIGMAS", {4, 256, 20000}, {4, 256, 20000});
  const auto batches = env_list("WTMAP_BENCH_WT_BATCHES", {100000, 1000000, 10000000, 100000000}, {10000, 100000, 1000000});
  const std::uint64_t cpu_max = env_u64("WTMAP_BENCH_CPU_MAX_BATCH", 10000000, 1000000);
  const bool build_cpu = env_u64("WTMAP_BENCH_WT_BUILD_CPU", 0, 1) != 0;
  // GPU builds from chunks of this many symbols too (0: none).
  const std::uint64_t build_chunk = env_u64("WTMAP_BENCH_WT_BUILD_CHUNK", 0, 0);
  g_max_batch = 0;
  for (auto b : batches) g_max_batch = std::max<std::size_t>(g_max_batch, b);
  benchmark::AddCustomContext("wtmap_wt_n", std::to_string(g_tree_n));
  benchmark::AddCustomContext("wtmap_wt_build_n", std::to_string(build_n));
  benchmark::AddCustomContext("wtmap_cpu_max_batch", std::to_string(cpu_max));

  auto reg = [](const std::string& n, auto fn) {
    return benchmark::RegisterBenchmark(n.c_str(), fn)->UseManualTime()->Unit(benchmark::kMillisecond);
  };
  auto for_symbol = [](std::uint64_t sigma, auto f) {  // uint8_t text up to 256 symbols, else uint16_t
    if (sigma <= 256) f(std::uint8_t{}); else f(std::uint16_t{});
  };
  const std::string sig = "/sigma=";

  for (std::uint64_t sigma : sigmas) {
    for_symbol(sigma, [&](auto tag) {
      using Symbol = decltype(tag);
      for (Backend b : {Backend::gpu, Backend::cpu}) {
        if (b == Backend::cpu && !build_cpu) continue;
        for (bool given : {true, false}) {
          reg(std::string("wt_build/") + (b == Backend::gpu ? "wtmap_gpu" : "wtmap_cpu") + sig + std::to_string(sigma) +
                  "/n=" + pretty_count(build_n) + "/alphabet=" + (given ? "given" : "extracted"),
              [=](benchmark::State& st) { bm_build<Symbol>(st, build_n, sigma, b, given, 0); });
          if (b != Backend::gpu || build_chunk == 0) continue;
          reg(std::string("wt_build/wtmap_gpu_chunks") + sig + std::to_string(sigma) + "/n=" + pretty_count(build_n) +
                  "/chunk=" + pretty_count(build_chunk) + "/alphabet=" + (given ? "given" : "extracted"),
              [=](benchmark::State& st) { bm_build<Symbol>(st, build_n, sigma, b, given, build_chunk); });
        }
      }
    });
  }
  // All benchmarks on one text are registered together, so each text and tree is built once.
  for (std::uint64_t sigma : sigmas) {
    for_symbol(sigma, [&](auto tag) {
      using Symbol = decltype(tag);
      for (Op op : {Op::access, Op::rank, Op::select}) {
        for (std::uint64_t batch : batches) {
          for (Impl impl : {Impl::gpu_device, Impl::gpu_pageable, Impl::gpu_pinned, Impl::wtmap_cpu, Impl::sdsl}) {
            if (!is_gpu(impl) && batch > cpu_max) continue;
            reg(std::string("wt/") + op_name(op) + "/" + impl_name(impl) + sig + std::to_string(sigma) +
                    "/q=" + pretty_count(batch),
                [=](benchmark::State& st) { bm_query<Symbol>(st, sigma, op, impl, batch); });
          }
        }
      }
      for (unsigned bytes : {32u, 64u}) {
        reg(std::string("wt/gather") + std::to_string(bytes) + "/gpu" + sig + std::to_string(sigma),
            [=](benchmark::State& st) { bm_gather<Symbol>(st, sigma, bytes); });
      }
    });
  }
}

}  // namespace
}  // namespace wtmap::bench

int main(int argc, char** argv) {
  return wtmap::bench::benchmark_main(argc, argv, "the CPU and SDSL parts", wtmap::bench::register_all);
}
