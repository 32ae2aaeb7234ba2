// wtmap fmindex: SMEM seeding of a batch of reads (smem.hpp) on the index's backend -- a
// stepwise query operation of core's batch machinery (core/detail/batch.cuh), so the CPU loop
// and the GPU kernel run the same SmemSearch steps and write the same seeds.
//
// Space: on the GPU, the batch's codes and seed array on the device besides the index, and a
// 2 KiB candidate ring a thread (SmemScratch). Time: SmemSearch's steps, one rank pair each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wtmap/core/buffer.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/fm_index.hpp"
#include "wtmap/fmindex/smem.hpp"

namespace wtmap {
namespace detail {
class QueryWorkspace;
struct CopyRun;
struct RunStaging;
}  // namespace detail

namespace fmindex {

// A read of a batch: its codes, codes[offset, offset + length), and the room for its seeds,
// seeds[seed_offset, seed_offset + seed_capacity).
struct SeedingRead {
  std::uint64_t offset = 0;
  std::uint64_t seed_offset = 0;
  std::uint32_t length = 0;
  std::uint32_t seed_capacity = 0;
};

// The seeding of one read as a stepwise batch operation; codes and seeds in the backend's memory
// (for a kernel of a caller that keeps its reads and seeds on the device; SmemSeeder otherwise).
struct SmemOp {
  using In = SeedingRead;
  using Out = SmemResult;
  using State = SmemSearch;
  using Scratch = SmemScratch;
  // Two blocks of 256 threads an SM: ptxas fits the search in 128 registers without spills (158
  // unbounded, 8 warps an SM; three blocks spill). Not yet timed against 1 and 3 (bench_smem).
  static constexpr unsigned kMinBlocksPerSm = 2;
  // Reads a CPU thread takes at least (run_batch_cpu): a read's seeding is some 60 us, and with
  // the default of 2^14 a batch of 10^4 reads was seeded on one thread (the CPU backend on 16
  // cores took twice bwa mem's wall time at its default batch).
  static constexpr std::uint64_t kCpuMinPerThread = 32;

  FmIndexView index;
  const std::uint8_t* codes = nullptr;
  std::uint64_t codes_size = 0;
  Seed* seeds = nullptr;
  std::uint64_t seeds_size = 0;
  SmemParams params;

  WTMAP_HD bool valid(const In& r) const {
    return r.offset <= codes_size && r.length <= codes_size - r.offset && r.seed_offset <= seeds_size &&
           r.seed_capacity <= seeds_size - r.seed_offset;
  }
  WTMAP_HD void start(State& search, const In& r, Out& out) const {
    search.start(codes + r.offset, r.length, params, seeds + r.seed_offset, r.seed_capacity, out);
  }
  WTMAP_HD bool step(State& search, Out& out) const { return search.step(index, out); }
  // For run_batch_cpu's interleaved loop (core/detail/batch.cuh).
  bool prefetch(State& search, Out& out) const { return search.settle_and_prefetch(index, out); }
  std::string why_invalid(const In& r) const;
};

// Seeds batches of reads on the index's backend, reusing its device buffers between batches.
class SmemSeeder {
 public:
  // The index must outlive the seeder.
  explicit SmemSeeder(const FmIndex& index);
  SmemSeeder(SmemSeeder&&) noexcept;
  SmemSeeder& operator=(SmemSeeder&&) noexcept;
  ~SmemSeeder();

  // The seeds of each read, in host memory: codes (search_code) of codes_size bytes, reads[0,
  // count), seeds[0, seeds_size) and results[0, count). A read's seeds come sorted in its room,
  // results[i].count of them; the rest of its room is left unspecified. invalid_argument names
  // the first read whose codes or room run past the arrays.
  Status find(const std::uint8_t* codes, std::uint64_t codes_size, const SeedingRead* reads, std::size_t count,
              const SmemParams& params, Seed* seeds, std::uint64_t seeds_size, SmemResult* results);

  // The same with every array in device memory (an index on the GPU; invalid_argument otherwise):
  // one kernel launch, waited for, and nothing copied but the first invalid read's index.
  Status find_on_device(const std::uint8_t* codes, std::uint64_t codes_size, const SeedingRead* reads,
                        std::size_t count, const SmemParams& params, Seed* seeds, std::uint64_t seeds_size,
                        SmemResult* results);

  // Frees the device buffers kept between batches; the next find() makes them anew, for its size.
  void release_device_memory();

 private:
  // Brings back only the seeds written (a read's room is sized for the most a read can have, some
  // 20 times what reads have: detail/copy_runs.cuh).
  Status copy_seeds_written(const SeedingRead* reads, const SmemResult* results, std::size_t count, Seed* seeds);

  const FmIndex* index_;
  std::unique_ptr<detail::QueryWorkspace> workspace_;
  Buffer device_seeds_;
  std::vector<detail::CopyRun> runs_;
  std::unique_ptr<detail::RunStaging> staging_;
};

}  // namespace fmindex
}  // namespace wtmap
