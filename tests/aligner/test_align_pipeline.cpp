// align_pipeline.hpp: AlignPipeline driven by fake stages. Read n of the input is named n, and
// the fake engine gives it an alignment that carries n (its position) and flags chosen by n, so
// the fake sink checks that every read arrives once, in input order, with its own alignment; the
// totals are checked against the same rules restated here (closed form per read). Stages run at
// uneven speeds (random sleeps, one stage much slower); an error in each stage, early and late,
// must become the run's Status with every thread stopped; the fakes count the batches in flight
// and the distinct batches seen against the documented bounds; cancel() ends an endless input.
// Every run has a deadline: a deadlock aborts the binary (a failure) instead of hanging it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "wtmap/aligner/align_pipeline.hpp"
#include "wtmap/aligner/batch_splitting.hpp"

namespace wtmap::altest {
namespace {

using aligner::AlignmentSink;
using aligner::AlignPipeline;
using aligner::AlignTotals;
using aligner::PipelineOptions;
using aligner::ReadAlignment;
using aligner::ReadBatch;
using aligner::ReadSource;
using aligner::ramped_batch_size;
using aligner::SearchEngine;

constexpr unsigned kMismatches = 4;
constexpr std::uint64_t kEndless = ~std::uint64_t{0};

// Runs body() on a thread of its own; if it has not returned after `seconds`, the pipeline is
// deadlocked: report it and abort, since the stuck threads cannot be joined.
template <class Body>
void within_deadline(double seconds, Body&& body) {
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  std::thread runner([&] {
    body();
    done.set_value();
  });
  if (finished.wait_for(std::chrono::duration<double>(seconds)) != std::future_status::ready) {
    std::fprintf(stderr, "deadline of %.1f s passed: the pipeline is deadlocked\n", seconds);
    std::abort();
  }
  runner.join();
}

// Sleeps a random time up to `most_us` microseconds (0: not at all).
class Pace {
 public:
  Pace(unsigned most_us, std::uint64_t seed) : most_us_(most_us), rng_(seed) {}
  void step() {
    if (most_us_ > 0) std::this_thread::sleep_for(std::chrono::microseconds(rng_() % (most_us_ + 1)));
  }

 private:
  unsigned most_us_;
  std::mt19937_64 rng_;
};

// Where a fake stage fails: at its `batch`-th call (0-based), after a pause that lets the other
// stages fill their queues and block.
struct Failure {
  std::optional<std::size_t> batch;
  bool due(std::size_t call) const { return batch && *batch == call; }
};
Status injected(const char* stage, std::size_t call) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return {StatusCode::io_error, std::string(stage) + " failed at batch " + std::to_string(call)};
}

// What the fakes see, shared between them: batches between the source's fill and the sink's
// write, and the distinct batches (their read vectors' storage) the source filled.
struct Flow {
  std::mutex mutex;
  std::condition_variable changed;
  std::int64_t in_flight = 0, most_in_flight = 0;
  std::set<const void*> batches_seen;

  void filled(const ReadBatch& batch) {
    std::lock_guard<std::mutex> lock(mutex);
    most_in_flight = std::max(most_in_flight, ++in_flight);
    batches_seen.insert(batch.reads.data());
    changed.notify_all();
  }
  void written() {
    std::lock_guard<std::mutex> lock(mutex);
    --in_flight;
  }
  // Waits until `count` batches are in flight (false after 5 s).
  bool wait_for_in_flight(std::int64_t count) {
    std::unique_lock<std::mutex> lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(5), [&] { return in_flight >= count; });
  }
};

// The rules of read n's fake alignment, which the engine applies and the totals are checked by.
bool mapped(std::uint64_t n) { return n % 3 != 0; }
bool repeat(std::uint64_t n) { return n % 3 == 2; }  // two best hits: MAPQ 0
bool capped(std::uint64_t n) { return n % 7 == 0; }  // the work cap stopped it: MAPQ 0
bool too_short(std::uint64_t n) { return n % 11 == 0; }
bool too_long(std::uint64_t n) { return n % 13 == 0; }
bool split(std::uint64_t n) { return n % 5 == 0; }  // gapped: supplementary hits, if mapped

class FakeSource : public ReadSource {
 public:
  FakeSource(Flow& flow, std::uint64_t reads, unsigned pace_us) : flow_(flow), reads_(reads), pace_(pace_us, 1) {}
  Failure failure;

  Result<bool> fill(ReadBatch& batch, std::size_t most) override {
    const std::size_t call = calls_++;
    if (failure.due(call)) return injected("source", call);
    pace_.step();
    for (std::size_t r = 0; r < most && next_ < reads_; ++r, ++next_) {
      aligner::SeqRecord& record = batch.next_record();
      record.name = std::to_string(next_);
      record.sequence.assign(20 + next_ % 50, "ACGT"[next_ % 4]);
      record.quality.assign(record.sequence.size(), 'I');
      batch.keep_record();
    }
    if (batch.size() > 0) flow_.filled(batch);
    return next_ < reads_;
  }

 private:
  Flow& flow_;
  std::uint64_t reads_, next_ = 0;
  std::size_t calls_ = 0;
  Pace pace_;
};

std::uint64_t read_number(const aligner::SeqRecord& read) { return std::stoull(read.name); }
std::uint64_t read_number(const ReadBatch& batch, std::size_t r) { return read_number(batch.reads[r]); }

// Reads [0, count) their alignments by the rules above into `out`: k-mismatch ones, or gapped
// ones (GappedSearchEngine's kind: MAPQ 60 where a k-mismatch read would have MAPQ > 0), with
// `both_kinds` the k-mismatch ones left in too.
void give_alignments(const aligner::SeqRecord* reads, std::size_t count, ReadBatch& out, bool gapped = false,
                     bool both_kinds = false) {
  out.alignments.assign(count, ReadAlignment{});
  out.gapped_alignments.clear();
  for (std::size_t r = 0; r < count; ++r) {
    const std::uint64_t n = read_number(reads[r]);
    ReadAlignment& a = out.alignments[r];
    a.mapped = mapped(n);
    a.best_count = a.mapped ? (repeat(n) ? 2 : 1) : 0;
    a.primary.position = n;  // which read this alignment belongs to
    a.flags = static_cast<std::uint8_t>((capped(n) ? aligner::kWorkCapped : 0) | (too_short(n) ? aligner::kTooShort : 0) |
                                        (too_long(n) ? aligner::kTooLong : 0));
  }
  if (!gapped) return;
  out.gapped_alignments.assign(count, aligner::gapped::GappedReadAlignment{});
  for (std::size_t r = 0; r < count; ++r) {
    const std::uint64_t n = read_number(reads[r]);
    aligner::gapped::GappedReadAlignment& a = out.gapped_alignments[r];
    a.mapped = mapped(n);
    a.mapq = a.mapped && !repeat(n) && !capped(n) ? 60 : 0;
    a.primary.position = n;
    if (a.mapped && split(n)) a.supplementary.resize(2);
    a.flags = static_cast<std::uint8_t>((too_short(n) ? aligner::kTooShort : 0) | (too_long(n) ? aligner::kTooLong : 0));
  }
  if (!both_kinds) out.alignments.clear();
}

class FakeEngine : public SearchEngine {
 public:
  explicit FakeEngine(unsigned search_pace_us = 0, unsigned finish_pace_us = 0)
      : search_pace_(search_pace_us, 2), finish_pace_(finish_pace_us, 3) {}
  Failure search_failure, finish_failure;
  bool wrong_count = false;  // finish() gives one alignment too few
  bool gapped = false;       // finish() gives gapped alignments (GappedSearchEngine's kind)
  bool both_kinds = false;   // with gapped: the k-mismatch ones left in the batch too
  std::atomic<bool> released{false}, called_after_release{false}, out_of_order{false};
  std::atomic<std::size_t> finished{0}, stopped{0};

  std::string where_text;  // where(): "" (an error as it is) or e.g. "GPU 1"
  std::size_t finish_queue = SearchEngine::kDefaultToFinish;  // finish_queue_capacity()

  Status enter_thread() override {
    std::lock_guard<std::mutex> lock(mutex_);
    entered_.insert(std::this_thread::get_id());
    return {};
  }
  std::string where() const override { return where_text; }
  std::size_t finish_queue_capacity() const override { return finish_queue; }
  std::size_t threads_entered() {
    std::lock_guard<std::mutex> lock(mutex_);
    return entered_.size();
  }
  std::size_t searched() const { return searched_.load(); }
  std::atomic<bool> called_before_enter{false};

  Status search(const ReadBatch& batch) override {
    check_entered();
    called_after_release = called_after_release || released;
    const std::size_t call = searched_++;
    if (search_failure.due(call)) return injected("search", call);
    search_pace_.step();
    std::lock_guard<std::mutex> lock(mutex_);
    in_flight_.push_back(read_number(batch, 0));  // what finish() must see next
    return {};
  }
  Status finish(ReadBatch& batch) override {
    check_entered();
    called_after_release = called_after_release || released;
    const std::size_t call = finished;
    if (finish_failure.due(call)) return injected("finish", call);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (in_flight_.empty() || in_flight_.front() != read_number(batch, 0)) out_of_order = true;
      if (!in_flight_.empty()) in_flight_.pop_front();
    }
    finish_pace_.step();
    give_alignments(batch.reads.data(), batch.reads.size() - (wrong_count ? 1 : 0), batch, gapped, both_kinds);
    ++finished;
    return {};
  }
  void finish_stopped() override { ++stopped; }

 private:
  // The pipeline calls enter_thread() on a thread before that thread's first search or finish.
  void check_entered() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (entered_.count(std::this_thread::get_id()) == 0) called_before_enter = true;
  }

  Pace search_pace_, finish_pace_;
  std::atomic<std::size_t> searched_{0};
  std::mutex mutex_;
  std::deque<std::uint64_t> in_flight_;
  std::set<std::thread::id> entered_;
};

class FakeSink : public AlignmentSink {
 public:
  FakeSink(Flow& flow, unsigned pace_us) : flow_(flow), pace_(pace_us, 4) {}
  Failure write_failure;
  bool fail_finish = false;
  std::function<void(std::size_t)> on_write;  // before each write, with its call number
  std::atomic<bool> out_of_order{false}, written_unmapped_only{true};
  // A batch written before its finish stage told batch_finished, or told on the writer's thread.
  std::atomic<bool> written_before_told{false}, told_on_writer_thread{false};
  std::atomic<std::uint64_t> reads_written{0};
  std::atomic<std::size_t> prepared{0}, finished{0};

  Status prepare(std::size_t) override {
    ++prepared;
    return {};
  }
  void batch_finished(const ReadBatch& batch) override {
    const std::lock_guard<std::mutex> lock(told_mutex_);
    told_.insert(batch.number);
    if (std::this_thread::get_id() == writer_thread_) told_on_writer_thread = true;
  }
  Status write(ReadBatch& batch) override {
    {
      const std::lock_guard<std::mutex> lock(told_mutex_);
      writer_thread_ = std::this_thread::get_id();
      if (told_.count(batch.number) == 0) written_before_told = true;
    }
    const std::size_t call = calls_++;
    if (on_write) on_write(call);
    if (write_failure.due(call)) return injected("sink", call);
    pace_.step();
    if (!batch.gapped_alignments.empty()) {
      write_each(batch, batch.gapped_alignments);
    } else {
      write_each(batch, batch.alignments);
    }
    flow_.written();
    return {};
  }
  // Each alignment in read order, of either kind (both have `mapped` and `primary.position`).
  template <class Alignment>
  void write_each(const ReadBatch& batch, const std::vector<Alignment>& alignments) {
    if (alignments.size() != batch.reads.size()) out_of_order = true;
    for (std::size_t r = 0; r < batch.reads.size() && r < alignments.size(); ++r) {
      const Alignment& a = alignments[r];
      if (read_number(batch, r) != reads_written || (a.mapped && a.primary.position != reads_written)) out_of_order = true;
      if (a.mapped) written_unmapped_only = false;
      ++reads_written;
    }
  }
  Status finish() override {
    ++finished;
    if (fail_finish) return {StatusCode::io_error, "sink failed at its close"};
    return {};
  }

 private:
  Flow& flow_;
  Pace pace_;
  std::size_t calls_ = 0;
  std::mutex told_mutex_;
  std::set<std::uint64_t> told_;  // batch_finished's batch numbers
  std::thread::id writer_thread_;
};

// A source, engine and sink over `reads` reads, and a pipeline to run them.
struct Fakes {
  Fakes(std::uint64_t reads, unsigned read_us = 0, unsigned search_us = 0, unsigned finish_us = 0, unsigned write_us = 0)
      : source(flow, reads, read_us), engine(search_us, finish_us), sink(flow, write_us) {}

  // Runs a pipeline over them (no engine: --io-only) within the deadline; the run's Status.
  // limit: given to limit_batch_size once reading has started (0: not called).
  Status run(PipelineOptions options, bool with_engine = true, std::function<void()> release = {},
             std::size_t limit = 0) {
    Status status;
    within_deadline(30, [&] {
      AlignPipeline pipeline(std::move(options));
      pipeline.start_reading(source);
      if (limit != 0) pipeline.limit_batch_size(limit);
      status = pipeline.run(with_engine ? &engine : nullptr, sink, release);
      pipeline.wait_for_release();
      totals = pipeline.totals();
      batches_made = pipeline.batches_made();
      spans = {pipeline.clocks().read.spans().size(), pipeline.clocks().search.spans().size(),
               pipeline.clocks().finish.spans().size(), pipeline.clocks().write.spans().size()};
    });
    return status;
  }

  Flow flow;
  FakeSource source;
  FakeEngine engine;
  FakeSink sink;
  AlignTotals totals;
  std::size_t batches_made = 0;
  std::vector<std::size_t> spans;  // of the read, search, finish and write clocks
};

PipelineOptions options_of(std::size_t batch_size, unsigned warming_threads = 0) {
  PipelineOptions options;
  options.batch_size = batch_size;
  options.max_mismatches = kMismatches;
  options.warming_threads = warming_threads;
  return options;
}

std::uint64_t batches_of(std::uint64_t reads, std::uint64_t batch_size) { return (reads + batch_size - 1) / batch_size; }

// The totals of reads [0, n) by the rules above: MAPQ > 0 is a mapped read with one best hit
// whose search was not cut short.
AlignTotals expected_totals(std::uint64_t n, std::uint64_t batch_size) {
  AlignTotals t;
  for (std::uint64_t r = 0; r < n; ++r) {
    ++t.reads;
    t.mapped += mapped(r);
    t.unique += mapped(r) && !repeat(r) && !capped(r);
    t.capped += capped(r);
    t.too_short += too_short(r);
    t.too_long += too_long(r);
  }
  for (std::uint64_t b = 0; b < batches_of(n, batch_size); ++b) t.batch_reads.push_back(std::min(batch_size, n - b * batch_size));
  return t;
}

void expect_totals(const AlignTotals& got, const AlignTotals& want) {
  EXPECT_EQ(got.reads, want.reads);
  EXPECT_EQ(got.mapped, want.mapped);
  EXPECT_EQ(got.unique, want.unique);
  EXPECT_EQ(got.capped, want.capped);
  EXPECT_EQ(got.too_short, want.too_short);
  EXPECT_EQ(got.too_long, want.too_long);
  EXPECT_EQ(got.batch_reads, want.batch_reads);
}

// Stage speeds: each stage's most microseconds per call.
struct Speeds {
  const char* name;
  unsigned read, search, finish, write;
};

class PipelineSpeeds : public ::testing::TestWithParam<Speeds> {};

TEST_P(PipelineSpeeds, KeepsOrderAndCountsEveryRead) {
  const Speeds s = GetParam();
  constexpr std::uint64_t kReads = 4000, kBatch = 37;  // 109 batches, the last one of 4 reads
  for (unsigned warming : {0u, 2u}) {
    SCOPED_TRACE(warming);
    Fakes fakes(kReads, s.read, s.search, s.finish, s.write);
    std::vector<std::uint64_t> progress;
    PipelineOptions options = options_of(kBatch, warming);
    options.on_written = [&](const AlignTotals& t) { progress.push_back(t.reads); };
    ASSERT_TRUE(fakes.run(std::move(options)).ok());
    EXPECT_FALSE(fakes.sink.out_of_order.load());
    EXPECT_FALSE(fakes.engine.out_of_order.load());
    EXPECT_FALSE(fakes.sink.written_before_told.load());
    EXPECT_FALSE(fakes.sink.told_on_writer_thread.load());
    EXPECT_EQ(fakes.sink.reads_written.load(), kReads);
    EXPECT_EQ(fakes.sink.prepared.load(), 1u);
    EXPECT_EQ(fakes.sink.finished.load(), 1u);
    expect_totals(fakes.totals, expected_totals(kReads, kBatch));
    // on_written after every batch, with the reads written so far.
    ASSERT_EQ(progress.size(), batches_of(kReads, kBatch));
    for (std::size_t b = 0; b < progress.size(); ++b) EXPECT_EQ(progress[b], std::min(kReads, (b + 1) * kBatch));
    // One span per batch in each stage (the reader's last call filled the last, partial batch and
    // met the end), and the writer's close.
    EXPECT_EQ(fakes.spans, (std::vector<std::size_t>{109, 109, 109, 110}));
    EXPECT_LE(fakes.flow.most_in_flight, static_cast<std::int64_t>(AlignPipeline::kMostInStages));
    EXPECT_LE(fakes.batches_made, AlignPipeline::kMostBatches);
    EXPECT_LE(fakes.flow.batches_seen.size(), AlignPipeline::kMostBatches);
  }
}

INSTANTIATE_TEST_SUITE_P(AlignPipeline, PipelineSpeeds,
                         ::testing::Values(Speeds{"even", 200, 200, 200, 200}, Speeds{"slow_reader", 2000, 100, 100, 100},
                                           Speeds{"slow_search", 100, 2000, 100, 100},
                                           Speeds{"slow_finish", 100, 100, 2000, 100},
                                           Speeds{"slow_writer", 100, 100, 100, 2000}, Speeds{"full_speed", 0, 0, 0, 0}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(AlignPipeline, InputOfWholeBatchesAndEmptyInput) {
  for (std::uint64_t reads : {0, 1, 37, 370}) {
    SCOPED_TRACE(reads);
    Fakes fakes(reads);
    ASSERT_TRUE(fakes.run(options_of(37)).ok());
    EXPECT_FALSE(fakes.sink.out_of_order.load());
    EXPECT_EQ(fakes.sink.reads_written.load(), reads);
    EXPECT_EQ(fakes.sink.finished.load(), 1u);
    expect_totals(fakes.totals, expected_totals(reads, 37));
  }
}

// The ramp: each batch ceil(6/5) of the one before, from `first`, up to the batch size.
TEST(AlignPipeline, RampedBatchSizeGrowsByAFifthToTheBatchSize) {
  const std::vector<std::size_t> three_to_ten{3, 4, 5, 6, 8, 10, 10, 10};
  for (std::uint64_t b = 0; b < three_to_ten.size(); ++b) EXPECT_EQ(ramped_batch_size(3, 10, b), three_to_ten[b]) << b;
  std::size_t size = 5000;
  for (std::uint64_t b = 0; b < 40; ++b, size = std::min<std::size_t>((6 * size + 4) / 5, 50000)) {
    EXPECT_EQ(ramped_batch_size(5000, 50000, b), size) << b;
  }
  EXPECT_EQ(ramped_batch_size(0, 50000, 0), 50000u);       // no ramp
  EXPECT_EQ(ramped_batch_size(60000, 50000, 0), 50000u);   // a first batch beyond --batch
  EXPECT_EQ(ramped_batch_size(1, 3, 0), 1u);
  EXPECT_EQ(ramped_batch_size(1, 3, 1), 2u);
  EXPECT_EQ(ramped_batch_size(1, 3, 2), 3u);
}

// A ramped run reads batches of the ramp's sizes and writes every read in order, counted.
TEST(AlignPipeline, RampedRunKeepsOrderAndCountsEveryRead) {
  constexpr std::uint64_t kReads = 500, kBatch = 37, kFirst = 4;
  Fakes fakes(kReads, 100, 100, 100, 100);
  PipelineOptions options = options_of(kBatch);
  options.first_batch_size = kFirst;
  ASSERT_TRUE(fakes.run(std::move(options)).ok());
  EXPECT_FALSE(fakes.sink.out_of_order.load());
  EXPECT_EQ(fakes.sink.reads_written.load(), kReads);
  AlignTotals want = expected_totals(kReads, kBatch);
  want.batch_reads.clear();
  for (std::uint64_t left = kReads, size = kFirst; left > 0; size = std::min<std::uint64_t>((6 * size + 4) / 5, kBatch)) {
    want.batch_reads.push_back(std::min(size, left));
    left -= std::min(size, left);
  }
  expect_totals(fakes.totals, want);
}

// limit_batch_size after reading began (wtmap align's CPU backend, known late): the batches read
// before it keep the batch size, every later one holds the limit (the last the rest), the reads
// stay in order and counted; a limit above the batch size changes nothing.
TEST(AlignPipeline, ALimitGivenWhileReadingAppliesToTheBatchesReadAfterIt) {
  constexpr std::uint64_t kReads = 3000, kBatch = 100, kLimit = 7;
  for (unsigned warming : {0u, 2u}) {
    SCOPED_TRACE(warming);
    Fakes fakes(kReads, 100, 100, 100, 100);
    ASSERT_TRUE(fakes.run(options_of(kBatch, warming), true, {}, kLimit).ok());
    EXPECT_FALSE(fakes.sink.out_of_order.load());
    EXPECT_EQ(fakes.sink.reads_written.load(), kReads);
    const std::vector<std::size_t>& sizes = fakes.totals.batch_reads;
    std::size_t before = 0;
    while (before < sizes.size() && sizes[before] == kBatch) ++before;
    // The reader blocks once its queue and the batches being made are full.
    EXPECT_LE(before, AlignPipeline::kReadAhead + 2);
    std::uint64_t after = 0;
    for (std::size_t b = before; b < sizes.size(); ++b) {
      EXPECT_EQ(sizes[b], b + 1 < sizes.size() ? kLimit : std::min<std::uint64_t>(kLimit, kReads - before * kBatch - after));
      after += sizes[b];
    }
    EXPECT_EQ(before * kBatch + after, kReads);
  }
  Fakes fakes(500);
  ASSERT_TRUE(fakes.run(options_of(37), true, {}, 1000).ok());
  expect_totals(fakes.totals, expected_totals(500, 37));
}

// --io-only: no engine; every read is written unmapped, and the search and finish clocks stay empty.
TEST(AlignPipeline, WithoutAnEngineEveryReadIsUnmapped) {
  Fakes fakes(1000, 50, 0, 0, 50);
  ASSERT_TRUE(fakes.run(options_of(64), /*with_engine=*/false).ok());
  EXPECT_FALSE(fakes.sink.out_of_order.load());
  EXPECT_TRUE(fakes.sink.written_unmapped_only.load());
  EXPECT_EQ(fakes.sink.reads_written.load(), 1000u);
  EXPECT_EQ(fakes.totals.reads, 1000u);
  EXPECT_EQ(fakes.totals.mapped + fakes.totals.unique + fakes.totals.capped + fakes.totals.too_short + fakes.totals.too_long, 0u);
  EXPECT_EQ(fakes.spans[1], 0u);
  EXPECT_EQ(fakes.spans[2], 0u);
  EXPECT_EQ(fakes.engine.finished.load(), 0u);
}

enum class Stage { source, search, finish, sink };

struct FailureCase {
  const char* name;
  Stage stage;
  std::size_t batch;
};

class PipelineFailure : public ::testing::TestWithParam<FailureCase> {};

// The stage's error is the run's, with its message; the stages before and after it stop (the
// deadline catches a deadlock); nothing is released and the output is not finished.
TEST_P(PipelineFailure, ErrorBecomesTheRunsStatus) {
  const FailureCase c = GetParam();
  Fakes fakes(kEndless, 0, 100, 100, 100);  // endless: only the error can end the run
  switch (c.stage) {
    case Stage::source: fakes.source.failure.batch = c.batch; break;
    case Stage::search: fakes.engine.search_failure.batch = c.batch; break;
    case Stage::finish: fakes.engine.finish_failure.batch = c.batch; break;
    case Stage::sink: fakes.sink.write_failure.batch = c.batch; break;
  }
  std::atomic<int> releases{0};
  const Status status = fakes.run(options_of(50, 2), true, [&] { ++releases; });
  const char* stage = c.stage == Stage::source ? "source" : c.stage == Stage::search ? "search" : c.stage == Stage::finish ? "finish" : "sink";
  EXPECT_EQ(status.code(), StatusCode::io_error);
  EXPECT_EQ(status.message(), std::string(stage) + " failed at batch " + std::to_string(c.batch));
  EXPECT_EQ(fakes.sink.finished.load(), 0u);
  EXPECT_EQ(releases.load(), 0);
  EXPECT_FALSE(fakes.sink.out_of_order.load());
  EXPECT_EQ(fakes.engine.stopped.load(), 1u);  // the engine heard that the finish stage ended
  // Batches before the failing one went through every stage before it.
  EXPECT_GE(fakes.sink.reads_written.load(), c.stage == Stage::sink ? c.batch * 50 : 0);
}

INSTANTIATE_TEST_SUITE_P(
    AlignPipeline, PipelineFailure,
    ::testing::Values(FailureCase{"source_first", Stage::source, 0}, FailureCase{"source_later", Stage::source, 30},
                      FailureCase{"search_first", Stage::search, 0}, FailureCase{"search_later", Stage::search, 30},
                      FailureCase{"finish_first", Stage::finish, 0}, FailureCase{"finish_later", Stage::finish, 30},
                      FailureCase{"sink_first", Stage::sink, 0}, FailureCase{"sink_later", Stage::sink, 30}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(AlignPipeline, SinkCloseErrorIsTheRunsStatus) {
  Fakes fakes(500);
  fakes.sink.fail_finish = true;
  std::atomic<int> releases{0};
  const Status status = fakes.run(options_of(50), true, [&] { ++releases; });
  EXPECT_EQ(status.code(), StatusCode::io_error);
  EXPECT_EQ(status.message(), "sink failed at its close");
  EXPECT_EQ(fakes.sink.reads_written.load(), 500u);
  EXPECT_EQ(releases.load(), 1);  // the search was complete: the GPU went back before the close
}

TEST(AlignPipeline, EngineThatLosesAlignmentsIsAnError) {
  Fakes fakes(500);
  fakes.engine.wrong_count = true;
  const Status status = fakes.run(options_of(50));
  EXPECT_EQ(status.code(), StatusCode::invalid_argument);
  EXPECT_EQ(fakes.sink.reads_written.load(), 0u);
}

// Gapped alignments (ReadBatch::gapped_alignments) pass in order and are counted: MAPQ > 0 from
// the alignment's own MAPQ, split reads, no work cap.
TEST(AlignPipeline, GappedAlignmentsPassInOrderAndAreCounted) {
  constexpr std::uint64_t kReads = 1000, kBatch = 37;
  Fakes fakes(kReads);
  fakes.engine.gapped = true;
  ASSERT_TRUE(fakes.run(options_of(kBatch)).ok());
  EXPECT_FALSE(fakes.sink.out_of_order.load());
  EXPECT_EQ(fakes.sink.reads_written.load(), kReads);
  AlignTotals want = expected_totals(kReads, kBatch);
  want.capped = 0;
  for (std::uint64_t n = 0; n < kReads; ++n) want.split += mapped(n) && split(n);
  expect_totals(fakes.totals, want);
  EXPECT_EQ(fakes.totals.split, want.split);
  EXPECT_EQ(want.split, 133u);  // n % 5 == 0 and n % 3 != 0: 200 multiples of 5 below 1000, less the 67 of 15
}

TEST(AlignPipeline, EngineGivingBothKindsIsAnError) {
  Fakes fakes(500);
  fakes.engine.gapped = true;
  fakes.engine.both_kinds = true;
  const Status status = fakes.run(options_of(50));
  EXPECT_EQ(status.code(), StatusCode::invalid_argument);
  EXPECT_EQ(fakes.sink.reads_written.load(), 0u);
}

// The release runs once, after the last batch was finished, and the engine is not called after.
TEST(AlignPipeline, ReleasesOnceAfterTheLastFinish) {
  Fakes fakes(2000, 0, 0, 0, 500);
  std::atomic<int> releases{0};
  std::atomic<std::size_t> finished_at_release{0};
  const Status status = fakes.run(options_of(40), true, [&] {
    finished_at_release = fakes.engine.finished.load();
    fakes.engine.released = true;
    ++releases;
  });
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(releases.load(), 1);
  EXPECT_EQ(finished_at_release.load(), 50u);
  EXPECT_FALSE(fakes.engine.called_after_release.load());
  EXPECT_EQ(fakes.sink.reads_written.load(), 2000u);
}

// The documented bound is reached and never passed: a writer that holds its first batch until
// every stage and queue is full sees exactly kMostInStages batches in flight; the batches the
// source ever filled (recycled ones again) are at most kMostBatches.
TEST(AlignPipeline, BatchesInFlightStayWithinTheBound) {
  for (unsigned warming : {0u, 2u}) {
    SCOPED_TRACE(warming);
    Fakes fakes(200 * 25, 0, 0, 0, 0);
    bool reached = false;
    fakes.sink.on_write = [&](std::size_t call) {
      if (call == 0) reached = fakes.flow.wait_for_in_flight(AlignPipeline::kMostInStages);
    };
    ASSERT_TRUE(fakes.run(options_of(25, warming)).ok());
    EXPECT_TRUE(reached);
    EXPECT_EQ(fakes.flow.most_in_flight, static_cast<std::int64_t>(AlignPipeline::kMostInStages));
    EXPECT_LE(fakes.flow.batches_seen.size(), AlignPipeline::kMostBatches);
    EXPECT_LE(fakes.batches_made, AlignPipeline::kMostBatches);
    EXPECT_EQ(fakes.sink.reads_written.load(), 200u * 25);
  }
}

// An engine that asks for a longer finish queue gets it: its search stage runs that much further
// ahead of finish(), and the bound grows by as much (most_in_stages' extra), reached and not
// passed.
TEST(AlignPipeline, AnEnginesLongerFinishQueueHoldsThatManyMoreBatches) {
  for (const std::size_t queue : {std::size_t{5}, std::size_t{8}}) {
    SCOPED_TRACE(queue);
    Fakes fakes(200 * 25, 0, 0, 0, 0);
    fakes.engine.finish_queue = queue;
    const std::size_t extra = queue - AlignPipeline::kToFinish;
    const std::size_t bound = AlignPipeline::most_in_stages(1, extra);
    bool reached = false;
    fakes.sink.on_write = [&](std::size_t call) {
      if (call == 0) reached = fakes.flow.wait_for_in_flight(static_cast<std::int64_t>(bound));
    };
    ASSERT_TRUE(fakes.run(options_of(25)).ok());
    EXPECT_TRUE(reached);
    EXPECT_EQ(fakes.flow.most_in_flight, static_cast<std::int64_t>(bound));
    EXPECT_LE(fakes.batches_made, AlignPipeline::most_batches(1, extra));
    EXPECT_EQ(fakes.sink.reads_written.load(), 200u * 25);
  }
}

// cancel() from another thread (as a SIGINT handler's thread would) ends an endless run promptly:
// the run's Status says so, the output is not finished and nothing is released.
TEST(AlignPipeline, CancelEndsAnEndlessRunPromptly) {
  for (unsigned write_us : {0u, 3000u}) {
    SCOPED_TRACE(write_us);
    Flow flow;
    FakeSource source(flow, kEndless, 100);
    FakeEngine engine(100, 100);
    FakeSink sink(flow, write_us);
    std::atomic<int> releases{0};
    within_deadline(10, [&] {
      AlignPipeline pipeline(options_of(20, 2));
      pipeline.start_reading(source);
      std::thread canceller([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        pipeline.cancel();
      });
      const auto start = std::chrono::steady_clock::now();
      const Status status = pipeline.run(&engine, sink, [&] { ++releases; });
      canceller.join();
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_TRUE(pipeline.cancelled());
      EXPECT_EQ(status.code(), StatusCode::cancelled);
      EXPECT_EQ(status.message(), "the run was cancelled");
      EXPECT_LT(seconds, 1.0);
    });
    EXPECT_GT(sink.reads_written.load(), 0u);
    EXPECT_EQ(sink.finished.load(), 0u);
    EXPECT_EQ(releases.load(), 0);
    EXPECT_FALSE(sink.out_of_order.load());
  }
}

TEST(AlignPipeline, CancelBeforeRunReturnsAtOnce) {
  Flow flow;
  FakeSource source(flow, kEndless, 0);
  FakeEngine engine;
  FakeSink sink(flow, 0);
  within_deadline(10, [&] {
    AlignPipeline pipeline(options_of(20));
    pipeline.start_reading(source);
    pipeline.cancel();
    const Status status = pipeline.run(&engine, sink);
    EXPECT_EQ(status.code(), StatusCode::cancelled);
    EXPECT_EQ(status.message(), "the run was cancelled");
  });
  EXPECT_EQ(sink.finished.load(), 0u);
}

// A run given up before run() (the index failed to load): the destructor stops the reader.
TEST(AlignPipeline, DestroyedBeforeRunStopsTheReader) {
  Flow flow;
  FakeSource source(flow, kEndless, 0);
  within_deadline(10, [&] {
    AlignPipeline pipeline(options_of(20, 2));
    pipeline.start_reading(source);
    EXPECT_TRUE(flow.wait_for_in_flight(AlignPipeline::kReadAhead));
  });
  EXPECT_LE(flow.most_in_flight, static_cast<std::int64_t>(AlignPipeline::kReadAhead + 1));
}

TEST(AlignPipeline, RunWithoutStartReadingIsAnError) {
  Flow flow;
  FakeEngine engine;
  FakeSink sink(flow, 0);
  AlignPipeline pipeline(options_of(20));
  EXPECT_EQ(pipeline.run(&engine, sink).code(), StatusCode::invalid_argument);
}

// Several engines (one per GPU, `wtmap align --gpus`): a source and sink as above and `engines`
// fake engines of the given paces, run as lanes of one pipeline.
struct LaneFakes {
  LaneFakes(std::uint64_t reads, const std::vector<std::pair<unsigned, unsigned>>& paces, unsigned read_us = 0,
            unsigned write_us = 0)
      : source(flow, reads, read_us), sink(flow, write_us) {
    for (std::size_t k = 0; k < paces.size(); ++k) {
      engines.push_back(std::make_unique<FakeEngine>(paces[k].first, paces[k].second));
      engines.back()->where_text = "GPU " + std::to_string(k);
    }
  }
  Status run(PipelineOptions options, std::function<void()> release = {}) {
    Status status;
    within_deadline(60, [&] {
      AlignPipeline pipeline(std::move(options));
      pipeline.start_reading(source);
      std::vector<SearchEngine*> given;
      for (const auto& e : engines) given.push_back(e.get());
      status = pipeline.run(given, sink, release);
      pipeline.wait_for_release();
      totals = pipeline.totals();
      batches_made = pipeline.batches_made();
      search_spans = pipeline.clocks().search.spans();
      finish_spans = pipeline.clocks().finish.spans();
    });
    return status;
  }

  Flow flow;
  FakeSource source;
  std::vector<std::unique_ptr<FakeEngine>> engines;
  FakeSink sink;
  AlignTotals totals;
  std::size_t batches_made = 0;
  std::vector<aligner::StageClock::Span> search_spans, finish_spans;
};

PipelineOptions lane_options(std::size_t batch_size, unsigned warming_threads = 0) {
  return options_of(batch_size, warming_threads);
}

// The batches go to whichever engine has room -- a slow one takes fewer -- and reach the sink in
// input order, each read with its own alignment; every engine sees its own batches in the order
// it searched them, each of its two threads entered before its first call; the totals, the
// per-batch clocks and the bounds hold for any number of engines.
TEST(AlignPipelineEngines, BatchesGoToTheFreeEnginesAndComeOutInInputOrder) {
  constexpr std::uint64_t kReads = 6000, kBatch = 37;  // 163 batches
  const std::vector<std::vector<std::pair<unsigned, unsigned>>> setups = {
      {{100, 300}, {100, 300}},
      {{0, 3000}, {0, 100}, {0, 100}},                  // one engine 30 times slower
      {{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}},  // eight at full speed
      {{200, 50}, {50, 200}, {0, 0}, {500, 500}}};
  for (const auto& paces : setups) {
    for (unsigned warming : {0u, 2u}) {
      SCOPED_TRACE(std::to_string(paces.size()) + " engines, warming " + std::to_string(warming));
      LaneFakes fakes(kReads, paces, 50, 50);
      std::vector<std::uint64_t> progress;
      PipelineOptions options = lane_options(kBatch, warming);
      options.on_written = [&](const AlignTotals& t) { progress.push_back(t.reads); };
      ASSERT_TRUE(fakes.run(std::move(options)).ok());
      EXPECT_FALSE(fakes.sink.out_of_order.load());
      EXPECT_FALSE(fakes.sink.written_before_told.load());
      EXPECT_FALSE(fakes.sink.told_on_writer_thread.load());
      EXPECT_EQ(fakes.sink.reads_written.load(), kReads);
      EXPECT_EQ(fakes.sink.finished.load(), 1u);
      expect_totals(fakes.totals, expected_totals(kReads, kBatch));
      ASSERT_EQ(progress.size(), batches_of(kReads, kBatch));
      for (std::size_t b = 0; b < progress.size(); ++b) EXPECT_EQ(progress[b], std::min(kReads, (b + 1) * kBatch));
      std::size_t searched = 0;
      for (const auto& engine : fakes.engines) {
        EXPECT_FALSE(engine->out_of_order.load());
        EXPECT_FALSE(engine->called_before_enter.load());
        EXPECT_EQ(engine->threads_entered(), 2u);  // its search thread and its finish thread
        EXPECT_EQ(engine->stopped.load(), 1u);
        EXPECT_EQ(engine->finished.load(), engine->searched());
        searched += engine->searched();
      }
      EXPECT_EQ(searched, batches_of(kReads, kBatch));
      if (paces.size() == 3) {  // the slow engine took fewer batches than either fast one
        EXPECT_LT(fakes.engines[0]->searched(), fakes.engines[1]->searched());
        EXPECT_LT(fakes.engines[0]->searched(), fakes.engines[2]->searched());
      }
      // One span per batch in the joined search and finish clocks, in batch order: batch b's
      // search began before its finish did.
      ASSERT_EQ(fakes.search_spans.size(), batches_of(kReads, kBatch));
      ASSERT_EQ(fakes.finish_spans.size(), batches_of(kReads, kBatch));
      for (std::size_t b = 0; b < fakes.search_spans.size(); ++b) {
        EXPECT_LE(fakes.search_spans[b].end, fakes.finish_spans[b].begin) << b;
      }
      EXPECT_LE(fakes.flow.most_in_flight, static_cast<std::int64_t>(AlignPipeline::most_in_stages(paces.size())));
      EXPECT_LE(fakes.batches_made, AlignPipeline::most_batches(paces.size()));
      EXPECT_LE(fakes.flow.batches_seen.size(), AlignPipeline::most_batches(paces.size()));
    }
  }
}

// The documented bound for several engines is reached and never passed: a writer that holds its
// first batch sees every lane and the write window fill -- also where the engines ask for longer
// finish queues, which the window makes room for.
TEST(AlignPipelineEngines, BatchesInFlightStayWithinTheBound) {
  constexpr std::size_t kEngines = 3;
  for (const std::size_t extra : {std::size_t{0}, std::size_t{3}}) {
    SCOPED_TRACE(extra);
    LaneFakes fakes(200 * 25, std::vector<std::pair<unsigned, unsigned>>(kEngines, {0, 0}));
    for (const auto& engine : fakes.engines) engine->finish_queue = AlignPipeline::kToFinish + extra;
    const std::size_t bound = AlignPipeline::most_in_stages(kEngines, extra);
    bool reached = false;
    fakes.sink.on_write = [&](std::size_t call) {
      if (call == 0) reached = fakes.flow.wait_for_in_flight(static_cast<std::int64_t>(bound));
    };
    ASSERT_TRUE(fakes.run(lane_options(25)).ok());
    EXPECT_TRUE(reached);
    EXPECT_EQ(bound, 6u + 2u + 3u * (5u + extra) + (2u + 2u * (5u + extra)));
    EXPECT_EQ(fakes.flow.most_in_flight, static_cast<std::int64_t>(bound));
    EXPECT_LE(fakes.batches_made, AlignPipeline::most_batches(kEngines, extra));
    EXPECT_FALSE(fakes.sink.out_of_order.load());
  }
}

// An engine that fails (a GPU lost mid-run) stops every lane: its error, prefixed by where it
// runs, is the run's; the output is not finished; nothing is released; no deadlock.
TEST(AlignPipelineEngines, OneEnginesErrorStopsTheRunAndSaysWhere) {
  for (bool in_search : {true, false}) {
    for (std::size_t batch : {0u, 20u}) {
      SCOPED_TRACE(std::string(in_search ? "search" : "finish") + " batch " + std::to_string(batch));
      LaneFakes fakes(kEndless, {{100, 100}, {100, 100}, {100, 100}});
      (in_search ? fakes.engines[1]->search_failure : fakes.engines[1]->finish_failure).batch = batch;
      std::atomic<int> releases{0};
      const Status status = fakes.run(lane_options(50, 2), [&] { ++releases; });
      EXPECT_EQ(status.code(), StatusCode::io_error);
      EXPECT_EQ(status.message(), std::string("GPU 1: ") + (in_search ? "search" : "finish") + " failed at batch " +
                                      std::to_string(batch));
      EXPECT_EQ(fakes.sink.finished.load(), 0u);
      EXPECT_EQ(releases.load(), 0);
      EXPECT_FALSE(fakes.sink.out_of_order.load());
      for (const auto& engine : fakes.engines) EXPECT_EQ(engine->stopped.load(), 1u);
    }
  }
}

// The release runs once, after every engine finished its last batch.
TEST(AlignPipelineEngines, ReleasesOnceAfterEveryEnginesLastFinish) {
  LaneFakes fakes(2000, {{0, 200}, {0, 0}}, 0, 500);
  std::atomic<int> releases{0};
  std::atomic<std::size_t> finished_at_release{0};
  const Status status = fakes.run(lane_options(40), [&] {
    for (const auto& engine : fakes.engines) {
      finished_at_release += engine->finished.load();
      engine->released = true;
    }
    ++releases;
  });
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(releases.load(), 1);
  EXPECT_EQ(finished_at_release.load(), 50u);
  for (const auto& engine : fakes.engines) EXPECT_FALSE(engine->called_after_release.load());
  EXPECT_EQ(fakes.sink.reads_written.load(), 2000u);
}

// No engine at all, or a null among several: refused.
TEST(AlignPipelineEngines, NoEngineOrANullAmongSeveralIsAnError) {
  for (int setup = 1; setup < 3; ++setup) {
    Flow flow;
    FakeSource source(flow, 100, 0);
    FakeEngine a;
    FakeSink sink(flow, 0);
    within_deadline(10, [&] {
      AlignPipeline pipeline(lane_options(20));
      pipeline.start_reading(source);
      const std::vector<SearchEngine*> engines =
          setup == 1 ? std::vector<SearchEngine*>{} : std::vector<SearchEngine*>{&a, nullptr};
      EXPECT_EQ(pipeline.run(engines, sink).code(), StatusCode::invalid_argument);
    });
    EXPECT_EQ(sink.prepared.load(), 0u);
  }
}

// ---- SplittingSearchEngine: a device short of memory ------------------------------------------

// A fake device that holds at most `fits` reads at once: search_part fails above that with
// device_out_of_memory, leaving nothing behind, as a GPU engine's search fails at its first
// allocation; else the part waits for finish_part, which gives its reads the rules' alignments
// after a random pause (so that the finish thread lags behind the search thread). It records
// every part it was asked to search, and whether the halves ever saw parts out of order or at
// once.
class ShortDeviceEngine : public aligner::SplittingSearchEngine {
 public:
  ShortDeviceEngine(std::size_t fits, bool gapped) : fits(fits), gapped_(gapped) {}
  std::atomic<std::size_t> fits;
  std::vector<std::size_t> tried;  // search_part's counts, in order (the search thread's)
  std::atomic<bool> out_of_order{false};
  std::atomic<std::size_t> released{0};
  Failure search_failure;  // an error other than a shortage, at that call
  // After this many tries, the device holds only shrunk_fits reads.
  std::size_t shrink_after_tries = ~std::size_t{0}, shrunk_fits = 0;
  // As the GPU k-mismatch engine's two launch slots: each slot keeps the buffers of the largest
  // part it took (until release_device_memory), and the two together must fit.
  bool two_slots = false;

 protected:
  Status search_part(const aligner::SeqRecord* reads, std::size_t count) override {
    tried.push_back(count);
    if (search_failure.due(tried.size() - 1)) return injected("search", tried.size() - 1);
    if (tried.size() > shrink_after_tries) fits = shrunk_fits;
    const std::lock_guard<std::mutex> lock(mutex_);
    // With two slots, the slot keeps the largest part it took, beside the other slot's.
    const std::size_t slot_size = two_slots ? std::max(count, kept_[slot_]) : count;
    if (slot_size + (two_slots ? kept_[1 - slot_] : 0) > fits.load()) {
      return {StatusCode::device_out_of_memory, "fake device: " + std::to_string(count) + " reads need too much"};
    }
    kept_[slot_] = slot_size;
    slot_ = 1 - slot_;
    parts_.push_back({reads, count});
    return {};
  }
  Status finish_part(const aligner::SeqRecord* reads, std::size_t count, ReadBatch& out) override {
    pace_.step();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (parts_.empty() || parts_.front().first != reads || parts_.front().second != count) out_of_order = true;
      if (!parts_.empty()) parts_.pop_front();
    }
    give_alignments(reads, count, out, gapped_);
    return {};
  }
  Status release_device_memory() override {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!parts_.empty()) out_of_order = true;  // released with a part in flight
    ++released;
    kept_[0] = kept_[1] = 0;
    return {};
  }

 private:
  bool gapped_;
  Pace pace_{300, 5};
  std::mutex mutex_;
  std::deque<std::pair<const aligner::SeqRecord*, std::size_t>> parts_;
  std::size_t kept_[2] = {0, 0}, slot_ = 0;
};

// Every record as text, in the order written: what an unsplit run and a split run must both give.
class TextSink : public AlignmentSink {
 public:
  std::string text;
  Status prepare(std::size_t) override { return {}; }
  Status write(ReadBatch& batch) override {
    for (std::size_t r = 0; r < batch.size(); ++r) {
      text += batch.reads[r].name;
      if (r < batch.gapped_alignments.size()) {
        const aligner::gapped::GappedReadAlignment& a = batch.gapped_alignments[r];
        text += " gapped " + std::to_string(a.mapped) + " " + std::to_string(a.primary.position) + " " +
                std::to_string(a.mapq) + " " + std::to_string(a.supplementary.size()) + " " + std::to_string(a.flags);
      }
      if (r < batch.alignments.size()) {
        const ReadAlignment& a = batch.alignments[r];
        text += " " + std::to_string(a.mapped) + " " + std::to_string(a.primary.position) + " " +
                std::to_string(a.best_count) + " " + std::to_string(a.flags);
      }
      text += '\n';
    }
    return {};
  }
  Status finish() override { return {}; }
};

struct SplitRun {
  Status status;
  std::string text;
  std::vector<std::string> reports;
  std::vector<std::size_t> batch_reads;  // the reader's batches
};

// `reads` reads in batches of `batch_size` through `engine` (`unit`: reads kept together), written
// as text.
SplitRun run_split(ShortDeviceEngine& engine, std::uint64_t reads, std::size_t batch_size, std::size_t unit = 1) {
  SplitRun run;
  engine.configure_splitting(unit, [&run](const std::string& line) { run.reports.push_back(line); });
  Flow flow;
  FakeSource source(flow, reads, 50);
  TextSink sink;
  within_deadline(30, [&] {
    AlignPipeline pipeline(options_of(batch_size));
    pipeline.start_reading(source);
    run.status = pipeline.run(&engine, sink);
    run.batch_reads = pipeline.totals().batch_reads;
  });
  run.text = std::move(sink.text);
  return run;
}

// Halving from 256: 128 and 64 fail too, 32 fits. The output is the unsplit run's, byte for byte;
// the shortage is said once, with the size that failed and the size used from then on; no try
// fails after the first batch: the batches read ahead go in parts of 32, and the reader then
// reads batches of 32, which run whole; the halves never see parts out of order.
TEST(SplittingSearchEngine, SplitOutputIsTheUnsplitOutput) {
  constexpr std::uint64_t kReads = 5000;  // 19 batches of 256 and one of 136, or later ones of 32
  for (bool gapped : {false, true}) {
    SCOPED_TRACE(gapped);
    ShortDeviceEngine roomy(~std::size_t{0}, gapped), short_of_memory(50, gapped);
    const SplitRun whole = run_split(roomy, kReads, 256);
    ASSERT_TRUE(whole.status.ok()) << whole.status.message();
    EXPECT_TRUE(whole.reports.empty());
    std::vector<std::size_t> batches(19, 256);
    batches.push_back(136);
    EXPECT_EQ(roomy.tried, batches);
    const SplitRun split = run_split(short_of_memory, kReads, 256);
    ASSERT_TRUE(split.status.ok()) << split.status.message();
    EXPECT_EQ(split.text, whole.text);
    EXPECT_EQ(std::count(whole.text.begin(), whole.text.end(), '\n'), static_cast<std::ptrdiff_t>(kReads));
    ASSERT_EQ(split.reports.size(), 1u);
    EXPECT_EQ(split.reports[0],
              "the GPU was short of memory for a batch of 256 reads: batches of 32 reads from now on (--batch 32 "
              "avoids the retries)");
    // Whether read ahead (in parts) or read later (whole), 5000 - 3 * 256 reads go 32 at a time.
    std::vector<std::size_t> want = {256, 128, 64};
    want.insert(want.end(), (kReads - 8) / 32, 32);
    want.push_back(8);
    EXPECT_EQ(short_of_memory.tried, want);
    EXPECT_FALSE(short_of_memory.out_of_order.load());
    EXPECT_EQ(short_of_memory.part_size(), 32u);
    EXPECT_GE(short_of_memory.released.load(), 3u);  // before each smaller size's first try
    // The reader took the smaller size: its last batches hold 32 reads (the 20 first ones cannot
    // all have been read ahead while the first failed), and none after a small one is larger.
    ASSERT_GT(split.batch_reads.size(), 20u);
    const auto first_small = std::find(split.batch_reads.begin(), split.batch_reads.end(), 32u);
    EXPECT_TRUE(std::all_of(first_small, split.batch_reads.end(), [](std::size_t n) { return n <= 32; }));
  }
}

// Two slots: the first part of 32 fits, the second beside it does not; 16 do. Said once, after
// the first batch, with the size that holds from then on.
TEST(SplittingSearchEngine, TwoSlotDeviceIsReportedOnceWithTheSizeThatHolds) {
  ShortDeviceEngine roomy(~std::size_t{0}, false), engine(50, false);
  engine.two_slots = true;
  const SplitRun whole = run_split(roomy, 1000, 256);
  const SplitRun split = run_split(engine, 1000, 256);
  ASSERT_TRUE(split.status.ok()) << split.status.message();
  EXPECT_EQ(split.text, whole.text);
  ASSERT_EQ(split.reports.size(), 1u);
  EXPECT_NE(split.reports[0].find("a batch of 256 reads: batches of 16 reads"), std::string::npos) << split.reports[0];
  const std::vector<std::size_t> first = {256, 128, 64, 32, 32, 16};
  ASSERT_GT(engine.tried.size(), first.size());
  EXPECT_TRUE(std::equal(first.begin(), first.end(), engine.tried.begin()));
  EXPECT_TRUE(std::all_of(engine.tried.begin() + 6, engine.tried.end(), [](std::size_t c) { return c <= 16; }));
}

// Pairs stay whole: every part holds an even number of reads, 4 where the device holds 5.
TEST(SplittingSearchEngine, PairsStayInOnePart) {
  ShortDeviceEngine roomy(~std::size_t{0}, false), short_of_memory(5, false);
  const SplitRun whole = run_split(roomy, 200, 64, 2);
  const SplitRun split = run_split(short_of_memory, 200, 64, 2);
  ASSERT_TRUE(split.status.ok()) << split.status.message();
  EXPECT_EQ(split.text, whole.text);
  ASSERT_EQ(split.reports.size(), 1u);
  EXPECT_NE(split.reports[0].find("batches of 4 reads"), std::string::npos) << split.reports[0];
  for (std::size_t count : short_of_memory.tried) EXPECT_EQ(count % 2, 0u) << count;
}

// The device shrinks during the run (another process took memory): the size halves again and
// this is said again; it never grows back.
TEST(SplittingSearchEngine, LaterShortageHalvesAgain) {
  ShortDeviceEngine roomy(~std::size_t{0}, false), engine(40, false);
  engine.shrink_after_tries = 8;  // then 10 reads fit
  engine.shrunk_fits = 10;
  const SplitRun whole = run_split(roomy, 600, 64);  // 9 batches of 64 and one of 24
  const SplitRun split = run_split(engine, 600, 64);
  ASSERT_TRUE(split.status.ok()) << split.status.message();
  EXPECT_EQ(split.text, whole.text);
  ASSERT_EQ(split.reports.size(), 2u);
  EXPECT_NE(split.reports[0].find("a batch of 64 reads: batches of 32 reads"), std::string::npos) << split.reports[0];
  EXPECT_NE(split.reports[1].find("a batch of 32 reads: batches of 8 reads"), std::string::npos) << split.reports[1];
  EXPECT_TRUE(std::is_sorted(engine.tried.rbegin(), engine.tried.rend())) << "a part larger than one tried before";
  EXPECT_EQ(engine.part_size(), 8u);
}

// One read (one pair) that does not fit ends the run with device_out_of_memory and a message
// that says so and keeps the device's; no output is written for that batch.
TEST(SplittingSearchEngine, SingleReadThatDoesNotFitFailsTheRun) {
  for (std::size_t unit : {1, 2}) {
    SCOPED_TRACE(unit);
    ShortDeviceEngine engine(unit - 1, false);
    const SplitRun run = run_split(engine, 100, 16, unit);
    EXPECT_EQ(run.status.code(), StatusCode::device_out_of_memory);
    const std::string want = unit == 1 ? "a single read does not fit in the GPU's memory: fake device: 1 reads need too much"
                                       : "a single pair of reads does not fit in the GPU's memory: fake device: 2 reads "
                                         "need too much";
    EXPECT_EQ(run.status.message(), want);
    EXPECT_TRUE(run.reports.empty());
    EXPECT_TRUE(run.text.empty());
  }
}

// Any other error of a part is the run's at once: no split, no retry.
TEST(SplittingSearchEngine, OtherErrorsAreNotRetried) {
  ShortDeviceEngine engine(~std::size_t{0}, false);
  engine.search_failure.batch = 2;
  const SplitRun run = run_split(engine, 1000, 50);
  EXPECT_EQ(run.status.code(), StatusCode::io_error);
  EXPECT_EQ(engine.tried, (std::vector<std::size_t>{50, 50, 50}));
  EXPECT_TRUE(run.reports.empty());
}

}  // namespace
}  // namespace wtmap::altest
