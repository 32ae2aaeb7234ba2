// KmerIntervalTable: on the GPU every k-mer searched through the index by one thread, written in
// place in the table; on the CPU level by level in place (extend_level).
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
// finds it: from its last base, stopping at the first empty interval.
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

// One level of the table, in place: the j-mer `key`'s interval, at table[key], extended by each base
// c to the (j + 1)-mer c key at table[c * 4^j + key] (c = 0 last: it is key's own place). An empty
// interval ends backward search, so it passes to the longer k-mers as it is, as the search would
// return it. Each j-mer writes only its own four places, so all of a level's j-mers may run at
// once. From table[0] = all rows, levels 0..stored-1 take 4/3 * 4^stored extends in all. On the
// CPU this replaced a depth-first walk over the same trie, with the same number of extends: on two
// cores E. coli's k = 13 took 0.31-0.34 s instead of 1.4-3.7 s, and 1 Gbp's 0.63 s instead of
// 6.1 s, the independent j-mers of a level overlapping their memory accesses where the walk's
// depended on each other. (The GPU still searches each k-mer from scratch, k * 4^k extends:
// extend_level there is not yet measured.)
WTMAP_HD void extend_level(const FmIndexView& index, SaInterval* table, std::uint32_t j, std::uint64_t key) {
  const SaInterval iv = table[key];
  for (unsigned c = 4; c-- > 0;) table[(std::uint64_t{c} << (2 * j)) + key] = iv.empty() ? iv : index.extend(iv, c);
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
    auto* out = reinterpret_cast<SaInterval*>(table.intervals_.data());
    const FmIndexView view = index.view();
    out[0] = view.all();
    for (std::uint32_t j = 0; j < stored; ++j) {
      wtmap::detail::parallel_for_ranges(std::uint64_t{1} << (2 * j), [&](std::uint64_t begin, std::uint64_t end) {
        for (std::uint64_t key = begin; key < end; ++key) extend_level(view, out, j, key);
      }, 1 << 12);
    }
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
