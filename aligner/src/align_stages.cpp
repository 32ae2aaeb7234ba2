#include "wtmap/aligner/align_stages.hpp"

#include <algorithm>
#include <new>
#include <string>

#include "wtmap/aligner/align_pipeline.hpp"
#include "wtmap/aligner/batch_reader.hpp"
#include "wtmap/core/detail/parallel.hpp"

namespace wtmap::aligner {

Result<bool> SeqReaderSource::fill(ReadBatch& batch, std::size_t most) {
  Result<bool> more = fill_batch(reader_, most, batch);
  // Single-end output loses "/1" and "/2" too: they break samtools fixmate and merges (issue 26).
  for (std::size_t r = 0; r < batch.size(); ++r) strip_mate_suffix(batch.reads[r].name);
  return more;
}

Status PairedReadSource::mismatch(std::uint64_t pair, const SeqRecord* first, const SeqRecord* second) const {
  const std::string where[2] = {
      paths_[0] + ": record " + std::to_string(interleaved() ? 2 * pair - 1 : pair),
      paths_[1] + ": record " + std::to_string(interleaved() ? 2 * pair : pair)};
  if (first == nullptr) {
    return invalid_argument(paths_[1] + " has more reads than " + paths_[0] + ": " + where[1] + " ('" + second->name +
                            "') has no mate");
  }
  if (second == nullptr) {
    if (interleaved()) {
      return invalid_argument(where[0] + " ('" + first->name +
                              "') has no mate: an interleaved input (-p) holds an even number of records");
    }
    return invalid_argument(paths_[0] + " has more reads than " + paths_[1] + ": " + where[0] + " ('" + first->name +
                            "') has no mate");
  }
  return invalid_argument("mates' names differ: " + where[0] + " is '" + first->name + "', " + where[1] + " is '" +
                          second->name + "'");
}

Result<bool> PairedReadSource::fill(ReadBatch& batch, std::size_t most) {
  const std::size_t pairs = std::max<std::size_t>(1, most / 2);
  for (std::size_t p = 0; p < pairs; ++p) {
    const std::uint64_t pair = pairs_ + 1;
    SeqRecord& first = batch.next_record();
    Result<bool> got = readers_[0]->next(first);
    if (!got.ok()) return got.status();
    if (!*got) {
      if (interleaved()) return false;
      SeqRecord& extra = batch.next_record();  // the second input must end here too
      got = readers_[1]->next(extra);
      if (!got.ok()) return got.status();
      if (*got) return mismatch(pair, nullptr, &extra);
      return false;
    }
    batch.keep_record();
    SeqRecord& second = batch.next_record();
    got = readers_[1]->next(second);
    if (!got.ok()) return got.status();
    if (!*got) return mismatch(pair, &batch.reads[batch.size() - 1], nullptr);
    batch.keep_record();
    SeqRecord& mate1 = batch.reads[batch.size() - 2];
    if (mate_name(mate1.name) != mate_name(second.name)) return mismatch(pair, &mate1, &second);
    strip_mate_suffix(mate1.name);
    strip_mate_suffix(second.name);
    pairs_ = pair;
  }
  return true;
}

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

Status MismatchSearchEngine::search_part(const SeqRecord* reads, std::size_t count) {
  if (!aligner_) return invalid_argument("MismatchSearchEngine::search before start()");
  std::unique_ptr<SearchedBatch> searched = pool_.take();
  const Status status = aligner_->search(reads, count, *searched);
  if (!status.ok()) {
    // Short of device memory, nothing was launched into it: kept for the smaller parts.
    if (status.code() == StatusCode::device_out_of_memory) pool_.give_back(std::move(searched));
    return status;
  }
  const std::lock_guard<std::mutex> lock(in_flight_mutex_);
  in_flight_.push_back(std::move(searched));
  return {};
}

Status MismatchSearchEngine::finish_part(const SeqRecord* reads, std::size_t count, ReadBatch& out) {
  std::unique_ptr<SearchedBatch> searched;
  {
    const std::lock_guard<std::mutex> lock(in_flight_mutex_);
    if (in_flight_.empty() || !aligner_) return invalid_argument("MismatchSearchEngine::finish of a batch not searched");
    searched = std::move(in_flight_.front());
    in_flight_.pop_front();
  }
  out.gapped_alignments.clear();
  WTMAP_TRY(aligner_->finish(reads, count, *searched, out.alignments));
  pool_.give_back(std::move(searched));
  return {};
}

Status MismatchSearchEngine::release_device_memory() {
  return aligner_ ? aligner_->release_device_memory() : Status{};
}

Status GappedSearchEngine::start(const fmindex::FmIndex& index, const gapped::GappedOptions& options) {
  Result<gapped::GappedMapper> mapper = gapped::GappedMapper::create(index, options);
  if (!mapper.ok()) return mapper.status();
  mapper_.emplace(std::move(*mapper));
  return {};
}

Status GappedSearchEngine::search_part(const SeqRecord* reads, std::size_t count) {
  if (!mapper_) return invalid_argument("GappedSearchEngine::search before start()");
  std::vector<gapped::GappedReadAlignment> results;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!spare_.empty()) {
      results = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  WTMAP_TRY(mapper_->map(reads, count, results));
  if (results.size() != count) {
    return invalid_argument("the gapped mapper gave " + std::to_string(results.size()) + " alignments for " +
                            std::to_string(count) + " reads");
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  in_flight_.push_back(std::move(results));
  return {};
}

Status GappedSearchEngine::finish_part(const SeqRecord*, std::size_t, ReadBatch& out) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (in_flight_.empty()) return invalid_argument("GappedSearchEngine::finish of a batch not searched");
  out.alignments.clear();
  std::swap(out.gapped_alignments, in_flight_.front());
  spare_.push_back(std::move(in_flight_.front()));  // what the batch held before: reused by a later search
  in_flight_.pop_front();
  return {};
}

Status GappedSearchEngine::release_device_memory() {
  if (mapper_) mapper_->release_device_memory();
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

Status PairedSamWriterSink::write(const ReadBatch& batch) {
  if (settled_) return write_paired(batch);
  auto sampled_enough = [&] { return samples_.size() >= sample_pairs_ || pairs_seen_ >= window_pairs_; };
  for (std::size_t i = 0; i + 1 < batch.size() && !sampled_enough(); i += 2) {
    ++pairs_seen_;
    const ReadAlignment mates[2] = {batch.alignments[i], batch.alignments[i + 1]};
    const std::size_t lengths[2] = {batch.reads[i].sequence.size(), batch.reads[i + 1].sequence.size()};
    const std::int64_t size = sampled_insert_size(mates, lengths, max_mismatches_);
    if (size > 0) samples_.push_back(size);
  }
  if (!sampled_enough()) {
    waiting_.push_back(batch);
    return {};
  }
  WTMAP_TRY(settle());  // the batches before this one
  return write_paired(batch);
}

Status PairedSamWriterSink::settle() {
  model_ = estimate_insert_size(std::move(samples_));
  settled_ = true;
  for (const ReadBatch& b : waiting_) WTMAP_TRY(write_paired(b));
  waiting_.clear();
  return {};
}

Status PairedSamWriterSink::finish() {
  if (!settled_) WTMAP_TRY(settle());
  return writer_.finish();
}

Status PairedSamWriterSink::write_paired(const ReadBatch& batch) {
  if (batch.size() % 2 != 0 || batch.alignments.size() != batch.size()) {
    return invalid_argument("a batch of pairs holds " + std::to_string(batch.size()) + " reads");
  }
  paired_.assign(batch.alignments.begin(), batch.alignments.end());
  fields_.resize(batch.size());
  // Pairs are independent once the model is set: on all threads, as SamWriter formats.
  wtmap::detail::parallel_for_ranges(batch.size() / 2, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t p = begin; p < end; ++p) {
      const std::size_t i = 2 * p;
      ReadAlignment mates[2] = {std::move(paired_[i]), std::move(paired_[i + 1])};
      const std::size_t lengths[2] = {batch.reads[i].sequence.size(), batch.reads[i + 1].sequence.size()};
      MateFields fields[2];
      pair_mismatch_mates(mates, lengths, max_mismatches_, model_, scoring_, fields);
      for (int m = 0; m < 2; ++m) {
        paired_[i + m] = std::move(mates[m]);
        fields_[i + m] = std::move(fields[m]);
      }
    }
  }, 1024);
  for (std::size_t i = 0; i < batch.size(); i += 2) totals_.add(fields_[i], fields_[i + 1]);
  return writer_.write_pairs(batch.reads, paired_, fields_);
}

}  // namespace wtmap::aligner
