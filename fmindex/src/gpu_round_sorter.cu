#include "gpu_round_sorter.hpp"

#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/cstdint>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <string>

#include "gpu_support.cuh"

namespace wtmap::fmindex::detail {
namespace {

using gpu::as;
using gpu::device_copy;
using gpu::grid_for;
using gpu::kThreads;

// The most text positions one selection call looks at: the output has that much slack past the
// round, so that even a wrong count could not write outside it.
constexpr std::uint64_t kMostSelectChunk = std::uint64_t{1} << 26;

struct WindowPosition {
  std::uint64_t key, position;
};

struct InRound {
  PackedSymbolsView text;
  DifferenceCoverView dc;
  RoundBounds bounds;
  __device__ bool operator()(std::uint64_t i) const { return bounds.contains(text, dc, i, text.window(i)); }
};

// Window first, then the suffixes from their K-th symbol on (equal windows share K symbols).
struct SuffixOrder {
  PackedSymbolsView text;
  DifferenceCoverView dc;
  __device__ bool operator()(const WindowPosition& a, const WindowPosition& b) const {
    if (a.key != b.key) return a.key < b.key;
    return compare_suffixes(text, dc, a.position, b.position, text.per_window) < 0;
  }
};

__global__ void window_keys(PackedSymbolsView text, const std::uint64_t* positions, std::uint64_t* keys,
                            std::uint64_t count) {
  for (std::uint64_t k = gpu::first_index(); k < count; k += gpu::grid_stride()) {
    keys[k] = text.window(positions[k]);
  }
}

__global__ void gather_tied(const std::uint64_t* slots, std::uint64_t tied, const std::uint64_t* keys,
                            const std::uint64_t* positions, WindowPosition* out) {
  for (std::uint64_t j = gpu::first_index(); j < tied; j += gpu::grid_stride()) {
    out[j] = {keys[slots[j]], positions[slots[j]]};
  }
}

// The j-th tied suffix in order to the j-th tied slot: the slots ascend and the ties sort by
// window first, so each run of equal windows refills its own slots.
__global__ void scatter_tied(const std::uint64_t* slots, std::uint64_t tied, const WindowPosition* sorted,
                             std::uint64_t* positions) {
  for (std::uint64_t j = gpu::first_index(); j < tied; j += gpu::grid_stride()) {
    positions[slots[j]] = sorted[j].position;
  }
}

// Each bucket's suffixes among text positions [0, n): a block counts in shared memory where the
// buckets fit (32-bit counts: a block sees at most n / gridDim.x positions), else in `counts`.
__global__ void count_buckets_kernel(PackedSymbolsView text, DifferenceCoverView dc, SplitterView splitters,
                                     unsigned long long* counts, bool in_shared) {
  extern __shared__ unsigned int block_counts[];
  const std::uint64_t buckets = splitters.count + 1;
  if (in_shared) {
    for (std::uint64_t b = threadIdx.x; b < buckets; b += blockDim.x) block_counts[b] = 0;
    __syncthreads();
  }
  for (std::uint64_t i = gpu::first_index(); i < text.n; i += gpu::grid_stride()) {
    const std::uint64_t b = splitters.bucket_of(text, dc, i, text.window(i));
    if (in_shared) {
      atomicAdd(&block_counts[b], 1u);
    } else {
      atomicAdd(&counts[b], 1ull);
    }
  }
  if (in_shared) {
    __syncthreads();
    for (std::uint64_t b = threadIdx.x; b < buckets; b += blockDim.x) {
      if (block_counts[b] != 0) atomicAdd(&counts[b], static_cast<unsigned long long>(block_counts[b]));
    }
  }
}

}  // namespace

Result<GpuRoundSorter> GpuRoundSorter::create(const PackedSymbolsView& text, const DifferenceCoverView& dc) {
  GpuRoundSorter s;
  const std::uint64_t ranks = DifferenceCoverSample::num_slots(text.n, static_cast<std::uint32_t>(dc.period()));
  WTMAP_TRY(s.tables_.upload(text, dc, dc.ranks, ranks, "suffix sort text and difference cover"));
  s.select_chunk_ = std::max<std::uint64_t>(1, std::min(kMostSelectChunk, text.n));
  auto found = Buffer::allocate(Backend::gpu, sizeof(::cuda::std::int64_t), "suffix sort count");
  if (!found.ok()) return found.status();
  s.found_ = std::move(*found);
  return std::move(s);
}

Status GpuRoundSorter::count_buckets(const SplitterView& splitters, std::vector<std::uint64_t>& counts) {
  const std::uint64_t buckets = splitters.count + 1;
  auto positions = device_copy(splitters.positions, splitters.count * 8, "suffix sort splitters");
  if (!positions.ok()) return positions.status();
  auto keys = device_copy(splitters.keys, splitters.count * 8, "suffix sort splitters");
  if (!keys.ok()) return keys.status();
  auto prefix_start = device_copy(splitters.prefix_start, ((std::size_t{1} << SplitterView::kPrefixBits) + 1) * 8,
                                  "suffix sort splitters");
  if (!prefix_start.ok()) return prefix_start.status();
  auto device_counts = Buffer::allocate(Backend::gpu, buckets * 8, "suffix sort bucket counts");
  if (!device_counts.ok()) return device_counts.status();
  SplitterView on_device = splitters;
  on_device.positions = as<const std::uint64_t>(*positions);
  on_device.keys = as<const std::uint64_t>(*keys);
  on_device.prefix_start = as<const std::uint64_t>(*prefix_start);
  // The default 48 KiB of shared memory a block: 12288 buckets (resolved_blockwise_options makes 4097).
  const std::size_t shared_bytes = buckets * sizeof(unsigned int);
  const bool in_shared = shared_bytes <= 48 * 1024;
  count_buckets_kernel<<<grid_for(tables_.text().n), kThreads, in_shared ? shared_bytes : 0>>>(
      tables_.text(), tables_.cover(), on_device, as<unsigned long long>(*device_counts), in_shared);
  WTMAP_CUDA_TRY_LAUNCH();
  counts.resize(buckets);
  return device_counts->copy_to_host(0, counts.data(), buckets * 8);
}

std::uint64_t GpuRoundSorter::rows_within(std::uint64_t budget) const {
  // 40 bytes of arrays and about 16 of CUB's merge scratch a row, the selection's slack apart.
  const std::uint64_t slack = select_chunk_ * 8;
  return budget > slack ? (budget - slack) / 56 : 0;
}

Status GpuRoundSorter::reserve(std::uint64_t rows) {
  if (rows <= reserved_) return {};
  rows = std::max<std::uint64_t>(rows, 1);
  WTMAP_TRY(pairs_.grow_to(Backend::gpu, rows * 16 + select_chunk_ * 8, "suffix sort round"));
  WTMAP_TRY(keys_.grow_to(Backend::gpu, rows * 8, "suffix sort round"));
  WTMAP_TRY(positions_.grow_to(Backend::gpu, rows * 8, "suffix sort round"));
  WTMAP_TRY(tied_.grow_to(Backend::gpu, rows * 8, "suffix sort round"));
  reserved_ = rows;
  return {};
}

// Into the first half of pairs_, in text order, a chunk of the text at a time.
Status GpuRoundSorter::select_round(const RoundBounds& bounds, std::uint64_t count) {
  std::uint64_t* out = as<std::uint64_t>(pairs_);
  const InRound in_round{tables_.text(), tables_.cover(), bounds};
  std::uint64_t selected = 0;
  for (std::uint64_t begin = 0; begin < tables_.text().n; begin += select_chunk_) {
    const std::uint64_t items = std::min(select_chunk_, tables_.text().n - begin);
    const thrust::counting_iterator<std::uint64_t> from(begin);
    WTMAP_TRY(gpu::cub_call(scratch_, [&](void* scratch, std::size_t& bytes) {
      return cub::DeviceSelect::If(scratch, bytes, from, out + selected, as<::cuda::std::int64_t>(found_),
                                   static_cast<std::int64_t>(items), in_round);
    }));
    std::uint64_t chunk = 0;
    WTMAP_TRY(gpu::read_count(found_, chunk));
    selected += chunk;
    if (selected > count) break;  // the slack holds this chunk's; stop before the next
  }
  if (selected != count) {
    return invalid_argument("GPU suffix sort: the text holds " + std::to_string(selected) +
                            " suffixes of a round counted at " + std::to_string(count));
  }
  return {};
}

// The selected positions (pairs_' first half) by window: the pairs sorted into keys_/positions_.
Status GpuRoundSorter::sort_selected(std::uint64_t count) {
  std::uint64_t* unsorted = as<std::uint64_t>(pairs_);
  std::uint64_t* windows = unsorted + count;
  window_keys<<<grid_for(count), kThreads>>>(tables_.text(), unsorted, windows, count);
  WTMAP_CUDA_TRY_LAUNCH();
  return gpu::cub_call(scratch_, [&](void* scratch, std::size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(scratch, bytes, windows, as<std::uint64_t>(keys_), unsorted,
                                           as<std::uint64_t>(positions_), static_cast<std::int64_t>(count), 0,
                                           static_cast<int>(tables_.text().per_window * tables_.text().bits));
  });
}

// The runs of equal windows, ordered by compare_suffixes.
Status GpuRoundSorter::order_ties(std::uint64_t count) {
  const thrust::counting_iterator<std::uint64_t> from(0);
  WTMAP_TRY(gpu::cub_call(scratch_, [&](void* scratch, std::size_t& bytes) {
    return cub::DeviceSelect::If(scratch, bytes, from, as<std::uint64_t>(tied_), as<::cuda::std::int64_t>(found_),
                                 static_cast<std::int64_t>(count), gpu::EqualsANeighbour{as<std::uint64_t>(keys_), count});
  }));
  std::uint64_t tied = 0;
  WTMAP_TRY(gpu::read_count(found_, tied));
  if (tied == 0) return {};
  WindowPosition* pairs = as<WindowPosition>(pairs_);
  gather_tied<<<grid_for(tied), kThreads>>>(as<std::uint64_t>(tied_), tied, as<std::uint64_t>(keys_),
                                            as<std::uint64_t>(positions_), pairs);
  WTMAP_CUDA_TRY_LAUNCH();
  WTMAP_TRY(gpu::cub_call(scratch_, [&](void* scratch, std::size_t& bytes) {
    return cub::DeviceMergeSort::SortKeys(scratch, bytes, pairs, static_cast<std::int64_t>(tied), SuffixOrder{tables_.text(), tables_.cover()});
  }));
  scatter_tied<<<grid_for(tied), kThreads>>>(as<std::uint64_t>(tied_), tied, pairs, as<std::uint64_t>(positions_));
  WTMAP_CUDA_TRY_LAUNCH();
  return {};
}

Status GpuRoundSorter::sort_round(const RoundBounds& bounds, std::uint64_t count, std::uint64_t* rows) {
  if (count > reserved_) return invalid_argument("GPU suffix sort: a round larger than reserved");
  if (count == 0) return {};
  WTMAP_TRY(select_round(bounds, count));
  WTMAP_TRY(sort_selected(count));
  WTMAP_TRY(order_ties(count));
  return positions_.copy_to_host(0, rows, count * 8);
}

}  // namespace wtmap::fmindex::detail
