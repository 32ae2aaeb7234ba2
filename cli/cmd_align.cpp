// wtmap align: FASTQ/FASTA reads -> SAM/BAM, k-mismatch backward search on the GPU.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "cli.hpp"
#include "wtmap/aligner/batch_reader.hpp"
#include "wtmap/aligner/bounded_queue.hpp"
#include "wtmap/aligner/batch_aligner.hpp"
#include "wtmap/aligner/sam_writer.hpp"
#include "wtmap/aligner/seq_reader.hpp"
#include "wtmap/fmindex/fm_index.hpp"

namespace wtmap::cli {
namespace {

// The index loads without a k-mer table, then takes the length the mismatch search wants
// (search_kmer_length), the same on either backend, so a read gets the same result on either (the
// CPU holds 13 of its levels and steps the rest; a GPU without room for the table takes a shorter
// k, which the log line after the load names).
constexpr std::uint32_t kNoKmerTable = 0;

Result<fmindex::FmIndex> with_search_table(Result<fmindex::FmIndex> index) {
  if (index.ok()) WTMAP_TRY(index->set_kmer_length(aligner::search_kmer_length(index->view().rows)));
  return index;
}

constexpr const char* kUsage =
    "Usage: wtmap align -x <prefix> [options] <reads.fq[.gz] | reads.fa[.gz] | ->\n"
    "\n"
    "Aligns single-end DNA reads with up to k mismatches (no gaps) on both strands, like\n"
    "`bwa aln -o 0 -n k` + `bwa samse`, and writes SAM (default, stdout) or BAM.\n"
    "Every alignment with at most k mismatches is found; the best are reported (ties broken\n"
    "by a hash of the read's bases), the next stratum counted (X1). An N in a read is a\n"
    "mismatch.\n"
    "\n"
    "Options:\n"
    "  -x STR            index prefix (reads STR.wtmap; a DNA index, not --alphabet protein|byte)\n"
    "  -o FILE           output file; .bam gives BAM, anything else SAM [stdout]\n"
    "  --output-fmt STR  SAM or BAM, overriding -o's extension\n"
    "  -l INT            BAM compression level, 0 (none) .. 9 (smallest) [1, the fastest, as\n"
    "                    STAR writes BAM; samtools writes 6]\n"
    "  -k INT            mismatches allowed, 0..4 [4]\n"
    "  -N INT            list the other hits in XA when best + second-best hits <= INT, 0..8 [3]\n"
    "  -R STR            read group line, e.g. '@RG\\tID:lane1\\tSM:sample'\n"
    "  -t INT            CPU threads for parsing, formatting and BAM compression [all cores]\n"
    "  --batch INT       reads per batch [100000]; memory holds at most 15 batches (about\n"
    "                    1 KB per read): 6 read ahead (while the index loads), 7 in the\n"
    "                    stages, 2 made ahead\n"
    "  --max-work INT    search nodes per read before giving up on a repetitive read [65536];\n"
    "                    reads past 1024 nodes (2048 for references of 537 Mbp and more)\n"
    "                    are searched again from the start by groups of 256 threads (a GPU\n"
    "                    block) that take 256 nodes a step\n"
    "  --device S        auto, gpu or cpu [auto]\n"
    "  --io-only         read and write only, every read unmapped: the I/O floor of a run\n"
    "  -v                at the end, print the busy seconds of each pipeline stage; twice\n"
    "                    (-v -v), also each batch's reads and when each stage began and\n"
    "                    ended it\n"
    "\n"
    "Reads shorter than 10 or longer than 512 bases, and reads the work cap stopped, are\n"
    "kept (unmapped, or MAPQ 0) and counted in the summary on stderr.\n"
    "\n"
    "Memory on the device (--device): the index (wtmap index --help) and a table of the SA\n"
    "intervals of all k-mers, 16 * 4^k bytes, for the smallest k with 4^k >= 8 * the reference\n"
    "length, at most 15: 1 GiB from about 2 Mbp of reference on, 4 GiB from 8.4 Mbp, 16 GiB\n"
    "from 34 Mbp. A GPU without room for it (half its free memory) takes a shorter k; then a\n"
    "read stopped by the work cap may differ from the CPU backend's. The CPU backend keeps 13\n"
    "levels of the table (1 GiB) and steps the rest.\n";

// Ends a run whose output is complete and closed without tearing it down: freeing some 4 * 10^6
// record strings, the index and the pinned buffers one by one, and the CUDA runtime's teardown,
// took about 0.2 s after the last record of a 1 s run on the GPU host; the operating system takes
// the process back at once (clang's -disable-free does the same). (The GPU's part is now released
// beside the last batch's writing, and what is left here is host memory.) Error paths return
// normally, so that the writer's destructor removes the partial output.
[[noreturn]] void leave_finished_run() {
  std::fflush(nullptr);
  std::_Exit(0);
}

// Reads and, once finished, their alignments. Batches go back to the reader when written, and
// their records are read into again (start_batch_reader): no allocation per read, and no fresh
// pages to fault in per batch. The first batches of a run are new; BatchWarmer makes them.
struct Batch {
  std::vector<aligner::SeqRecord> reads;
  std::unique_ptr<aligner::SearchedBatch> searched;  // between the search and the finish stage
  std::vector<aligner::ReadAlignment> alignments;
  std::size_t filled = 0;  // records of `reads` read into this time

  aligner::SeqRecord& next_record() {
    if (filled == reads.size()) reads.emplace_back();
    return reads[filled];
  }
  void keep_record() { ++filled; }
  void end_filling() { reads.resize(filled); }  // a recycled batch may have held more
  std::size_t size() const { return filled; }
};

// The bases per read that buffers made before any read was seen are sized for: reads up to
// 150 bp, as ART and Illumina write them.
constexpr std::size_t kFirstReadLength = 152;

// Makes new batches for the reader on threads of their own, each record's strings already
// allocated: a 10^6-read run fills 8 to 10 of its batches new (the reader runs ahead while the
// index loads, and batches come back only once written), and the 3 allocations per record and
// their fresh pages took the reader from 0.19-0.21 s per 10^6 reads into recycled batches to
// 0.37-0.39 s into new ones; into batches made beforehand, 0.12 s (build machine, bench/RESULTS.md).
// Making a batch of 10^5 reads takes some 25 ms, twice what the reader then needs to fill it, so
// two threads make them, where there are cores to spare (with fewer, the work would only move).
// It keeps up to two batches ready and stops once `most` batches were made, as many as the
// pipeline holds at once, counting those the reader made itself when none was ready, or at
// close(). So at most `most` + 2 batches ever exist: only while a thread here still makes one
// can the reader have to make one more.
class BatchWarmer {
 public:
  BatchWarmer(std::size_t batch_size, std::size_t most, unsigned threads) {
    for (unsigned t = 0; t < threads; ++t) {
      threads_.emplace_back([this, batch_size, most] {
        while (made_.fetch_add(1) < most) {
          if (!ready_.push(make(batch_size))) return;
        }
      });
    }
  }
  ~BatchWarmer() {
    close();
    for (std::thread& t : threads_) t.join();
  }
  BatchWarmer(const BatchWarmer&) = delete;
  BatchWarmer& operator=(const BatchWarmer&) = delete;

  // A new batch: a warm one if ready, else an empty one (the reader never waits for this thread).
  Batch take() {
    std::optional<Batch> batch = ready_.try_pop();
    if (batch) return std::move(*batch);
    made_.fetch_add(1);
    return Batch{};
  }
  // Called with each batch read: the longest name and sequence so far set the string capacities
  // of the next batches made.
  void saw(const Batch& batch) {
    std::size_t name = 0, sequence = 0;
    for (std::size_t r = 0; r < batch.filled; ++r) {
      name = std::max(name, batch.reads[r].name.size());
      sequence = std::max(sequence, batch.reads[r].sequence.size());
    }
    grow(longest_name_, name);
    grow(longest_sequence_, sequence);
  }
  void close() {
    stop_ = true;
    ready_.close();
  }

 private:
  // Until a batch has been read: names as long as ART's or Illumina's.
  static constexpr std::size_t kFirstName = 64;

  static void grow(std::atomic<std::size_t>& longest, std::size_t seen) {
    std::size_t old = longest.load();
    while (seen > old && !longest.compare_exchange_weak(old, seen)) {
    }
  }
  Batch make(std::size_t batch_size) const {
    const std::size_t seen_name = longest_name_.load(), seen_sequence = longest_sequence_.load();
    const std::size_t name = seen_sequence > 0 ? seen_name : kFirstName;
    const std::size_t sequence = seen_sequence > 0 ? seen_sequence : kFirstReadLength;
    Batch batch;
    batch.reads.resize(batch_size);
    for (aligner::SeqRecord& r : batch.reads) {
      if (stop_.load(std::memory_order_relaxed)) break;  // unused: the run is ending
      r.name.reserve(name);
      r.sequence.reserve(sequence);
      r.quality.reserve(sequence);
    }
    return batch;
  }

  std::atomic<std::size_t> longest_name_{0}, longest_sequence_{0}, made_{0};
  std::atomic<bool> stop_{false};
  aligner::BoundedQueue<Batch> ready_{2};
  std::vector<std::thread> threads_;
};

// The search stage's SearchedBatch buffers (some 250 bytes per read on a GPU index, 500 on a CPU
// one): at most three are in use at once (one searched, one waiting for the finish stage, one
// finished), and a finished one comes back through give_back(). With `warm_up` a thread of their
// own makes the three from the start of the run, their pages faulted in while the CUDA context
// and the index load, instead of the
// search stage over its first three batches (26 ms of the first batch's 88 ms on an H100 host,
// where that stage was the pipeline's limit; bench/RESULTS.md).
class SearchedBatchPool {
 public:
  SearchedBatchPool(std::size_t reads, Backend backend, bool warm_up) {
    if (!warm_up) return;
    thread_ = std::thread([this, reads, backend] {
      while (claimed_.fetch_add(1) < kBatches) {
        std::unique_ptr<aligner::SearchedBatch> batch;
        try {
          batch = std::make_unique<aligner::SearchedBatch>();
          batch->reserve(reads, reads * kFirstReadLength, backend);
        } catch (const std::bad_alloc&) {  // take() makes it when it is needed, or reports the lack
          batch.reset();
        }
        spare_.push(std::move(batch));
      }
    });
  }
  ~SearchedBatchPool() { release(); }
  SearchedBatchPool(const SearchedBatchPool&) = delete;
  SearchedBatchPool& operator=(const SearchedBatchPool&) = delete;

  // A spare one; waits only while the thread still makes one (the three made, none spare).
  std::unique_ptr<aligner::SearchedBatch> take() {
    std::optional<std::unique_ptr<aligner::SearchedBatch>> batch = spare_.try_pop();
    if (!batch && claimed_.fetch_add(1) >= kBatches) batch = spare_.pop();
    if (batch && *batch) return std::move(*batch);
    return std::make_unique<aligner::SearchedBatch>();
  }
  void give_back(std::unique_ptr<aligner::SearchedBatch> batch) { spare_.push(std::move(batch)); }  // never blocks
  // When the finish stage stops: take() then waits for nothing.
  void close() { spare_.close(); }
  // Closes and frees every batch (their pinned memory) now rather than at destruction.
  void release() {
    close();
    if (thread_.joinable()) thread_.join();
    while (spare_.try_pop()) {
    }
  }

 private:
  static constexpr std::size_t kBatches = 3;
  std::atomic<std::size_t> claimed_{0};
  aligner::BoundedQueue<std::unique_ptr<aligner::SearchedBatch>> spare_{kBatches};
  std::thread thread_;
};

struct Totals {
  std::uint64_t reads = 0, mapped = 0, unique = 0, capped = 0, too_short = 0, too_long = 0;
  std::vector<std::size_t> batch_reads;  // for -v -v
  void add(const Batch& b, unsigned k) {
    batch_reads.push_back(b.alignments.size());
    for (const auto& a : b.alignments) {
      ++reads;
      mapped += a.mapped;
      unique += a.mapped && aligner::mapping_quality(a, k) > 0;
      capped += aligner::search_cut_short(a.flags);
      too_short += (a.flags & aligner::kTooShort) != 0;
      too_long += (a.flags & aligner::kTooLong) != 0;
    }
  }
};

double percent(std::uint64_t part, std::uint64_t whole) { return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole); }

}  // namespace

int align_main(int argc, char** argv) {
  CommonOptions common;
  std::string prefix, input;
  aligner::SamOptions sam;
  aligner::AlignOptions options;
  std::uint64_t k = 4, alternatives = 3, batch_size = 100000, max_work = 1u << 16, level = 1;
  bool io_only = false;
  unsigned verbosity = 0;  // -v: busy seconds per stage; -v -v: and each batch's timeline
  for (int i = 1; i < argc; ++i) {
    if (i > 1) sam.command_line += ' ';
    sam.command_line += argv[i];
  }
  sam.command_line = "wtmap align " + sam.command_line;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "-x" && has_value) {
      prefix = argv[++i];
    } else if (a == "-o" && has_value) {
      sam.path = argv[++i];
    } else if (a == "--output-fmt" && has_value) {
      std::string f = argv[++i];
      for (char& c : f) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      sam.format = f;
    } else if (a == "-l" && has_value) {
      if (!parse_count(argv[++i], level) || level > 9) return usage_error("align", "-l needs an integer in 0..9", kUsage);
    } else if (a == "-k" && has_value) {
      if (!parse_count(argv[++i], k) || k > aligner::kMaxMismatches) return usage_error("align", "-k needs an integer in 0..4", kUsage);
    } else if (a == "-N" && has_value) {
      if (!parse_count(argv[++i], alternatives) || alternatives > aligner::kMaxAlternatives) {
        return usage_error("align", "-N needs an integer in 0.." + std::to_string(aligner::kMaxAlternatives), kUsage);
      }
    } else if (a == "-R" && has_value) {
      sam.read_group = argv[++i];
    } else if (a == "--batch" && has_value) {
      if (!parse_count(argv[++i], batch_size) || batch_size == 0) return usage_error("align", "--batch needs a positive integer", kUsage);
    } else if (a == "--max-work" && has_value) {
      if (!parse_count(argv[++i], max_work) || max_work == 0 || max_work > UINT32_MAX) {
        return usage_error("align", "--max-work needs a positive 32-bit integer", kUsage);
      }
    } else if (a == "--io-only") {
      io_only = true;
    } else if (a == "-v") {
      ++verbosity;
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      if (const int rc = handle_common_or_unknown(common, argc, argv, i, "align", kUsage); rc >= 0) return rc;
    } else if (input.empty()) {
      input = a;
    } else {
      return usage_error("align", "more than one read file given (paired-end is not supported)", kUsage);
    }
  }
  if (prefix.empty() || input.empty()) {
    std::fputs(kUsage, stderr);
    return 1;
  }
  sam.compression_level = static_cast<int>(level);
  options.search.max_mismatches = static_cast<std::uint8_t>(k);
  options.search.work_cap = static_cast<std::uint32_t>(max_work);
  options.max_alternatives = static_cast<unsigned>(alternatives);
  sam.max_mismatches = static_cast<unsigned>(k);
  sam.threads = common.threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : static_cast<unsigned>(common.threads);

  const Log log("align");
  // Reading starts first, so that inflating the first batches overlaps with the CUDA start-up
  // and the index loads (a second or two for a large genome). The guard stops and joins the
  // reader on every way out of this function.
  auto reader = aligner::SeqReader::open(input, sam.threads);
  if (!reader.ok()) return fail("align", reader.status());
  // Six batches read ahead: enough to keep the reader busy while a large index loads (1.5-2 s
  // for a 1 Gbp genome) without holding the whole input.
  aligner::BoundedQueue<Batch> to_align(6), to_write(2);
  // The most batches in the pipeline at once: those queues' 8 and 1 to_finish, and one in each of
  // the 4 stages; with the 2 that BatchWarmer may be making, the 15 of --help.
  constexpr std::size_t kMostBatches = 13;
  // Written batches, back to the reader; never full.
  aligner::BoundedQueue<Batch> spare_batches(kMostBatches);
  Status read_status;  // set by the reader thread
  StageClock read_clock, align_clock, finish_clock, write_clock;  // each touched by its own thread only
  BatchWarmer warmer(batch_size, kMostBatches, sam.threads >= 4 ? 2 : 0);
  std::thread read_thread = aligner::start_batch_reader<Batch>(*reader, batch_size, to_align, read_status, &read_clock, [&] {
    std::optional<Batch> spare = spare_batches.try_pop();
    if (!spare) return warmer.take();
    spare->filled = 0;
    return std::move(*spare);
  }, [&](const Batch& batch) { warmer.saw(batch); });
  struct JoinReader {
    aligner::BoundedQueue<Batch>& queue;
    std::thread& thread;
    BatchWarmer& warmer;
    ~JoinReader() {
      queue.close();
      warmer.close();
      if (thread.joinable()) thread.join();
    }
  } join_reader{to_align, read_thread, warmer};
  auto backend = common.apply(log);
  if (!backend.ok()) return fail("align", backend.status());
  SearchedBatchPool searched_pool(batch_size, *backend, !io_only);
  // Reads are DNA: a protein or byte index (wtmap index --alphabet) has nothing to align them to.
  auto alphabet = fmindex::read_index_alphabet(index_path(prefix));
  if (!alphabet.ok()) return fail("align", alphabet.status());
  if (*alphabet != fmindex::Alphabet::dna) {
    return fail("align", invalid_argument(index_path(prefix) + " is a " + fmindex::alphabet_name(*alphabet) +
                                          " index; wtmap align needs a DNA index (wtmap count searches " +
                                          fmindex::alphabet_name(*alphabet) + " indexes)"));
  }
  auto index = fmindex::FmIndex::load(index_path(prefix), *backend, kNoKmerTable);
  if (index.ok() && !io_only) index = with_search_table(std::move(index));
  if (!index.ok()) return fail("align", index.status());
  auto writer = aligner::SamWriter::open(sam, index->contigs());
  if (!writer.ok()) return fail("align", writer.status());
  log.info("index loaded on the %s (k-mer table of k = %u, %u levels held); aligning with up to %llu mismatches",
           backend_name(*backend), index->kmer_length(), index->kmer_levels(), static_cast<unsigned long long>(k));
  if (const std::uint32_t wanted = aligner::search_kmer_length(index->view().rows);
      !io_only && index->kmer_length() < wanted) {
    log.info("note: k = %u, not %u: the device has no room for the larger table; a read stopped by the work "
             "cap may differ from the CPU backend's", index->kmer_length(), wanted);
  }

  // reader thread -> search (this thread: the letters to the GPU, the launch of the search, of
  // the long reads' group search and of the hit choice and locate) -> finish thread (the GPU's
  // results, placement) -> writer thread. A batch's GPU search runs while the finish stage works
  // on the one before.
  aligner::BoundedQueue<Batch> to_finish(1);
  Status finish_status, write_status;  // set by the finish and writer threads
  Totals totals;
  const double start_seconds = log.seconds();
  std::optional<aligner::BatchAligner> batch_aligner;
  batch_aligner.emplace(*index, options);
  // Once the last batch is finished nothing uses the GPU or the indexes again, and a thread that
  // the finish stage starts then releases them -- the aligner, the pinned batches, the index,
  // then the CUDA context -- while the writer formats and compresses the last batch. Left to the
  // process's exit, this teardown took some 0.17 s after the output was closed on an H100 host,
  // 0.09 s of it the context's reset (bench/RESULTS.md). Only when the search stage has returned for good: no
  // other thread uses CUDA by then. Whatever happens after, the objects are empty and their
  // destructors touch no device.
  std::atomic<bool> searched_all{false};
  std::thread releasing;
  auto release_gpu_and_indexes = [&] {
    batch_aligner.reset();
    searched_pool.release();
    { const fmindex::FmIndex gone = std::move(*index); }
    if (*backend == Backend::gpu) cudaDeviceReset();  // errors: nothing to do, the run is complete
  };
  struct JoinReleasing {  // declared after what it releases: joined before their destructors run
    std::thread& thread;
    ~JoinReleasing() {
      if (thread.joinable()) thread.join();
    }
  } join_releasing{releasing};
  std::thread write_thread([&] {
    write_status = guarded([&]() -> Status {
      // While the first batch is searched; at most 2 * 10^5, so that a large --batch over a small
      // input makes no records it never uses.
      WTMAP_TRY(writer->reserve(std::min<std::size_t>(batch_size, 200000)));
      std::uint64_t next_report = 1000000;
      while (auto batch = to_write.pop()) {
        WTMAP_TRY(write_clock.time([&] { return writer->write(batch->reads, batch->alignments); }));
        totals.add(*batch, static_cast<unsigned>(k));
        if (totals.reads >= next_report) {
          log.info("%llu reads, %.0f reads/s", static_cast<unsigned long long>(totals.reads),
                   static_cast<double>(totals.reads) / log.seconds());
          next_report += 1000000;
        }
        spare_batches.push(std::move(*batch));
      }
      return {};
    });
    to_write.close();  // on a write error, stop the stages before it too
    to_finish.close();
  });
  std::thread finish_thread([&] {
    finish_status = guarded([&]() -> Status {
      while (auto batch = to_finish.pop()) {
        if (io_only) {
          batch->alignments.assign(batch->reads.size(), aligner::ReadAlignment{});
        } else {
          WTMAP_TRY(finish_clock.time([&] { return batch_aligner->finish(batch->reads, *batch->searched, batch->alignments); }));
          searched_pool.give_back(std::move(batch->searched));
        }
        if (!to_write.push(std::move(*batch))) return {};
      }
      return {};
    });
    to_finish.close();  // on an error, stop the search stage too
    searched_pool.close();
    to_write.close();
    if (finish_status.ok() && searched_all.load()) releasing = std::thread(release_gpu_and_indexes);
  });
  Status align_status = guarded([&]() -> Status {
    while (auto batch = to_align.pop()) {
      if (!io_only) {
        batch->searched = searched_pool.take();
        WTMAP_TRY(align_clock.time([&] { return batch_aligner->search(batch->reads, *batch->searched); }));
      }
      if (!to_finish.push(std::move(*batch))) return {};
    }
    searched_all = true;  // (set before to_finish closes: the finish thread reads it after)
    return {};
  });
  to_align.close();
  to_finish.close();
  read_thread.join();
  finish_thread.join();
  write_thread.join();
  for (const Status* s : {&read_status, &align_status, &finish_status, &write_status}) {
    if (!s->ok()) return fail("align", *s);  // the writer's destructor removes the partial file
  }
  const Status finished = write_clock.time([&] { return writer->finish(); });
  if (!finished.ok()) return fail("align", finished);
  if (verbosity >= 1) {
    // Busy time per stage against the pipeline's wall time: the stage close to it is the limit.
    const auto read = reader->times();
    const auto write = writer->times();
    log.info("stages, busy seconds of %.2f s: inflate %.2f; parse %.2f (+ %.2f waiting for inflate); search %.2f; "
             "finish %.2f; format and write %.2f (format %.2f, write %.2f, close %.2f)",
             log.seconds() - start_seconds, read.inflate, read_clock.seconds() - read.waiting, read.waiting,
             align_clock.seconds(), finish_clock.seconds(), write_clock.seconds(), write.format, write.write, write.close);
  }
  if (verbosity >= 2) {
    // Batch i is the i-th call of each stage, since batches pass the stages in order (the reader's
    // last call may find no reads, and the writer's last call is the close). Where a stage's
    // batches follow each other without a gap, that stage is the limit.
    const std::pair<const char*, const StageClock*> stages[] = {
        {"parse", &read_clock}, {"search", &align_clock}, {"finish", &finish_clock}, {"write", &write_clock}};
    for (std::size_t b = 0; b < totals.batch_reads.size(); ++b) {
      std::string line;
      for (const auto& [name, clock] : stages) {
        if (b >= clock->spans().size()) continue;  // --io-only: no search, no finish
        const StageClock::Span& span = clock->spans()[b];
        char part[96];
        std::snprintf(part, sizeof part, "%s%s %.3f-%.3f", line.empty() ? "" : ", ", name, log.seconds_at(span.begin),
                      log.seconds_at(span.end));
        line += part;
      }
      log.info("batch %zu (%zu reads): %s", b + 1, totals.batch_reads[b], line.c_str());
    }
    const StageClock::Span& close = write_clock.spans().back();
    log.info("output closed %.3f-%.3f", log.seconds_at(close.begin), log.seconds_at(close.end));
  }
  const double seconds = log.seconds();
  log.info("%llu reads; %llu mapped (%.2f%%), %llu with MAPQ > 0 (%.2f%%); %.1f s, %.0f reads/s",
           static_cast<unsigned long long>(totals.reads), static_cast<unsigned long long>(totals.mapped),
           percent(totals.mapped, totals.reads), static_cast<unsigned long long>(totals.unique),
           percent(totals.unique, totals.reads), seconds, seconds > 0 ? static_cast<double>(totals.reads) / seconds : 0.0);
  if (totals.capped + totals.too_short + totals.too_long > 0) {
    log.info("not fully searched: %llu stopped by the work cap (MAPQ 0), %llu shorter than %u, %llu longer than %u bases",
             static_cast<unsigned long long>(totals.capped), static_cast<unsigned long long>(totals.too_short),
             aligner::kMinReadLength, static_cast<unsigned long long>(totals.too_long), aligner::kMaxReadLength);
  }
  if (releasing.joinable()) releasing.join();
  leave_finished_run();
}

}  // namespace wtmap::cli
