#include "wtmap/aligner/align_pipeline.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "wtmap/aligner/bounded_queue.hpp"

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
  BatchWarmer(std::size_t batch_size, std::size_t most, unsigned threads) {
    for (unsigned t = 0; t < threads; ++t) {
      threads_.emplace_back([this, batch_size, most] {
        while (claimed_.fetch_add(1) < most) {
          if (!ready_.push(make(batch_size))) return;
        }
      });
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

struct AlignPipeline::Impl {
  explicit Impl(PipelineOptions o)
      : options(std::move(o)), warmer(options.batch_size, kMostInStages, options.warming_threads) {}

  // Closes every queue: each stage's next push or pop fails, and it stops.
  void stop_all() {
    to_search.close();
    to_finish.close();
    to_write.close();
    warmer.close();
  }
  void join_all() {
    for (std::thread* t : {&read_thread, &finish_thread, &write_thread, &releasing}) {
      if (t->joinable()) t->join();
    }
  }

  ReadBatch next_batch() {
    std::optional<ReadBatch> spare = spare_batches.try_pop();
    if (!spare) return warmer.take();
    spare->filled = 0;
    return std::move(*spare);
  }
  // --batch, or fewer where the engine (once run() named it) asks for smaller batches.
  std::size_t batch_reads() const {
    const SearchEngine* e = engine.load();
    return e == nullptr ? options.batch_size : std::min(options.batch_size, e->most_reads_per_batch());
  }
  Status read_all(ReadSource& source);
  Status search_all(SearchEngine* engine);
  Status finish_all(SearchEngine* engine);
  Status write_all(AlignmentSink& sink);

  const PipelineOptions options;
  BoundedQueue<ReadBatch> to_search{kReadAhead}, to_finish{kToFinish}, to_write{kToWrite};
  BoundedQueue<ReadBatch> spare_batches{kMostInStages};  // written, back to the reader; never full
  BatchWarmer warmer;
  std::atomic<bool> cancelled{false};
  std::atomic<const SearchEngine*> engine{nullptr};  // run()'s, for the reader's batch_reads()
  std::atomic<bool> searched_all{false};  // the search stage has searched every batch read
  Status read_status, search_status, finish_status, write_status;  // each set by its stage's thread
  StageClocks clocks;  // each clock touched by its own stage's thread only
  AlignTotals totals;  // the writer thread's
  std::thread read_thread, finish_thread, write_thread, releasing;
};

Status AlignPipeline::Impl::read_all(ReadSource& source) {
  while (!cancelled.load()) {
    ReadBatch batch = next_batch();
    bool more = true;
    WTMAP_TRY(clocks.read.time([&]() -> Status {
      auto filled = source.fill(batch, batch_reads());
      if (!filled.ok()) return filled.status();
      more = *filled;
      batch.end_filling();
      return {};
    }));
    warmer.saw(batch);
    if (batch.size() > 0 && !to_search.push(std::move(batch))) return {};
    if (!more) return {};
  }
  return {};
}

Status AlignPipeline::Impl::search_all(SearchEngine* engine) {
  while (auto batch = to_search.pop()) {
    if (cancelled.load()) return {};
    if (engine != nullptr) WTMAP_TRY(clocks.search.time([&] { return engine->search(*batch); }));
    if (!to_finish.push(std::move(*batch))) return {};
  }
  // Every batch read was searched, unless the reader stopped early (set before to_finish closes:
  // the finish thread reads it after).
  searched_all = read_status.ok() && !cancelled.load();
  return {};
}

Status AlignPipeline::Impl::finish_all(SearchEngine* engine) {
  while (auto batch = to_finish.pop()) {
    if (cancelled.load()) return {};
    if (engine == nullptr) {
      batch->alignments.assign(batch->reads.size(), ReadAlignment{});
      batch->gapped_alignments.clear();
    } else {
      WTMAP_TRY(clocks.finish.time([&] { return engine->finish(*batch); }));
      // One alignment per read, of one kind.
      const std::size_t given = batch->alignments.size() + batch->gapped_alignments.size();
      if (given != batch->reads.size() || (!batch->alignments.empty() && !batch->gapped_alignments.empty())) {
        return invalid_argument("the search engine gave " + std::to_string(batch->alignments.size()) + " + " +
                                std::to_string(batch->gapped_alignments.size()) + " alignments for a batch of " +
                                std::to_string(batch->reads.size()) + " reads");
      }
    }
    if (!to_write.push(std::move(*batch))) return {};
  }
  return {};
}

Status AlignPipeline::Impl::write_all(AlignmentSink& sink) {
  // While the first batch is searched; at most 2 * 10^5, so that a large batch over a small input
  // makes no records it never uses.
  WTMAP_TRY(sink.prepare(std::min(options.batch_size, kMostReadsMadeAhead)));
  while (auto batch = to_write.pop()) {
    if (cancelled.load()) return {};
    WTMAP_TRY(clocks.write.time([&] { return sink.write(*batch); }));
    totals.add(*batch, options.max_mismatches);
    if (options.on_written) options.on_written(totals);
    spare_batches.push(std::move(*batch));
  }
  return {};
}

AlignPipeline::AlignPipeline(PipelineOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

AlignPipeline::~AlignPipeline() {
  impl_->cancelled = true;
  impl_->stop_all();
  impl_->join_all();
}

void AlignPipeline::start_reading(ReadSource& source) {
  Impl& p = *impl_;
  if (p.read_thread.joinable()) return;
  p.read_thread = std::thread([&p, &source] {
    p.read_status = guarded([&] { return p.read_all(source); });
    p.to_search.close();
    p.warmer.close();  // no batch is needed any more
  });
}

Status AlignPipeline::run(SearchEngine* engine, AlignmentSink& sink, std::function<void()> release) {
  Impl& p = *impl_;
  if (!p.read_thread.joinable()) return invalid_argument("AlignPipeline::run: start_reading was not called");
  p.engine = engine;
  p.write_thread = std::thread([&p, &sink] {
    p.write_status = guarded([&] { return p.write_all(sink); });
    p.to_write.close();  // on a write error, stop the stages before it too
    p.to_finish.close();
  });
  p.finish_thread = std::thread([&p, engine, release = std::move(release)]() mutable {
    p.finish_status = guarded([&] { return p.finish_all(engine); });
    p.to_finish.close();  // on an error, stop the search stage too
    if (engine != nullptr) engine->finish_stopped();
    p.to_write.close();
    if (p.finish_status.ok() && p.searched_all.load() && release) p.releasing = std::thread(std::move(release));
  });
  p.search_status = guarded([&] { return p.search_all(engine); });
  p.to_search.close();
  p.to_finish.close();
  for (std::thread* t : {&p.read_thread, &p.finish_thread, &p.write_thread}) {
    if (t->joinable()) t->join();
  }
  for (const Status* s : {&p.read_status, &p.search_status, &p.finish_status, &p.write_status}) {
    if (!s->ok()) return *s;
  }
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
