// wtmap aligner: the reader stage of a pipeline -- records parsed into batches (fill_batch), on a
// thread of their own that a bounded queue hands them from (start_batch_reader, wtmap count).
#pragma once

#include <cstddef>
#include <functional>
#include <thread>
#include <utility>

#include "wtmap/aligner/bounded_queue.hpp"
#include "wtmap/aligner/seq_reader.hpp"
#include "wtmap/aligner/stage_clock.hpp"

namespace wtmap::aligner {

// Reads records into `batch` until it holds `batch_size` or the input ends; true while more may
// follow. A Batch has size(), next_record() -- a record to read into, which may still hold the
// strings of a record of a recycled batch, so that their memory is reused rather than allocated
// anew for every record -- keep_record(), which makes that record part of the batch, and
// end_filling(), called once the batch is full or the input ended.
template <class Batch>
Result<bool> fill_batch(SeqReader& reader, std::size_t batch_size, Batch& batch) {
  bool more = true;
  while (batch.size() < batch_size) {
    auto got = reader.next(batch.next_record());
    if (!got.ok()) return got.status();
    if (!*got) {
      more = false;
      break;
    }
    batch.keep_record();
  }
  batch.end_filling();
  return more;
}

// Starts a thread that reads every record into batches of `batch_size`, pushes each full batch
// and the last partial one to `queue`, and closes it at the end, after a read error (left in
// `status`, with the file and record number) or when the consumer closed the queue first.
// `clock`, if given, adds up the time spent filling batches (not the time waiting for the queue).
// Batches are filled by fill_batch. Every batch starts as new_batch(), which may hand back a
// batch a later stage is done with, or carry what keep_record() needs (the pattern code table of
// wtmap count). `filled`, if given, sees each batch once filled, before it is pushed.
template <class Batch>
std::thread start_batch_reader(SeqReader& reader, std::size_t batch_size, BoundedQueue<Batch>& queue,
                               Status& status, StageClock* clock = nullptr,
                               std::function<Batch()> new_batch = [] { return Batch{}; },
                               std::function<void(const Batch&)> filled = {}) {
  return std::thread([&reader, batch_size, &queue, &status, clock, new_batch = std::move(new_batch),
                      filled = std::move(filled)] {
    status = guarded([&]() -> Status {
      while (true) {
        Batch batch = new_batch();
        StageClock unused;
        bool more = true;
        WTMAP_TRY((clock != nullptr ? *clock : unused).time([&]() -> Status {
          auto filled_batch = fill_batch(reader, batch_size, batch);
          if (!filled_batch.ok()) return filled_batch.status();
          more = *filled_batch;
          return {};
        }));
        if (filled) filled(batch);
        if (batch.size() > 0 && !queue.push(std::move(batch))) return {};
        if (!more) return {};
      }
    });
    queue.close();
  });
}

}  // namespace wtmap::aligner
