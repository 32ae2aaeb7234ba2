// wtmap aligner: BAM records in coordinate order (`wtmap align --sort`), with bounded memory:
// an external merge sort as samtools sort does it (bam_sort.c).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "wtmap/core/status.hpp"

struct bam1_t;
struct sam_hdr_t;
struct hts_tpool;

namespace wtmap::aligner {

// samtools sort's coordinate order (bam_sort.c: bam1_cmp_core, ks_radixsort, heap_lt): by target
// id with the unplaced (tid -1) last, then by POS + 1, then the forward strand before the reverse
// (flag 0x10); equal keys keep the order the records were added in, as samtools keeps its
// input's order. An unmapped read placed at its mate (tid and POS set) sorts beside it.
struct CoordinateKey {
  std::uint32_t tid = 0;       // tid, or UINT32_MAX for -1
  std::uint64_t pos_rev = 0;   // (POS + 1) << 1 | reverse
  friend bool operator<(const CoordinateKey& a, const CoordinateKey& b) {
    return a.tid != b.tid ? a.tid < b.tid : a.pos_rev < b.pos_rev;
  }
  friend bool operator==(const CoordinateKey& a, const CoordinateKey& b) { return a.tid == b.tid && a.pos_rev == b.pos_rev; }
};
CoordinateKey coordinate_key(const bam1_t* record);

// --sort-mem's default: an eighth of the memory this process may use (the machine's, or its
// container's cgroup limit where lower), at least 64 MiB. An eighth leaves the rest to the
// index, the pipeline's batches (up to 15 of --batch reads) and the system; on a 128 GiB GPU host
// it holds some 4 * 10^7 reads of 150 bases, so a run of 10^7 sorts without temporary files.
// (samtools sort's default, 768 MiB per thread, gives 12 GiB for 16 threads, the same scale, but
// more than the machine has on a small many-core one.)
std::uint64_t default_sort_memory();

struct SortOptions {
  // Bytes of records held in memory, their sort entries counted twice (the sort's scratch): two
  // runs of half each, one filling while the other is sorted and spilled.
  std::uint64_t memory_bytes = std::uint64_t{768} << 20;
  // Spilled runs are the files `scratch_stem` + ".runN.XXXXXX" (io::TemporaryFile): beside the
  // output, removed on success, error and the signals io::install_signal_cleanup handles.
  std::string scratch_stem;
  int run_compression_level = 1;  // samtools sort's for its temporary files: fast, a third the size
};

// Records added in output order come out in coordinate order. Records are copied into chunks
// (no allocation per record) with a 24-byte entry each; a run that reaches half the memory is
// sorted (std::sort on parts on all threads, then merged pairwise) and written as a BAM file by a
// thread of its own while the next run fills. finish() merges the spilled runs and the last one,
// still in memory, through a heap holding one record per run. Runs cover consecutive stretches
// of the input, so ties between runs go to the earlier run, and the order is the input's. Runs on
// disk are merged kMostRuns at a time into runs of the next level, as a log-structured merge
// does, so that a record is rewritten once per level (log_16 of the run count) and at most 15
// runs a level are on disk.
// A run in memory is read in key order with the records ahead prefetched, from chunks in 2 MiB
// pages where the kernel gives them: scattered over gigabytes, each record otherwise cost a cache
// and a TLB miss in turn on the merging thread.
// Time: O(n log n) comparisons; each record written and read once, plus once per merge level.
// Space: the memory budget, plus one record per run while merging. One writer thread.
class CoordinateSorter {
 public:
  static constexpr std::size_t kMostRuns = 16;

  // `header` is copied into each run; `pool` (may be null) compresses and decompresses runs.
  static Result<CoordinateSorter> create(const sam_hdr_t* header, SortOptions options, hts_tpool* pool);
  CoordinateSorter(CoordinateSorter&&) noexcept;
  CoordinateSorter& operator=(CoordinateSorter&&) noexcept;
  ~CoordinateSorter();  // stops the spilling thread; the runs' files are removed

  // Copies the record. May hand a full run to the spilling thread (waiting while it still
  // spills the one before); returns that thread's error, if any.
  Status add(const bam1_t* record);

  // Calls emit(record) for every record added, in coordinate order. Once only.
  using Emit = std::function<Status(const bam1_t*)>;
  Status finish(const Emit& emit);

  struct Stats {
    std::uint64_t records = 0;
    std::uint64_t runs_spilled = 0;  // runs written to disk (0: sorted in memory only)
    std::uint64_t run_merges = 0;    // kMostRuns runs merged into one of the next level, during the run
    double spill_seconds = 0;        // sorting and writing runs, on the spilling thread
    double finish_seconds = 0;       // the last run's sort and the final merge, emit included
  };
  Stats stats() const;

 private:
  struct Impl;
  explicit CoordinateSorter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace wtmap::aligner
