// wtmap aligner: a search engine that takes smaller batches when the device is short of memory.
//
// A batch whose search fails with device_out_of_memory (core's device_memory.hpp: a device
// allocation beyond the free memory or WTMAP_GPU_MEM_LIMIT) is searched again in parts of half
// its size, halved again while a part still does not fit, down to one read (one pair for paired
// input); the parts run in read order and their alignments are joined, so the output is the same
// bytes as the batch's own would have been (each read's alignment depends on the read alone). The
// part size found then holds for every later batch (no retry per batch), and the engine says so
// once, after the batch, through its report: the size that failed and the size it uses now. A
// single read (pair) that does not fit fails the run with a message saying so.
//
// The parts of a batch run one after another on the search thread, each searched and finished
// before the next, once every earlier batch has been finished (so a subclass sees its halves in
// order, never two at once), and with the device buffers of larger batches released first
// (release_device_memory). A batch that fits runs as the two halves of SearchEngine, unchanged,
// and so do the batches the reader reads once it knows the smaller size (most_reads_per_batch);
// only those it had read ahead are split.
// Space: the alignments of a batch split into parts, until finish() hands them over.
// Time: a failed try per halving (each fails at its first allocation); parts forgo the overlap of
// one batch's finish with the next one's search.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "wtmap/aligner/align_pipeline.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::aligner {

// The part size of a GPU short of memory, shared by SplittingSearchEngine and the gapped
// engine's mapping threads (align_stages.hpp): halving after a failure, down to one unit (a read,
// or a pair), and the one line that says so once the size got smaller. Safe to call from several
// threads. Space and time: O(1) a call.
class PartSize {
 public:
  // Reads that stay in one part (2: the mates of a pair), and where the line saying that the
  // parts got smaller goes (none: nowhere). Before the first batch.
  void configure(std::size_t unit, std::function<void(const std::string&)> report);

  // Reads per part: SIZE_MAX until the device was first short of memory.
  std::size_t get() const { return size_.load(); }
  // After `count` reads did not fit (`why`): the part size becomes half of count (whole units),
  // unless another thread halved it further already; a count of one unit fails with
  // device_out_of_memory, saying that a single read (pair) does not fit.
  Status halve(std::size_t count, const Status& why);
  // Once a batch split into parts is through, with the size its last parts took (a first part
  // may fit where a later one does not): the report line, if the size is smaller than the one
  // reported last.
  void report_if_smaller();

 private:
  std::size_t unit_ = 1;
  std::function<void(const std::string&)> report_;
  std::atomic<std::size_t> size_{std::numeric_limits<std::size_t>::max()};
  std::mutex mutex_;  // the rest
  std::size_t reported_size_ = std::numeric_limits<std::size_t>::max();
  std::size_t failed_size_ = 0;  // the first size that failed since the last report
};

class SplittingSearchEngine : public SearchEngine {
 public:
  // PartSize::configure: the unit of a part and the report. Before the first batch.
  void configure_splitting(std::size_t unit, std::function<void(const std::string&)> report) {
    part_size_.configure(unit, std::move(report));
  }

  Status search(const ReadBatch& batch) final;
  Status finish(ReadBatch& batch) final;
  void finish_stopped() final;

  // Reads per part: SIZE_MAX until the device was first short of memory. The reader then reads
  // batches of no more (most_reads_per_batch), so that later batches run whole, as two halves
  // that overlap with the next batch's, rather than in parts.
  std::size_t part_size() const { return part_size_.get(); }
  std::size_t most_reads_per_batch() const final { return part_size_.get(); }

 protected:
  // The two halves of SearchEngine for reads[0, count) of a batch: search_part may return before
  // its work is done; finish_part (on the finish thread, or on the search thread for parts) fills
  // out.alignments or out.gapped_alignments, one per read, for the oldest part searched and not
  // finished. A search_part that fails with device_out_of_memory leaves nothing to finish.
  virtual Status search_part(const SeqRecord* reads, std::size_t count) = 0;
  virtual Status finish_part(const SeqRecord* reads, std::size_t count, ReadBatch& out) = 0;
  // Frees the device buffers kept between batches (nothing is in flight when it is called).
  virtual Status release_device_memory() { return {}; }
  // The finish stage has stopped (SearchEngine::finish_stopped).
  virtual void on_finish_stopped() {}

 private:
  // A searched batch: finished by finish_part, or (split) its alignments already joined here.
  struct Searched {
    bool split = false;
    std::vector<ReadAlignment> alignments;
    std::vector<gapped::GappedReadAlignment> gapped_alignments;
  };
  Status search_in_parts(const ReadBatch& batch);
  // False if the finish stage stopped first.
  bool wait_for_earlier_batches();
  void push(Searched searched);

  PartSize part_size_;  // halved on the search thread, read by the reader too
  std::mutex mutex_;
  std::condition_variable finished_;
  std::deque<Searched> searched_;  // searched, not yet finished
  std::size_t unfinished_ = 0;     // those, and one that finish() is working on
  bool stopped_ = false;
};

}  // namespace wtmap::aligner
