// SmemSeeder: SMEM seeding batches through core's batch machinery (core/detail/batch.cuh).
#include "wtmap/fmindex/smem_seeder.hpp"

#include <algorithm>
#include <mutex>

#include "wtmap/core/detail/batch.cuh"
#include "wtmap/core/detail/copy_runs.cuh"

namespace wtmap::fmindex {

std::string SmemOp::why_invalid(const In& r) const {
  if (r.offset > codes_size || r.length > codes_size - r.offset) {
    return "read at offset " + std::to_string(r.offset) + " of length " + std::to_string(r.length) +
           " runs past the " + std::to_string(codes_size) + " codes";
  }
  return "seed room at " + std::to_string(r.seed_offset) + " of " + std::to_string(r.seed_capacity) +
         " seeds runs past the " + std::to_string(seeds_size) + " seeds";
}

SmemSeeder::SmemSeeder(const FmIndex& index)
    : index_(&index),
      workspace_(std::make_unique<detail::QueryWorkspace>()),
      staging_(std::make_unique<detail::RunStaging>()) {}
SmemSeeder::SmemSeeder(SmemSeeder&&) noexcept = default;
SmemSeeder& SmemSeeder::operator=(SmemSeeder&&) noexcept = default;
SmemSeeder::~SmemSeeder() = default;

void SmemSeeder::release_device_memory() {
  std::lock_guard<std::mutex> lock(workspace_->scratch_mutex);
  workspace_->release();
  device_seeds_ = Buffer{};
  staging_->release_device_memory();
}

Status SmemSeeder::find(const std::uint8_t* codes, std::uint64_t codes_size, const SeedingRead* reads,
                        std::size_t count, const SmemParams& params, Seed* seeds, std::uint64_t seeds_size,
                        SmemResult* results) {
  SmemOp op{index_->view(), codes, codes_size, seeds, seeds_size, params};
  if (index_->backend() == Backend::cpu) return detail::run_batch_cpu(op, reads, results, count, "seeding");
  std::lock_guard<std::mutex> lock(workspace_->scratch_mutex);
  WTMAP_TRY(workspace_->reserve_scratch(codes_size));
  WTMAP_TRY(detail::upload_staged(*workspace_, workspace_->scratch(), codes, codes_size));
  const std::size_t seed_bytes = seeds_size * sizeof(Seed);
  WTMAP_TRY(device_seeds_.grow_with_slack(Backend::gpu, seed_bytes, "seeds"));
  op.codes = reinterpret_cast<const std::uint8_t*>(workspace_->scratch());
  op.seeds = reinterpret_cast<Seed*>(device_seeds_.data());
  WTMAP_TRY(detail::run_batch_gpu(op, reads, results, count, *workspace_, "seeding"));
  return copy_seeds_written(reads, results, count, seeds);
}

Status SmemSeeder::copy_seeds_written(const SeedingRead* reads, const SmemResult* results, std::size_t count,
                                      Seed* seeds) {
  runs_.clear();
  std::uint64_t packed = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t n = std::min(results[i].count, reads[i].seed_capacity);
    if (n == 0) continue;
    runs_.push_back({reads[i].seed_offset, packed, n});
    packed += n;
  }
  return detail::copy_runs_to_host(*workspace_, reinterpret_cast<const Seed*>(device_seeds_.data()), seeds, runs_,
                                   packed, *staging_);
}

Status SmemSeeder::find_on_device(const std::uint8_t* codes, std::uint64_t codes_size, const SeedingRead* reads,
                                  std::size_t count, const SmemParams& params, Seed* seeds, std::uint64_t seeds_size,
                                  SmemResult* results) {
  if (index_->backend() != Backend::gpu) return invalid_argument("seeding on the device: the index is not on the GPU");
  std::lock_guard<std::mutex> lock(workspace_->scratch_mutex);
  WTMAP_TRY(workspace_->reserve(0, 0, 1));  // makes its streams
  const SmemOp op{index_->view(), codes, codes_size, seeds, seeds_size, params};
  return detail::run_batch_device(op, reads, results, count, workspace_->stream(0), *workspace_, "seeding");
}

}  // namespace wtmap::fmindex
