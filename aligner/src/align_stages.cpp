#include "wtmap/aligner/align_stages.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <new>
#include <string>
#include <system_error>

#include "wtmap/aligner/align_pipeline.hpp"
#include "wtmap/aligner/batch_reader.hpp"
#include "wtmap/core/detail/parallel.hpp"
#include "wtmap/core/detail/thread_name.hpp"

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

SearchedBatchPool::SearchedBatchPool(std::size_t batch_size, Backend backend, bool warm_up, int gpu) {
  if (!warm_up) return;
  const std::size_t reads = std::min(batch_size, kMostReadsMadeAhead);
  thread_ = std::thread([this, reads, backend, gpu] {
    // Where the GPU cannot be bound, the batches are made on the search thread instead (take()).
    if (!use_gpu(gpu).ok()) return;
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

GappedSearchEngine::~GappedSearchEngine() { release(); }

Status GappedSearchEngine::start(const fmindex::FmIndex& index, const gapped::GappedOptions& options, unsigned mappers,
                                 const GappedSearchEngine* shared_with) {
  if (!threads_.empty()) return invalid_argument("GappedSearchEngine::start called twice");
  if (mappers == 0 || mappers > kMostMappers)
    return invalid_argument("GappedSearchEngine: 1 to " + std::to_string(kMostMappers) + " mapping threads");
  if (shared_with != nullptr && !shared_with->mappers_.empty()) {
    mappers_.push_back(std::make_unique<gapped::GappedMapper>(shared_with->mappers_[0]->another(index)));
  } else {
    Result<gapped::GappedMapper> first = gapped::GappedMapper::create(index, options);
    if (!first.ok()) return first.status();
    mappers_.push_back(std::make_unique<gapped::GappedMapper>(std::move(*first)));
  }
  while (mappers_.size() < mappers) mappers_.push_back(std::make_unique<gapped::GappedMapper>(mappers_[0]->another()));
  writer_mapper_ = std::make_unique<gapped::GappedMapper>(mappers_[0]->another());
  mapper_seconds_.assign(mappers_.size(), {});
  rescue_seconds_.assign(mappers_.size(), 0);
  step_spans_.assign(mappers_.size() + 1, {});
  if (keep_step_spans_) {
    for (const auto& mapper : mappers_) mapper->keep_step_spans();
    writer_mapper_->keep_step_spans();
  }
  try {
    for (std::size_t k = 0; k < mappers_.size(); ++k) {
      threads_.emplace_back([this, k] { map_jobs(k); });
      wtmap::detail::name_thread(threads_.back(), "wtmap-map");
    }
  } catch (const std::system_error&) {  // the system refused a thread: the ones started do the work
    if (threads_.empty()) return {StatusCode::unavailable, "the system refused a mapping thread"};
  }
  return {};
}

namespace {

// The mapper's step spans since the last call, after `into` (a gap where memory is short: the
// timeline is a diagnostic).
void append_step_spans(gapped::GappedMapper& mapper, std::vector<gapped::StepSpan>& into) {
  std::vector<gapped::StepSpan> spans = mapper.take_step_spans();
  try {
    into.insert(into.end(), spans.begin(), spans.end());
  } catch (const std::bad_alloc&) {
  }
}

}  // namespace

void GappedSearchEngine::map_jobs(std::size_t k) {
  gapped::GappedMapper& mapper = *mappers_[k];
  std::size_t released_at = part_size_.get();
  const Status bound = gpu_.enter();  // this thread's mapper lives on the engine's GPU
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !to_rescue_.empty() || !queued_.empty(); });
    if (stopping_) {
      // Each thread frees its own mapper, all of them at once: a mapper's last batch leaves
      // some 4*10^5 small blocks (its reads' work lists) besides its rooms, and freeing the five
      // one after another took 0.2 s after the output was closed (H100 host, -v -v's release).
      lock.unlock();
      mappers_[k].reset();
      return;
    }
    // A mapped batch waiting for its rescue goes first: it is among the oldest in flight, which
    // finish() waits for.
    const bool rescue_only = !to_rescue_.empty();
    std::deque<std::shared_ptr<Job>>& from = rescue_only ? to_rescue_ : queued_;
    const std::shared_ptr<Job> job = std::move(from.front());
    from.pop_front();
    lock.unlock();
    StageClock rescue_clock;
    Status status = bound.ok() ? guarded([&]() -> Status {
      if (!rescue_only) WTMAP_TRY(map_job(mapper, *job, released_at));
      // The model as of the mapping's end (a batch mapped while the writer still sampled insert
      // sizes may end after it settled).
      std::optional<InsertSizeModel> model;
      std::int32_t unpaired = 0;
      {
        const std::lock_guard<std::mutex> model_lock(mutex_);
        model = rescue_model_;
        unpaired = rescue_unpaired_;
      }
      return model ? rescue_job(mapper, *job, *model, unpaired, rescue_clock) : Status{};
    }) : bound;
    lock.lock();
    rescue_seconds_[k] += rescue_clock.seconds();
    mapper_seconds_[k] = mapper.stage_seconds();
    append_step_spans(mapper, step_spans_[k]);
    job->status = std::move(status);
    job->done = true;
    changed_.notify_all();
  }
}

Status GappedSearchEngine::map_codes(gapped::GappedMapper& mapper, const std::vector<gapped::ReadCodes>& codes,
                                     std::vector<gapped::GappedReadAlignment>& results) {
  if (fits_ && !fits_(codes.size())) {
    return {StatusCode::device_out_of_memory, "the fit check refused " + std::to_string(codes.size()) + " reads"};
  }
  WTMAP_TRY(mapper.map(codes, results));
  if (results.size() != codes.size()) {
    return invalid_argument("the gapped mapper gave " + std::to_string(results.size()) + " alignments for " +
                            std::to_string(codes.size()) + " reads");
  }
  return {};
}

Status GappedSearchEngine::map_job(gapped::GappedMapper& mapper, Job& job, std::size_t& released_at) {
  const std::size_t n = job.reads.size();
  // A smaller size that another thread found: this mapper's buffers of larger batches go first.
  if (part_size_.get() < released_at) {
    mapper.release_device_memory();
    released_at = part_size_.get();
  }
  if (n <= part_size_.get()) {
    const Status whole = map_codes(mapper, job.reads, job.results);
    if (whole.code() != StatusCode::device_out_of_memory) return whole;
    WTMAP_TRY(part_size_.halve(n, whole));
  }
  return map_in_parts(mapper, job, released_at);
}

Status GappedSearchEngine::map_in_parts(gapped::GappedMapper& mapper, Job& job, std::size_t& released_at) {
  std::vector<gapped::ReadCodes>& reads = job.reads;
  std::vector<gapped::ReadCodes> part;
  std::vector<gapped::GappedReadAlignment> part_results, joined;
  joined.reserve(reads.size());
  for (std::size_t begin = 0; begin < reads.size();) {
    if (part_size_.get() < released_at) {
      mapper.release_device_memory();
      released_at = part_size_.get();
    }
    const std::size_t count = std::min(part_size_.get(), reads.size() - begin);
    // The part's codes moved out and back: the job keeps them for a smaller retry.
    const auto first = reads.begin() + static_cast<std::ptrdiff_t>(begin);
    const auto last = first + static_cast<std::ptrdiff_t>(count);
    part.assign(std::make_move_iterator(first), std::make_move_iterator(last));
    const Status mapped = map_codes(mapper, part, part_results);
    std::move(part.begin(), part.end(), first);
    if (mapped.code() == StatusCode::device_out_of_memory) {
      WTMAP_TRY(part_size_.halve(count, mapped));
      continue;
    }
    WTMAP_TRY(mapped);
    joined.insert(joined.end(), std::make_move_iterator(part_results.begin()),
                  std::make_move_iterator(part_results.end()));
    begin += count;
  }
  part_size_.report_if_smaller();
  job.results = std::move(joined);
  return {};
}

Status GappedSearchEngine::rescue_job(gapped::GappedMapper& mapper, Job& job, const InsertSizeModel& model,
                                      std::int32_t unpaired, StageClock& clock) {
  const Status status = clock.time([&] { return mapper.rescue_mates(job.reads, job.results, model, unpaired); });
  if (status.code() == StatusCode::device_out_of_memory) return {};  // the alignments as mapped
  WTMAP_TRY(status);
  job.rescued = true;
  return {};
}

void GappedSearchEngine::rescue_on_mapping_threads(const InsertSizeModel& model, std::int32_t unpaired) {
  const std::lock_guard<std::mutex> lock(mutex_);
  rescue_model_ = model;
  rescue_unpaired_ = unpaired;
  // The batches mapped before and not yet finished: the first free mapping threads rescue them,
  // several at once, rather than the writer's one mapper one after another as they reach it.
  for (const std::shared_ptr<Job>& job : in_flight_) {
    if (!job->done || job->rescued || !job->status.ok()) continue;
    job->done = false;
    to_rescue_.push_back(job);
  }
  if (!to_rescue_.empty()) changed_.notify_all();
}

std::vector<std::vector<gapped::StepSpan>> GappedSearchEngine::step_spans() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return step_spans_;
}

double GappedSearchEngine::mapping_rescue_seconds() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  double sum = 0;
  for (const double s : rescue_seconds_) sum += s;
  return sum;
}

namespace {

// The last of `spares` moved into `into`, which stays as it is where there is none.
template <class T>
void take_spare(std::vector<T>& spares, T& into) {
  if (spares.empty()) return;
  into = std::move(spares.back());
  spares.pop_back();
}

}  // namespace

Status GappedSearchEngine::search(const ReadBatch& batch) {
  if (threads_.empty()) return invalid_argument("GappedSearchEngine::search before start()");
  auto job = std::make_shared<Job>();
  {  // a finished batch's codes and results: their memory serves this one's (the codes' two
     // allocations a read otherwise)
    const std::lock_guard<std::mutex> lock(mutex_);
    take_spare(spare_codes_, job->reads);
    take_spare(spare_, job->results);
  }
  gapped::GappedMapper::encode(batch.reads.data(), batch.reads.size(), job->reads);
  const std::lock_guard<std::mutex> lock(mutex_);
  in_flight_.push_back(job);
  queued_.push_back(std::move(job));
  changed_.notify_all();
  return {};
}

Status GappedSearchEngine::finish(ReadBatch& batch) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (in_flight_.empty()) return invalid_argument("GappedSearchEngine::finish of a batch not searched");
  const std::shared_ptr<Job> job = std::move(in_flight_.front());
  in_flight_.pop_front();
  changed_.wait(lock, [&] { return job->done || stopping_; });
  if (!job->done) return cancelled_status();
  WTMAP_TRY(job->status);
  batch.alignments.clear();
  batch.mates_rescued = job->rescued;
  std::swap(batch.gapped_alignments, job->results);
  spare_.push_back(std::move(job->results));  // what the batch held before: reused by a later search()
  spare_codes_.push_back(std::move(job->reads));
  return {};
}

Status GappedSearchEngine::rescue_mates(const std::vector<SeqRecord>& reads,
                                        std::vector<gapped::GappedReadAlignment>& alignments,
                                        const InsertSizeModel& model, std::int32_t unpaired) {
  if (!writer_mapper_) return invalid_argument("GappedSearchEngine::rescue_mates before start() or after release()");
  WTMAP_TRY(gpu_.enter());  // the caller's thread (the writer's) uses the mappers' GPU
  const Status status = writer_mapper_->rescue_mates(reads, alignments, model, unpaired);
  const std::lock_guard<std::mutex> lock(mutex_);
  append_step_spans(*writer_mapper_, step_spans_.back());
  return status;
}

std::size_t GappedSearchEngine::mapping_threads() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return mapper_seconds_.size();
}

gapped::GappedStageSeconds GappedSearchEngine::stage_seconds() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  gapped::GappedStageSeconds sum;
  for (const gapped::GappedStageSeconds& s : mapper_seconds_) sum += s;
  return sum;
}

void GappedSearchEngine::release() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queued_.clear();
    to_rescue_.clear();
    changed_.notify_all();
  }
  for (std::thread& t : threads_) t.join();  // each freed its mapper
  threads_.clear();
  const ScopedGpu here(gpu_.ordinal());  // the mappers' device memory, freed on their device
  mappers_.clear();  // those whose thread never started
  writer_mapper_.reset();
  in_flight_.clear();
}

void MismatchSearchEngine::release() {
  const ScopedGpu here(gpu_.ordinal());  // the aligner's device memory and streams, on their device
  aligner_.reset();
  pool_.release();
  in_flight_.clear();
}

std::vector<std::int64_t> InsertSizeSample::pair_sizes(const ReadBatch& batch) const {
  std::vector<std::int64_t> sizes(batch.size() / 2, 0);
  const bool gapped = !batch.gapped_alignments.empty();
  const std::size_t given = gapped ? batch.gapped_alignments.size() : batch.alignments.size();
  if (batch.size() % 2 != 0 || given != batch.size()) {
    return sizes;  // write_paired refuses such a batch
  }
  for (std::size_t p = 0; p < sizes.size(); ++p) {
    const std::size_t i = 2 * p;
    std::int64_t size = -1;
    if (gapped) {
      const gapped::GappedReadAlignment mates[2] = {batch.gapped_alignments[i], batch.gapped_alignments[i + 1]};
      size = sampled_insert_size(mates);
    } else {
      const ReadAlignment mates[2] = {batch.alignments[i], batch.alignments[i + 1]};
      const std::size_t lengths[2] = {batch.reads[i].sequence.size(), batch.reads[i + 1].sequence.size()};
      size = sampled_insert_size(mates, lengths, max_mismatches_);
    }
    sizes[p] = std::max<std::int64_t>(size, 0);
  }
  return sizes;
}

std::optional<InsertSizeModel> InsertSizeSample::offer(const ReadBatch& batch) {
  auto wanted = [&] { return !model_ && batch.number >= next_batch_ && waiting_.count(batch.number) == 0; };
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!wanted()) return std::nullopt;
  }
  std::vector<std::int64_t> sizes = pair_sizes(batch);  // off the lock: finish stages offer at once
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!wanted()) return std::nullopt;
  waiting_.emplace(batch.number, std::move(sizes));
  take_waiting_in_order();
  if (!sampled_enough()) return std::nullopt;
  model_ = estimate_insert_size(std::move(samples_));
  waiting_.clear();
  return model_;
}

void InsertSizeSample::take_waiting_in_order() {
  while (!sampled_enough() && !waiting_.empty() && waiting_.begin()->first == next_batch_) {
    for (const std::int64_t size : waiting_.begin()->second) {
      if (sampled_enough()) break;
      ++pairs_seen_;
      if (size > 0) samples_.push_back(size);
    }
    waiting_.erase(waiting_.begin());
    ++next_batch_;
  }
}

std::optional<InsertSizeModel> InsertSizeSample::settle_now() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (model_) return std::nullopt;
  model_ = estimate_insert_size(std::move(samples_));
  waiting_.clear();
  return model_;
}

std::optional<InsertSizeModel> InsertSizeSample::model() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return model_;
}

void PairedSamWriterSink::tell(const std::optional<InsertSizeModel>& settled) const {
  if (settled && settled->known && on_settled_) on_settled_(*settled);
}

void PairedSamWriterSink::batch_finished(const ReadBatch& batch) {
  if (!model_given_) tell(sample_.offer(batch));
}

Status PairedSamWriterSink::write(ReadBatch& batch) {
  if (!settled_) {
    tell(sample_.offer(batch));  // where no finish stage offered it
    const std::optional<InsertSizeModel> model = sample_.model();
    if (!model) {
      waiting_.push_back(std::move(batch));
      return {};
    }
    WTMAP_TRY(settle(*model));  // the batches before this one
  }
  return write_paired(batch);
}

Status PairedSamWriterSink::settle(const InsertSizeModel& model) {
  model_ = model;
  settled_ = true;
  for (ReadBatch& b : waiting_) WTMAP_TRY(write_paired(b));
  waiting_.clear();
  return {};
}

Status PairedSamWriterSink::finish() {
  if (!settled_) {
    tell(sample_.settle_now());
    WTMAP_TRY(settle(*sample_.model()));
  }
  return writer_.finish();
}

template <class Alignment, class Pair>
void PairedSamWriterSink::pair_all(std::vector<Alignment>& paired, Pair pair) {
  fields_.resize(paired.size());
  // Pairs are independent once the model is set: on all threads, as SamWriter formats.
  wtmap::detail::parallel_for_ranges(paired.size() / 2, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t p = begin; p < end; ++p) {
      const std::size_t i = 2 * p;
      Alignment mates[2] = {std::move(paired[i]), std::move(paired[i + 1])};
      MateFields fields[2];
      pair(mates, i, fields);
      for (int m = 0; m < 2; ++m) {
        paired[i + m] = std::move(mates[m]);
        fields_[i + m] = std::move(fields[m]);
      }
    }
  }, 1024);
  for (std::size_t i = 0; i < paired.size(); i += 2) totals_.add(fields_[i], fields_[i + 1]);
}

Status PairedSamWriterSink::write_paired(ReadBatch& batch) {
  const bool gapped = !batch.gapped_alignments.empty();
  const std::size_t given = gapped ? batch.gapped_alignments.size() : batch.alignments.size();
  if (batch.size() % 2 != 0 || given != batch.size()) {
    return invalid_argument("a batch of pairs holds " + std::to_string(batch.size()) + " reads");
  }
  if (gapped) {
    std::vector<gapped::GappedReadAlignment>& paired = batch.gapped_alignments;
    if (rescue_ && model_.known && !batch.mates_rescued) {
      WTMAP_TRY(rescue_clock_.time([&] { return rescue_(batch.reads, paired, model_); }));
    }
    pairing_clock_.time([&] {
      pair_all(paired, [&](gapped::GappedReadAlignment (&mates)[2], std::size_t, MateFields (&fields)[2]) {
        pair_gapped_mates(mates, model_, scoring_, fields);
      });
    });
    return writer_.write_pairs(batch.reads, paired, fields_);
  }
  std::vector<ReadAlignment>& paired = batch.alignments;
  pairing_clock_.time([&] {
    pair_all(paired, [&](ReadAlignment (&mates)[2], std::size_t i, MateFields (&fields)[2]) {
      const std::size_t lengths[2] = {batch.reads[i].sequence.size(), batch.reads[i + 1].sequence.size()};
      pair_mismatch_mates(mates, lengths, max_mismatches_, model_, scoring_, fields);
    });
  });
  return writer_.write_pairs(batch.reads, paired, fields_);
}

}  // namespace wtmap::aligner
