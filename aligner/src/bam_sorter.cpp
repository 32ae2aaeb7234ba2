#include "wtmap/aligner/bam_sorter.hpp"

#include <htslib/sam.h>
#include <htslib/thread_pool.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <new>
#include <queue>
#include <thread>
#include <utility>
#include <vector>

#include "wtmap/core/detail/host_pages.hpp"
#include "wtmap/core/detail/parallel.hpp"
#include "wtmap/io/output_file.hpp"

namespace wtmap::aligner {

CoordinateKey coordinate_key(const bam1_t* b) {
  CoordinateKey k;
  k.tid = b->core.tid < 0 ? UINT32_MAX : static_cast<std::uint32_t>(b->core.tid);
  k.pos_rev = (static_cast<std::uint64_t>(b->core.pos + 1) << 1) | ((b->core.flag & BAM_FREVERSE) != 0 ? 1u : 0u);
  return k;
}

std::uint64_t default_sort_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  std::uint64_t usable = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
  // A container's limit (cgroup v2, then v1) where it is below the machine's memory.
  for (const char* limit_file : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(limit_file);
    std::uint64_t limit = 0;
    if (in >> limit && limit > 0 && (usable == 0 || limit < usable)) usable = limit;
  }
  return std::max<std::uint64_t>(usable / 8, std::uint64_t{64} << 20);
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// A record in a run: its key, its place among the run's records (the tie-break), and where its
// bytes are.
struct Entry {
  std::uint64_t pos_rev;
  std::uint32_t tid;
  std::uint32_t sequence;
  const std::uint8_t* record;
};
bool entry_less(const Entry& a, const Entry& b) {
  if (a.tid != b.tid) return a.tid < b.tid;
  if (a.pos_rev != b.pos_rev) return a.pos_rev < b.pos_rev;
  return a.sequence < b.sequence;
}

// A record as a run stores it: the fixed fields, the length of the variable ones, then those.
struct StoredHeader {
  bam1_core_t core;
  std::uint32_t l_data;
};
constexpr std::size_t kStoredAlign = alignof(StoredHeader);
std::size_t stored_size(std::size_t l_data) {
  return (sizeof(StoredHeader) + l_data + kStoredAlign - 1) / kStoredAlign * kStoredAlign;
}

// Copies a stored record into `b` (whose data htslib allocated with malloc, so realloc is its own).
Status load_record(const std::uint8_t* stored, bam1_t* b) {
  StoredHeader h;
  std::memcpy(&h, stored, sizeof h);
  if (b->m_data < h.l_data) {
    void* grown = std::realloc(b->data, h.l_data);
    if (grown == nullptr) return {StatusCode::out_of_memory, "cannot allocate a BAM record while sorting"};
    b->data = static_cast<std::uint8_t*>(grown);
    b->m_data = h.l_data;
  }
  std::memcpy(b->data, stored + sizeof h, h.l_data);
  b->l_data = static_cast<int>(h.l_data);
  b->core = h.core;
  return {};
}

struct SamFileCloser {
  void operator()(samFile* f) const { sam_close(f); }
};
using SamFilePtr = std::unique_ptr<samFile, SamFileCloser>;
struct RecordFree {
  void operator()(bam1_t* b) const { bam_destroy1(b); }
};
using RecordPtr = std::unique_ptr<bam1_t, RecordFree>;

// Entries in key order: std::sort on one part per thread, then the parts merged pairwise,
// each round's merges on all threads. `scratch` takes the other half of each round.
void sort_entries(std::vector<Entry>& entries, std::vector<Entry>& scratch) {
  constexpr std::size_t kLeastPerPart = std::size_t{1} << 16;
  const std::size_t n = entries.size();
  const std::size_t parts = std::min<std::size_t>(wtmap::detail::cpu_threads(), std::max<std::size_t>(1, n / kLeastPerPart));
  if (parts <= 1) {
    std::sort(entries.begin(), entries.end(), entry_less);
    return;
  }
  std::vector<std::size_t> bounds(parts + 1);
  for (std::size_t p = 0; p <= parts; ++p) bounds[p] = n * p / parts;
  wtmap::detail::parallel_for_ranges(parts, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t p = begin; p < end; ++p) std::sort(entries.begin() + bounds[p], entries.begin() + bounds[p + 1], entry_less);
  }, 1);
  scratch.resize(n);
  while (bounds.size() > 2) {
    const std::size_t runs = bounds.size() - 1;
    wtmap::detail::parallel_for_ranges((runs + 1) / 2, [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t q = begin; q < end; ++q) {
        const std::size_t lo = bounds[2 * q], mid = bounds[std::min(2 * q + 1, runs)], hi = bounds[std::min(2 * q + 2, runs)];
        std::merge(entries.begin() + lo, entries.begin() + mid, entries.begin() + mid, entries.begin() + hi,
                   scratch.begin() + lo, entry_less);
      }
    }, 1);
    std::vector<std::size_t> merged;
    for (std::size_t i = 0; i < runs; i += 2) merged.push_back(bounds[i]);
    merged.push_back(bounds[runs]);
    bounds = std::move(merged);
    entries.swap(scratch);
  }
}

// How far ahead of the merge MemoryCursor asks for records, and how much of each (a short read's
// record is some 400 bytes).
constexpr std::size_t kPrefetchDistance = 16, kPrefetchLines = 7;

// Records held in memory: chunks that keep their bytes from run to run (no allocation per record,
// pages faulted once), and one entry per record.
class MemoryRun {
 public:
  explicit MemoryRun(std::uint64_t budget)
      : budget_(budget), chunk_size_(std::clamp<std::uint64_t>(budget / 8, std::uint64_t{64} << 10, std::uint64_t{64} << 20)) {}

  // Full once its bytes reach the budget (it always takes one record), or at 2^32 - 1 records.
  bool full() const { return !entries_.empty() && (bytes_ >= budget_ || entries_.size() == UINT32_MAX); }
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  const std::uint8_t* record(std::size_t i) const { return entries_[i].record; }
  // Asks the cache for record i's first bytes: read in key order, the records are scattered over
  // the run's memory, and waiting for each one's miss in turn made the final merge memory-bound.
  void prefetch(std::size_t i) const {
    if (i >= entries_.size()) return;
    for (std::size_t line = 0; line < kPrefetchLines; ++line) __builtin_prefetch(entries_[i].record + 64 * line);
  }

  Status add(const bam1_t* b) {
    const std::size_t size = stored_size(static_cast<std::size_t>(b->l_data));
    std::uint8_t* at = room(size);
    if (at == nullptr) return {StatusCode::out_of_memory, "cannot allocate memory for sorting"};
    const StoredHeader h{b->core, static_cast<std::uint32_t>(b->l_data)};
    std::memcpy(at, &h, sizeof h);
    std::memcpy(at + sizeof h, b->data, static_cast<std::size_t>(b->l_data));
    const CoordinateKey key = coordinate_key(b);
    try {
      entries_.push_back(Entry{key.pos_rev, key.tid, static_cast<std::uint32_t>(entries_.size()), at});
    } catch (const std::bad_alloc&) {
      return {StatusCode::out_of_memory, "cannot allocate memory for sorting"};
    }
    bytes_ += size + 2 * sizeof(Entry);  // the sort's scratch entry counted too
    return {};
  }

  void sort() { sort_entries(entries_, scratch_); }

  // Empty again; the chunks stay for the next run unless `release`.
  void clear(bool release = false) {
    entries_.clear();
    chunk_ = 0;
    used_ = 0;
    bytes_ = 0;
    if (release) {
      chunks_.clear();
      std::vector<Entry>().swap(entries_);
      std::vector<Entry>().swap(scratch_);
    }
  }

 private:
  struct Chunk {
    wtmap::detail::HostPageBytes bytes;
    std::size_t size;
  };

  // `size` bytes in the current chunk, or the next (made, or made larger, where needed).
  std::uint8_t* room(std::size_t size) {
    if (chunk_ < chunks_.size() && used_ + size <= chunks_[chunk_].size) {
      std::uint8_t* at = chunks_[chunk_].bytes.get() + used_;
      used_ += size;
      return at;
    }
    if (chunk_ < chunks_.size() && used_ > 0) ++chunk_;  // the current one is too full
    used_ = 0;
    if (chunk_ == chunks_.size()) chunks_.push_back(Chunk{nullptr, 0});
    Chunk& c = chunks_[chunk_];
    if (c.size < size) {
      const std::size_t want = std::max<std::size_t>(size, chunk_size_);
      // In 2 MiB pages where the kernel gives them: the final merge reads the records in key
      // order, all over the run, and with 4 KiB pages nearly every one missed the TLB too.
      c.bytes = wtmap::detail::allocate_host_page_bytes(want);
      c.size = c.bytes ? want : 0;
      if (!c.bytes) return nullptr;
    }
    used_ = size;
    return c.bytes.get();
  }

  std::uint64_t budget_, chunk_size_, bytes_ = 0;
  std::vector<Chunk> chunks_;
  std::size_t chunk_ = 0, used_ = 0;
  std::vector<Entry> entries_, scratch_;
};

// One run's records in order, one at a time (the merge's view of a run).
class RunCursor {
 public:
  virtual ~RunCursor() = default;
  // The next record into record(); false at the end.
  virtual Result<bool> advance() = 0;
  const bam1_t* record() const { return record_.get(); }

 protected:
  RecordPtr record_{bam_init1()};
};

class MemoryCursor : public RunCursor {
 public:
  explicit MemoryCursor(const MemoryRun& run) : run_(run) {}
  Result<bool> advance() override {
    if (next_ == run_.size()) return false;
    if (!record_) return Status{StatusCode::out_of_memory, "cannot allocate a BAM record while sorting"};
    run_.prefetch(next_ + kPrefetchDistance);
    WTMAP_TRY(load_record(run_.record(next_++), record_.get()));
    return true;
  }

 private:
  const MemoryRun& run_;
  std::size_t next_ = 0;
};

class FileCursor : public RunCursor {
 public:
  static Result<std::unique_ptr<FileCursor>> open(const std::string& path, hts_tpool* pool) {
    auto cursor = std::unique_ptr<FileCursor>(new FileCursor(path));
    cursor->file_.reset(sam_open(path.c_str(), "rb"));
    if (!cursor->file_ || !cursor->record_) return Status{StatusCode::io_error, path + ": cannot reopen a sorted run"};
    if (pool != nullptr) {
      htsThreadPool shared{pool, 0};
      hts_set_opt(cursor->file_.get(), HTS_OPT_THREAD_POOL, &shared);
    }
    cursor->header_ = sam_hdr_read(cursor->file_.get());
    if (cursor->header_ == nullptr) return Status{StatusCode::io_error, path + ": a sorted run lost its header"};
    return cursor;
  }
  ~FileCursor() override {
    if (header_ != nullptr) sam_hdr_destroy(header_);
  }
  Result<bool> advance() override {
    const int got = sam_read1(file_.get(), header_, record_.get());
    if (got >= 0) return true;
    if (got == -1) return false;
    return Status{StatusCode::io_error, path_ + ": reading a sorted run back failed"};
  }

 private:
  explicit FileCursor(std::string path) : path_(std::move(path)) {}
  std::string path_;
  SamFilePtr file_;
  sam_hdr_t* header_ = nullptr;
};

// Emits the records of every cursor in coordinate order; equal keys go to the earlier cursor
// (the earlier stretch of the input), whose own records are in input order already.
Status merge_runs(std::vector<std::unique_ptr<RunCursor>>& cursors, const CoordinateSorter::Emit& emit) {
  struct Head {
    CoordinateKey key;
    std::size_t run;
  };
  auto after = [](const Head& a, const Head& b) { return b.key < a.key || (a.key == b.key && a.run > b.run); };
  std::priority_queue<Head, std::vector<Head>, decltype(after)> heads(after);
  for (std::size_t r = 0; r < cursors.size(); ++r) {
    Result<bool> more = cursors[r]->advance();
    if (!more.ok()) return more.status();
    if (*more) heads.push(Head{coordinate_key(cursors[r]->record()), r});
  }
  while (!heads.empty()) {
    const std::size_t r = heads.top().run;
    heads.pop();
    WTMAP_TRY(emit(cursors[r]->record()));
    Result<bool> more = cursors[r]->advance();
    if (!more.ok()) return more.status();
    if (*more) heads.push(Head{coordinate_key(cursors[r]->record()), r});
  }
  return {};
}

}  // namespace

struct CoordinateSorter::Impl {
  sam_hdr_t* header = nullptr;  // a copy, written at the top of every run
  SortOptions options;
  hts_tpool* pool = nullptr;
  MemoryRun filling, spilling;
  // Runs on disk, in input order; a run's level is how many merges its records went through, and
  // never rises along the list (merges replace its tail).
  struct SpilledRun {
    io::TemporaryFile file;
    unsigned level;
  };
  std::vector<SpilledRun> runs;
  std::uint64_t runs_named = 0;
  Stats stats;

  // The spilling thread and its one job: `spilling`, while `spill_pending`.
  std::thread thread;
  std::mutex mutex;
  std::condition_variable changed;
  bool spill_pending = false, stopping = false;
  std::atomic<bool> abandon{false};  // the destructor's: stop writing a run
  Status spill_error;

  explicit Impl(const SortOptions& o) : options(o), filling(o.memory_bytes / 2), spilling(o.memory_bytes / 2) {}

  ~Impl() {
    abandon = true;
    {
      const std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    changed.notify_all();
    if (thread.joinable()) thread.join();
    runs.clear();  // removes the files
    if (header != nullptr) sam_hdr_destroy(header);
  }

  // Writes records through emit() into a new run file.
  Result<io::TemporaryFile> write_run(const std::function<Status(const CoordinateSorter::Emit&)>& produce) {
    Result<io::TemporaryFile> made = io::TemporaryFile::create(options.scratch_stem + ".run" + std::to_string(runs_named++));
    if (!made.ok()) return made.status();
    const std::string& path = made->path();
    const std::string mode = "wb" + std::to_string(std::clamp(options.run_compression_level, 0, 9));
    SamFilePtr file(sam_open(path.c_str(), mode.c_str()));
    if (!file) return Status{StatusCode::io_error, path + ": cannot open a sorted run for writing"};
    if (pool != nullptr) {
      htsThreadPool shared{pool, 0};
      hts_set_opt(file.get(), HTS_OPT_THREAD_POOL, &shared);
    }
    if (sam_hdr_write(file.get(), header) < 0) return Status{StatusCode::io_error, path + ": writing a sorted run failed"};
    std::uint64_t written = 0;
    WTMAP_TRY(produce([&](const bam1_t* b) -> Status {
      if ((++written & 4095) == 0 && abandon.load()) return Status{StatusCode::cancelled, "sorting stopped"};
      if (sam_write1(file.get(), header, b) < 0) return Status{StatusCode::io_error, path + ": writing a sorted run failed"};
      return {};
    }));
    if (sam_close(file.release()) < 0) return Status{StatusCode::io_error, path + ": writing a sorted run failed"};
    return made;
  }

  // The spilling thread's job: sort `spilling`, write it; then, while the last kMostRuns runs
  // are of one level, merge them into one of the next (each record is rewritten once per level,
  // log_kMostRuns of the run count, and at most kMostRuns - 1 runs of a level stay on disk).
  Status spill() {
    spilling.sort();
    Result<io::TemporaryFile> run = write_run([this](const Emit& emit) {
      MemoryCursor cursor(spilling);
      while (true) {
        Result<bool> more = cursor.advance();
        if (!more.ok()) return more.status();
        if (!*more) return Status{};
        WTMAP_TRY(emit(cursor.record()));
      }
    });
    spilling.clear();
    if (!run.ok()) return run.status();
    runs.push_back(SpilledRun{std::move(*run), 0});
    ++stats.runs_spilled;
    while (runs.size() >= kMostRuns && runs[runs.size() - kMostRuns].level == runs.back().level) {
      const std::size_t first = runs.size() - kMostRuns;
      Result<io::TemporaryFile> merged = write_run([&](const Emit& emit) { return merge_files(first, emit, nullptr); });
      if (!merged.ok()) return merged.status();
      const unsigned level = runs.back().level + 1;
      runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(first), runs.end());
      runs.push_back(SpilledRun{std::move(*merged), level});
      ++stats.run_merges;
    }
    return {};
  }

  // Merges the runs on disk from `first` on, and `last` (records after theirs) if given.
  Status merge_files(std::size_t first, const Emit& emit, const MemoryRun* last) {
    std::vector<std::unique_ptr<RunCursor>> cursors;
    for (std::size_t r = first; r < runs.size(); ++r) {
      Result<std::unique_ptr<FileCursor>> opened = FileCursor::open(runs[r].file.path(), pool);
      if (!opened.ok()) return opened.status();
      cursors.push_back(std::move(*opened));
    }
    if (last != nullptr) cursors.push_back(std::make_unique<MemoryCursor>(*last));
    return merge_runs(cursors, emit);
  }

  void spill_loop() {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      changed.wait(lock, [this] { return spill_pending || stopping; });
      if (!spill_pending) return;
      lock.unlock();
      const Clock::time_point start = Clock::now();
      Status done = spill();
      const double seconds = seconds_since(start);
      lock.lock();
      stats.spill_seconds += seconds;
      if (spill_error.ok()) spill_error = std::move(done);
      spill_pending = false;
      changed.notify_all();
    }
  }

  // Waits until no run is being spilled; its error, if it failed.
  Status wait_for_spill() {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [this] { return !spill_pending; });
    return spill_error;
  }

  // Hands the full run to the spilling thread and fills the one it spilled last.
  Status hand_over() {
    WTMAP_TRY(wait_for_spill());
    std::swap(filling, spilling);
    {
      const std::lock_guard<std::mutex> lock(mutex);
      spill_pending = true;
    }
    if (!thread.joinable()) {
      try {
        thread = std::thread([this] { spill_loop(); });
      } catch (const std::system_error&) {
        const std::lock_guard<std::mutex> lock(mutex);
        spill_pending = false;
        return Status{StatusCode::out_of_memory, "cannot start the thread that spills sorted runs"};
      }
    }
    changed.notify_all();
    return {};
  }
};

CoordinateSorter::CoordinateSorter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CoordinateSorter::CoordinateSorter(CoordinateSorter&&) noexcept = default;
CoordinateSorter& CoordinateSorter::operator=(CoordinateSorter&&) noexcept = default;
CoordinateSorter::~CoordinateSorter() = default;

Result<CoordinateSorter> CoordinateSorter::create(const sam_hdr_t* header, SortOptions options, hts_tpool* pool) {
  if (options.scratch_stem.empty()) return invalid_argument("CoordinateSorter: no place for its temporary files");
  auto impl = std::make_unique<Impl>(options);
  impl->header = sam_hdr_dup(header);
  if (impl->header == nullptr) return Status{StatusCode::out_of_memory, "cannot copy the SAM header for sorting"};
  impl->pool = pool;
  return CoordinateSorter(std::move(impl));
}

Status CoordinateSorter::add(const bam1_t* record) {
  Impl& impl = *impl_;
  if (impl.filling.full()) WTMAP_TRY(impl.hand_over());
  ++impl.stats.records;
  return impl.filling.add(record);
}

Status CoordinateSorter::finish(const Emit& emit) {
  Impl& impl = *impl_;
  WTMAP_TRY(impl.wait_for_spill());
  const Clock::time_point start = Clock::now();
  impl.spilling.clear(/*release=*/true);  // idle from now on
  impl.filling.sort();
  Status merged = impl.merge_files(0, emit, &impl.filling);
  impl.filling.clear(/*release=*/true);
  impl.runs.clear();
  impl.stats.finish_seconds += seconds_since(start);
  return merged;
}

CoordinateSorter::Stats CoordinateSorter::stats() const {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->stats;
}

}  // namespace wtmap::aligner
