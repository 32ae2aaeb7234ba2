// wtmap aligner: the real stages of the align pipeline (align_pipeline.hpp) -- reads from a
// SeqReader, the k-mismatch search of a BatchAligner or the gapped alignment of a GappedMapper,
// SAM/BAM out through a SamWriter.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "wtmap/aligner/align_pipeline.hpp"
#include "wtmap/aligner/batch_aligner.hpp"
#include "wtmap/aligner/batch_splitting.hpp"
#include "wtmap/aligner/bounded_queue.hpp"
#include "wtmap/aligner/gapped/gapped_mapper.hpp"
#include "wtmap/aligner/pairing.hpp"
#include "wtmap/aligner/sam_writer.hpp"
#include "wtmap/aligner/seq_reader.hpp"
#include "wtmap/aligner/stage_clock.hpp"
#include "wtmap/core/gpu_selection.hpp"

namespace wtmap::aligner {

// Records parsed by a SeqReader (fill_batch, batch_reader.hpp).
class SeqReaderSource : public ReadSource {
 public:
  explicit SeqReaderSource(SeqReader& reader) : reader_(reader) {}
  Result<bool> fill(ReadBatch& batch, std::size_t most) override;

 private:
  SeqReader& reader_;
};

// Mates read in lockstep (pairing.hpp): from two readers (r1.fq r2.fq), or from one interleaved
// one (-p: mate 1, mate 2, mate 1, ...). A batch holds whole pairs, mate 1 at an even index and
// its mate after it, names stripped of "/1" and "/2"; up to `most` reads, at least one pair. A
// mate missing at the end of either input, or mates whose names differ, stops the run naming
// both inputs, the pair's record number and the two names.
class PairedReadSource : public ReadSource {
 public:
  PairedReadSource(SeqReader& first, std::string first_path, SeqReader& second, std::string second_path)
      : readers_{&first, &second}, paths_{std::move(first_path), std::move(second_path)} {}
  // Interleaved: both mates from one reader.
  PairedReadSource(SeqReader& interleaved, std::string path)
      : readers_{&interleaved, &interleaved}, paths_{path, std::move(path)} {}
  Result<bool> fill(ReadBatch& batch, std::size_t most) override;

 private:
  bool interleaved() const { return readers_[0] == readers_[1]; }
  Status mismatch(std::uint64_t pair, const SeqRecord* first, const SeqRecord* second) const;

  SeqReader* readers_[2];
  std::string paths_[2];
  std::uint64_t pairs_ = 0;
};

// The GPU an engine of a run on several GPUs is bound to (`wtmap align --gpus`): every thread
// that makes or uses the engine's device resources binds itself to it first (enter: a checked
// cudaSetDevice), and its errors name it. None (-1): a CPU engine, or one GPU that the caller's
// threads use as they are.
class GpuBinding {
 public:
  void bind(int ordinal) { ordinal_ = ordinal; }
  int ordinal() const { return ordinal_; }
  Status enter() const { return use_gpu(ordinal_); }
  std::string where() const { return ordinal_ < 0 ? std::string() : "GPU " + std::to_string(ordinal_); }

 private:
  int ordinal_ = -1;
};

// The search stage's SearchedBatch buffers (some 250 bytes per read on a GPU index, 500 on a CPU
// one): at most three are in use at once (one searched, one waiting for the finish stage, one
// finished), and a finished one comes back through give_back(). With `warm_up` a thread of their
// own makes the three from the start of the run, their pages faulted in while the CUDA context
// and the index load, instead of the search stage over its first three batches (26 ms of the
// first batch's 88 ms on an H100 host, where that stage was the pipeline's limit;
// bench/history/RESULTS-2026-11-26.md).
class SearchedBatchPool {
 public:
  // Made for batches of batch_size reads, at most kMostReadsMadeAhead (align_pipeline.hpp); the
  // warming thread bound to `gpu` (GpuBinding), whose context its pinned memory comes from.
  SearchedBatchPool(std::size_t batch_size, Backend backend, bool warm_up, int gpu = -1);
  ~SearchedBatchPool() { release(); }
  SearchedBatchPool(const SearchedBatchPool&) = delete;
  SearchedBatchPool& operator=(const SearchedBatchPool&) = delete;

  // A spare one; waits only while the thread still makes one (the three made, none spare).
  std::unique_ptr<SearchedBatch> take();
  void give_back(std::unique_ptr<SearchedBatch> batch) { spare_.push(std::move(batch)); }  // never blocks
  // When the finish stage stops: take() then waits for nothing.
  void close() { spare_.close(); }
  // Closes and frees every batch (their pinned memory) now rather than at destruction.
  void release();

 private:
  static constexpr std::size_t kBatches = 3;
  std::atomic<std::size_t> claimed_{0};
  BoundedQueue<std::unique_ptr<SearchedBatch>> spare_{kBatches};
  std::thread thread_;
};

// BatchAligner's k-mismatch search as the pipeline's engine, in smaller batches where the GPU is
// short of memory (SplittingSearchEngine). Made before the index loads (its SearchedBatch pool
// warms up meanwhile); start() then makes the aligner. The SearchedBatch of each batch (or part)
// between search and finish waits in a queue here: they reach finish in the order they left
// search.
class MismatchSearchEngine : public SplittingSearchEngine {
 public:
  // `gpu`: the GPU of a run on several (GpuBinding), whose copy of the index start() is given.
  MismatchSearchEngine(std::size_t batch_size, Backend backend, bool warm_up, int gpu = -1)
      : pool_(batch_size, backend, warm_up, gpu) {
    gpu_.bind(gpu);
  }
  // The index must outlive the engine, or its release(). On the calling thread's current device:
  // the engine's GPU.
  void start(const fmindex::FmIndex& index, const AlignOptions& options) { aligner_.emplace(index, options); }

  // Frees the aligner (its device memory) and the pinned batches, with its GPU current; the
  // engine is unusable after.
  void release();
  Status enter_thread() override { return gpu_.enter(); }
  std::string where() const override { return gpu_.where(); }

 protected:
  Status search_part(const SeqRecord* reads, std::size_t count) override;
  Status finish_part(const SeqRecord* reads, std::size_t count, ReadBatch& out) override;
  Status release_device_memory() override;
  void on_finish_stopped() override { pool_.close(); }

 private:
  // Declared before the aligner, so destroyed after it: the aligner waits for its kernels, which
  // write into the searched batches' pinned memory.
  SearchedBatchPool pool_;
  GpuBinding gpu_;
  std::mutex in_flight_mutex_;
  std::deque<std::unique_ptr<SearchedBatch>> in_flight_;  // searched, not yet finished
  std::optional<BatchAligner> aligner_;
};

// GappedMapper's alignment (bwa mem's algorithm, gapped_mapper.hpp) as the pipeline's engine,
// with several batches mapped at once: search() encodes the batch's reads (the job then owns
// everything it reads) and queues it for the mapping threads, each with a GappedMapper of its own;
// finish() waits for the oldest batch and hands its alignments over, swapping vectors so that the
// alignments' allocations (CIGARs, MD strings) are reused batch after batch. A batch's host steps
// (chaining, region choice, NM/MD) thus run beside another's device steps, and the result of a
// batch does not depend on which thread mapped it. finish() takes the batches in order, so the
// engine asks the pipeline for a finish queue of kToFinish plus one batch per mapping thread
// (finish_queue_capacity): with only kToFinish + 2 batches in the engine, as many as the mapping
// threads, a thread that ended its batch before the oldest one waited for it to be finished,
// idle (a fifth of the mapping threads' time in a single-end run on an H200, WTMAP_TRACE).
// A GPU short of memory (batch_splitting.hpp): a job whose mapping fails with
// device_out_of_memory is mapped again by its thread in parts (halved down to one read, or pair),
// after the mapper freed its cached device buffers, and the parts' alignments are joined in order
// (the same bytes: a read's alignment depends on the read alone). The part size is the engine's
// (PartSize, said once on stderr per size): later jobs map in parts of it from the start, each
// mapper frees its buffers once when it learns a smaller size, and the reader reads batches of no
// more (most_reads_per_batch). Failures show in finish(), as every mapping error does.
// Space: per mapping thread a GappedMapper (its device buffers); the codes and results of the
// batches between search() and finish().
class GappedSearchEngine : public SearchEngine {
 public:
  // More mapping threads than 5 were no faster (their host steps share the CPU threads).
  static constexpr unsigned kMostMappers = 5;
  // wtmap align's --batch in the gapped mode (the benchmarks run it too): with kMostMappers
  // batches mapped at once, 50000 took 14 % off a 10^6-read run against 100000 (a shorter last
  // wave, less system time making buffers), 200000 was slower (H200, e2dace2).
  static constexpr std::size_t kDefaultBatchReads = 50000;
  GappedSearchEngine() = default;
  ~GappedSearchEngine() override;
  GappedSearchEngine(const GappedSearchEngine&) = delete;
  GappedSearchEngine& operator=(const GappedSearchEngine&) = delete;

  // The index must outlive the engine, or its release(). mappers: 1..kMostMappers threads. On
  // the calling thread's current device: the engine's GPU (bind_to_gpu), whose copy of the index
  // this is. `shared_with`: an engine of the same index on another GPU, whose copy of the
  // reference the mappers share (host memory, one byte per base) rather than make their own.
  Status start(const fmindex::FmIndex& index, const gapped::GappedOptions& options, unsigned mappers = kMostMappers,
               const GappedSearchEngine* shared_with = nullptr);
  // Before start(): the GPU of a run on several (GpuBinding); the mapping threads and
  // rescue_mates' caller bind themselves to it.
  void bind_to_gpu(int ordinal) { gpu_.bind(ordinal); }
  Status enter_thread() override { return gpu_.enter(); }
  std::string where() const override { return gpu_.where(); }
  // kToFinish and one batch per mapping thread (kToFinish before start()).
  std::size_t finish_queue_capacity() const override { return AlignPipeline::kToFinish + mapping_threads(); }

  Status search(const ReadBatch& batch) override;
  Status finish(ReadBatch& batch) override;
  // The mappers' seconds per step, summed over the mapping threads, as of their last batch
  // (`wtmap align -v`); kept after release().
  gapped::GappedStageSeconds stage_seconds() const;
  // The mapping threads start() made (0 before it); kept after release().
  std::size_t mapping_threads() const;
  // GappedMapper::rescue_mates on pairs that were mapped here: from the writer stage, while the
  // mapping threads map later batches (a mapper of its own; one call at a time). For the batches
  // whose mapping ended before rescue_on_mapping_threads.
  Status rescue_mates(const std::vector<SeqRecord>& reads, std::vector<gapped::GappedReadAlignment>& alignments,
                      const InsertSizeModel& model, std::int32_t unpaired);
  // From now on each mapping thread rescues the mates of the batches whose mapping it ends (those
  // in progress included), with this model (the pairs' sink settled it), from the codes the
  // mapping read; the batches mapped before and not yet finished are rescued by the first free
  // mapping threads, ahead of further mappings. The rescue then runs on every mapping thread rather
  // than on the writer's alone, where it was the slowest stage of a paired run (1.27 of the write
  // stage's 2.05 busy seconds for 5*10^5 pairs, H200). finish() marks such a batch mates_rescued.
  // Batches of pairs only (mates 2p and 2p + 1), as every batch is once a pairs' sink calls this.
  void rescue_on_mapping_threads(const InsertSizeModel& model, std::int32_t unpaired);
  // Seconds the mapping threads spent in rescue_mates, summed (`wtmap align -v`).
  double mapping_rescue_seconds() const;
  // Keeps every mapper's step spans (GappedMapper::keep_step_spans) for step_spans(). Before start().
  void keep_step_spans() { keep_step_spans_ = true; }
  // The steps each mapping thread took, then those of the writer stage's rescue_mates (one list
  // per thread, the writer's last), as of the last batch each ended; kept after release().
  std::vector<std::vector<gapped::StepSpan>> step_spans() const;
  // Stops the mapping threads (a batch being mapped is finished first, queued ones are dropped)
  // and frees the mappers (their device memory, with their GPU current); the engine is unusable
  // after. The finished batches' vectors kept for reuse (host memory only, some 10^5 blocks per
  // batch) are left to the destructor, which `wtmap align` skips by leaving with _Exit after a
  // complete run: freed one by one on the releasing thread they delayed the run's end (H100 host,
  // 10^6 reads: 1.80 s -> 1.72 s, medians of 4 alternated runs).
  void release();

  // PartSize::configure: the unit of a part (2 for PairedReadSource's batches: mates 2p and
  // 2p + 1) and the report. Before the first batch.
  void configure_splitting(std::size_t unit, std::function<void(const std::string&)> report) {
    part_size_.configure(unit, std::move(report));
  }
  // Reads per part: SIZE_MAX until the device was first short of memory.
  std::size_t part_size() const { return part_size_.get(); }
  std::size_t most_reads_per_batch() const override { return part_size_.get(); }
  // Tests only: whether a mapping of this many reads fits the device; one that does not fails
  // with device_out_of_memory before the mapper runs, as a GPU short of memory would make it (CPU
  // tests of the splitting). Before start().
  void set_fit_check(std::function<bool(std::size_t reads)> fits) { fits_ = std::move(fits); }

 private:
  struct Job {
    std::vector<gapped::ReadCodes> reads;  // what the mapping, and the rescue, read
    std::vector<gapped::GappedReadAlignment> results;
    Status status;
    bool done = false;
    bool rescued = false;
  };
  // After the mapping: the job's mates rescued with `model`; a device short of memory leaves the
  // alignments as mapped (rescue_mates changes nothing on an error) and the rescue to the writer
  // stage (rescue_mates).
  Status rescue_job(gapped::GappedMapper& mapper, Job& job, const InsertSizeModel& model, std::int32_t unpaired,
                    StageClock& clock);
  void map_jobs(std::size_t mapper);
  // The job's alignments, whole or in parts of the part size; `released_at` is the part size the
  // mapper last freed its device buffers for.
  Status map_job(gapped::GappedMapper& mapper, Job& job, std::size_t& released_at);
  Status map_in_parts(gapped::GappedMapper& mapper, Job& job, std::size_t& released_at);
  // One mapping of codes (all of a job's, or a part's) into `results`, with their count checked.
  Status map_codes(gapped::GappedMapper& mapper, const std::vector<gapped::ReadCodes>& codes,
                   std::vector<gapped::GappedReadAlignment>& results);

  PartSize part_size_;
  GpuBinding gpu_;
  std::function<bool(std::size_t)> fits_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Job>> in_flight_;  // searched, not yet finished, in search order
  std::deque<std::shared_ptr<Job>> queued_;     // of those, not yet taken by a mapping thread
  std::deque<std::shared_ptr<Job>> to_rescue_;  // of those, mapped before the model was told, to rescue
  std::vector<std::vector<gapped::GappedReadAlignment>> spare_;  // finished batches' old vectors
  std::vector<std::vector<gapped::ReadCodes>> spare_codes_;       // finished batches' codes, encoded into again
  bool stopping_ = false;
  std::vector<std::unique_ptr<gapped::GappedMapper>> mappers_;
  std::unique_ptr<gapped::GappedMapper> writer_mapper_;     // rescue_mates' (the writer stage's)
  std::optional<InsertSizeModel> rescue_model_;             // rescue_on_mapping_threads'
  std::int32_t rescue_unpaired_ = 0;
  std::vector<gapped::GappedStageSeconds> mapper_seconds_;  // each mapper's, after its last batch
  std::vector<double> rescue_seconds_;                      // each mapping thread's in rescue_job
  bool keep_step_spans_ = false;
  std::vector<std::vector<gapped::StepSpan>> step_spans_;  // each mapping thread's, the writer's last
  std::vector<std::thread> threads_;
};

// Records written by a SamWriter, which the caller opened and finishes through the pipeline.
class SamWriterSink : public AlignmentSink {
 public:
  explicit SamWriterSink(SamWriter& writer) : writer_(writer) {}
  Status prepare(std::size_t batch_size) override { return writer_.reserve(batch_size); }
  // The batch's alignments of either kind (the gapped ones where a GappedSearchEngine gave them).
  Status write(ReadBatch& batch) override {
    if (!batch.gapped_alignments.empty()) return writer_.write(batch.reads, batch.gapped_alignments);
    return writer_.write(batch.reads, batch.alignments);
  }
  Status finish() override { return writer_.finish(); }

 private:
  SamWriter& writer_;
};

// The insert-size model's sample: the first `sample_pairs` confident pairs among the first
// `window_pairs` pairs in input order (batch numbers 0, 1, 2, ...), from batches offered in any
// order and from any thread; a batch offered ahead of the sample's end waits as its pairs' sizes
// (8 bytes a pair). Each engine's finish stage offers its batches as they leave it
// (AlignmentSink::batch_finished), so the model is known once the batches it needs are mapped,
// while the batches mapped beside them are still in their engine: a paired run's mapping threads
// then rescue those, side by side, rather than the writer one after another (when the model
// settled in the writer, a race decided how many of the first wave's batches it got unrescued:
// one to four). Thread-safe.
class InsertSizeSample {
 public:
  InsertSizeSample(unsigned max_mismatches, std::uint64_t sample_pairs, std::uint64_t window_pairs)
      : max_mismatches_(max_mismatches), sample_pairs_(sample_pairs), window_pairs_(window_pairs) {}
  // Samples batch.number's pairs once the batches before it were offered (a batch offered again,
  // or after the model settled, changes nothing). The model if this call settled it.
  std::optional<InsertSizeModel> offer(const ReadBatch& batch);
  // The input's end: the model from the pairs sampled, if it had not settled. The model if this
  // call settled it.
  std::optional<InsertSizeModel> settle_now();
  std::optional<InsertSizeModel> model() const;

 private:
  // Each pair's insert size if it is sampled, else 0 (sampled_insert_size).
  std::vector<std::int64_t> pair_sizes(const ReadBatch& batch) const;
  bool sampled_enough() const { return samples_.size() >= sample_pairs_ || pairs_seen_ >= window_pairs_; }
  // The waiting batches that continue the sample, in order, until it is enough (under mutex_).
  void take_waiting_in_order();

  const unsigned max_mismatches_;
  const std::uint64_t sample_pairs_, window_pairs_;
  mutable std::mutex mutex_;
  std::uint64_t next_batch_ = 0, pairs_seen_ = 0;
  std::map<std::uint64_t, std::vector<std::int64_t>> waiting_;  // batches offered ahead of next_batch_
  std::vector<std::int64_t> samples_;
  std::optional<InsertSizeModel> model_;
};

// Pairs written by a SamWriter: a batch of PairedReadSource's pairs, aligned mate by mate in
// either mode, is paired (pair_mismatch_mates, or mate rescue then pair_gapped_mates) and written
// with the pair fields. The insert-size model comes from the first `sample_pairs` confident pairs
// among the first `window_pairs` pairs in input order (InsertSizeSample, or it is given): batches
// wait here (copied) until the model settled, so the model and every record are the same for any
// --batch and any number of engines. Space: at most window_pairs pairs waiting.
class PairedSamWriterSink : public AlignmentSink {
 public:
  // Mate rescue of a batch of gapped pairs with the settled model (GappedMapper::rescue_mates).
  using Rescue = std::function<Status(const std::vector<SeqRecord>&, std::vector<gapped::GappedReadAlignment>&,
                                      const InsertSizeModel&)>;

  // `given`: -I's model (`given` set, known or -I none), or a default one to estimate one.
  PairedSamWriterSink(SamWriter& writer, unsigned max_mismatches, const InsertSizeModel& given,
                      PairScoring scoring = {}, std::uint64_t sample_pairs = kInsertSamplePairs,
                      std::uint64_t window_pairs = kInsertWindowPairs)
      : writer_(writer), max_mismatches_(max_mismatches), model_(given), scoring_(scoring),
        model_given_(given.known || given.given), settled_(model_given_),
        sample_(max_mismatches, sample_pairs, window_pairs) {}
  // Gapped batches are rescued with this before they are paired (none: no rescue), unless the
  // engine rescued them already (ReadBatch::mates_rescued).
  void set_rescue(Rescue rescue) { rescue_ = std::move(rescue); }
  // Told the model once it is settled and known (at once for -I's), on the thread that settled it
  // (a finish stage's, or the writer's): the engines then rescue the batches they map
  // (GappedSearchEngine::rescue_on_mapping_threads). Before the run.
  void set_on_settled(std::function<void(const InsertSizeModel&)> on_settled) {
    on_settled_ = std::move(on_settled);
    if (settled_ && model_.known) on_settled_(model_);
  }
  Status prepare(std::size_t batch_size) override { return writer_.reserve(batch_size); }
  // Offers the batch to the insert-size sample (any thread).
  void batch_finished(const ReadBatch& batch) override;
  Status write(ReadBatch& batch) override;
  Status finish() override;

  const InsertSizeModel& model() const { return model_; }  // after finish()
  const PairTotals& totals() const { return totals_; }
  // The writer stage's time in mate rescue and pairing (`wtmap align -v`), part of its busy time.
  double rescue_seconds() const { return rescue_clock_.seconds(); }
  double pairing_seconds() const { return pairing_clock_.seconds(); }

 private:
  // Rescues, pairs and writes the batch's alignments in place.
  Status write_paired(ReadBatch& batch);
  // The writer's model is the sample's: the batches that waited for it are written.
  Status settle(const InsertSizeModel& model);
  // on_settled_, where `settled` (what InsertSizeSample's offer or settle_now gave) is a known model.
  void tell(const std::optional<InsertSizeModel>& settled) const;
  // Pairs the batch's alignments (copied into `paired`) two by two with pair(mates, p, fields).
  template <class Alignment, class Pair>
  void pair_all(std::vector<Alignment>& paired, Pair pair);

  SamWriter& writer_;
  unsigned max_mismatches_;
  InsertSizeModel model_;
  PairScoring scoring_;
  const bool model_given_;
  bool settled_;  // the writer's (write's thread only)
  Rescue rescue_;
  std::function<void(const InsertSizeModel&)> on_settled_;
  InsertSizeSample sample_;
  std::vector<ReadBatch> waiting_;  // batches before the model settled
  std::vector<MateFields> fields_;
  PairTotals totals_;
  StageClock rescue_clock_, pairing_clock_;
};

}  // namespace wtmap::aligner
