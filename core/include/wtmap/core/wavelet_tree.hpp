// wtmap core: an owning level-wise wavelet tree on the CPU or the GPU.
//
// Space, complexity and the algorithms: see wavelet_tree_view.hpp (thesis sec. 5). Construction
// (thesis Alg. 8): map the text to a minimal alphabet, encode it with the reduced codes while
// counting the histogram, then per level a stable sort by the code's leading bits (CUB radix sort
// on the GPU, a stable partition on the CPU), packing of the level's bits and its rank/select
// support. O(n log sigma) work; both backends produce byte-identical structures.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <vector>

#include "wtmap/core/buffer.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/core/status.hpp"
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
};

// Symbol is std::uint8_t, std::uint16_t or std::uint32_t.
template <class Symbol>
class WaveletTree {
 public:
  // Largest alphabet accepted (the per-node tables hold 2^ceil(log2 sigma) entries).
  static constexpr std::uint64_t kMaxSigma = std::uint64_t{1} << 26;

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
  const WaveletTreeView<Symbol>& view() const { return view_; }

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
  Status bind_view(const Layout& layout, std::uint64_t n, std::uint64_t sigma, bool has_alphabet,
                   const std::vector<std::uint64_t>& level_ones);

  Buffer storage_;
  WaveletTreeView<Symbol> view_{};
  std::vector<std::uint64_t> level_ones_;
  bool extracted_alphabet_ = false;
  std::unique_ptr<detail::QueryWorkspace> workspace_;
};

extern template class WaveletTree<std::uint8_t>;
extern template class WaveletTree<std::uint16_t>;
extern template class WaveletTree<std::uint32_t>;

}  // namespace wtmap
