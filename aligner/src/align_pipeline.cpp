#include "wtmap/aligner/align_pipeline.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "wtmap/aligner/bounded_queue.hpp"
#include "wtmap/aligner/reorder_queue.hpp"
#include "wtmap/core/detail/thread_name.hpp"

namespace wtmap::aligner {

namespace {

// Makes new batches for the reader on threads of their own, each record's strings already
// allocated: a 10^6-read run fills 8 to 10 of its batches new (the reader runs ahead while the
// index loads, and batches come back only once written), and the 3 allocations per record and
// their fresh pages made the reader three times slower into new batches than into batches made
// beforehand (bench/history/RESULTS-2026-11-26.md). It keeps up to two batches ready and stops
// once `most` batches were made, as many as the pipeline holds at once, counting those the
// reader made itself when none was ready, or at close(). So at most `most` + 2 batches ever
// exist: only while a thread here still makes one can the reader have to make one more.
class BatchWarmer {
 public:
  // batch_size: the pipeline's, read as each batch is made (AlignPipeline::limit_batch_size).
  BatchWarmer(const std::atomic<std::size_t>& batch_size, std::size_t most, unsigned threads) {
    for (unsigned t = 0; t < threads; ++t) {
      threads_.emplace_back([this, &batch_size, most] {
        while (claimed_.fetch_add(1) < most) {
          if (!ready_.push(make(batch_size.load(std::memory_order_relaxed)))) return;
        }
      });
      wtmap::detail::name_thread(threads_.back(), "wtmap-warm");
    }
  }
  ~BatchWarmer() {
    close();
    for (std::thread& t : threads_) t.join();
  }
  BatchWarmer(const BatchWarmer&) = delete;
  BatchWarmer& operator=(const BatchWarmer&) = delete;

  // A new batch: a warm one if ready, else an empty one (the reader never waits for this thread).
  ReadBatch take() {
    std::optional<ReadBatch> batch = ready_.try_pop();
    if (batch) return std::move(*batch);
    claimed_.fetch_add(1);
    made_.fetch_add(1);
    return ReadBatch{};
  }
  // Called with each batch read: the longest name and sequence so far set the string capacities
  // of the next batches made.
  void saw(const ReadBatch& batch) {
    std::size_t name = 0, sequence = 0;
    for (std::size_t r = 0; r < batch.filled; ++r) {
      name = std::max(name, batch.reads[r].name.size());
      sequence = std::max(sequence, batch.reads[r].sequence.size());
    }
    grow(longest_name_, name);
    grow(longest_sequence_, sequence);
  }
  void close() {
    stop_ = true;
    ready_.close();
  }
  std::size_t made() const { return made_.load(); }

 private:
  // Until a batch has been read: names as long as ART's or Illumina's.
  static constexpr std::size_t kFirstName = 64;

  static void grow(std::atomic<std::size_t>& longest, std::size_t seen) {
    std::size_t old = longest.load();
    while (seen > old && !longest.compare_exchange_weak(old, seen)) {
    }
  }
  ReadBatch make(std::size_t batch_size) {
    made_.fetch_add(1);
    const std::size_t seen_name = longest_name_.load(), seen_sequence = longest_sequence_.load();
    const std::size_t name = seen_sequence > 0 ? seen_name : kFirstName;
    const std::size_t sequence = seen_sequence > 0 ? seen_sequence : kFirstReadLength;
    ReadBatch batch;
    batch.reads.resize(std::min(batch_size, kMostReadsMadeAhead));
    for (SeqRecord& r : batch.reads) {
      if (stop_.load(std::memory_order_relaxed)) break;  // unused: the run is ending
      r.name.reserve(name);
      r.sequence.reserve(sequence);
      r.quality.reserve(sequence);
    }
    return batch;
  }

  std::atomic<std::size_t> longest_name_{0}, longest_sequence_{0}, claimed_{0}, made_{0};
  std::atomic<bool> stop_{false};
  BoundedQueue<ReadBatch> ready_{2};
  std::vector<std::thread> threads_;
};

}  // namespace

Status cancelled_status() { return {StatusCode::cancelled, "the run was cancelled"}; }

void AlignTotals::add(const ReadBatch& batch, unsigned max_mismatches) {
  batch_reads.push_back(batch.alignments.size() + batch.gapped_alignments.size());
  for (const gapped::GappedReadAlignment& a : batch.gapped_alignments) {
    ++reads;
    mapped += a.mapped;
    unique += a.mapped && a.mapq > 0;
    split += a.mapped && !a.supplementary.empty();
    too_short += (a.flags & kTooShort) != 0;
    too_long += (a.flags & kTooLong) != 0;
  }
  for (const ReadAlignment& a : batch.alignments) {
    ++reads;
    mapped += a.mapped;
    unique += a.mapped && mapping_quality(a, max_mismatches) > 0;
    capped += search_cut_short(a.flags);
    too_short += (a.flags & kTooShort) != 0;
    too_long += (a.flags & kTooLong) != 0;
  }
}

namespace {

// One engine's search and finish stages (one GPU's), with the queue between them. The numbers
// of the batches each stage timed, span by span, place its spans in the joined clocks.
struct Lane {
  explicit Lane(SearchEngine* e)
      : engine(e),
        finish_capacity(e == nullptr ? AlignPipeline::kToFinish : std::max<std::size_t>(1, e->finish_queue_capacity())),
        to_finish(finish_capacity) {}
  // The lane's queue beyond the default's (AlignPipeline's bounds' `extra`).
  std::size_t extra() const {
    return finish_capacity > AlignPipeline::kToFinish ? finish_capacity - AlignPipeline::kToFinish : 0;
  }
  SearchEngine* engine;
  std::size_t finish_capacity;  // the engine's finish_queue_capacity()
  BoundedQueue<ReadBatch> to_finish;
  std::thread search_thread, finish_thread;  // search_thread unused for lane 0 (run()'s thread)
  Status search_status, finish_status;       // each set by its stage's thread
  StageClock search_clock, finish_clock;
  std::vector<std::uint64_t> searched, finished;
  bool searched_all = false;  // this lane searched every batch it took, and the reader ended well
};

}  // namespace

struct AlignPipeline::Impl {
  explicit Impl(PipelineOptions o)
      : options(std::move(o)),
        batch_size(options.batch_size),
        warmer(batch_size, kMostInStages, options.warming_threads),
        to_write(kToWrite) {}

  // Closes every queue: each stage's next push or pop fails, and it stops.
  void stop_all() {
    to_search.close();
    if (engines_known.load(std::memory_order_acquire)) {  // else run() has not made the lanes yet
      for (const std::unique_ptr<Lane>& lane : lanes) lane->to_finish.close();
    }
    to_write.close();
    warmer.close();
  }
  // A stage failed: every other stops after the call it is in.
  void fail_all() {
    failed = true;
    stop_all();
  }
  bool stopping() const { return cancelled.load() || failed.load(); }
  void join_all() {  // from the destructor: run() has returned, or was never called
    for (const std::unique_ptr<Lane>& lane : lanes) {
      for (std::thread* t : {&lane->search_thread, &lane->finish_thread}) {
        if (t->joinable()) t->join();
      }
    }
    for (std::thread* t : {&read_thread, &write_thread, &releasing}) {
      if (t->joinable()) t->join();
    }
  }

  ReadBatch next_batch() {
    std::optional<ReadBatch> spare = spare_batches.try_pop();
    if (!spare) return warmer.take();
    spare->filled = 0;
    return std::move(*spare);
  }
  // Batch `number`'s reads: --batch, or fewer on the ramp (PipelineOptions::first_batch_size) and
  // where an engine (once run() named them) asks for smaller batches.
  std::size_t batch_reads(std::uint64_t number) const {
    std::size_t most = ramped_batch_size(options.first_batch_size, batch_size.load(std::memory_order_relaxed), number);
    if (!engines_known.load(std::memory_order_acquire)) return most;
    for (const std::unique_ptr<Lane>& lane : lanes) {
      if (lane->engine != nullptr) most = std::min(most, lane->engine->most_reads_per_batch());
    }
    return most;
  }
  // The lane's error as run() returns it: where the engine runs, where there are several.
  Status lane_status(const Lane& lane, const Status& s) const {
    if (s.ok() || lanes.size() < 2 || lane.engine == nullptr || lane.engine->where().empty()) return s;
    return {s.code(), lane.engine->where() + ": " + s.message()};
  }
  Status read_all(ReadSource& source);
  Status search_all(Lane& lane);
  Status finish_all(Lane& lane, AlignmentSink& sink);
  Status write_all(AlignmentSink& sink);
  void run_search(Lane& lane);
  void run_finish(Lane& lane, AlignmentSink& sink, const std::function<void()>& release);
  // The lanes' clocks of one stage as one: their spans in batch order.
  static void join_clocks(const std::vector<std::unique_ptr<Lane>>& lanes, StageClock Lane::*clock,
                          std::vector<std::uint64_t> Lane::*numbers, StageClock& joined);

  const PipelineOptions options;
  std::atomic<std::size_t> batch_size;  // options.batch_size, or the limit_batch_size() given since
  BoundedQueue<ReadBatch> to_search{kReadAhead};
  // Written batches, back to the reader; never full (the stages' bounds bound the batches).
  BoundedQueue<ReadBatch> spare_batches{std::numeric_limits<std::size_t>::max()};
  BatchWarmer warmer;
  ReorderQueue<ReadBatch> to_write;
  std::vector<std::unique_ptr<Lane>> lanes;  // set by run() before engines_known
  std::atomic<bool> engines_known{false};    // for the reader's batch_reads(number)
  std::atomic<bool> cancelled{false}, failed{false};
  std::uint64_t batches_read = 0;  // the reader thread's: the next batch's number
  std::mutex lanes_done_mutex;
  std::size_t lanes_done = 0;  // lanes whose finish stage ended (under lanes_done_mutex)
  Status read_status, write_status;  // each set by its stage's thread
  StageClocks clocks;  // read and write touched by their own stage's thread only; the rest joined
  AlignTotals totals;  // the writer thread's
  std::thread read_thread, write_thread, releasing;
};

Status AlignPipeline::Impl::read_all(ReadSource& source) {
  while (!stopping()) {
    ReadBatch batch = next_batch();
    bool more = true;
    WTMAP_TRY(clocks.read.time([&]() -> Status {
      auto filled = source.fill(batch, batch_reads(batches_read));
      if (!filled.ok()) return filled.status();
      more = *filled;
      batch.end_filling();
      return {};
    }));
    warmer.saw(batch);
    if (batch.size() > 0) {
      batch.number = batches_read++;
      if (!to_search.push(std::move(batch))) return {};
    }
    if (!more) return {};
  }
  return {};
}

Status AlignPipeline::Impl::search_all(Lane& lane) {
  if (lane.engine != nullptr) WTMAP_TRY(lane.engine->enter_thread());
  while (auto batch = to_search.pop()) {
    if (stopping()) return {};
    if (lane.engine != nullptr) {
      lane.searched.push_back(batch->number);
      WTMAP_TRY(lane.search_clock.time([&] { return lane.engine->search(*batch); }));
    }
    if (!lane.to_finish.push(std::move(*batch))) return {};
  }
  // Every batch this lane took was searched, unless the reader stopped early (set before
  // to_finish closes: the finish thread reads it after).
  lane.searched_all = read_status.ok() && !stopping();
  return {};
}

Status AlignPipeline::Impl::finish_all(Lane& lane, AlignmentSink& sink) {
  SearchEngine* engine = lane.engine;
  if (engine != nullptr) WTMAP_TRY(engine->enter_thread());
  while (auto batch = lane.to_finish.pop()) {
    if (stopping()) return {};
    if (engine == nullptr) {
      batch->alignments.assign(batch->reads.size(), ReadAlignment{});
      batch->gapped_alignments.clear();
    } else {
      lane.finished.push_back(batch->number);
      WTMAP_TRY(lane.finish_clock.time([&] { return engine->finish(*batch); }));
      // One alignment per read, of one kind.
      const std::size_t given = batch->alignments.size() + batch->gapped_alignments.size();
      if (given != batch->reads.size() || (!batch->alignments.empty() && !batch->gapped_alignments.empty())) {
        return invalid_argument("the search engine gave " + std::to_string(batch->alignments.size()) + " + " +
                                std::to_string(batch->gapped_alignments.size()) + " alignments for a batch of " +
                                std::to_string(batch->reads.size()) + " reads");
      }
    }
    sink.batch_finished(*batch);
    const std::uint64_t number = batch->number;
    if (!to_write.push(number, std::move(*batch))) return {};
  }
  return {};
}

Status AlignPipeline::Impl::write_all(AlignmentSink& sink) {
  // While the first batch is searched; at most 2 * 10^5, so that a large batch over a small input
  // makes no records it never uses.
  WTMAP_TRY(sink.prepare(std::min(batch_size.load(std::memory_order_relaxed), kMostReadsMadeAhead)));
  while (auto batch = to_write.pop()) {
    if (stopping()) return {};
    totals.add(*batch, options.max_mismatches);  // the alignments as the engine gave them
    WTMAP_TRY(clocks.write.time([&] { return sink.write(*batch); }));
    if (options.on_written) options.on_written(totals);
    spare_batches.push(std::move(*batch));
  }
  return {};
}

void AlignPipeline::Impl::run_search(Lane& lane) {
  lane.search_status = guarded([&] { return search_all(lane); });
  if (!lane.search_status.ok()) fail_all();
  lane.to_finish.close();  // the finish stage ends once it has finished what this one searched
}

void AlignPipeline::Impl::run_finish(Lane& lane, AlignmentSink& sink, const std::function<void()>& release) {
  lane.finish_status = guarded([&] { return finish_all(lane, sink); });
  if (!lane.finish_status.ok()) fail_all();
  lane.to_finish.close();  // a search() waiting for something finish() hands back waits no longer
  if (lane.engine != nullptr) lane.engine->finish_stopped();
  // The last lane to end closes the write queue and, after a complete run, starts the release.
  const std::lock_guard<std::mutex> lock(lanes_done_mutex);
  if (++lanes_done < lanes.size()) return;
  to_write.close();
  bool complete = !stopping();
  for (const std::unique_ptr<Lane>& l : lanes) complete = complete && l->finish_status.ok() && l->searched_all;
  if (complete && release) releasing = std::thread(release);
}

void AlignPipeline::Impl::join_clocks(const std::vector<std::unique_ptr<Lane>>& lanes, StageClock Lane::*clock,
                                      std::vector<std::uint64_t> Lane::*numbers, StageClock& joined) {
  std::vector<std::pair<std::uint64_t, StageClock::Span>> spans;
  for (const std::unique_ptr<Lane>& lane : lanes) {
    const std::vector<StageClock::Span>& own = ((*lane).*clock).spans();
    const std::vector<std::uint64_t>& of = (*lane).*numbers;
    for (std::size_t k = 0; k < own.size() && k < of.size(); ++k) spans.emplace_back(of[k], own[k]);
  }
  std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& numbered : spans) joined.add(numbered.second);
}

AlignPipeline::AlignPipeline(PipelineOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

AlignPipeline::~AlignPipeline() {
  impl_->cancelled = true;
  impl_->stop_all();
  impl_->join_all();
}

void AlignPipeline::limit_batch_size(std::size_t most) {
  std::atomic<std::size_t>& size = impl_->batch_size;
  for (std::size_t now = size.load(); most >= 1 && most < now && !size.compare_exchange_weak(now, most);) {
  }
}

void AlignPipeline::start_reading(ReadSource& source) {
  Impl& p = *impl_;
  if (p.read_thread.joinable()) return;
  p.read_thread = std::thread([&p, &source] {
    p.read_status = guarded([&] { return p.read_all(source); });
    if (!p.read_status.ok()) p.fail_all();
    p.to_search.close();
    p.warmer.close();  // no batch is needed any more
  });
  wtmap::detail::name_thread(p.read_thread, "wtmap-read");
}

Status AlignPipeline::run(SearchEngine* engine, AlignmentSink& sink, std::function<void()> release) {
  return run(std::vector<SearchEngine*>{engine}, sink, std::move(release));
}

Status AlignPipeline::run(const std::vector<SearchEngine*>& engines, AlignmentSink& sink,
                          std::function<void()> release) {
  Impl& p = *impl_;
  if (!p.read_thread.joinable()) return invalid_argument("AlignPipeline::run: start_reading was not called");
  if (!p.lanes.empty()) return invalid_argument("AlignPipeline::run called twice");
  if (engines.empty() || (engines.size() > 1 && std::count(engines.begin(), engines.end(), nullptr) > 0)) {
    return invalid_argument("AlignPipeline::run: one engine or more, none null where there are several");
  }
  for (SearchEngine* engine : engines) p.lanes.push_back(std::make_unique<Lane>(engine));
  std::size_t extra = 0;  // the longest finish queue beyond kToFinish
  for (const std::unique_ptr<Lane>& lane : p.lanes) extra = std::max(extra, lane->extra());
  p.to_write.set_window(write_window(engines.size(), extra));
  p.engines_known.store(true, std::memory_order_release);
  p.write_thread = std::thread([&p, &sink] {
    p.write_status = guarded([&] { return p.write_all(sink); });
    if (!p.write_status.ok()) p.fail_all();  // on a write error, stop the stages before it too
  });
  wtmap::detail::name_thread(p.write_thread, "wtmap-write");
  for (std::size_t k = 0; k < p.lanes.size(); ++k) {
    Lane& lane = *p.lanes[k];
    lane.finish_thread = std::thread([&p, &lane, &sink, &release] { p.run_finish(lane, sink, release); });
    wtmap::detail::name_thread(lane.finish_thread, "wtmap-finish");
    if (k > 0) {
      lane.search_thread = std::thread([&p, &lane] { p.run_search(lane); });
      wtmap::detail::name_thread(lane.search_thread, "wtmap-search");
    }
  }
  p.run_search(*p.lanes[0]);
  for (const std::unique_ptr<Lane>& lane : p.lanes) {
    for (std::thread* t : {&lane->search_thread, &lane->finish_thread}) {
      if (t->joinable()) t->join();
    }
  }
  for (std::thread* t : {&p.read_thread, &p.write_thread}) {
    if (t->joinable()) t->join();
  }
  Impl::join_clocks(p.lanes, &Lane::search_clock, &Lane::searched, p.clocks.search);
  Impl::join_clocks(p.lanes, &Lane::finish_clock, &Lane::finished, p.clocks.finish);
  if (!p.read_status.ok()) return p.read_status;
  for (const std::unique_ptr<Lane>& lane : p.lanes) {
    if (!lane->search_status.ok()) return p.lane_status(*lane, lane->search_status);
  }
  for (const std::unique_ptr<Lane>& lane : p.lanes) {
    if (!lane->finish_status.ok()) return p.lane_status(*lane, lane->finish_status);
  }
  if (!p.write_status.ok()) return p.write_status;
  if (p.cancelled.load()) return cancelled_status();
  return p.clocks.write.time([&] { return sink.finish(); });
}

void AlignPipeline::cancel() {
  impl_->cancelled = true;
  impl_->stop_all();
}

bool AlignPipeline::cancelled() const { return impl_->cancelled.load(); }

void AlignPipeline::wait_for_release() {
  if (impl_->releasing.joinable()) impl_->releasing.join();
}

const AlignTotals& AlignPipeline::totals() const { return impl_->totals; }
const StageClocks& AlignPipeline::clocks() const { return impl_->clocks; }
std::size_t AlignPipeline::batches_made() const { return impl_->warmer.made(); }

}  // namespace wtmap::aligner
