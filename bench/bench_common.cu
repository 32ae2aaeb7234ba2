#include "bench_common.hpp"

#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "wtmap/core/config.hpp"

namespace wtmap::bench {

bool quick_mode() {
  const char* v = std::getenv("WTMAP_BENCH_QUICK");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

namespace {

// "123", "1e7", "2^30", "10^8".
std::uint64_t parse_u64(const std::string& s) {
  const auto caret = s.find('^');
  if (caret != std::string::npos) {
    return static_cast<std::uint64_t>(std::llround(std::pow(std::stod(s.substr(0, caret)), std::stod(s.substr(caret + 1)))));
  }
  return static_cast<std::uint64_t>(std::llround(std::stod(s)));
}

}  // namespace

std::uint64_t env_u64(const char* name, std::uint64_t full, std::uint64_t quick) {
  const char* v = std::getenv(name);
  if (v != nullptr && *v != '\0') return parse_u64(v);
  return quick_mode() ? quick : full;
}

std::vector<std::uint64_t> env_list(const char* name, const std::vector<std::uint64_t>& full,
                                    const std::vector<std::uint64_t>& quick) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return quick_mode() ? quick : full;
  std::vector<std::uint64_t> out;
  std::stringstream ss(v);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(parse_u64(item));
  }
  return out;
}

std::string pretty_count(std::uint64_t x) {
  if (x != 0 && (x & (x - 1)) == 0) return "2^" + std::to_string(__builtin_ctzll(x));
  unsigned e = 0;
  std::uint64_t y = x;
  while (y >= 10 && y % 10 == 0) {
    y /= 10;
    ++e;
  }
  if (y == 1 && e > 0) return "10^" + std::to_string(e);
  return std::to_string(x);
}

int host_threads() { return omp_get_max_threads(); }

bool gpu_present() {
  static const bool present = wtmap::gpu_available();
  return present;
}

Error cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  return std::string(call) + " failed: " + cudaGetErrorString(err) + " (" + file + ":" + std::to_string(line) + ")";
}

void add_common_context() {
  std::string card = "none";
  if (gpu_present()) {
    cudaDeviceProp prop{};
    int dev = 0;
    if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess) card = prop.name;
  }
  benchmark::AddCustomContext("wtmap_gpu", card);
  if (gpu_present()) {
    // The L2's fetch granularity decides whether a 32-byte load also brings in its 64-byte
    // neighbour from DRAM (CUDA runtime API, cudaLimitMaxL2FetchGranularity). It is a hint for the
    // whole context; WTMAP_BENCH_L2_FETCH_BYTES sets it for every benchmark of the run alike.
    if (const char* v = std::getenv("WTMAP_BENCH_L2_FETCH_BYTES"); v != nullptr && *v != '\0') {
      const cudaError_t err = cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, std::strtoull(v, nullptr, 10));
      if (err != cudaSuccess) std::fprintf(stderr, "cudaDeviceSetLimit(L2 fetch granularity): %s\n", cudaGetErrorString(err));
    }
    std::size_t fetch = 0;
    if (cudaDeviceGetLimit(&fetch, cudaLimitMaxL2FetchGranularity) == cudaSuccess) {
      benchmark::AddCustomContext("wtmap_l2_fetch_bytes", std::to_string(fetch));
    }
  }
  benchmark::AddCustomContext("wtmap_host_threads", std::to_string(host_threads()));
  benchmark::AddCustomContext("wtmap_quick", quick_mode() ? "1" : "0");
}

// ---- Random gather --------------------------------------------------------------------------

namespace {

constexpr unsigned kGatherThreads = 256;

// One load of kVecs 16-byte vectors from slot idx[i]; independent loads per thread, like rank.
template <unsigned kVecs>
__global__ void __launch_bounds__(kGatherThreads)
    gather_kernel(const uint4* buffer, const std::uint64_t* idx, std::uint64_t* out, std::uint64_t count) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    const uint4* p = buffer + idx[i] * kVecs;
    std::uint64_t acc = 0;
#pragma unroll
    for (unsigned v = 0; v < kVecs; ++v) {
      const uint4 x = p[v];
      acc ^= (std::uint64_t{x.x} | (std::uint64_t{x.y} << 32)) ^ (std::uint64_t{x.z} | (std::uint64_t{x.w} << 32));
    }
    out[i] = acc;
  }
}

template <unsigned kVecs>
Error launch_gather(const uint4* buffer, const std::uint64_t* idx, std::uint64_t* out, std::uint64_t count,
                    cudaStream_t stream) {
  static int grid = 0;
  if (grid == 0) {  // a persistent grid, as the query kernels use
    int per_sm = 0, dev = 0, sms = 0;
    BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gather_kernel<kVecs>, kGatherThreads, 0));
    BENCH_CUDA(cudaGetDevice(&dev));
    BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    grid = std::max(1, per_sm) * sms;
  }
  const int blocks = static_cast<int>(std::min<std::uint64_t>(grid, (count + kGatherThreads - 1) / kGatherThreads));
  gather_kernel<kVecs><<<blocks, kGatherThreads, 0, stream>>>(buffer, idx, out, count);
  BENCH_CUDA(cudaGetLastError());
  return {};
}

}  // namespace

void gather_benchmark(benchmark::State& state, std::size_t buffer_bytes, unsigned load_bytes, std::size_t count) {
  if (!gpu_present()) return state.SkipWithError(kNoGpu);
  if (load_bytes != 32 && load_bytes != 64) return state.SkipWithError("gather: load_bytes must be 32 or 64");
  const std::uint64_t slots = std::max<std::uint64_t>(1, buffer_bytes / load_bytes);
  CudaArray<uint4> buffer;
  CudaArray<std::uint64_t> idx, out;
  cudaStream_t stream = nullptr;
  auto setup = [&]() -> Error {
    BENCH_OK(buffer.allocate(CudaArray<uint4>::device, slots * load_bytes / 16));
    BENCH_CUDA(cudaMemset(buffer.data(), 0x5A, slots * load_bytes));
    std::vector<std::uint64_t> h(count);
    parallel_generate(h.data(), count, 0x6A7E4ull + load_bytes, [slots](Rng& r) { return r.below(slots); });
    BENCH_OK(idx.assign(CudaArray<std::uint64_t>::device, h.data(), count));
    BENCH_OK(out.allocate(CudaArray<std::uint64_t>::device, count));
    BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return {};
  };
  if (Error e = setup(); !e.empty()) {
    if (stream != nullptr) cudaStreamDestroy(stream);
    return state.SkipWithError(e.c_str());
  }
  run_timed(state, Clock::cuda_events, stream, count, count, [&](std::size_t n) -> Error {
    if (load_bytes == 32) {
      BENCH_OK(launch_gather<2>(buffer.data(), idx.data(), out.data(), n, stream));
    } else {
      BENCH_OK(launch_gather<4>(buffer.data(), idx.data(), out.data(), n, stream));
    }
    BENCH_CUDA(cudaStreamSynchronize(stream));
    return {};
  });
  state.counters["buffer_MiB"] = static_cast<double>(buffer_bytes) / (1 << 20);
  state.counters["load_bytes"] = load_bytes;
  cudaStreamDestroy(stream);
}

void h2d_benchmark(benchmark::State& state, std::size_t bytes, bool pinned) {
  if (!gpu_present()) return state.SkipWithError(kNoGpu);
  CudaArray<std::uint8_t> dst, pinned_src;
  std::vector<std::uint8_t> pageable_src;
  const std::uint8_t* src = nullptr;
  auto setup = [&]() -> Error {
    BENCH_OK(dst.allocate(CudaArray<std::uint8_t>::device, bytes));
    if (pinned) {
      BENCH_OK(pinned_src.allocate(CudaArray<std::uint8_t>::pinned, bytes));
      std::memset(pinned_src.data(), 0x3C, bytes);
      src = pinned_src.data();
    } else {
      pageable_src.assign(bytes, 0x3C);  // touched, so the copy measures no page faults
      src = pageable_src.data();
    }
    return {};
  };
  if (Error e = setup(); !e.empty()) return state.SkipWithError(e.c_str());
  run_timed(state, Clock::wall, nullptr, bytes, bytes, [&](std::size_t n) -> Error {
    BENCH_CUDA(cudaMemcpy(dst.data(), src, n, cudaMemcpyHostToDevice));
    return {};
  });
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
}

int benchmark_main(int argc, char** argv, const char* without_gpu, void (*register_all)()) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  add_common_context();
  if (!gpu_present()) std::fprintf(stderr, "note: %s; running %s only\n", kNoGpu, without_gpu);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace wtmap::bench
