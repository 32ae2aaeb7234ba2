// wtmap benchmarks: what every benchmark program shares -- sizes from the environment, the one
// random-data helper, the one timing helper, CUDA checks, owning device/pinned arrays, and the
// card-limit measurements (random gather, host-to-device bandwidth) in bench_common.cu.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "wtmap/core/config.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::bench {

// ---- Configuration (environment) -----------------------------------------------------------

// WTMAP_BENCH_QUICK=1 selects the small smoke-test sizes.
bool quick_mode();
// An unsigned number from the environment ("1e7", "100000000" and "2^30" are accepted), or the
// default (`quick` in quick mode, else `full`).
std::uint64_t env_u64(const char* name, std::uint64_t full, std::uint64_t quick);
// A comma-separated list of such numbers.
std::vector<std::uint64_t> env_list(const char* name, const std::vector<std::uint64_t>& full,
                                    const std::vector<std::uint64_t>& quick);
// "2^30", "10^7" or the plain number, for benchmark names.
std::string pretty_count(std::uint64_t x);

// Host threads used by the CPU baselines (OpenMP) and recorded in the output context.
int host_threads();
// Adds card name, host threads and the quick flag to the JSON context; call once from main.
void add_common_context();

// The main() of every benchmark program: Google Benchmark's flags, the shared context, a note
// naming what still runs without a GPU (`without_gpu`), then the program's registrations.
int benchmark_main(int argc, char** argv, const char* without_gpu, void (*register_all)());

// ---- GPU presence and error handling -------------------------------------------------------

bool gpu_present();
// Message for benchmarks that need a GPU on a machine without one.
constexpr const char* kNoGpu = "no usable CUDA device: GPU benchmark skipped";

// An error message, empty when all went well; what the timed bodies return.
using Error = std::string;
inline Error to_error(const Status& s) { return s.ok() ? Error{} : s.message(); }
Error cuda_error(cudaError_t err, const char* call, const char* file, int line);

}  // namespace wtmap::bench

// Evaluates a CUDA call; on failure returns its message (an Error) from the current function.
#define BENCH_CUDA(call)                                                                      \
  do {                                                                                        \
    const cudaError_t bench_err_ = (call);                                                    \
    if (bench_err_ != cudaSuccess)                                                            \
      return ::wtmap::bench::cuda_error(bench_err_, #call, __FILE__, __LINE__);               \
  } while (0)
// Evaluates a wtmap call returning Status; on failure returns its message.
#define BENCH_TRY(expr)                                                 \
  do {                                                                  \
    const ::wtmap::Status bench_status_ = (expr);                       \
    if (!bench_status_.ok()) return bench_status_.message();            \
  } while (0)
// Evaluates an expression returning Error; on failure returns it.
#define BENCH_OK(expr)                            \
  do {                                            \
    ::wtmap::bench::Error bench_e_ = (expr);      \
    if (!bench_e_.empty()) return bench_e_;       \
  } while (0)

namespace wtmap::bench {

// ---- Random data -----------------------------------------------------------------------------

// splitmix64: small, fast, good enough for benchmark inputs.
struct Rng {
  std::uint64_t state;
  std::uint64_t operator()() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound).
  std::uint64_t below(std::uint64_t bound) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>((*this)()) * bound) >> 64);
  }
};

// THE random-data helper: out[i] = gen(rng) for i in [0, n), in parallel over all host cores.
// The output depends only on `seed` (each fixed-size chunk has its own generator), not on the
// number of threads.
template <class T, class Gen>
void parallel_generate(T* out, std::size_t n, std::uint64_t seed, Gen gen) {
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  const std::int64_t chunks = static_cast<std::int64_t>((n + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) {
    Rng rng{seed * 0x632BE59BD9B4E019ull + static_cast<std::uint64_t>(c) * 0x9E3779B97F4A7C15ull};
    rng();
    const std::size_t end = std::min(n, static_cast<std::size_t>(c + 1) * kChunk);
    for (std::size_t i = static_cast<std::size_t>(c) * kChunk; i < end; ++i) out[i] = gen(rng);
  }
}

// Four counts folded into one checked word (odd multipliers, so each count matters): what the
// DNA rank_all kernels write per query.
WTMAP_HD std::uint64_t fold4(const std::uint64_t r[4]) {
  return r[0] * 0x9E3779B97F4A7C15ull + r[1] * 0xC2B2AE3D27D4EB4Full + r[2] * 0x165667B19E3779F9ull +
         r[3] * 0x27D4EB2F165667C5ull;
}

// ---- Timing ----------------------------------------------------------------------------------

enum class Clock {
  wall,         // steady_clock around the whole call (CPU work; GPU calls on host memory, copies included)
  cuda_events,  // CUDA events on `stream` around the call (kernel throughput, device-resident data)
};

// THE timing helper. Runs body(warmup_count) once untimed, then body(count) once per benchmark
// iteration, reporting the measured time as the iteration time (register with UseManualTime())
// and `count` items per iteration. body returns an Error; the first one aborts the benchmark.
// after() runs untimed after each iteration (e.g. to free what the body built).
struct Nothing {
  void operator()() const {}
};
template <class Body, class After = Nothing>
void run_timed(benchmark::State& state, Clock clock, cudaStream_t stream, std::size_t count,
               std::size_t warmup_count, Body&& body, After&& after = {}) {
  auto fail = [&](const Error& e) { state.SkipWithError(e.c_str()); };
  if (Error e = body(warmup_count); !e.empty()) return fail(e);
  after();
  cudaEvent_t start = nullptr, stop = nullptr;
  if (clock == Clock::cuda_events) {
    if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess)
      return fail("cudaEventCreate failed");
  }
  Error error;
  for (auto _ : state) {
    double seconds = 0;
    if (clock == Clock::cuda_events) {
      cudaEventRecord(start, stream);
      error = body(count);
      float ms = 0;
      if (error.empty() && (cudaEventRecord(stop, stream) != cudaSuccess || cudaEventSynchronize(stop) != cudaSuccess ||
                            cudaEventElapsedTime(&ms, start, stop) != cudaSuccess)) {
        error = "timing with CUDA events failed";
      }
      seconds = ms * 1e-3;
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      error = body(count);
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (!error.empty()) break;
    state.SetIterationTime(seconds);
    after();
  }
  if (start != nullptr) cudaEventDestroy(start);
  if (stop != nullptr) cudaEventDestroy(stop);
  if (!error.empty()) return fail(error);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(count));
}

// Seconds of one call, by wall clock.
template <class F>
double wall_seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ---- Owning memory ---------------------------------------------------------------------------

// cudaMalloc'd (kind == device) or cudaMallocHost'd (kind == pinned) array; never managed memory.
template <class T>
class CudaArray {
 public:
  enum Kind { device, pinned };
  CudaArray() = default;
  CudaArray(const CudaArray&) = delete;
  CudaArray& operator=(const CudaArray&) = delete;
  CudaArray(CudaArray&& o) noexcept { *this = std::move(o); }
  CudaArray& operator=(CudaArray&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(size_, o.size_);
    std::swap(kind_, o.kind_);
    return *this;
  }
  ~CudaArray() { release(); }

  Error allocate(Kind kind, std::size_t n) {
    release();
    kind_ = kind;
    void* p = nullptr;
    if (kind == device) {
      BENCH_CUDA(cudaMalloc(&p, n * sizeof(T)));
    } else {
      BENCH_CUDA(cudaMallocHost(&p, n * sizeof(T)));
    }
    ptr_ = static_cast<T*>(p);
    size_ = n;
    return {};
  }
  // Allocates and copies n elements from host memory.
  Error assign(Kind kind, const T* src, std::size_t n) {
    BENCH_OK(allocate(kind, n));
    BENCH_CUDA(cudaMemcpy(ptr_, src, n * sizeof(T), cudaMemcpyDefault));
    return {};
  }
  T* data() const { return ptr_; }
  std::size_t size() const { return size_; }
  bool empty() const { return ptr_ == nullptr; }

 private:
  void release() {
    if (ptr_ != nullptr) {
      if (kind_ == device) cudaFree(ptr_); else cudaFreeHost(ptr_);
    }
    ptr_ = nullptr;
    size_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
  Kind kind_ = device;
};

// ---- The card's limits (bench_common.cu) ----------------------------------------------------

// `count` independent random loads of `load_bytes` (32 or 64) aligned bytes from a device buffer
// of `buffer_bytes`, with indices read from and one word per load written to device memory like
// the queries of a rank batch. Reports loads/s. Register with UseManualTime().
void gather_benchmark(benchmark::State& state, std::size_t buffer_bytes, unsigned load_bytes, std::size_t count);

// Host-to-device copy bandwidth of `bytes` from pageable or pinned host memory; reports bytes/s
// (and items/s = bytes/s). Register with UseManualTime().
void h2d_benchmark(benchmark::State& state, std::size_t bytes, bool pinned);

// Writes `count` results' agreement: compares out[0, min(count, ref.size())) against ref.
template <class A, class B>
Error check_prefix(const A* out, std::size_t count, const std::vector<B>& ref, const char* what) {
  const std::size_t m = std::min(count, ref.size());
  for (std::size_t i = 0; i < m; ++i) {
    if (static_cast<std::uint64_t>(out[i]) != static_cast<std::uint64_t>(ref[i])) {
      return std::string(what) + ": result " + std::to_string(i) + " is " + std::to_string(static_cast<std::uint64_t>(out[i])) +
             ", the reference (SDSL) says " + std::to_string(static_cast<std::uint64_t>(ref[i]));
    }
  }
  return {};
}

template <class T>
Error cuda_to_host(T* dst, const T* src, std::size_t n) {
  BENCH_CUDA(cudaMemcpy(dst, src, n * sizeof(T), cudaMemcpyDeviceToHost));
  return {};
}

// Where the queries of a wtmap GPU batch live.
enum class Source { device, pageable, pinned };
inline const char* source_name(Source s) {
  return s == Source::device ? "device" : s == Source::pageable ? "pageable" : "pinned";
}


// ---- Batched query runners (shared by all query benchmarks) -------------------------------

constexpr std::size_t kCpuWarmup = std::size_t{1} << 20;  // warm-up queries of wall-clock CPU runs

// A wtmap batch: from `source` (device: queries copied to the card first, timed with CUDA events
// around `device_call`; pageable/pinned: wall time of `host_call`, copies included). For the CPU
// backend pass Source::pageable and gpu = false. Results are checked against `ref` afterwards.
//   host_call(const In*, Out*, n) -> Status;  device_call(const In*, Out*, n, cudaStream_t) -> Status
template <class In, class Out, class HostCall, class DeviceCall>
void run_wtmap_batch(benchmark::State& state, bool gpu, Source source, const std::vector<In>& queries, std::size_t count,
                     const std::vector<std::uint64_t>& ref, HostCall&& host_call, DeviceCall&& device_call) {
  if (gpu && !gpu_present()) return state.SkipWithError(kNoGpu);
  if (count > queries.size()) return state.SkipWithError("more queries asked for than generated");
  CudaArray<In> in;
  CudaArray<Out> out;
  std::vector<Out> host_out;
  cudaStream_t stream = nullptr;
  auto setup = [&]() -> Error {
    if (source == Source::device) {
      BENCH_OK(in.assign(CudaArray<In>::device, queries.data(), count));
      BENCH_OK(out.allocate(CudaArray<Out>::device, count));
      BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    } else if (source == Source::pinned) {
      BENCH_OK(in.assign(CudaArray<In>::pinned, queries.data(), count));
      BENCH_OK(out.allocate(CudaArray<Out>::pinned, count));
      std::memset(static_cast<void*>(out.data()), 0, count * sizeof(Out));
    } else {
      host_out.assign(count, Out{});
    }
    return {};
  };
  if (Error e = setup(); !e.empty()) return state.SkipWithError(e.c_str());
  const In* q = source == Source::pageable ? queries.data() : in.data();
  Out* o = source == Source::pageable ? host_out.data() : out.data();
  const std::size_t warmup = gpu ? count : std::min(count, kCpuWarmup);
  if (source == Source::device) {
    run_timed(state, Clock::cuda_events, stream, count, warmup,
              [&](std::size_t n) { return to_error(device_call(q, o, n, stream)); });
  } else {
    run_timed(state, Clock::wall, nullptr, count, warmup, [&](std::size_t n) { return to_error(host_call(q, o, n)); });
  }
  if (!state.error_occurred()) {
    std::vector<Out> prefix(std::min(count, ref.size()));
    Error e;
    if (source == Source::device) {
      e = cuda_to_host(prefix.data(), o, prefix.size());
      o = prefix.data();
    }
    if (e.empty()) e = check_prefix(o, prefix.size(), ref, "wtmap");
    if (!e.empty()) state.SkipWithError(e.c_str());
  }
  if (stream != nullptr) cudaStreamDestroy(stream);
}

// A baseline batch on all host cores: out[i] = query(i) in an OpenMP parallel for, wall time.
template <class Out, class Query>
void run_omp_batch(benchmark::State& state, std::size_t count, const std::vector<std::uint64_t>& ref, Query&& query) {
  std::vector<Out> out(count, Out{});
  run_timed(state, Clock::wall, nullptr, count, std::min(count, kCpuWarmup), [&](std::size_t n) -> Error {
    const auto m = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < m; ++i) out[i] = query(static_cast<std::size_t>(i));
    return {};
  });
  if (!state.error_occurred()) {
    if (Error e = check_prefix(out.data(), count, ref, "baseline"); !e.empty()) state.SkipWithError(e.c_str());
  }
}

}  // namespace wtmap::bench
