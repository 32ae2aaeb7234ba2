// wtmap aligner: the real stages of the align pipeline (align_pipeline.hpp) -- reads from a
// SeqReader, the k-mismatch search of a BatchAligner or the gapped alignment of a GappedMapper,
// SAM/BAM out through a SamWriter.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "wtmap/aligner/align_pipeline.hpp"
#include "wtmap/aligner/batch_aligner.hpp"
#include "wtmap/aligner/batch_splitting.hpp"
#include "wtmap/aligner/bounded_queue.hpp"
#include "wtmap/aligner/gapped/gapped_mapper.hpp"
#include "wtmap/aligner/pairing.hpp"
#include "wtmap/aligner/sam_writer.hpp"
#include "wtmap/aligner/seq_reader.hpp"

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

// The search stage's SearchedBatch buffers (some 250 bytes per read on a GPU index, 500 on a CPU
// one): at most three are in use at once (one searched, one waiting for the finish stage, one
// finished), and a finished one comes back through give_back(). With `warm_up` a thread of their
// own makes the three from the start of the run, their pages faulted in while the CUDA context
// and the index load, instead of the search stage over its first three batches (26 ms of the
// first batch's 88 ms on an H100 host, where that stage was the pipeline's limit;
// bench/history/RESULTS-2026-11-26.md).
class SearchedBatchPool {
 public:
  // Made for batches of batch_size reads, at most kMostReadsMadeAhead (align_pipeline.hpp).
  SearchedBatchPool(std::size_t batch_size, Backend backend, bool warm_up);
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
  MismatchSearchEngine(std::size_t batch_size, Backend backend, bool warm_up) : pool_(batch_size, backend, warm_up) {}
  // The index must outlive the engine, or its release().
  void start(const fmindex::FmIndex& index, const AlignOptions& options) { aligner_.emplace(index, options); }

  // Frees the aligner (its device memory) and the pinned batches; the engine is unusable after.
  void release();

 protected:
  Status search_part(const SeqRecord* reads, std::size_t count) override;
  Status finish_part(const SeqRecord* reads, std::size_t count, ReadBatch& out) override;
  Status release_device_memory() override;
  void on_finish_stopped() override { pool_.close(); }

 private:
  // Declared before the aligner, so destroyed after it: the aligner waits for its kernels, which
  // write into the searched batches' pinned memory.
  SearchedBatchPool pool_;
  std::mutex in_flight_mutex_;
  std::deque<std::unique_ptr<SearchedBatch>> in_flight_;  // searched, not yet finished
  std::optional<BatchAligner> aligner_;
};

// GappedMapper's alignment (bwa mem's algorithm, gapped_mapper.hpp) as the pipeline's engine, in
// smaller batches where the GPU is short of memory (SplittingSearchEngine). search maps a whole
// batch (the mapper runs its steps on the GPU or the CPU to the end) and keeps the results;
// finish hands them to the batch in order, swapping vectors, so that the alignments' allocations
// (CIGARs, MD strings) are reused batch after batch rather than made anew.
// Space: the results of the batches between search and finish (at most two).
class GappedSearchEngine : public SplittingSearchEngine {
 public:
  // The index must outlive the engine, or its release().
  Status start(const fmindex::FmIndex& index, const gapped::GappedOptions& options);

  // Frees the mapper (its device memory); the engine is unusable after.
  void release();

 protected:
  Status search_part(const SeqRecord* reads, std::size_t count) override;
  Status finish_part(const SeqRecord* reads, std::size_t count, ReadBatch& out) override;
  Status release_device_memory() override;

 private:
  std::mutex mutex_;
  std::deque<std::vector<gapped::GappedReadAlignment>> in_flight_;  // mapped, not yet finished
  std::vector<std::vector<gapped::GappedReadAlignment>> spare_;    // finished batches' old vectors
  std::optional<gapped::GappedMapper> mapper_;
};

// Records written by a SamWriter, which the caller opened and finishes through the pipeline.
class SamWriterSink : public AlignmentSink {
 public:
  explicit SamWriterSink(SamWriter& writer) : writer_(writer) {}
  Status prepare(std::size_t batch_size) override { return writer_.reserve(batch_size); }
  // The batch's alignments of either kind (the gapped ones where a GappedSearchEngine gave them).
  Status write(const ReadBatch& batch) override {
    if (!batch.gapped_alignments.empty()) return writer_.write(batch.reads, batch.gapped_alignments);
    return writer_.write(batch.reads, batch.alignments);
  }
  Status finish() override { return writer_.finish(); }

 private:
  SamWriter& writer_;
};

// Pairs written by a SamWriter: a batch of PairedReadSource's pairs, aligned mate by mate, is
// paired (pair_mismatch_mates) and written with the pair fields. The insert-size model comes
// from the first `sample_pairs` confident pairs among the first `window_pairs` pairs in input
// order (or is given): batches wait here (copied) until those were seen, so the model and every
// record are the same for any --batch. Space: at most window_pairs pairs waiting.
class PairedSamWriterSink : public AlignmentSink {
 public:
  // `given`: -I's model, or none (known false) to estimate one.
  PairedSamWriterSink(SamWriter& writer, unsigned max_mismatches, const InsertSizeModel& given,
                      PairScoring scoring = {}, std::uint64_t sample_pairs = kInsertSamplePairs,
                      std::uint64_t window_pairs = kInsertWindowPairs)
      : writer_(writer), max_mismatches_(max_mismatches), model_(given), scoring_(scoring),
        sample_pairs_(sample_pairs), window_pairs_(window_pairs), settled_(given.known) {}
  Status prepare(std::size_t batch_size) override { return writer_.reserve(batch_size); }
  Status write(const ReadBatch& batch) override;
  Status finish() override;

  const InsertSizeModel& model() const { return model_; }  // after finish()
  const PairTotals& totals() const { return totals_; }

 private:
  Status write_paired(const ReadBatch& batch);
  Status settle();

  SamWriter& writer_;
  unsigned max_mismatches_;
  InsertSizeModel model_;
  PairScoring scoring_;
  std::uint64_t sample_pairs_, window_pairs_, pairs_seen_ = 0;
  bool settled_;
  std::vector<std::int64_t> samples_;
  std::vector<ReadBatch> waiting_;  // batches before the model settled
  std::vector<ReadAlignment> paired_;  // a batch's alignments as paired
  std::vector<MateFields> fields_;
  PairTotals totals_;
};

}  // namespace wtmap::aligner
