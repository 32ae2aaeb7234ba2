// KmerIntervalTable: on the GPU every k-mer searched through the index by one thread, written in
// place in the table; on the CPU a walk over the k-mers' trie.
#include "wtmap/fmindex/kmer_interval_table.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "wtmap/core/detail/cuda_check.hpp"
#include "wtmap/core/detail/parallel.hpp"

namespace wtmap::fmindex {

std::uint32_t KmerIntervalTable::default_length(std::uint64_t rows) {
  std::uint32_t k = 0;
  while (k < 12 && (std::uint64_t{sizeof(SaInterval)} << (2 * (k + 1))) <= rows / 8) ++k;
  return k;
}

namespace {

// The interval of the k-mer `key` (base 4, first base most significant), as backward search
// finds it: from its last base, stopping at the first empty interval. Also the interval of the
// last k bases of a longer key, which the CPU walk starts from.
WTMAP_HD SaInterval kmer_interval(const FmIndexView& index, std::uint64_t key, std::uint32_t k) {
  SaInterval iv = index.all();
  for (std::uint32_t j = 0; j < k && !iv.empty(); ++j, key >>= 2) iv = index.extend(iv, key & 3);
  return iv;
}

constexpr unsigned kTableBlockThreads = 256;

__global__ void __launch_bounds__(kTableBlockThreads)
    fill_kernel(FmIndexView index, std::uint32_t k, SaInterval* out, std::uint64_t kmers) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t key = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; key < kmers; key += stride) {
    out[key] = kmer_interval(index, key, k);
  }
}

// The k-mers whose last `depth` bases are `suffix` (bits [0, 2 depth) of their keys), given that
// suffix's interval: at depth k one k-mer; an empty interval ends backward search, so every
// k-mer below it gets that same interval, as the search would return it.
void fill_subtree(const FmIndexView& index, SaInterval iv, std::uint64_t suffix, std::uint32_t depth, std::uint32_t k,
                  SaInterval* out) {
  if (depth == k) {
    out[suffix] = iv;
  } else if (iv.empty()) {
    const std::uint64_t prefixes = std::uint64_t{1} << (2 * (k - depth));
    for (std::uint64_t prefix = 0; prefix < prefixes; ++prefix) out[prefix << (2 * depth) | suffix] = iv;
  } else {
    for (unsigned c = 0; c < 4; ++c) {
      fill_subtree(index, index.extend(iv, c), suffix | std::uint64_t{c} << (2 * depth), depth + 1, k, out);
    }
  }
}

// On the CPU: a depth-first walk over the k-mers' suffixes, one extend per node of their trie
// (4/3 * 4^k in all, where a search of each k-mer takes k * 4^k), the subtrees of the last
// `split` bases spread over the threads.
void fill_by_walk(const FmIndexView& index, std::uint32_t k, SaInterval* out) {
  const std::uint32_t split = std::min<std::uint32_t>(k, 4);
  wtmap::detail::parallel_for_ranges(std::uint64_t{1} << (2 * split), [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t suffix = begin; suffix < end; ++suffix) {
      fill_subtree(index, kmer_interval(index, suffix, split), suffix, split, k, out);
    }
  }, 1);
}

}  // namespace

Result<KmerIntervalTable> KmerIntervalTable::build(const FmIndexBase<FmIndexView>& index, std::uint32_t k,
                                                   std::uint32_t stored) {
  if (k == 0 || k > kMaxLength) {
    return invalid_argument("k-mer table length " + std::to_string(k) + " is not in 1.." + std::to_string(kMaxLength));
  }
  if (stored == 0 || stored > k) {
    return invalid_argument("k-mer table levels " + std::to_string(stored) + " are not in 1.." + std::to_string(k));
  }
  const std::uint64_t kmers = std::uint64_t{1} << (2 * stored);
  KmerIntervalTable table;
  auto intervals = Buffer::allocate(index.backend(), kmers * sizeof(SaInterval), "k-mer interval table");
  if (!intervals.ok()) return intervals.status();
  table.intervals_ = std::move(intervals.value());
  table.length_ = k;
  table.stored_ = stored;

  if (index.backend() == Backend::cpu) {
    fill_by_walk(index.view(), stored, reinterpret_cast<SaInterval*>(table.intervals_.data()));
    return std::move(table);
  }
  const auto blocks = static_cast<unsigned>(
      std::min<std::uint64_t>((kmers + kTableBlockThreads - 1) / kTableBlockThreads, std::uint64_t{1} << 16));
  fill_kernel<<<blocks, kTableBlockThreads>>>(index.view(), stored, reinterpret_cast<SaInterval*>(table.intervals_.data()),
                                              kmers);
  WTMAP_CUDA_TRY_LAUNCH();
  WTMAP_CUDA_TRY(cudaDeviceSynchronize());
  return std::move(table);
}

}  // namespace wtmap::fmindex
