// wtmap aligner: the align pipeline -- reads parsed into batches, searched, finished and written,
// each stage on a thread of its own so that the four overlap:
//
//   reader thread --(6)--> search (run()'s thread) --(3)--> finish thread --(2)--> writer thread
//        ^                                                                             |
//        +------------------------ written batches, recycled --------------------------+
//
// (bounded queues, their capacities in brackets). Several GPUs (`wtmap align --gpus`): one
// search engine per GPU, each with a search and a finish stage of its own (a lane) -- every
// lane's search thread takes the next batch read when its lane has room, so the GPUs pull batches
// as fast as each goes -- and the finished batches reach the writer through a ReorderQueue, which
// hands them out by their number in the input:
//
//                    +--> search 0 --(3)--> finish 0 --+
//   reader --(6)-->  +--> search 1 --(3)--> finish 1 --+--(reorder)--> writer
//                    +--> ...                          +
//
// The output is thus the same bytes for any number of GPUs (a read's alignment depends on the
// read alone). The stages are interfaces -- ReadSource,
// SearchEngine, AlignmentSink -- so that the pipeline is the same for every engine and a test can
// drive it with fakes; align_stages.hpp has the real ones (SeqReader, BatchAligner, SamWriter).
// Room for what comes next: a gapped search is another SearchEngine behind the same stages; paired
// reads are a ReadSource that fills a batch from two readers in lockstep (a `mates` vector beside
// `reads`), an engine that pairs and a sink that writes pairs.
//
// Space: at most most_batches(engines) batches exist at once (kMostBatches, 17, for one engine; 5
// more per engine, and more where an engine asks for a longer finish queue: the gapped engine's
// five mapping threads, 5 more; a batch of 10^5 reads of 150 bases holds some 1 KB per read with
// its alignments); threads: 1 + 2 per engine beside run()'s (lane 0 searches on it), plus the warming
// threads and the release thread. With one engine batches pass every stage in read order; with
// several, the writer restores it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "wtmap/aligner/alignment.hpp"
#include "wtmap/aligner/gapped/gapped_alignment.hpp"
#include "wtmap/aligner/seq_reader.hpp"
#include "wtmap/aligner/stage_clock.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::aligner {

// The bases per read that buffers made before any read was seen are sized for: reads up to
// 150 bp, as ART and Illumina write them.
constexpr std::size_t kFirstReadLength = 152;
// The most reads a buffer made before its batch is read is sized for (batches the warming threads
// make, the search stage's pool, the writer's records): a large --batch over a small input would
// otherwise allocate memory for reads that never come (--batch 10^7 on 20 reads took 4.7 GB);
// a batch that holds more grows as it fills.
constexpr std::size_t kMostReadsMadeAhead = 200000;

// The reads of batch `number` (0, 1, ...) of a ramp that starts at `first` reads and grows by a
// fifth a batch (rounded up) to `most`; `first` 0: every batch `most`.
constexpr std::size_t ramped_batch_size(std::size_t first, std::size_t most, std::uint64_t number) {
  if (first == 0 || first >= most) return most;
  std::size_t size = first;
  for (std::uint64_t b = 0; b < number && size < most; ++b) size += (size + 4) / 5;
  return size < most ? size : most;
}

// Reads and, once finished, their alignments. A written batch goes back to the reader and its
// records are read into again: no allocation per read, and no fresh pages to fault in per batch.
struct ReadBatch {
  std::vector<SeqRecord> reads;
  // One per read, from SearchEngine::finish, in one of the two: the k-mismatch search's or the
  // gapped mapper's (the other one left empty).
  std::vector<ReadAlignment> alignments;
  std::vector<gapped::GappedReadAlignment> gapped_alignments;
  std::size_t filled = 0;                 // records of `reads` read into this time
  std::uint64_t number = 0;               // its place among the batches read: 0, 1, 2, ...
  bool mates_rescued = false;             // gapped pairs: the engine rescued the mates (finish)

  // A record to read into: it may still hold a recycled record's strings (their memory reused).
  SeqRecord& next_record() {
    if (filled == reads.size()) reads.emplace_back();
    return reads[filled];
  }
  void keep_record() { ++filled; }
  void end_filling() { reads.resize(filled); }  // a recycled batch may have held more
  std::size_t size() const { return filled; }
};

// The reader stage: runs on the reader thread.
class ReadSource {
 public:
  virtual ~ReadSource() = default;
  // Adds up to `most` records to `batch` (next_record, then keep_record for each one kept); false
  // once the input has ended. The batch comes empty (filled = 0).
  virtual Result<bool> fill(ReadBatch& batch, std::size_t most) = 0;
};

// The search engine, in two halves. search() runs on run()'s thread and may return once the
// batch's work is launched (a GPU); finish() runs on the finish thread and fills
// batch.alignments, one per read. Each batch is searched, then finished; both halves see the
// batches in read order, one at a time, and finish(i) may run beside search(i + 1). The engine
// keeps what passes between the two halves itself (the batches arrive at finish() in the order
// they left search()).
class SearchEngine {
 public:
  virtual ~SearchEngine() = default;
  virtual Status search(const ReadBatch& batch) = 0;
  virtual Status finish(ReadBatch& batch) = 0;
  // The finish stage has stopped (the last batch finished, an error, or a cancel): a search()
  // waiting for something that finish() hands back must wait no longer.
  virtual void finish_stopped() {}
  // The most reads a batch should hold from now on (a GPU short of memory lowers it,
  // batch_splitting.hpp): the reader fills the batches it reads after that with no more.
  // Called from the reader thread.
  virtual std::size_t most_reads_per_batch() const { return std::numeric_limits<std::size_t>::max(); }
  // Called first on each pipeline thread that calls search() or finish() (its lane's two): an
  // engine of one GPU among several binds the thread to it (use_gpu, gpu_selection.hpp).
  virtual Status enter_thread() { return {}; }
  // Where it runs, for its errors in a run of several engines ("GPU 1": "GPU 1: <error>");
  // empty: the error as it is.
  virtual std::string where() const { return {}; }
  // Searched batches that may wait for finish() (the capacity of the lane's queue between the
  // two; at least 1): 3 (kDefaultToFinish), or more for an engine whose search() only hands the
  // batch to threads of its own, so that one of them that ends its batch before the oldest has
  // the next to take (GappedSearchEngine). Asked once, when run() makes the lane.
  static constexpr std::size_t kDefaultToFinish = 3;
  virtual std::size_t finish_queue_capacity() const { return kDefaultToFinish; }
};

// The writer stage: runs on the writer thread.
class AlignmentSink {
 public:
  virtual ~AlignmentSink() = default;
  // Called once before the first batch arrives (while it is searched): room for `batch_size` reads.
  virtual Status prepare(std::size_t batch_size) = 0;
  // Each batch as it leaves its engine's finish stage, on that stage's thread, before write():
  // several engines' batches in any order and at once. Only what a sink may learn ahead of the
  // writer (PairedSamWriterSink's insert-size sample).
  virtual void batch_finished(const ReadBatch& /*batch*/) {}
  // The batch is the sink's to change (PairedSamWriterSink pairs its alignments in place): the
  // run counts it before and only reuses its memory after.
  virtual Status write(ReadBatch& batch) = 0;
  // After the last batch was written, on run()'s thread (timed with the write stage: the close).
  virtual Status finish() = 0;
};

// What a run counted: the summary of `wtmap align` (MAPQ > 0 with options.max_mismatches for
// k-mismatch alignments, the gapped mapper's MAPQ for gapped ones; `split`: gapped reads with
// supplementary hits).
struct AlignTotals {
  std::uint64_t reads = 0, mapped = 0, unique = 0, capped = 0, too_short = 0, too_long = 0, split = 0;
  std::vector<std::size_t> batch_reads;  // each batch's reads, in order (-v -v)

  void add(const ReadBatch& batch, unsigned max_mismatches);
};

// Each stage's busy time, and when it began and ended each batch (`wtmap align -v -v`): batch i
// is the i-th span of each stage (the reader's last span may find no reads; the write clock's
// last span is the sink's finish()).
struct StageClocks {
  StageClock read, search, finish, write;
};

struct PipelineOptions {
  std::size_t batch_size = 100000;  // reads per batch
  // The first batches smaller (ramped_batch_size; 0: none): a run's first records are written once
  // its first batch is mapped, and the engines map the larger ones meanwhile. A start-up
  // experiment (`WTMAP_FIRST_BATCH`, cli/cmd_align.cpp): on an H200 host 5000 reads first were no
  // faster (bench/RESULTS.md), so no default sets it.
  std::size_t first_batch_size = 0;
  unsigned max_mismatches = 4;      // for the totals' MAPQ
  // Threads that make new batches, their strings allocated, before the reader needs them (0: the
  // reader makes its own): making a batch of 10^5 reads takes some 25 ms, twice the time to fill
  // it, and a run fills its first batches new while the index loads.
  unsigned warming_threads = 0;
  // Called on the writer thread after each batch is written, with the totals so far.
  std::function<void(const AlignTotals&)> on_written;
};

// What run() returns after cancel(): StatusCode::cancelled, "the run was cancelled".
Status cancelled_status();

// Runs the stages over one input: start_reading(), then run(). Not copyable; the destructor
// cancels what still runs and joins every thread.
class AlignPipeline {
 public:
  // Queue capacities. Six batches read ahead keep the reader busy while a large index loads
  // (1.5-2 s for a 1 Gbp genome) without holding the whole input. Searched batches waiting for
  // the finish stage: the engine's finish_queue_capacity(), kToFinish (3) unless it asks for more;
  // an engine holds that many and two more (kPerEngine for the default: its search, its queue and
  // its finish). In the bounds below, `extra` is the most any engine's queue holds beyond
  // kToFinish (0: engines of the default capacity).
  static constexpr std::size_t kReadAhead = 6, kToFinish = SearchEngine::kDefaultToFinish, kToWrite = 2;
  static constexpr std::size_t kPerEngine = kToFinish + 2;
  // Finished batches waiting for the writer: 2, and room for every other engine's to finish
  // while one still holds the batch the writer waits for.
  static constexpr std::size_t write_window(std::size_t engines, std::size_t extra = 0) {
    return kToWrite + (engines > 1 ? engines - 1 : 0) * (kPerEngine + extra);
  }
  // The most batches in the stages at once: the reader's and the writer's, the read-ahead queue's,
  // each engine's, and the write window's.
  static constexpr std::size_t most_in_stages(std::size_t engines, std::size_t extra = 0) {
    return kReadAhead + 2 + (engines > 1 ? engines : 1) * (kPerEngine + extra) + write_window(engines, extra);
  }
  static constexpr std::size_t kMostInStages = kReadAhead + 2 + kPerEngine + kToWrite;  // most_in_stages(1): 15
  // The most batches ever made: those, and 2 that a warming thread may be making when the reader
  // makes one itself.
  static constexpr std::size_t most_batches(std::size_t engines, std::size_t extra = 0) {
    return most_in_stages(engines, extra) + 2;
  }
  static constexpr std::size_t kMostBatches = kMostInStages + 2;  // most_batches(1)

  explicit AlignPipeline(PipelineOptions options);
  ~AlignPipeline();
  AlignPipeline(const AlignPipeline&) = delete;
  AlignPipeline& operator=(const AlignPipeline&) = delete;

  // Starts the reader thread (once), so that reading overlaps with what comes before run(): the
  // CUDA start-up and the index load. `source` must outlive the pipeline.
  void start_reading(ReadSource& source);
  // Batches the reader starts from now on hold at most `most` reads (>= 1): for a batch size that
  // depends on the backend, known only after reading began. From any thread.
  void limit_batch_size(std::size_t most);

  // Runs the search stage on this thread until every batch is written, then the sink's finish()
  // (once, after start_reading).
  // `engine` null: read and write only, every read unmapped (--io-only). `release`, if given,
  // runs on a thread of its own once the last batch is finished and nothing calls the engine
  // again -- to free the GPU and the index while the writer writes the last batch; join it with
  // wait_for_release() before destroying what it frees. Returns the first error in stage order
  // (reader, search, finish, writer), else cancelled_status() after cancel(), else the finish()'s.
  Status run(SearchEngine* engine, AlignmentSink& sink, std::function<void()> release = {});
  // The same with one lane per engine (one or more, none null where there are several; lane 0
  // searches on this thread). The warming threads make batches for one lane (they start before
  // the GPUs are known); the reader makes those the other lanes hold at first itself. An error in any lane stops every stage; with several engines, prefixed by the
  // failing engine's where(). The clocks' search and finish stages are then the lanes' calls
  // joined, in batch order, their busy seconds summed.
  Status run(const std::vector<SearchEngine*>& engines, AlignmentSink& sink, std::function<void()> release = {});

  // Asks the run to stop: every stage stops after the call it is in (a source blocked reading
  // its input, after that read), and run() returns cancelled_status(). From any thread.
  void cancel();
  bool cancelled() const;
  // Joins the thread that `release` runs on, if it was started.
  void wait_for_release();

  const AlignTotals& totals() const;  // after run()
  const StageClocks& clocks() const;  // after run()
  std::size_t batches_made() const;   // ReadBatch objects made so far (at most most_batches(engines, extra))

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wtmap::aligner
