// wtmap aligner (gapped): batches of extensions and local alignments (extend.hpp) and global
// alignments with CIGAR (global.hpp) on either backend, through the Op contract of core's detail/batch.cuh: the CPU
// backend's threads and the GPU's generic kernel (one thread per alignment) call the same
// __host__ __device__ functions, so both return the same bytes.
//
// Space: the codes (copied to the device for the GPU backend), and DP scratch for as many tasks
// as fit a budget at once (extend_scratch_bytes / global_scratch_bytes each); larger batches run
// in consecutive launches. Time: the tasks' DP work, spread over the backend's threads.
#pragma once

#include <cstdint>
#include <memory>

#include "wtmap/aligner/gapped/extend.hpp"
#include "wtmap/aligner/gapped/global.hpp"
#include "wtmap/aligner/gapped/scoring.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::aligner::gapped {

// A batch's sequences: the codes (0..4) every task's query and target ranges point into, in host
// memory.
struct CodeArrays {
  const std::uint8_t* query = nullptr;
  std::uint64_t query_size = 0;
  const std::uint8_t* target = nullptr;
  std::uint64_t target_size = 0;
};

// One extension: query[query_offset, + query_length) against target[target_offset, +
// target_length) from score h0 > 0. leftwards != 0 reads both ranges from their last code
// backwards (the extension to the left of a seed whose first bases end the ranges).
struct ExtendTask {
  std::uint64_t query_offset = 0, target_offset = 0;
  std::uint32_t query_length = 0, target_length = 0;
  std::int32_t h0 = 1;
  std::uint8_t leftwards = 0;
};

// One global alignment of query[query_offset, + query_length) with target[target_offset, +
// target_length) in a band of `band` (global_band widens it to the end cell); its CIGAR goes to
// the caller's array at cigar_offset, room for global_max_cigar_ops(query_length, target_length).
struct GlobalTask {
  std::uint64_t query_offset = 0, target_offset = 0;
  std::uint32_t query_length = 0, target_length = 0;
  std::int32_t band = 0;
  std::uint64_t cigar_offset = 0;
};

// One local alignment (mate rescue: a read searched in a reference window) of query[query_offset,
// + query_length) in target[target_offset, + target_length), cells within the scoring's band.
// tandem_floor > 0: a best scoring at least tandem_keep (the finds the caller keeps) also gets its
// tandem_score (bwa's csub) with that floor, a second pass over the window.
struct LocalTask {
  std::uint64_t query_offset = 0, target_offset = 0;
  std::uint32_t query_length = 0, target_length = 0;
  std::int32_t tandem_floor = 0, tandem_keep = 0;
};
// The best local alignment: query[query_begin, query_end) against target[target_begin,
// target_end) (offsets in the task's ranges); all 0 when no base matches. tandem: its
// tandem_score where the task asks for it, else 0.
struct LocalResult {
  std::int32_t score = 0;
  std::int32_t query_begin = 0, query_end = 0, target_begin = 0, target_end = 0;
  std::int32_t tandem = 0;
};

// Runs batches on one backend; device buffers are kept and grown between batches. One batch at a
// time (the calls are not thread safe).
class GappedAligner {
 public:
  // scratch_budget: DP scratch bytes held at once (0: 512 MiB on the GPU, 8 MiB on the CPU, whose
  // threads run a launch's tasks a few at a time: every page of a launch's scratch is faulted in
  // on first use, and a gapped run has two aligners a mapper; 10^5 pairs on 2 cores took 1.3 GB
  // instead of 1.5 GB and 2.1 s of system time instead of 3.1-4.4 s with 64 MiB, the same records).
  explicit GappedAligner(Backend backend, std::uint64_t scratch_budget = 0);
  ~GappedAligner();
  GappedAligner(const GappedAligner&) = delete;
  GappedAligner& operator=(const GappedAligner&) = delete;

  Backend backend() const { return backend_; }

  // Frees the device buffers kept between batches (codes, DP scratch, CIGARs, the workspace);
  // the next batch makes them anew, for its own size (after a device_out_of_memory).
  void release_device_memory();

  // Places `codes` where the backend reads them (the GPU: a copy on the device) for the calls that
  // follow and name no codes: a mapper's round extends its seeds left, then right, then some again
  // with a wider band, all in the same windows, which were copied once a call (copying codes took
  // 8 % of the mapping threads' CPU samples, H200). The arrays must stay as they are until the
  // next place(), call given codes, or release_device_memory(), which each replace the placement.
  Status place(const CodeArrays& codes);
  // results[i] = extend(task i) with `scoring` (its band and z-drop). invalid_argument names the
  // first task whose ranges leave the arrays or whose h0 is not positive, or bad scoring. The
  // first form places `codes` first; the second reads the codes placed last (invalid_argument if
  // none are).
  Status extend(const Scoring& scoring, const CodeArrays& codes, const ExtendTask* tasks, ExtendResult* results,
                std::uint64_t count);
  Status extend(const Scoring& scoring, const ExtendTask* tasks, ExtendResult* results, std::uint64_t count);

  // results[i]: local_align(task i) with `scoring` (its band), the start from local_start.
  Status align_local(const Scoring& scoring, const CodeArrays& codes, const LocalTask* tasks, LocalResult* results,
                     std::uint64_t count);

  // results[i] = global_align(task i) with `scoring`'s penalties and the task's band, its CIGAR at
  // cigar[task.cigar_offset, + results[i].n_cigar). cigar_size: the array's length. The rest of
  // the array is unspecified (not cleared: a batch's rooms are some 100 MB).
  Status align_global(const Scoring& scoring, const CodeArrays& codes, const GlobalTask* tasks, GlobalResult* results,
                      std::uint64_t count, std::uint32_t* cigar, std::uint64_t cigar_size);

 private:
  struct Device;
  // Checks the scoring and the tasks (a message names a task by its index in the batch), places
  // `codes` where the backend reads them (none: those placed last) and runs op on every task.
  template <class Op, class Task>
  Status run_tasks(Op op, const CodeArrays* codes, const Task* tasks, typename Op::Out* results, std::uint64_t count,
                   const char* what);

  Backend backend_;
  std::uint64_t scratch_budget_;
  std::unique_ptr<Device> device_;
};

}  // namespace wtmap::aligner::gapped
