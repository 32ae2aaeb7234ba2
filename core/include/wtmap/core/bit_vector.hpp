// wtmap core: an owning bit vector with rank and select support on the CPU or the GPU.
//
// Space, complexity and source: see rank_select_view.hpp (wide-popcount rank with interleaved
// 32-byte count records, sampled select; thesis sec. 4). Construction O(n) on either backend,
// in parallel; both backends produce byte-identical structures.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <vector>

#include "wtmap/core/buffer.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/core/rank_select_view.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap {
namespace detail {
class QueryWorkspace;
}

class RankSelectBitVector {
 public:
  RankSelectBitVector(RankSelectBitVector&&) noexcept;
  RankSelectBitVector& operator=(RankSelectBitVector&&) noexcept;
  RankSelectBitVector(const RankSelectBitVector&) = delete;
  RankSelectBitVector& operator=(const RankSelectBitVector&) = delete;
  ~RankSelectBitVector();

  // n bits given as 32-bit words, bit i = (words[i / 32] >> (i % 32)) & 1, in host memory.
  // Bits of the last word past n are ignored.
  static Result<RankSelectBitVector> build(const std::uint32_t* words, std::uint64_t n, Backend backend);

  std::uint64_t size() const { return view_.size; }
  std::uint64_t ones() const { return view_.ones; }
  Backend backend() const { return storage_.backend(); }
  std::size_t size_in_bytes() const { return storage_.size(); }
  // Trivially copyable view for queries inside your own kernels (GPU backend) or host loops (CPU).
  const RankSelectView& view() const { return view_; }

  // Batched queries; inputs and outputs in host memory, pageable or pinned. An out-of-range
  // query (position > n for rank, >= n for access, k outside [1, count] for select) fails the
  // whole call with invalid_argument naming the first such query.
  Status rank1(const std::uint64_t* positions, std::uint64_t* out, std::size_t count) const;
  Status rank0(const std::uint64_t* positions, std::uint64_t* out, std::size_t count) const;
  Status select1(const std::uint64_t* ks, std::uint64_t* out, std::size_t count) const;
  Status select0(const std::uint64_t* ks, std::uint64_t* out, std::size_t count) const;
  Status access(const std::uint64_t* positions, std::uint8_t* out, std::size_t count) const;

  // The same on device memory (GPU backend only), ordered on `stream`, which is synchronised.
  Status rank1_device(const std::uint64_t* positions, std::uint64_t* out, std::size_t count, cudaStream_t stream) const;
  Status select1_device(const std::uint64_t* ks, std::uint64_t* out, std::size_t count, cudaStream_t stream) const;

  // Binary serialization: a header and the structure's bytes (identical for both backends).
  Status save(std::ostream& out) const;
  static Result<RankSelectBitVector> load(std::istream& in, Backend backend);

 private:
  RankSelectBitVector() = default;
  template <class Op, class In, class Out>
  Status run(const Op& op, const In* in, Out* out, std::size_t count, const char* what) const;

  Buffer storage_;
  RankSelectView view_{};
  std::unique_ptr<detail::QueryWorkspace> workspace_;
};

}  // namespace wtmap
