#include "quad_vector_build.hpp"

#include <vector>

#include "wtmap/core/detail/batch.cuh"
#include "wtmap/core/detail/cuda_check.hpp"
#include "wtmap/core/detail/parallel.hpp"

namespace wtmap::detail {
namespace {

using L = QuadVectorLayout;

// Superblock s's four symbol totals, and the counts from its start in each of its blocks.
struct SuperblockCounts {
  QuadBlock* blocks;
  std::uint64_t n;
  std::uint64_t* totals;  // four per superblock
  WTMAP_HD void operator()(std::uint64_t s) const { build_quad_superblock(blocks, n, s, totals + 4 * s); }
};

struct QuadSamples {
  QuadVectorView v;
  std::uint64_t* samples;
  WTMAP_HD void operator()(std::uint64_t j) const { samples[j] = build_quad_sample(v, j); }
};

// Superblock totals -> absolute counts before each superblock (in place), and the grand totals.
void prefix_supers(std::uint64_t* supers, std::uint64_t num_supers, std::uint64_t totals[4]) {
  std::uint64_t running[4] = {0, 0, 0, 0};
  for (std::uint64_t s = 0; s < num_supers; ++s) {
    for (unsigned c = 0; c < 4; ++c) {
      const std::uint64_t t = supers[4 * s + c];
      supers[4 * s + c] = running[c];
      running[c] += t;
    }
  }
  for (unsigned c = 0; c < 4; ++c) totals[c] = running[c];
}

// prefix_supers on `backend`'s memory. Superblock counts are few (32 bytes per 65,408 symbols):
// scanned on the host either way.
Status prefix_supers_on(Backend backend, std::uint64_t* supers, std::uint64_t num_supers, std::uint64_t totals[4]) {
  if (backend == Backend::cpu) {
    prefix_supers(supers, num_supers, totals);
    return {};
  }
  std::vector<std::uint64_t> host(4 * num_supers);
  WTMAP_CUDA_TRY(cudaMemcpy(host.data(), supers, host.size() * 8, cudaMemcpyDeviceToHost));
  prefix_supers(host.data(), num_supers, totals);
  WTMAP_CUDA_TRY(cudaMemcpy(supers, host.data(), host.size() * 8, cudaMemcpyHostToDevice));
  return {};
}

}  // namespace

Status build_quad_vector(Backend backend, std::byte* base, std::uint64_t n, QuadVectorView& view) {
  const std::uint64_t num_supers = L::num_supers(n);
  auto* blocks = reinterpret_cast<QuadBlock*>(base);
  auto* supers = reinterpret_cast<std::uint64_t*>(base + L::blocks_bytes(n));
  auto* samples = reinterpret_cast<std::uint64_t*>(base + L::blocks_bytes(n) + L::supers_bytes(n));
  std::uint64_t totals[4];
  WTMAP_TRY(for_each_index(backend, num_supers, SuperblockCounts{blocks, n, supers}, 16));
  WTMAP_TRY(prefix_supers_on(backend, supers, num_supers, totals));
  view = quad_vector_view_at(base, n, totals);
  view.samples = nullptr;
  std::uint64_t count = 0;
  for (unsigned c = 0; c < 4; ++c) count += view.num_samples(c);
  WTMAP_TRY(for_each_index(backend, count, QuadSamples{view, samples}, 256));
  view.samples = samples;
  return {};
}

}  // namespace wtmap::detail
