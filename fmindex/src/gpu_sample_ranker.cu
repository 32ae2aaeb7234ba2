#include "gpu_sample_ranker.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/cstdint>
#include <thrust/iterator/counting_iterator.h>

#include <array>

#include "device_suffix_tables.hpp"
#include "gpu_support.cuh"

namespace wtmap::fmindex::detail {
namespace {

using gpu::as;
using gpu::grid_for;
using gpu::kThreads;

// Keys of a pass: the window `known` symbols on, or the rank of the sample suffix `step` on.
struct WindowKey {
  PackedSymbolsView text;
  std::uint64_t known;
  __device__ std::uint64_t operator()(std::uint64_t p) const { return text.window(p + known); }
};
struct RankKey {
  DifferenceCoverView dc;
  std::uint64_t step;
  __device__ std::uint64_t operator()(std::uint64_t p) const { return dc.ranks[dc.sample_index(p + step)]; }
};

struct Larger {
  __device__ std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const { return a > b ? a : b; }
};

__global__ void first_positions(const std::uint32_t* residues, std::uint64_t d, std::uint64_t v, std::uint64_t count,
                                std::uint64_t* positions, std::uint64_t* groups) {
  for (std::uint64_t k = gpu::first_index(); k < count; k += gpu::grid_stride()) {
    positions[k] = k / d * v + residues[k % d];
    groups[k] = 0;
  }
}

template <class KeyOf>
__global__ void keys_and_identity(KeyOf key_of, const std::uint64_t* positions, std::uint64_t count, std::uint64_t* keys,
                                  std::uint64_t* identity) {
  for (std::uint64_t k = gpu::first_index(); k < count; k += gpu::grid_stride()) {
    keys[k] = key_of(positions[k]);
    identity[k] = k;
  }
}

__global__ void gather(const std::uint64_t* from, const std::uint64_t* index, std::uint64_t count, std::uint64_t* to) {
  for (std::uint64_t k = gpu::first_index(); k < count; k += gpu::grid_stride()) to[k] = from[index[k]];
}

// k where row k starts a run of `a` (and of `b`, if given) in sorted order, else 0: max-scanned,
// each row's run start.
__global__ void run_marks(const std::uint64_t* a, const std::uint64_t* b, std::uint64_t count, std::uint64_t* marks) {
  for (std::uint64_t k = gpu::first_index(); k < count; k += gpu::grid_stride()) {
    marks[k] = k == 0 || a[k] != a[k - 1] || (b != nullptr && b[k] != b[k - 1]) ? k : 0;
  }
}

// Each sorted row's new group: its old group's first row plus how far into the old group its run
// of equal keys starts; written to the ranks and kept for the next pass.
__global__ void new_groups(const std::uint64_t* positions, const std::uint64_t* groups, const std::uint64_t* group_start,
                           const std::uint64_t* run_start, std::uint64_t count, DifferenceCoverView dc,
                           std::uint64_t* ranks, std::uint64_t* out) {
  for (std::uint64_t k = gpu::first_index(); k < count; k += gpu::grid_stride()) {
    const std::uint64_t g = groups[k] + (run_start[k] - group_start[k]);
    ranks[dc.sample_index(positions[k])] = g;
    out[k] = g;
  }
}

std::uint32_t bit_width(std::uint64_t x) {
  std::uint32_t bits = 1;
  while (bits < 64 && (x >> bits) != 0) ++bits;
  return bits;
}

// The tied sample suffixes of the passes, in seven arrays of the first pass's size, reused as
// pass() says.
class SampleRanks {
 public:
  Status run(const PackedSymbolsView& text, const DifferenceCoverView& dc, const std::vector<std::uint32_t>& residues,
             std::vector<std::uint64_t>& ranks);

 private:
  template <class KeyOf>
  Status pass(KeyOf key_of, std::uint32_t key_bits);
  std::uint64_t* at(int k) { return as<std::uint64_t>(arrays_[k]); }

  std::array<Buffer, 7> arrays_;
  DeviceSuffixTables tables_;
  Buffer residues_, found_, scratch_;
  std::uint64_t tied_ = 0, rows_ = 0;
};

// One pass over the tied_ suffixes: positions in array 0 and groups (their first row) in 1,
// grouped by group ascending. Sorted by (group, key) -- by key, then stably by group -- a row's
// new group starts at its run of equal keys; the rows still tied go back to arrays 0 and 1.
template <class KeyOf>
Status SampleRanks::pass(KeyOf key_of, std::uint32_t key_bits) {
  const std::uint64_t t = tied_;
  const auto items = static_cast<std::int64_t>(t);
  const unsigned grid = grid_for(t);
  keys_and_identity<<<grid, kThreads>>>(key_of, at(0), t, at(2), at(3));
  WTMAP_CUDA_TRY_LAUNCH();
  WTMAP_TRY(gpu::cub_call(scratch_, [&](void* s, std::size_t& bytes) {  // by key: 4 keys, 5 permutation
    return cub::DeviceRadixSort::SortPairs(s, bytes, at(2), at(4), at(3), at(5), items, 0, static_cast<int>(key_bits));
  }));
  gather<<<grid, kThreads>>>(at(1), at(5), t, at(6));
  WTMAP_CUDA_TRY_LAUNCH();
  WTMAP_TRY(gpu::cub_call(scratch_, [&](void* s, std::size_t& bytes) {  // stably by group: 4 groups, 3 permutation
    return cub::DeviceRadixSort::SortPairs(s, bytes, at(6), at(4), at(5), at(3), items, 0,
                                           static_cast<int>(bit_width(rows_)));
  }));
  gather<<<grid, kThreads>>>(at(0), at(3), t, at(6));  // 6 positions
  gather<<<grid, kThreads>>>(at(2), at(3), t, at(5));  // 5 keys
  run_marks<<<grid, kThreads>>>(at(4), nullptr, t, at(2));
  WTMAP_CUDA_TRY_LAUNCH();
  WTMAP_TRY(gpu::cub_call(scratch_, [&](void* s, std::size_t& bytes) {  // 0 each group's first row
    return cub::DeviceScan::InclusiveScan(s, bytes, at(2), at(0), Larger{}, items);
  }));
  run_marks<<<grid, kThreads>>>(at(4), at(5), t, at(2));
  WTMAP_CUDA_TRY_LAUNCH();
  WTMAP_TRY(gpu::cub_call(scratch_, [&](void* s, std::size_t& bytes) {  // 1 each run's first row
    return cub::DeviceScan::InclusiveScan(s, bytes, at(2), at(1), Larger{}, items);
  }));
  new_groups<<<grid, kThreads>>>(at(6), at(4), at(0), at(1), t, tables_.cover(), tables_.ranks(), at(2));  // 2 new groups
  WTMAP_CUDA_TRY_LAUNCH();
  const thrust::counting_iterator<std::uint64_t> rows(0);
  WTMAP_TRY(gpu::cub_call(scratch_, [&](void* s, std::size_t& bytes) {  // 3 the tied rows
    return cub::DeviceSelect::If(s, bytes, rows, at(3), as<::cuda::std::int64_t>(found_), items, gpu::EqualsANeighbour{at(1), t});  // its run of (group, key) holds another
  }));
  WTMAP_TRY(gpu::read_count(found_, tied_));
  gather<<<grid_for(tied_), kThreads>>>(at(6), at(3), tied_, at(0));
  gather<<<grid_for(tied_), kThreads>>>(at(2), at(3), tied_, at(1));
  WTMAP_CUDA_TRY_LAUNCH();
  return {};
}

Status SampleRanks::run(const PackedSymbolsView& text, const DifferenceCoverView& dc,
                        const std::vector<std::uint32_t>& residues, std::vector<std::uint64_t>& ranks) {
  const std::uint64_t n = text.n, v = dc.period(), d = residues.size();
  rows_ = sample_suffixes_in_text(n, v, residues);
  if (rows_ == 0) return {};
  WTMAP_TRY(tables_.upload(text, dc, ranks.data(), ranks.size(), "sample ranking text and difference cover"));
  auto residues_on_device = gpu::device_copy(residues.data(), d * 4, "difference cover");
  if (!residues_on_device.ok()) return residues_on_device.status();
  residues_ = std::move(*residues_on_device);
  auto found = Buffer::allocate(Backend::gpu, sizeof(::cuda::std::int64_t), "sample ranking count");
  if (!found.ok()) return found.status();
  found_ = std::move(*found);
  for (Buffer& b : arrays_) WTMAP_TRY(b.grow_to(Backend::gpu, rows_ * 8, "sample ranking"));

  first_positions<<<grid_for(rows_), kThreads>>>(as<std::uint32_t>(residues_), d, v, rows_, at(0), at(1));
  WTMAP_CUDA_TRY_LAUNCH();
  tied_ = rows_;
  // As on the CPU: the first v symbols (at least) a window at a time, then doubling, tied on
  // `known` symbols by the ranks `step` on (a multiple of v <= known: in the sample, in the text).
  std::uint64_t known = 0;
  for (; tied_ > 0 && known < v; known += text.per_window) {
    WTMAP_TRY(pass(WindowKey{tables_.text(), known}, text.per_window * text.bits));
  }
  while (tied_ > 0) {
    if (known >= n) return invalid_argument("difference-cover sample: suffixes tied past the text's end");
    const std::uint64_t step = known / v * v;
    WTMAP_TRY(pass(RankKey{tables_.cover(), step}, bit_width(rows_)));
    known += step;
  }
  return tables_.download_ranks(ranks.data());
}

}  // namespace

Status rank_sample_on_gpu(const PackedSymbolsView& text, const DifferenceCoverView& dc,
                          const std::vector<std::uint32_t>& residues, std::vector<std::uint64_t>& ranks) {
  SampleRanks ranker;
  return ranker.run(text, dc, residues, ranks);
}

}  // namespace wtmap::fmindex::detail
