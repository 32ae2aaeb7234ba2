// Batches of gapped extensions and global alignments on either backend (see gapped_batch.hpp).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "local_striped.hpp"
#include "wtmap/aligner/gapped/gapped_batch.hpp"
#include "wtmap/aligner/gapped/local_warp.cuh"
#include "wtmap/core/buffer.hpp"
#include "wtmap/core/detail/batch.cuh"
#include "wtmap/core/detail/copy_runs.cuh"

namespace wtmap::aligner::gapped {

namespace {

WTMAP_HD bool inside(std::uint64_t offset, std::uint32_t length, std::uint64_t size) {
  return offset <= size && length <= size - offset;
}

// The code arrays as the backend's queries read them (device copies for the GPU).
struct CodesView {
  const std::uint8_t* query;
  std::uint64_t query_size;
  const std::uint8_t* target;
  std::uint64_t target_size;
  template <class Task>
  WTMAP_HD bool holds(const Task& t) const {
    return inside(t.query_offset, t.query_length, query_size) && inside(t.target_offset, t.target_length, target_size);
  }
};

template <class Task>
std::string describe_ranges(const Task& t) {
  return "query [" + std::to_string(t.query_offset) + ", +" + std::to_string(t.query_length) + "), target [" +
         std::to_string(t.target_offset) + ", +" + std::to_string(t.target_length) + ")";
}

#if !defined(__CUDA_ARCH__)
// The CPU's DP reads a query through its profile (ProfiledQuery), laid out in a buffer of the
// thread's, which the thread's next call reuses: one task at a time.
template <class Codes>
ProfiledQuery<Codes> profiled(const Codes& query, std::uint32_t length, const Scoring& sc) {
  thread_local std::vector<std::int32_t> scores;
  const auto qlen = static_cast<std::int32_t>(length);
  scores.resize(5 * static_cast<std::size_t>(qlen));
  fill_query_profile(query, qlen, sc, scores.data());
  return {query, scores.data(), qlen};
}
#endif

// A task with the offset of its DP scratch in the launch's scratch buffer.
template <class Task>
struct Job {
  Task task;
  std::uint64_t scratch_offset;
};

// What every operation reads: the codes, the launch's scratch, the scoring.
struct GappedOpData {
  CodesView codes;
  std::byte* scratch;
  Scoring scoring;
  // An alignment is some 10^4 DP cells: a few dozen per CPU thread repay starting it.
  static constexpr std::uint64_t kCpuMinPerThread = 32;
};

struct ExtendOp : GappedOpData {
  using In = Job<ExtendTask>;
  using Out = ExtendResult;

  WTMAP_HD bool valid(const In& j) const { return codes.holds(j.task) && j.task.h0 > 0; }
  WTMAP_HD Out operator()(const In& j) const {
#if defined(__CUDA_ARCH__)
    return run<kGroup>(j);
#else
    return run<1>(j);
#endif
  }
  template <unsigned kLanes>
  WTMAP_HD Out run(const In& j) const {
    const ExtendTask& t = j.task;
    const std::uint8_t* q = codes.query + t.query_offset;
    const std::uint8_t* r = codes.target + t.target_offset;
    const DpRows<kLanes> s{reinterpret_cast<std::int32_t*>(scratch + j.scratch_offset)};
    if (t.leftwards) return extend_codes(ReverseCodes{q, t.query_length}, ReverseCodes{r, t.target_length}, t, s);
    return extend_codes(ForwardCodes{q}, ForwardCodes{r}, t, s);
  }
  template <class Codes, unsigned kLanes>
  WTMAP_HD Out extend_codes(const Codes& query, const Codes& target, const ExtendTask& t, DpRows<kLanes> rows) const {
#if defined(__CUDA_ARCH__)
    return extend(query, t.query_length, target, t.target_length, scoring, t.h0, rows);
#else
    return extend(profiled(query, t.query_length, scoring), t.query_length, target, t.target_length, scoring, t.h0,
                  rows);
#endif
  }
  std::string why_invalid(const In& j) const {
    return describe_ranges(j.task) + ", h0 " + std::to_string(j.task.h0) + " (ranges inside the codes, h0 > 0)";
  }
  // On the GPU a warp's tasks share interleaved DP rows (DpRows<kWarpLanes>), so that its threads
  // at the same column read adjacent words. On the CPU (row_group) a task's rows are its own: one
  // thread runs the tasks in turn, and interleaved rows would put every cell of a row on a cache
  // line of its own.
  static constexpr unsigned kGroup = kWarpLanes;
  static std::uint64_t scratch_bytes(const ExtendTask& t) { return extend_scratch_bytes(t.query_length); }
};

struct LocalOp : GappedOpData {
  using In = Job<LocalTask>;
  using Out = LocalResult;

  WTMAP_HD bool valid(const In& j) const { return codes.holds(j.task); }
  WTMAP_HD Out operator()(const In& j) const {
    const LocalTask& t = j.task;
    const ForwardCodes q{codes.query + t.query_offset}, r{codes.target + t.target_offset};
    const DpRows<kGroup> rows{reinterpret_cast<std::int32_t*>(scratch + j.scratch_offset)};
#if defined(__CUDA_ARCH__)
    return align(q, r, t, rows);
#else
    // On the CPU an unbanded window (the rescue's) through the striped DP, the rest through the
    // query's profile; the start, an extension as long as the alignment, as align()'s.
    if (!striped_fits(t.query_length, t.target_length, scoring)) return align(profiled(q, t.query_length, scoring), r, t, rows);
    const ExtendResult end = local_align_striped(q.codes, t.query_length, r.codes, t.target_length, scoring);
    return from_end(q, r, t, end, rows, [&] {
      return tandem_score_striped(q.codes, t.query_length, r.codes, t.target_length, end, scoring, t.tandem_floor);
    });
#endif
  }
  template <class Query, class Rows>
  WTMAP_HD Out align(const Query& q, ForwardCodes r, const LocalTask& t, Rows rows) const {
    const ExtendResult end = local_align(q, t.query_length, r, t.target_length, scoring, rows);
    return from_end(q, r, t, end, rows, [&] {
      return tandem_score(q, t.query_length, r, t.target_length, end, scoring, t.tandem_floor, rows);
    });
  }
  // The result from the best local alignment's end: its start (local_start) and, where the task
  // wants it, the tandem score (`tandem()`, by whichever DP found the end).
  template <class Query, class Rows, class Tandem>
  WTMAP_HD Out from_end(const Query& q, ForwardCodes r, const LocalTask& t, const ExtendResult& end, Rows rows,
                        const Tandem& tandem) const {
    Out out;
    if (end.score <= 0) return out;
    found(end, local_start(q, r, end, scoring, rows), out);
    if (wants_tandem(t, end)) out.tandem = tandem();
    return out;
  }
  WTMAP_HD static bool wants_tandem(const LocalTask& t, const ExtendResult& end) {
    return t.tandem_floor > 0 && end.score >= t.tandem_keep;
  }
#ifdef __CUDACC__
  // The same on a warp (local_warp.cuh): the two passes over the window on all its lanes, the
  // start -- an extension back whose live cells follow the alignment -- on lane 0. A banded task
  // runs as operator() on lane 0.
  __device__ Out warp_call(const In& j, unsigned lane) const {
    const LocalTask& t = j.task;
    Out out;
    if (!local_unbanded(t.query_length, t.target_length, scoring)) {
      if (lane == 0) out = (*this)(j);
      __syncwarp();
      return out;
    }
    const ForwardCodes q{codes.query + t.query_offset}, r{codes.target + t.target_offset};
    const DpRows<kGroup> rows{reinterpret_cast<std::int32_t*>(scratch + j.scratch_offset)};
    LocalBest best;
    local_rows_warp(q, t.query_length, r, t.target_length, scoring, rows, best, lane);
    const ExtendResult end = best.r;
    if (end.score <= 0) return out;
    __syncwarp();  // every lane's columns of the rows written before lane 0 reuses them
    if (lane == 0) found(end, local_start(q, r, end, scoring, rows), out);
    __syncwarp();  // lane 0's rows written before the warp's next pass overwrites them
    if (wants_tandem(t, end)) {
      TandemRuns runs = tandem_runs(end, scoring, t.tandem_floor);
      local_rows_warp(q, t.query_length, r, t.target_length, scoring, rows, runs, lane);
      runs.close();
      out.tandem = runs.best_away;
    }
    return out;
  }
#endif
  // The alignment from local_align's end and local_start's start.
  WTMAP_HD static void found(const ExtendResult& end, const ExtendResult& start, Out& out) {
    out.score = end.score;
    out.query_begin = end.qle - start.qle;
    out.query_end = end.qle;
    out.target_begin = end.tle - start.tle;
    out.target_end = end.tle;
  }
  std::string why_invalid(const In& j) const { return describe_ranges(j.task) + " (ranges inside the codes)"; }
  // A warp a window (a policy): mate rescue gives a few hundred of these long unbanded DPs a
  // batch, too few to fill the GPU one thread each, and one thread's DP is a chain of some 10^5
  // dependent cells. Blocks of one warp spread the windows over the multiprocessors. H200,
  // BM_Local: 512 windows 2.7 ms against 11.6 a thread each; 16,384 windows 25.8 ms against 18.2
  // (more than the warps the GPU holds at once, where a thread each would be the better).
  using WarpPerQuery = std::true_type;
  static constexpr unsigned kBlockThreads = detail::kWarpThreads;
  static constexpr unsigned kGroup = 1;  // a window's rows its own: the warp reads a row's columns side by side
  static std::uint64_t scratch_bytes(const LocalTask& t) { return extend_scratch_bytes(t.query_length); }
};

static_assert(detail::is_warp_per_query<LocalOp>::value && !detail::is_warp_per_query<ExtendOp>::value);

struct GlobalOp : GappedOpData {
  using In = Job<GlobalTask>;
  using Out = GlobalResult;
  std::uint32_t* cigar;
  std::uint64_t cigar_size;

  WTMAP_HD bool valid(const In& j) const {
    const GlobalTask& t = j.task;
    const std::uint64_t ops = global_max_cigar_ops(t.query_length, t.target_length);
    return codes.holds(t) && t.cigar_offset <= cigar_size && ops <= cigar_size - t.cigar_offset;
  }
  WTMAP_HD Out operator()(const In& j) const {
    const GlobalTask& t = j.task;
    return global_align(ForwardCodes{codes.query + t.query_offset}, t.query_length,
                        ForwardCodes{codes.target + t.target_offset}, t.target_length, scoring, t.band,
                        scratch + j.scratch_offset, cigar + t.cigar_offset,
                        global_max_cigar_ops(t.query_length, t.target_length));
  }
  std::string why_invalid(const In& j) const {
    return describe_ranges(j.task) + ", CIGAR at " + std::to_string(j.task.cigar_offset) + " of " +
           std::to_string(cigar_size) + " (ranges inside the codes, room for query + target length operations)";
  }
  static constexpr unsigned kGroup = 1;
  static std::uint64_t scratch_bytes(const GlobalTask& t) {
    return global_scratch_bytes(t.query_length, t.target_length, t.band);
  }
};

}  // namespace

struct GappedAligner::Device {
  detail::QueryWorkspace workspace;
  Buffer query, target, scratch, cigar;
  detail::RunStaging cigar_staging;
  std::optional<CodesView> placed;  // the codes the calls read (place())
};

GappedAligner::GappedAligner(Backend backend, std::uint64_t scratch_budget)
    : backend_(backend),
      scratch_budget_(scratch_budget != 0 ? scratch_budget : (backend == Backend::gpu ? 512ull << 20 : 8ull << 20)),
      device_(std::make_unique<Device>()) {}

GappedAligner::~GappedAligner() = default;

void GappedAligner::release_device_memory() {
  device_->placed.reset();
  device_->workspace.release();
  for (Buffer* b : {&device_->query, &device_->target, &device_->scratch, &device_->cigar}) *b = Buffer{};
  device_->cigar_staging.release_device_memory();
}

namespace {

// The codes as the backend reads them: the host arrays themselves, or their copies on the GPU
// (staged through the workspace's pinned buffers on its own streams: several aligners' copies
// then run side by side, which the default stream's copies do not).
Result<CodesView> place_codes(Backend backend, const CodeArrays& codes, Buffer& query, Buffer& target,
                              detail::QueryWorkspace& ws) {
  if (backend == Backend::cpu) return CodesView{codes.query, codes.query_size, codes.target, codes.target_size};
  WTMAP_TRY(query.grow_with_slack(backend, codes.query_size, "gapped alignment query codes"));
  WTMAP_TRY(target.grow_with_slack(backend, codes.target_size, "gapped alignment target codes"));
  WTMAP_TRY(detail::upload_staged(ws, query.data(), codes.query, codes.query_size));
  WTMAP_TRY(detail::upload_staged(ws, target.data(), codes.target, codes.target_size));
  return CodesView{reinterpret_cast<const std::uint8_t*>(query.data()), codes.query_size,
                   reinterpret_cast<const std::uint8_t*>(target.data()), codes.target_size};
}

// The first invalid task, checked on the host so that the message names its index in the batch.
template <class Op, class Task>
Status check_tasks(const Op& op, const Task* tasks, std::uint64_t count, const char* what) {
  for (std::uint64_t i = 0; i < count; ++i) {
    const typename Op::In job{tasks[i], 0};
    if (!op.valid(job)) return detail::invalid_query_status(op, what, i, job);
  }
  return {};
}

// How many consecutive tasks share interleaved DP rows on a backend: Op::kGroup on the GPU, where
// its device code reads them so; one on the CPU, whose loop (Op's host code) runs a task at a time.
template <class Op>
std::uint64_t row_group(Backend backend) {
  return backend == Backend::gpu ? Op::kGroup : 1;
}

// Runs the tasks in launches whose DP scratch fits the budget (at least one group each). Groups of
// row_group consecutive tasks share interleaved scratch (the group size times the widest one's
// bytes); task k of a group is given the group's offset + 4 k.
template <class Op, class Task>
Status run_in_chunks(Backend backend, Op op, const Task* tasks, typename Op::Out* out, std::uint64_t count,
                     std::uint64_t budget, Buffer& scratch, detail::QueryWorkspace& ws, const char* what) {
  const std::uint64_t group = row_group<Op>(backend);
  std::vector<typename Op::In> jobs;
  for (std::uint64_t begin = 0; begin < count;) {
    jobs.clear();
    std::uint64_t used = 0, end = begin;
    while (end < count) {
      const std::uint64_t group_end = std::min<std::uint64_t>(count, end + group);
      std::uint64_t widest = 0;
      for (std::uint64_t k = end; k < group_end; ++k) widest = std::max(widest, Op::scratch_bytes(tasks[k]));
      if (end > begin && used + widest * group > budget) break;
      for (std::uint64_t k = end; k < group_end; ++k)
        jobs.push_back({tasks[k], used + (k - end) * sizeof(std::int32_t)});
      used += widest * group;
      end = group_end;
    }
    // run_batch_gpu cuts a launch in pieces of (count + 3) / 4 tasks: with a multiple of 4 groups
    // each warp's threads (consecutive tasks) stay on one group.
    const std::uint64_t four_groups = 4 * group;
    if (group > 1 && end < count && end - begin > four_groups) {
      end = begin + (end - begin) / four_groups * four_groups;
      jobs.resize(end - begin);
    }
    WTMAP_TRY(scratch.grow_with_slack(backend, used, "gapped alignment DP scratch", budget));
    op.scratch = scratch.data();
    WTMAP_TRY(detail::run_batch(backend, op, jobs.data(), out + begin, end - begin, ws, what));
    begin = end;
  }
  return {};
}

}  // namespace

Status GappedAligner::place(const CodeArrays& codes) {
  device_->placed.reset();
  Result<CodesView> view = place_codes(backend_, codes, device_->query, device_->target, device_->workspace);
  if (!view.ok()) return view.status();
  device_->placed = view.value();
  return {};
}

template <class Op, class Task>
Status GappedAligner::run_tasks(Op op, const CodeArrays* codes, const Task* tasks, typename Op::Out* results,
                                std::uint64_t count, const char* what) {
  if (!op.scoring.valid())
    return invalid_argument(std::string(what) + ": scoring needs match > 0 and no negative penalty");
  if (codes == nullptr && !device_->placed) return invalid_argument(std::string(what) + ": no codes placed");
  // The checks read the ranges' sizes only, the same on the host and on the device.
  op.codes = codes != nullptr ? CodesView{codes->query, codes->query_size, codes->target, codes->target_size}
                              : *device_->placed;
  WTMAP_TRY(check_tasks(op, tasks, count, what));
  if (count == 0) return {};
  if (codes != nullptr) WTMAP_TRY(place(*codes));
  op.codes = *device_->placed;
  return run_in_chunks(backend_, op, tasks, results, count, scratch_budget_, device_->scratch, device_->workspace,
                       what);
}

Status GappedAligner::extend(const Scoring& scoring, const CodeArrays& codes, const ExtendTask* tasks,
                             ExtendResult* results, std::uint64_t count) {
  return run_tasks(ExtendOp{{{}, nullptr, scoring}}, &codes, tasks, results, count, "gapped extension");
}

Status GappedAligner::extend(const Scoring& scoring, const ExtendTask* tasks, ExtendResult* results,
                             std::uint64_t count) {
  return run_tasks(ExtendOp{{{}, nullptr, scoring}}, nullptr, tasks, results, count, "gapped extension");
}

Status GappedAligner::align_local(const Scoring& scoring, const CodeArrays& codes, const LocalTask* tasks,
                                  LocalResult* results, std::uint64_t count) {
  return run_tasks(LocalOp{{{}, nullptr, scoring}}, &codes, tasks, results, count, "local alignment");
}

Status GappedAligner::align_global(const Scoring& scoring, const CodeArrays& codes, const GlobalTask* tasks,
                                   GlobalResult* results, std::uint64_t count, std::uint32_t* cigar,
                                   std::uint64_t cigar_size) {
  GlobalOp op{{{}, nullptr, scoring}, cigar, cigar_size};
  const bool on_gpu = backend_ == Backend::gpu && count > 0;
  if (on_gpu) {
    WTMAP_TRY(device_->cigar.grow_with_slack(backend_, cigar_size * sizeof(std::uint32_t), "global alignment CIGARs"));
    op.cigar = reinterpret_cast<std::uint32_t*>(device_->cigar.data());
  }
  WTMAP_TRY(run_tasks(op, &codes, tasks, results, count, "global alignment"));
  if (!on_gpu) return {};
  // Only the operations written come back (a room holds query + target length of them).
  std::vector<detail::CopyRun> runs;
  std::uint64_t packed = 0;
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint32_t n = std::min(results[k].n_cigar, global_max_cigar_ops(tasks[k].query_length, tasks[k].target_length));
    if (n == 0) continue;
    runs.push_back({tasks[k].cigar_offset, packed, n});
    packed += n;
  }
  return detail::copy_runs_to_host(device_->workspace, op.cigar, cigar, runs, packed, device_->cigar_staging);
}

}  // namespace wtmap::aligner::gapped
