#include "wtmap/aligner/align_stages.hpp"

#include <algorithm>
#include <new>

#include "wtmap/aligner/align_pipeline.hpp"
#include "wtmap/aligner/batch_reader.hpp"

namespace wtmap::aligner {

Result<bool> SeqReaderSource::fill(ReadBatch& batch, std::size_t most) { return fill_batch(reader_, most, batch); }

SearchedBatchPool::SearchedBatchPool(std::size_t batch_size, Backend backend, bool warm_up) {
  if (!warm_up) return;
  const std::size_t reads = std::min(batch_size, kMostReadsMadeAhead);
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

Status GappedSearchEngine::start(const fmindex::FmIndex& index, const gapped::GappedOptions& options) {
  Result<gapped::GappedMapper> mapper = gapped::GappedMapper::create(index, options);
  if (!mapper.ok()) return mapper.status();
  mapper_.emplace(std::move(*mapper));
  return {};
}

Status GappedSearchEngine::search(const ReadBatch& batch) {
  if (!mapper_) return invalid_argument("GappedSearchEngine::search before start()");
  std::vector<gapped::GappedReadAlignment> results;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!spare_.empty()) {
      results = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  WTMAP_TRY(mapper_->map(batch.reads, results));
  if (results.size() != batch.reads.size()) {
    return invalid_argument("the gapped mapper gave " + std::to_string(results.size()) + " alignments for " +
                            std::to_string(batch.reads.size()) + " reads");
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  in_flight_.push_back(std::move(results));
  return {};
}

Status GappedSearchEngine::finish(ReadBatch& batch) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (in_flight_.empty()) return invalid_argument("GappedSearchEngine::finish of a batch not searched");
  batch.alignments.clear();
  std::swap(batch.gapped_alignments, in_flight_.front());
  spare_.push_back(std::move(in_flight_.front()));  // what the batch held before: reused by a later search()
  in_flight_.pop_front();
  return {};
}

void GappedSearchEngine::release() {
  const std::lock_guard<std::mutex> lock(mutex_);
  mapper_.reset();
  in_flight_.clear();
  spare_.clear();
}

void MismatchSearchEngine::release() {
  aligner_.reset();
  pool_.release();
  in_flight_.clear();
}

}  // namespace wtmap::aligner
