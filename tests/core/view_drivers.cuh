// Test configurations that query through the views (RankSelectView, WaveletTreeView<Symbol>)
// directly: a plain host loop over a CPU-backed structure, and a test kernel over a GPU-backed
// one whose queries and answers live in device memory. Both call the same query functors.
// Include from .cu files only.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "wtmap/core/bit_vector.hpp"
#include "wtmap/core/wavelet_tree.hpp"

namespace wtmap::test {

// ---- One functor per view query (valid queries only: the views do not check ranges) ---------

struct BvRank1 {
  RankSelectView v;
  __host__ __device__ std::uint64_t operator()(std::uint64_t i) const { return v.rank1(i); }
};
struct BvRank0 {
  RankSelectView v;
  __host__ __device__ std::uint64_t operator()(std::uint64_t i) const { return v.rank0(i); }
};
struct BvSelect1 {
  RankSelectView v;
  __host__ __device__ std::uint64_t operator()(std::uint64_t k) const { return v.select1(k); }
};
struct BvSelect0 {
  RankSelectView v;
  __host__ __device__ std::uint64_t operator()(std::uint64_t k) const { return v.select0(k); }
};
struct BvAccess {
  RankSelectView v;
  __host__ __device__ std::uint8_t operator()(std::uint64_t i) const { return v.access(i) ? 1 : 0; }
};
template <class S, unsigned A>
struct WtAccess {
  WaveletTreeView<S, A> v;
  __host__ __device__ S operator()(std::uint64_t i) const { return v.access(i); }
};
template <class S, unsigned A>
struct WtRank {
  WaveletTreeView<S, A> v;
  __host__ __device__ std::uint64_t operator()(const RankQuery<S>& q) const { return v.rank(q.symbol, q.position); }
};
template <class S, unsigned A>
struct WtSelect {
  WaveletTreeView<S, A> v;
  __host__ __device__ std::uint64_t operator()(const SelectQuery<S>& q) const { return v.select(q.symbol, q.k); }
};

// ---- Running a functor over a batch -----------------------------------------------------

template <class F, class In, class Out>
__global__ void apply_kernel(F f, const In* in, Out* out, std::size_t count) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) out[i] = f(in[i]);
}

inline Status cuda_status(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return {};
  return {StatusCode::cuda_error, std::string(what) + ": " + cudaGetErrorString(e)};
}

template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t n) : status_(allocate(n)) {}
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() {
    if (data_ != nullptr) cudaFree(data_);
  }
  const Status& status() const { return status_; }
  T* data() { return data_; }

 private:
  // Zero-filled, so that copying back answers with padding bytes reads no uninitialised memory
  // (compute-sanitizer initcheck).
  Status allocate(std::size_t n) {
    if (n == 0) return {};
    WTMAP_TRY(cuda_status(cudaMalloc(reinterpret_cast<void**>(&data_), n * sizeof(T)), "cudaMalloc"));
    return cuda_status(cudaMemset(data_, 0, n * sizeof(T)), "cudaMemset");
  }

  T* data_ = nullptr;  // before status_, which allocate() initialises
  Status status_;
};

template <class Out, class F, class In>
Result<std::vector<Out>> run_on_host(F f, const std::vector<In>& queries) {
  std::vector<Out> out(queries.size());
  for (std::size_t i = 0; i < queries.size(); ++i) out[i] = f(queries[i]);
  return out;
}

// Copies the queries to device memory, answers them in apply_kernel and copies the answers back.
template <class Out, class F, class In>
Result<std::vector<Out>> run_on_device(F f, const std::vector<In>& queries) {
  std::vector<Out> out(queries.size());
  if (queries.empty()) return out;
  DeviceArray<In> d_in(queries.size());
  DeviceArray<Out> d_out(queries.size());
  WTMAP_TRY(d_in.status());
  WTMAP_TRY(d_out.status());
  WTMAP_TRY(cuda_status(cudaMemcpy(d_in.data(), queries.data(), queries.size() * sizeof(In), cudaMemcpyHostToDevice),
                        "copying queries"));
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(1024, (queries.size() + 255) / 256));
  apply_kernel<<<blocks, 256>>>(f, d_in.data(), d_out.data(), queries.size());
  WTMAP_TRY(cuda_status(cudaGetLastError(), "launching apply_kernel"));
  WTMAP_TRY(cuda_status(cudaDeviceSynchronize(), "running apply_kernel"));
  WTMAP_TRY(cuda_status(cudaMemcpy(out.data(), d_out.data(), queries.size() * sizeof(Out), cudaMemcpyDeviceToHost),
                        "copying answers"));
  return out;
}

template <Backend B>
struct ViewDriver {
  static constexpr Backend kBackend = B;
  static std::string name() { return B == Backend::cpu ? "CpuViewLoop" : "GpuViewKernel"; }
  using U64s = std::vector<std::uint64_t>;

  template <class Out, class F, class In>
  static Result<std::vector<Out>> run(F f, const std::vector<In>& queries) {
    if constexpr (B == Backend::cpu) {
      return run_on_host<Out>(f, queries);
    } else {
      return run_on_device<Out>(f, queries);
    }
  }

  static Result<U64s> rank1(const RankSelectBitVector& bv, const U64s& q) { return run<std::uint64_t>(BvRank1{bv.view()}, q); }
  static Result<U64s> rank0(const RankSelectBitVector& bv, const U64s& q) { return run<std::uint64_t>(BvRank0{bv.view()}, q); }
  static Result<U64s> select1(const RankSelectBitVector& bv, const U64s& q) { return run<std::uint64_t>(BvSelect1{bv.view()}, q); }
  static Result<U64s> select0(const RankSelectBitVector& bv, const U64s& q) { return run<std::uint64_t>(BvSelect0{bv.view()}, q); }
  static Result<std::vector<std::uint8_t>> access(const RankSelectBitVector& bv, const U64s& q) {
    return run<std::uint8_t>(BvAccess{bv.view()}, q);
  }

  template <class S, unsigned A>
  static Result<std::vector<S>> access(const WaveletTree<S, A>& t, const U64s& q) {
    return run<S>(WtAccess<S, A>{t.view()}, q);
  }
  template <class S, unsigned A>
  static Result<U64s> rank(const WaveletTree<S, A>& t, const std::vector<RankQuery<S>>& q) {
    return run<std::uint64_t>(WtRank<S, A>{t.view()}, q);
  }
  template <class S, unsigned A>
  static Result<U64s> select(const WaveletTree<S, A>& t, const std::vector<SelectQuery<S>>& q) {
    return run<std::uint64_t>(WtSelect<S, A>{t.view()}, q);
  }
};

using CpuViewLoop = ViewDriver<Backend::cpu>;
using GpuViewKernel = ViewDriver<Backend::gpu>;

}  // namespace wtmap::test
