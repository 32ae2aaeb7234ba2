// wtmap core: an owning level-wise wavelet tree on the CPU or the GPU, with binary levels
// (Arity 2, the thesis' tree) or quad-vector levels (Arity 4, one level per two bits).
//
// Space, complexity and the algorithms: see wavelet_tree_view.hpp (thesis sec. 5) and
// quad_wavelet_tree_view.hpp. Construction (thesis Alg. 4): map the text to a minimal alphabet,
// encode it (reduced codes, binary trees only) while counting the histogram, then per level a
// stable sort by the code's leading bits (CUB radix sort on the GPU, a stable partition on the
// CPU), packing of the level's bits or digits and its rank/select support. O(n log sigma) work;
// both backends produce byte-identical structures.
//
// A text larger than the GPU (the issue-27 case; the thesis' future work) is built from chunks
// streamed from host memory, without managed memory: the histogram first (8- and 16-bit symbols:
// on the CPU threads, in one read of host memory; 32-bit: a pass of the chunks through the device,
// and one before it for an extracted alphabet), then a pass in which each chunk is sorted level by
// level on the device and its digits scattered to their final level positions (wavelet_tree.cu,
// ChunkPlacement), the next chunk copied meanwhile through page-locked memory on a stream of its
// own. The
// tree itself must fit the device: n log sigma bits and their support, against the 2n symbols
// and more of a build from the whole text. The bytes are the same.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <vector>

#include "wtmap/core/buffer.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/core/quad_wavelet_tree_view.hpp"
#include "wtmap/core/wavelet_tree_view.hpp"

namespace wtmap {
namespace detail {
class QueryWorkspace;
}

template <class Symbol>
struct RankQuery {
  std::uint64_t position;  // count occurrences in [0, position)
  Symbol symbol;
};

template <class Symbol>
struct SelectQuery {
  std::uint64_t k;  // the k-th occurrence, 1-based
  Symbol symbol;
};

struct WaveletTreeOptions {
  Backend backend = Backend::gpu;
  // 0: extract the alphabet from the text (the distinct symbols, mapped to 0..sigma-1 in order).
  // Otherwise the text's symbols are all below `sigma`, used as they are (no mapping).
  std::uint64_t sigma = 0;
  // Symbols of the text on the backend at once. 0: on the GPU the whole text where it fits the
  // free device memory beside the tree, else the chunks that do; on the CPU the whole text.
  // Otherwise chunks of this many symbols (on the CPU: 2 chunks of host memory, not 2 texts).
  std::uint64_t chunk = 0;
};

// The chunk (WaveletTreeOptions::chunk) build() takes on a GPU with `available` bytes of device
// memory for a text of n symbols of `symbol_bytes` bytes (sigma 0: an extracted alphabet): 0 where
// the whole text fits beside the tree (its codes twice, the alphabet's sort and CUB's storage: 4
// symbols of room per symbol), else the most symbols that fit beside the tree, at least 2^20.
std::uint64_t wavelet_tree_gpu_chunk(std::uint64_t n, std::uint64_t sigma, unsigned symbol_bytes, std::uint64_t available);

// Symbol is std::uint8_t, std::uint16_t or std::uint32_t; Arity is 2 or 4.
template <class Symbol, unsigned Arity = 2>
class WaveletTree {
 public:
  using View = WaveletTreeView<Symbol, Arity>;
  using symbol_type = Symbol;
  static constexpr unsigned kArity = Arity;
  // Largest alphabet accepted (the per-node tables grow with the padded alphabet).
  static constexpr std::uint64_t kMaxSigma = std::uint64_t{1} << (Arity == 2 ? 26 : 22);

  WaveletTree(WaveletTree&&) noexcept;
  WaveletTree& operator=(WaveletTree&&) noexcept;
  WaveletTree(const WaveletTree&) = delete;
  WaveletTree& operator=(const WaveletTree&) = delete;
  ~WaveletTree();

  // Builds from n symbols in host memory (pageable or pinned).
  static Result<WaveletTree> build(const Symbol* text, std::uint64_t n, const WaveletTreeOptions& options);

  std::uint64_t size() const { return view_.size; }
  std::uint64_t sigma() const { return view_.sigma; }
  unsigned num_levels() const { return view_.num_levels; }
  Backend backend() const { return storage_.backend(); }
  std::size_t size_in_bytes() const { return storage_.size(); }
  // Sorted distinct symbols (extracted alphabets), or 0..sigma-1.
  std::vector<Symbol> alphabet() const;
  // Trivially copyable view for queries inside your own kernels (GPU) or loops (CPU).
  const View& view() const { return view_; }

  // Batched queries from host memory (pageable or pinned) into caller-owned arrays. Out-of-range
  // queries (access position >= n, rank position > n, select k outside [1, occurrences]) fail
  // the call with invalid_argument naming the first one. Rank of a symbol not in the alphabet is 0.
  Status access(const std::uint64_t* positions, Symbol* out, std::size_t count) const;
  Status rank(const RankQuery<Symbol>* queries, std::uint64_t* out, std::size_t count) const;
  Status select(const SelectQuery<Symbol>* queries, std::uint64_t* out, std::size_t count) const;

  // The same for queries and results already in device memory (GPU backend), on `stream`.
  Status access_device(const std::uint64_t* positions, Symbol* out, std::size_t count, cudaStream_t stream) const;
  Status rank_device(const RankQuery<Symbol>* queries, std::uint64_t* out, std::size_t count, cudaStream_t stream) const;
  Status select_device(const SelectQuery<Symbol>* queries, std::uint64_t* out, std::size_t count,
                       cudaStream_t stream) const;

  // Binary serialization; the bytes are the same whichever backend built or holds the tree.
  Status save(std::ostream& out) const;
  static Result<WaveletTree> load(std::istream& in, Backend backend);

 private:
  struct Layout;
  WaveletTree();
  void bind_view(const Layout& layout, std::uint64_t n, std::uint64_t sigma, bool has_alphabet,
                 const std::vector<std::uint64_t>& level_counts);
  // build() on the backend of Builder (CpuTreeBuilder or GpuTreeBuilder in wavelet_tree.cu), from
  // the whole text or from chunks of it.
  template <class Builder>
  static Result<WaveletTree> build_with(Builder& builder, const Symbol* text, std::uint64_t n, std::uint64_t sigma);
  template <class Builder>
  static Result<WaveletTree> build_in_chunks(Builder& builder, const Symbol* text, std::uint64_t n, std::uint64_t sigma,
                                             std::uint64_t chunk);
  static Status check_sigma(std::uint64_t sigma);
  static Layout layout_of(std::uint64_t n, const std::vector<std::uint64_t>& hist, bool has_alphabet);
  Status make_storage(Backend backend, const Layout& layout, const std::vector<std::uint64_t>& hist,
                      const std::vector<Symbol>* alphabet);
  Status finish(const Layout& layout, std::uint64_t n, std::uint64_t sigma, bool has_alphabet,
                const std::vector<std::uint64_t>& level_counts);
  static Status check_support(const Buffer& storage, const Layout& layout, std::uint64_t n, std::uint64_t sigma,
                              bool has_alphabet, const std::vector<std::uint64_t>& counts);

  Buffer storage_;
  View view_{};
  std::vector<std::uint64_t> level_counts_;  // per level: its ones (binary) or its four totals
  bool extracted_alphabet_ = false;
  std::unique_ptr<detail::QueryWorkspace> workspace_;
};

extern template class WaveletTree<std::uint8_t, 2>;
extern template class WaveletTree<std::uint16_t, 2>;
extern template class WaveletTree<std::uint32_t, 2>;
extern template class WaveletTree<std::uint8_t, 4>;
extern template class WaveletTree<std::uint16_t, 4>;
extern template class WaveletTree<std::uint32_t, 4>;

template <class Symbol>
using QuadWaveletTree = WaveletTree<Symbol, 4>;

}  // namespace wtmap
