#include "rank_select_build.hpp"

#include <cub/device/device_scan.cuh>

#include "wtmap/core/detail/batch.cuh"
#include "wtmap/core/detail/cuda_check.hpp"
#include "wtmap/core/detail/parallel.hpp"
#include "wtmap/core/buffer.hpp"

namespace wtmap::detail {
namespace {

using L = RankSelectLayout;

// Thesis 4.1.1, with one index per 12-block record instead of one block per L1 block: the
// record's relative counts, and its ones in `totals`.
struct RecordCounts {
  const std::uint64_t* words;
  std::uint64_t n;
  RankRecord* records;
  std::uint64_t* totals;
  WTMAP_HD void operator()(std::uint64_t r) const { totals[r] = build_record_relative(words, n, r, records[r]); }
};

struct RecordBases {
  RankRecord* records;
  const std::uint64_t* bases;
  WTMAP_HD void operator()(std::uint64_t r) const { records[r].base = bases[r]; }
};

// Thesis 4.2.1: each index finds one sample with the sample-less select (the ones' samples, then
// the zeros').
struct SelectSamples {
  RankSelectView v;
  std::uint64_t* samples;
  std::uint64_t one_samples;
  WTMAP_HD void operator()(std::uint64_t j) const {
    samples[j] = j < one_samples ? build_select_sample(v, true, j) : build_select_sample(v, false, j - one_samples);
  }
};

// The select samples of a view whose counts are complete (the same step on either backend).
Status build_samples(Backend backend, std::byte* base, RankSelectView& view) {
  view.samples = nullptr;
  const std::uint64_t one_samples = view.num_one_samples();
  const std::uint64_t all_samples = one_samples + view.num_zero_samples();
  auto* samples = reinterpret_cast<std::uint64_t*>(base + L::bits_bytes(view.size) + L::records_bytes(view.size));
  WTMAP_TRY(for_each_index(backend, all_samples, SelectSamples{view, samples, one_samples}, 1 << 8));
  view.samples = samples;
  return {};
}

Status build_gpu(std::byte* base, std::uint64_t n, RankSelectView& view) {
  const std::uint64_t num_records = L::num_records(n);
  auto* records = reinterpret_cast<RankRecord*>(base + L::bits_bytes(n));
  auto scratch = Buffer::allocate(Backend::gpu, 2 * num_records * sizeof(std::uint64_t), "rank support construction");
  if (!scratch.ok()) return scratch.status();
  auto* totals = reinterpret_cast<std::uint64_t*>(scratch->data());
  std::uint64_t* bases = totals + num_records;
  view = rank_select_view_at(base, n, 0);
  WTMAP_TRY(for_each_index(Backend::gpu, num_records, RecordCounts{view.words, n, records, totals}));
  std::size_t temp_bytes = 0;
  WTMAP_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, totals, bases, num_records));
  auto temp = Buffer::allocate(Backend::gpu, temp_bytes, "rank support prefix sum");
  if (!temp.ok()) return temp.status();
  WTMAP_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp->data(), temp_bytes, totals, bases, num_records));
  WTMAP_TRY(for_each_index(Backend::gpu, num_records, RecordBases{records, bases}));
  std::uint64_t last[2] = {0, 0};
  WTMAP_CUDA_TRY(cudaMemcpy(&last[0], bases + num_records - 1, 8, cudaMemcpyDeviceToHost));
  WTMAP_CUDA_TRY(cudaMemcpy(&last[1], totals + num_records - 1, 8, cudaMemcpyDeviceToHost));
  view.ones = last[0] + last[1];
  return build_samples(Backend::gpu, base, view);
}

Status build_cpu(std::byte* base, std::uint64_t n, RankSelectView& view) {
  const std::uint64_t num_records = L::num_records(n);
  auto* records = reinterpret_cast<RankRecord*>(base + L::bits_bytes(n));
  view = rank_select_view_at(base, n, 0);
  std::vector<std::uint64_t> totals(num_records);
  WTMAP_TRY(for_each_index(Backend::cpu, num_records, RecordCounts{view.words, n, records, totals.data()}, 1 << 10));
  std::uint64_t running = 0;
  for (std::uint64_t r = 0; r < num_records; ++r) {
    records[r].base = running;
    running += totals[r];
  }
  view.ones = running;
  return build_samples(Backend::cpu, base, view);
}

}  // namespace

Status build_rank_select(Backend backend, std::byte* base, std::uint64_t n, RankSelectView& view) {
  return backend == Backend::gpu ? build_gpu(base, n, view) : build_cpu(base, n, view);
}

}  // namespace wtmap::detail
