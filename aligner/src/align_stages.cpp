#include "wtmap/aligner/align_stages.hpp"

#include <new>

#include "wtmap/aligner/batch_reader.hpp"

namespace wtmap::aligner {

Result<bool> SeqReaderSource::fill(ReadBatch& batch, std::size_t most) { return fill_batch(reader_, most, batch); }

SearchedBatchPool::SearchedBatchPool(std::size_t reads, Backend backend, bool warm_up) {
  if (!warm_up) return;
  thread_ = std::thread([this, reads, backend] {
    while (claimed_.fetch_add(1) < kBatches) {
      std::unique_ptr<SearchedBatch> batch;
      try {
        batch = std::make_unique<SearchedBatch>();
        batch->reserve(reads, reads * kFirstReadLength, backend);
      } catch (const std::bad_alloc&) {  // take() makes it when it is needed, or reports the lack
        batch.reset();
      }
      spare_.push(std::move(batch));
    }
  });
}

std::unique_ptr<SearchedBatch> SearchedBatchPool::take() {
  std::optional<std::unique_ptr<SearchedBatch>> batch = spare_.try_pop();
  if (!batch && claimed_.fetch_add(1) >= kBatches) batch = spare_.pop();
  if (batch && *batch) return std::move(*batch);
  return std::make_unique<SearchedBatch>();
}

void SearchedBatchPool::release() {
  close();
  if (thread_.joinable()) thread_.join();
  while (spare_.try_pop()) {
  }
}

Status MismatchSearchEngine::search(const ReadBatch& batch) {
  if (!aligner_) return invalid_argument("MismatchSearchEngine::search before start()");
  std::unique_ptr<SearchedBatch> searched = pool_.take();
  WTMAP_TRY(aligner_->search(batch.reads, *searched));
  const std::lock_guard<std::mutex> lock(in_flight_mutex_);
  in_flight_.push_back(std::move(searched));
  return {};
}

Status MismatchSearchEngine::finish(ReadBatch& batch) {
  std::unique_ptr<SearchedBatch> searched;
  {
    const std::lock_guard<std::mutex> lock(in_flight_mutex_);
    if (in_flight_.empty() || !aligner_) return invalid_argument("MismatchSearchEngine::finish of a batch not searched");
    searched = std::move(in_flight_.front());
    in_flight_.pop_front();
  }
  WTMAP_TRY(aligner_->finish(batch.reads, *searched, batch.alignments));
  pool_.give_back(std::move(searched));
  return {};
}

void MismatchSearchEngine::release() {
  aligner_.reset();
  pool_.release();
  in_flight_.clear();
}

}  // namespace wtmap::aligner
