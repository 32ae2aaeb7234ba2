// wtmap aligner: the real stages of the align pipeline (align_pipeline.hpp) -- reads from a
// SeqReader, the k-mismatch search of a BatchAligner, SAM/BAM out through a SamWriter.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "wtmap/aligner/align_pipeline.hpp"
#include "wtmap/aligner/batch_aligner.hpp"
#include "wtmap/aligner/bounded_queue.hpp"
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

// The search stage's SearchedBatch buffers (some 250 bytes per read on a GPU index, 500 on a CPU
// one): at most three are in use at once (one searched, one waiting for the finish stage, one
// finished), and a finished one comes back through give_back(). With `warm_up` a thread of their
// own makes the three from the start of the run, their pages faulted in while the CUDA context
// and the index load, instead of the search stage over its first three batches (26 ms of the
// first batch's 88 ms on an H100 host, where that stage was the pipeline's limit;
// bench/history/RESULTS-2026-11-26.md).
class SearchedBatchPool {
 public:
  SearchedBatchPool(std::size_t reads, Backend backend, bool warm_up);
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

// BatchAligner's k-mismatch search as the pipeline's engine. Made before the index loads (its
// SearchedBatch pool warms up meanwhile); start() then makes the aligner. The SearchedBatch of
// each batch between search() and finish() waits in a queue here: batches reach finish() in the
// order they left search().
class MismatchSearchEngine : public SearchEngine {
 public:
  MismatchSearchEngine(std::size_t batch_size, Backend backend, bool warm_up) : pool_(batch_size, backend, warm_up) {}
  // The index must outlive the engine, or its release().
  void start(const fmindex::FmIndex& index, const AlignOptions& options) { aligner_.emplace(index, options); }

  Status search(const ReadBatch& batch) override;
  Status finish(ReadBatch& batch) override;
  void finish_stopped() override { pool_.close(); }
  // Frees the aligner (its device memory) and the pinned batches; the engine is unusable after.
  void release();

 private:
  // Declared before the aligner, so destroyed after it: the aligner waits for its kernels, which
  // write into the searched batches' pinned memory.
  SearchedBatchPool pool_;
  std::mutex in_flight_mutex_;
  std::deque<std::unique_ptr<SearchedBatch>> in_flight_;  // searched, not yet finished
  std::optional<BatchAligner> aligner_;
};

// Records written by a SamWriter, which the caller opened and finishes through the pipeline.
class SamWriterSink : public AlignmentSink {
 public:
  explicit SamWriterSink(SamWriter& writer) : writer_(writer) {}
  Status prepare(std::size_t batch_size) override { return writer_.reserve(batch_size); }
  Status write(const ReadBatch& batch) override { return writer_.write(batch.reads, batch.alignments); }
  Status finish() override { return writer_.finish(); }

 private:
  SamWriter& writer_;
};

}  // namespace wtmap::aligner
