// Test configurations that query through the host batch API (RankSelectBitVector::rank1, ...,
// WaveletTree::rank, ...): the CPU backend, and the GPU backend with pageable or pinned
// (cudaMallocHost) query and result arrays. Each driver answers a vector of queries with a
// Result holding the vector of answers.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "wtmap/core/bit_vector.hpp"
#include "wtmap/core/wavelet_tree.hpp"

namespace wtmap::test {

enum class Memory { pageable, pinned };

// Page-locked host array (cudaMallocHost), freed on scope exit.
template <class T>
class PinnedArray {
 public:
  explicit PinnedArray(std::size_t n) {
    if (n > 0 && cudaMallocHost(reinterpret_cast<void**>(&data_), n * sizeof(T)) != cudaSuccess) data_ = nullptr;
    ok_ = n == 0 || data_ != nullptr;
  }
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;
  ~PinnedArray() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }
  bool ok() const { return ok_; }
  T* data() { return data_; }

 private:
  T* data_ = nullptr;
  bool ok_ = false;
};

// Runs `call(in, out, count)`, one batch method of a structure, on `queries` placed in host memory
// of kind M.
template <Memory M, class Out, class In, class Call>
Result<std::vector<Out>> run_host_batch(const std::vector<In>& queries, Call call) {
  std::vector<Out> out(queries.size());
  if constexpr (M == Memory::pageable) {
    const Status s = call(queries.data(), out.data(), queries.size());
    if (!s.ok()) return s;
  } else {
    PinnedArray<In> in_pinned(queries.size());
    PinnedArray<Out> out_pinned(queries.size());
    if (!in_pinned.ok() || !out_pinned.ok()) return Status{StatusCode::out_of_memory, "cudaMallocHost failed"};
    std::copy(queries.begin(), queries.end(), in_pinned.data());
    const Status s = call(in_pinned.data(), out_pinned.data(), queries.size());
    if (!s.ok()) return s;
    std::copy(out_pinned.data(), out_pinned.data() + queries.size(), out.begin());
  }
  return out;
}

template <Backend B, Memory M>
struct HostBatch {
  static constexpr Backend kBackend = B;
  static std::string name() {
    return B == Backend::cpu ? "CpuBatch" : (M == Memory::pinned ? "GpuBatchPinned" : "GpuBatchPageable");
  }
  using U64s = std::vector<std::uint64_t>;

  // Bit vectors.
  static Result<U64s> rank1(const RankSelectBitVector& bv, const U64s& q) {
    return run_host_batch<M, std::uint64_t>(q, [&](auto in, auto out, std::size_t n) { return bv.rank1(in, out, n); });
  }
  static Result<U64s> rank0(const RankSelectBitVector& bv, const U64s& q) {
    return run_host_batch<M, std::uint64_t>(q, [&](auto in, auto out, std::size_t n) { return bv.rank0(in, out, n); });
  }
  static Result<U64s> select1(const RankSelectBitVector& bv, const U64s& q) {
    return run_host_batch<M, std::uint64_t>(q, [&](auto in, auto out, std::size_t n) { return bv.select1(in, out, n); });
  }
  static Result<U64s> select0(const RankSelectBitVector& bv, const U64s& q) {
    return run_host_batch<M, std::uint64_t>(q, [&](auto in, auto out, std::size_t n) { return bv.select0(in, out, n); });
  }
  static Result<std::vector<std::uint8_t>> access(const RankSelectBitVector& bv, const U64s& q) {
    return run_host_batch<M, std::uint8_t>(q, [&](auto in, auto out, std::size_t n) { return bv.access(in, out, n); });
  }

  // Wavelet trees.
  template <class S, unsigned A>
  static Result<std::vector<S>> access(const WaveletTree<S, A>& t, const U64s& q) {
    return run_host_batch<M, S>(q, [&](auto in, auto out, std::size_t n) { return t.access(in, out, n); });
  }
  template <class S, unsigned A>
  static Result<U64s> rank(const WaveletTree<S, A>& t, const std::vector<RankQuery<S>>& q) {
    return run_host_batch<M, std::uint64_t>(q, [&](auto in, auto out, std::size_t n) { return t.rank(in, out, n); });
  }
  template <class S, unsigned A>
  static Result<U64s> select(const WaveletTree<S, A>& t, const std::vector<SelectQuery<S>>& q) {
    return run_host_batch<M, std::uint64_t>(q, [&](auto in, auto out, std::size_t n) { return t.select(in, out, n); });
  }
};

using CpuBatch = HostBatch<Backend::cpu, Memory::pageable>;
using GpuBatchPageable = HostBatch<Backend::gpu, Memory::pageable>;
using GpuBatchPinned = HostBatch<Backend::gpu, Memory::pinned>;

}  // namespace wtmap::test
