// Binary rank1/select1 throughput: wtmap on the GPU (queries on the device: kernel throughput;
// queries in pageable or pinned host memory: whole-call wall time), wtmap's CPU backend, and
// SDSL rank_support_v5<1> / select_support_mcl<1> with OpenMP over all host cores; plus the
// card's limit (random 32/64-byte gathers over a buffer of the structure's size) and the
// host-to-device copy bandwidth. Sizes: see README.md (WTMAP_BENCH_* variables).
#include <sdsl/bit_vectors.hpp>

#include <cstdio>
#include <memory>
#include <optional>

#include "bench_common.hpp"
#include "wtmap/core/bit_vector.hpp"

namespace wtmap::bench {
namespace {

enum class Op { rank1, select1 };
const char* op_name(Op op) { return op == Op::rank1 ? "rank1" : "select1"; }

constexpr std::size_t kReferenceQueries = 1000;

// One random bit vector (n bits, `fill` percent ones, uniform) with its queries and, built on
// first use, every structure the benchmarks compare. Only one is alive at a time.
class BitVectorData {
 public:
  BitVectorData(std::uint64_t n, unsigned fill, std::size_t queries) : n_(n), fill_(fill), bits_(n, 0) {
    const std::uint64_t threshold = (std::uint64_t{fill} << 16) / 100;  // P(one) = fill % (to 2^-16)
    std::uint64_t* words = bits_.data();
    parallel_generate(words, (n + 63) / 64, 0xB17ull * 100 + fill, [threshold](Rng& r) {
      if (threshold == (std::uint64_t{1} << 15)) return r();
      std::uint64_t w = 0;
      for (unsigned k = 0; k < 64; k += 4) {
        const std::uint64_t x = r();
        for (unsigned j = 0; j < 4; ++j) w |= std::uint64_t{((x >> (16 * j)) & 0xFFFF) < threshold} << (k + j);
      }
      return w;
    });
    if (n % 64 != 0) words[n / 64] &= (std::uint64_t{1} << (n % 64)) - 1;
    ones_ = sdsl::util::cnt_one_bits(bits_);
    rank_queries_.resize(queries);
    select_queries_.resize(queries);
    parallel_generate(rank_queries_.data(), queries, 0x4A4Bull, [n](Rng& r) { return r.below(n); });
    const std::uint64_t ones = std::max<std::uint64_t>(ones_, 1);
    parallel_generate(select_queries_.data(), queries, 0x5E1Eull, [ones](Rng& r) { return 1 + r.below(ones); });
  }

  bool matches(std::uint64_t n, unsigned fill) const { return n == n_ && fill == fill_; }
  std::uint64_t n() const { return n_; }
  const std::vector<std::uint64_t>& queries(Op op) const { return op == Op::rank1 ? rank_queries_ : select_queries_; }

  // SDSL structures and the reference answers to the first queries (computed with them).
  Error sdsl() {
    if (sdsl_rank_) return {};
    build_seconds_sdsl_ = wall_seconds([&] {
      sdsl_rank_.emplace(&bits_);
      sdsl_select_.emplace(&bits_);
    });
    for (Op op : {Op::rank1, Op::select1}) {
      auto& ref = reference_[static_cast<int>(op)];
      const auto& q = queries(op);
      ref.resize(std::min(q.size(), kReferenceQueries));
      for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = sdsl_answer(op, q[i]);
    }
    return {};
  }
  std::uint64_t sdsl_answer(Op op, std::uint64_t x) const { return op == Op::rank1 ? (*sdsl_rank_)(x) : (*sdsl_select_)(x); }
  const std::vector<std::uint64_t>& reference(Op op) const { return reference_[static_cast<int>(op)]; }
  double sdsl_build_seconds() const { return build_seconds_sdsl_; }

  // The wtmap structure on `backend`, built from the same bits (sdsl's 64-bit words read as
  // 32-bit words: the same bit order on little-endian hosts).
  // (Kept inside its Result: RankSelectBitVector's inline defaulted move constructor needs the
  // complete QueryWorkspace type, so user code cannot move the vector out.)
  Result<const RankSelectBitVector*> wtmap(Backend backend) {
    auto& slot = wtmap_[static_cast<int>(backend)];
    if (!slot) {
      build_seconds_wtmap_[static_cast<int>(backend)] = wall_seconds([&] {
        slot.reset(new Result<RankSelectBitVector>(
            RankSelectBitVector::build(reinterpret_cast<const std::uint32_t*>(bits_.data()), n_, backend)));
      });
    }
    if (!slot->ok()) return slot->status();
    return &slot->value();
  }
  double wtmap_build_seconds(Backend b) const { return build_seconds_wtmap_[static_cast<int>(b)]; }

 private:
  std::uint64_t n_;
  unsigned fill_;
  std::uint64_t ones_ = 0;
  sdsl::bit_vector bits_;
  std::vector<std::uint64_t> rank_queries_, select_queries_;
  std::optional<sdsl::rank_support_v5<1>> sdsl_rank_;
  std::optional<sdsl::select_support_mcl<1>> sdsl_select_;
  std::vector<std::uint64_t> reference_[2];
  double build_seconds_sdsl_ = 0;
  std::unique_ptr<Result<RankSelectBitVector>> wtmap_[2];
  double build_seconds_wtmap_[2] = {0, 0};
};

std::size_t g_queries = 0;

BitVectorData& data(std::uint64_t n, unsigned fill) {
  static std::unique_ptr<BitVectorData> current;
  if (!current || !current->matches(n, fill)) {
    current.reset();  // free the previous one first
    current = std::make_unique<BitVectorData>(n, fill, g_queries);
  }
  return *current;
}

void set_common_counters(benchmark::State& state, const BitVectorData& d) {
  state.counters["n_bits"] = static_cast<double>(d.n());
}

void bm_sdsl(benchmark::State& state, std::uint64_t n, unsigned fill, Op op) {
  BitVectorData& d = data(n, fill);
  if (Error e = d.sdsl(); !e.empty()) return state.SkipWithError(e.c_str());
  const auto& q = d.queries(op);
  run_omp_batch<std::uint64_t>(state, q.size(), d.reference(op), [&](std::size_t i) { return d.sdsl_answer(op, q[i]); });
  set_common_counters(state, d);
  state.counters["build_s"] = d.sdsl_build_seconds();
}

void bm_wtmap(benchmark::State& state, std::uint64_t n, unsigned fill, Op op, Backend backend, Source source) {
  if (backend == Backend::gpu && !gpu_present()) return state.SkipWithError(kNoGpu);
  BitVectorData& d = data(n, fill);
  if (Error e = d.sdsl(); !e.empty()) return state.SkipWithError(e.c_str());  // the reference answers
  auto bv = d.wtmap(backend);
  if (!bv.ok()) return state.SkipWithError(bv.status().message().c_str());
  const RankSelectBitVector& v = **bv;
  auto host_call = [&](const std::uint64_t* in, std::uint64_t* out, std::size_t c) {
    return op == Op::rank1 ? v.rank1(in, out, c) : v.select1(in, out, c);
  };
  auto device_call = [&](const std::uint64_t* in, std::uint64_t* out, std::size_t c, cudaStream_t s) {
    return op == Op::rank1 ? v.rank1_device(in, out, c, s) : v.select1_device(in, out, c, s);
  };
  const auto& q = d.queries(op);
  run_wtmap_batch<std::uint64_t, std::uint64_t>(state, backend == Backend::gpu, source, q, q.size(), d.reference(op),
                                                host_call, device_call);
  set_common_counters(state, d);
  state.counters["build_s"] = d.wtmap_build_seconds(backend);
  state.counters["structure_MiB"] = static_cast<double>(v.size_in_bytes()) / (1 << 20);
}

void bm_gather(benchmark::State& state, std::uint64_t n, unsigned load_bytes) {
  // The size of the wtmap structure for n bits, whatever the fill.
  gather_benchmark(state, RankSelectLayout::total_bytes(n), load_bytes, g_queries);
}

std::string name(const char* what, const char* impl, std::uint64_t n, unsigned fill) {
  return std::string("bv/") + what + "/" + impl + "/n=" + pretty_count(n) + "/fill=" + std::to_string(fill);
}

void register_all() {
  g_queries = env_u64("WTMAP_BENCH_QUERIES", 100000000, 1000000);
  const auto log2ns = env_list("WTMAP_BENCH_BV_LOG2N", {30, 33}, {24});
  const auto fills = env_list("WTMAP_BENCH_BV_FILLS", {10, 50, 90}, {10, 50, 90});
  benchmark::AddCustomContext("wtmap_queries", std::to_string(g_queries));
  auto reg = [](const std::string& n, auto fn) { return benchmark::RegisterBenchmark(n.c_str(), fn)->UseManualTime()->Unit(benchmark::kMillisecond); };
  // All benchmarks of one bit vector are registered together, so each vector is built once.
  for (std::uint64_t log2n : log2ns) {
    const std::uint64_t n = std::uint64_t{1} << log2n;
    for (std::uint64_t f : fills) {
      const auto fill = static_cast<unsigned>(f);
      for (Op op : {Op::rank1, Op::select1}) {
        for (Source s : {Source::device, Source::pageable, Source::pinned}) {
          const std::string impl = std::string("wtmap_gpu_") + source_name(s);
          reg(name(op_name(op), impl.c_str(), n, fill),
              [=](benchmark::State& st) { bm_wtmap(st, n, fill, op, Backend::gpu, s); });
        }
        reg(name(op_name(op), "wtmap_cpu", n, fill),
            [=](benchmark::State& st) { bm_wtmap(st, n, fill, op, Backend::cpu, Source::pageable); });
        reg(name(op_name(op), "sdsl", n, fill), [=](benchmark::State& st) { bm_sdsl(st, n, fill, op); });
      }
    }
    for (unsigned bytes : {32u, 64u}) {  // the card's limit for this size (any fill)
      reg(std::string("bv/gather") + std::to_string(bytes) + "/gpu/n=" + pretty_count(n),
          [=](benchmark::State& st) { bm_gather(st, n, bytes); });
    }
  }
  const std::uint64_t copy_bytes = env_u64("WTMAP_BENCH_H2D_BYTES", std::uint64_t{1} << 30, std::uint64_t{1} << 26);
  for (bool pinned : {false, true}) {
    reg(std::string("h2d/") + (pinned ? "pinned" : "pageable") + "/bytes=" + pretty_count(copy_bytes),
        [=](benchmark::State& st) { h2d_benchmark(st, copy_bytes, pinned); });
  }
}

}  // namespace
}  // namespace wtmap::bench

int main(int argc, char** argv) {
  return wtmap::bench::benchmark_main(argc, argv, "the CPU and SDSL parts", wtmap::bench::register_all);
}
