#include "quad_vector_build.hpp"

#include <vector>

#include "wtmap/core/detail/cuda_check.hpp"
#include "wtmap/core/detail/parallel.hpp"

namespace wtmap::detail {
namespace {

using L = QuadVectorLayout;
constexpr unsigned kBuildThreads = 256;

__global__ void __launch_bounds__(kBuildThreads)
    quad_superblock_kernel(QuadBlock* blocks, std::uint64_t n, std::uint64_t* totals, std::uint64_t num_supers) {
  const std::uint64_t s = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (s < num_supers) build_quad_superblock(blocks, n, s, totals + 4 * s);
}

__global__ void __launch_bounds__(kBuildThreads)
    quad_samples_kernel(QuadVectorView v, std::uint64_t* samples, std::uint64_t count) {
  const std::uint64_t j = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (j < count) samples[j] = build_quad_sample(v, j);
}

unsigned grid_for(std::uint64_t items) {
  return static_cast<unsigned>((items + kBuildThreads - 1) / kBuildThreads);
}

// Superblock totals -> absolute counts before each superblock (in place), and the grand totals.
void prefix_supers(std::vector<std::uint64_t>& supers, std::uint64_t totals[4]) {
  std::uint64_t running[4] = {0, 0, 0, 0};
  for (std::size_t s = 0; s < supers.size() / 4; ++s) {
    for (unsigned c = 0; c < 4; ++c) {
      const std::uint64_t t = supers[4 * s + c];
      supers[4 * s + c] = running[c];
      running[c] += t;
    }
  }
  for (unsigned c = 0; c < 4; ++c) totals[c] = running[c];
}

}  // namespace

Status build_quad_vector(Backend backend, std::byte* base, std::uint64_t n, QuadVectorView& view) {
  const std::uint64_t num_supers = L::num_supers(n);
  auto* blocks = reinterpret_cast<QuadBlock*>(base);
  auto* supers = reinterpret_cast<std::uint64_t*>(base + L::blocks_bytes(n));
  auto* samples = reinterpret_cast<std::uint64_t*>(base + L::blocks_bytes(n) + L::supers_bytes(n));
  std::vector<std::uint64_t> super_counts(4 * num_supers);
  std::uint64_t totals[4];
  // Superblock counts are few (32 bytes per 65,408 symbols): scanned on the host either way.
  if (backend == Backend::gpu) {
    quad_superblock_kernel<<<grid_for(num_supers), kBuildThreads>>>(blocks, n, supers, num_supers);
    WTMAP_CUDA_TRY_LAUNCH();
    WTMAP_CUDA_TRY(cudaMemcpy(super_counts.data(), supers, super_counts.size() * 8, cudaMemcpyDeviceToHost));
    prefix_supers(super_counts, totals);
    WTMAP_CUDA_TRY(cudaMemcpy(supers, super_counts.data(), super_counts.size() * 8, cudaMemcpyHostToDevice));
  } else {
    parallel_for_ranges(num_supers, [&](std::uint64_t b, std::uint64_t e) {
      for (std::uint64_t s = b; s < e; ++s) build_quad_superblock(blocks, n, s, super_counts.data() + 4 * s);
    }, 16);
    prefix_supers(super_counts, totals);
    std::copy(super_counts.begin(), super_counts.end(), supers);
  }
  view = quad_vector_view_at(base, n, totals);
  view.samples = nullptr;
  std::uint64_t count = 0;
  for (unsigned c = 0; c < 4; ++c) count += view.num_samples(c);
  if (backend == Backend::gpu) {
    if (count > 0) {
      quad_samples_kernel<<<grid_for(count), kBuildThreads>>>(view, samples, count);
      WTMAP_CUDA_TRY_LAUNCH();
    }
    WTMAP_CUDA_TRY(cudaDeviceSynchronize());
  } else {
    const QuadVectorView building = view;
    parallel_for_ranges(count, [&](std::uint64_t b, std::uint64_t e) {
      for (std::uint64_t j = b; j < e; ++j) samples[j] = build_quad_sample(building, j);
    }, 256);
  }
  view.samples = samples;
  return {};
}

}  // namespace wtmap::detail
