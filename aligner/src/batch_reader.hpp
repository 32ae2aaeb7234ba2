// wtmap CLI (internal): the reader stage of a pipeline -- records parsed on a thread of their own
// into batches that a bounded queue hands to the next stage.
#pragma once

#include <cstddef>
#include <functional>
#include <thread>
#include <utility>

#include "bounded_queue.hpp"
#include "cli.hpp"
#include "wtmap/aligner/seq_reader.hpp"

namespace wtmap::cli {

// Starts a thread that reads every record into batches of `batch_size` (Batch has add(SeqRecord&&)
// and size()), pushes each full batch and the last partial one to `queue`, and closes it at the
// end, after a read error (left in `status`, with the file and record number) or when the
// consumer closed the queue first. `clock`, if given, adds up the time spent reading records.
// Every batch starts as new_batch() (which may carry what add() needs, such as the pattern code
// table of wtmap count).
template <class Batch>
std::thread start_batch_reader(aligner::SeqReader& reader, std::size_t batch_size, aligner::BoundedQueue<Batch>& queue,
                               Status& status, StageClock* clock = nullptr,
                               std::function<Batch()> new_batch = [] { return Batch{}; }) {
  return std::thread([&reader, batch_size, &queue, &status, clock, new_batch = std::move(new_batch)] {
    status = guarded([&]() -> Status {
      Batch batch = new_batch();
      aligner::SeqRecord record;
      while (true) {
        auto got = clock != nullptr ? clock->time([&] { return reader.next(record); }) : reader.next(record);
        if (!got.ok()) return got.status();
        if (*got) batch.add(std::move(record));
        if (batch.size() == batch_size || (!*got && batch.size() > 0)) {
          if (!queue.push(std::move(batch))) return {};
          batch = new_batch();
        }
        if (!*got) return {};
      }
    });
    queue.close();
  });
}

}  // namespace wtmap::cli
