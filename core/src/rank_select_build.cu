#include "rank_select_build.hpp"

#include <cub/device/device_scan.cuh>

#include "wtmap/core/detail/batch.cuh"
#include "wtmap/core/detail/cuda_check.hpp"
#include "wtmap/core/detail/parallel.hpp"
#include "wtmap/core/buffer.hpp"

namespace wtmap::detail {
namespace {

using L = RankSelectLayout;
constexpr unsigned kBuildThreads = 256;

// Thesis 4.1.1, with one thread per 12-block record instead of one block per L1 block.
__global__ void __launch_bounds__(kBuildThreads)
    record_counts_kernel(const std::uint64_t* words, std::uint64_t n, RankRecord* records, std::uint64_t* totals,
                         std::uint64_t num_records) {
  const std::uint64_t r = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (r < num_records) totals[r] = build_record_relative(words, n, r, records[r]);
}

__global__ void __launch_bounds__(kBuildThreads)
    record_bases_kernel(RankRecord* records, const std::uint64_t* bases, std::uint64_t num_records) {
  const std::uint64_t r = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (r < num_records) records[r].base = bases[r];
}

// Thesis 4.2.1: each thread finds one sample with the sample-less select.
__global__ void __launch_bounds__(kBuildThreads)
    select_samples_kernel(RankSelectView v, std::uint64_t* samples, std::uint64_t one_samples,
                          std::uint64_t all_samples) {
  const std::uint64_t j = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (j < all_samples) {
    samples[j] = j < one_samples ? build_select_sample(v, true, j) : build_select_sample(v, false, j - one_samples);
  }
}

unsigned grid_for(std::uint64_t items) { return static_cast<unsigned>((items + kBuildThreads - 1) / kBuildThreads); }

Status build_gpu(std::byte* base, std::uint64_t n, RankSelectView& view) {
  const std::uint64_t num_records = L::num_records(n);
  auto* records = reinterpret_cast<RankRecord*>(base + L::bits_bytes(n));
  auto scratch = Buffer::allocate(Backend::gpu, 2 * num_records * sizeof(std::uint64_t), "rank support construction");
  if (!scratch.ok()) return scratch.status();
  auto* totals = reinterpret_cast<std::uint64_t*>(scratch->data());
  std::uint64_t* bases = totals + num_records;
  view = rank_select_view_at(base, n, 0);
  record_counts_kernel<<<grid_for(num_records), kBuildThreads>>>(view.words, n, records, totals, num_records);
  WTMAP_CUDA_TRY_LAUNCH();
  std::size_t temp_bytes = 0;
  WTMAP_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, totals, bases, num_records));
  auto temp = Buffer::allocate(Backend::gpu, temp_bytes, "rank support prefix sum");
  if (!temp.ok()) return temp.status();
  WTMAP_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp->data(), temp_bytes, totals, bases, num_records));
  record_bases_kernel<<<grid_for(num_records), kBuildThreads>>>(records, bases, num_records);
  WTMAP_CUDA_TRY_LAUNCH();
  std::uint64_t last[2] = {0, 0};
  WTMAP_CUDA_TRY(cudaMemcpy(&last[0], bases + num_records - 1, 8, cudaMemcpyDeviceToHost));
  WTMAP_CUDA_TRY(cudaMemcpy(&last[1], totals + num_records - 1, 8, cudaMemcpyDeviceToHost));
  view.ones = last[0] + last[1];
  view.samples = nullptr;
  const std::uint64_t one_samples = view.num_one_samples();
  const std::uint64_t all_samples = one_samples + view.num_zero_samples();
  auto* samples = reinterpret_cast<std::uint64_t*>(base + L::bits_bytes(n) + L::records_bytes(n));
  if (all_samples > 0) {
    select_samples_kernel<<<grid_for(all_samples), kBuildThreads>>>(view, samples, one_samples, all_samples);
    WTMAP_CUDA_TRY_LAUNCH();
  }
  WTMAP_CUDA_TRY(cudaDeviceSynchronize());
  view.samples = samples;
  return {};
}

Status build_cpu(std::byte* base, std::uint64_t n, RankSelectView& view) {
  const std::uint64_t num_records = L::num_records(n);
  auto* records = reinterpret_cast<RankRecord*>(base + L::bits_bytes(n));
  view = rank_select_view_at(base, n, 0);
  std::vector<std::uint64_t> totals(num_records);
  parallel_for_ranges(num_records, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t r = begin; r < end; ++r) totals[r] = build_record_relative(view.words, n, r, records[r]);
  }, 1 << 10);
  std::uint64_t running = 0;
  for (std::uint64_t r = 0; r < num_records; ++r) {
    records[r].base = running;
    running += totals[r];
  }
  view.ones = running;
  view.samples = nullptr;
  const std::uint64_t one_samples = view.num_one_samples();
  const std::uint64_t all_samples = one_samples + view.num_zero_samples();
  auto* samples = reinterpret_cast<std::uint64_t*>(base + L::bits_bytes(n) + L::records_bytes(n));
  const RankSelectView building = view;
  parallel_for_ranges(all_samples, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t j = begin; j < end; ++j) {
      samples[j] = j < one_samples ? build_select_sample(building, true, j)
                                   : build_select_sample(building, false, j - one_samples);
    }
  }, 1 << 8);
  view.samples = samples;
  return {};
}

}  // namespace

Status build_rank_select(Backend backend, std::byte* base, std::uint64_t n, RankSelectView& view) {
  return backend == Backend::gpu ? build_gpu(base, n, view) : build_cpu(base, n, view);
}

}  // namespace wtmap::detail
