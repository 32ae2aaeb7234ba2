#include "wtmap/aligner/batch_splitting.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace wtmap::aligner {
namespace {

template <class T>
void append(std::vector<T>& to, std::vector<T>& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  from.clear();
}

}  // namespace

void PartSize::configure(std::size_t unit, std::function<void(const std::string&)> report) {
  const std::lock_guard<std::mutex> lock(mutex_);
  unit_ = std::max<std::size_t>(unit, 1);
  report_ = std::move(report);
}

Status PartSize::halve(std::size_t count, const Status& why) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (count <= unit_) {
    return {StatusCode::device_out_of_memory,
            std::string(unit_ == 1 ? "a single read" : "a single pair of reads") +
                " does not fit in the GPU's memory: " + why.message()};
  }
  if (size_.load() >= reported_size_) failed_size_ = count;  // the first failure since the last report
  size_ = std::min(size_.load(), std::max(unit_, count / 2 / unit_ * unit_));
  return {};
}

void PartSize::report_if_smaller() {
  const std::lock_guard<std::mutex> lock(mutex_);
  const std::size_t size = size_.load();
  if (size >= reported_size_) return;
  if (report_) {
    report_("the GPU was short of memory for a batch of " + std::to_string(failed_size_) + " reads: batches of " +
            std::to_string(size) + " reads from now on (--batch " + std::to_string(size) + " avoids the retries)");
  }
  reported_size_ = size;
}

Status SplittingSearchEngine::search(const ReadBatch& batch) {
  const std::size_t n = batch.size();
  if (n <= part_size_.get()) {
    const Status whole = search_part(batch.reads.data(), n);
    if (whole.ok()) {
      push({});
      return {};
    }
    if (whole.code() != StatusCode::device_out_of_memory) return whole;
    WTMAP_TRY(part_size_.halve(n, whole));
  }
  return search_in_parts(batch);
}

Status SplittingSearchEngine::search_in_parts(const ReadBatch& batch) {
  if (!wait_for_earlier_batches()) return {};  // the run is ending: this batch goes no further
  WTMAP_TRY(release_device_memory());
  Searched joined;
  joined.split = true;
  ReadBatch part;  // a part's alignments
  const SeqRecord* reads = batch.reads.data();
  for (std::size_t begin = 0, n = batch.size(); begin < n;) {
    const std::size_t count = std::min(part_size_.get(), n - begin);
    const Status searched = search_part(reads + begin, count);
    if (searched.code() == StatusCode::device_out_of_memory) {
      WTMAP_TRY(part_size_.halve(count, searched));
      WTMAP_TRY(release_device_memory());
      continue;
    }
    WTMAP_TRY(searched);
    WTMAP_TRY(finish_part(reads + begin, count, part));
    append(joined.alignments, part.alignments);
    append(joined.gapped_alignments, part.gapped_alignments);
    begin += count;
  }
  part_size_.report_if_smaller();
  push(std::move(joined));
  return {};
}

bool SplittingSearchEngine::wait_for_earlier_batches() {
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return unfinished_ == 0 || stopped_; });
  return !stopped_;
}

void SplittingSearchEngine::push(Searched searched) {
  const std::lock_guard<std::mutex> lock(mutex_);
  searched_.push_back(std::move(searched));
  ++unfinished_;
}

Status SplittingSearchEngine::finish(ReadBatch& batch) {
  Searched searched;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (searched_.empty()) return invalid_argument("finish of a batch not searched");
    searched = std::move(searched_.front());
    searched_.pop_front();
  }
  Status finished;
  if (searched.split) {
    std::swap(batch.alignments, searched.alignments);
    std::swap(batch.gapped_alignments, searched.gapped_alignments);
  } else {
    finished = finish_part(batch.reads.data(), batch.size(), batch);
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  --unfinished_;
  finished_.notify_all();
  return finished;
}

void SplittingSearchEngine::finish_stopped() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    finished_.notify_all();
  }
  on_finish_stopped();
}

}  // namespace wtmap::aligner
