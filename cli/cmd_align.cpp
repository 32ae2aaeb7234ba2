// wtmap align: FASTQ/FASTA reads -> SAM/BAM, k-mismatch backward search on the GPU.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "cli.hpp"
#include "wtmap/aligner/align_pipeline.hpp"
#include "wtmap/aligner/align_stages.hpp"
#include "wtmap/aligner/batch_aligner.hpp"
#include "wtmap/aligner/sam_writer.hpp"
#include "wtmap/aligner/seq_reader.hpp"
#include "wtmap/fmindex/fm_index.hpp"
#include "wtmap/io/output_file.hpp"

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
    "  --batch INT       reads per batch, 1..10^7 [100000]; memory holds at most 15 batches (about\n"
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

// --batch's bound: 15 batches of 10^7 reads hold some 15 GB of host memory.
constexpr std::uint64_t kMostBatchReads = 10000000;

double percent(std::uint64_t part, std::uint64_t whole) { return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole); }

// The DNA index at `prefix`, with the search's k-mer table unless `io_only`.
Result<fmindex::FmIndex> load_dna_index(const std::string& prefix, Backend backend, bool io_only) {
  // Reads are DNA: a protein or byte index (wtmap index --alphabet) has nothing to align them to.
  auto alphabet = fmindex::read_index_alphabet(index_path(prefix));
  if (!alphabet.ok()) return alphabet.status();
  if (*alphabet != fmindex::Alphabet::dna) {
    return invalid_argument(index_path(prefix) + " is a " + fmindex::alphabet_name(*alphabet) +
                            " index; wtmap align needs a DNA index (wtmap count searches " +
                            fmindex::alphabet_name(*alphabet) + " indexes)");
  }
  auto index = fmindex::FmIndex::load(index_path(prefix), backend, kNoKmerTable);
  if (index.ok() && !io_only) index = with_search_table(std::move(index));
  return index;
}

// -v: each stage's busy seconds against the pipeline's wall time (the stage close to it is the
// limit); -v -v: and when each stage began and ended each batch.
void log_stage_times(const Log& log, const aligner::AlignPipeline& pipeline, const aligner::SeqReader& reader,
                     const aligner::SamWriter& writer, double start_seconds, unsigned verbosity) {
  const aligner::StageClocks& clocks = pipeline.clocks();
  if (verbosity >= 1) {
    const auto read = reader.times();
    const auto write = writer.times();
    log.info("stages, busy seconds of %.2f s: inflate %.2f; parse %.2f (+ %.2f waiting for inflate); search %.2f; "
             "finish %.2f; format and write %.2f (format %.2f, write %.2f, close %.2f)",
             log.seconds() - start_seconds, read.inflate, clocks.read.seconds() - read.waiting, read.waiting,
             clocks.search.seconds(), clocks.finish.seconds(), clocks.write.seconds(), write.format, write.write,
             write.close);
  }
  if (verbosity < 2) return;
  // Batch i is the i-th call of each stage, since batches pass the stages in order (the reader's
  // last call may find no reads, and the writer's last call is the close). Where a stage's
  // batches follow each other without a gap, that stage is the limit.
  const std::pair<const char*, const StageClock*> stages[] = {
      {"parse", &clocks.read}, {"search", &clocks.search}, {"finish", &clocks.finish}, {"write", &clocks.write}};
  const std::vector<std::size_t>& batch_reads = pipeline.totals().batch_reads;
  for (std::size_t b = 0; b < batch_reads.size(); ++b) {
    std::string line;
    for (const auto& [name, clock] : stages) {
      if (b >= clock->spans().size()) continue;  // --io-only: no search, no finish
      const StageClock::Span& span = clock->spans()[b];
      char part[96];
      std::snprintf(part, sizeof part, "%s%s %.3f-%.3f", line.empty() ? "" : ", ", name, log.seconds_at(span.begin),
                    log.seconds_at(span.end));
      line += part;
    }
    log.info("batch %zu (%zu reads): %s", b + 1, batch_reads[b], line.c_str());
  }
  const StageClock::Span& close = clocks.write.spans().back();
  log.info("output closed %.3f-%.3f", log.seconds_at(close.begin), log.seconds_at(close.end));
}

// The run's summary: reads, mapped, MAPQ > 0, speed, and the reads not fully searched.
void log_summary(const Log& log, const aligner::AlignTotals& totals) {
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
}


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
      if (!parse_count(argv[++i], batch_size) || batch_size == 0 || batch_size > kMostBatchReads) {
        return usage_error("align", "--batch needs an integer in 1.." + std::to_string(kMostBatchReads), kUsage);
      }
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

  // The output's place is checked before any work; the reads and the index are never overwritten.
  sam.inputs = {input, index_path(prefix)};
  if (sam.path != "-") {
    if (const Status place = io::check_output_path(sam.path, sam.inputs); !place.ok()) return fail("align", place);
  }
  const Log log("align");
  // Reading starts first, so that inflating the first batches overlaps with the CUDA start-up
  // and the index loads (a second or two for a large genome). The pipeline's destructor stops
  // and joins the reader on every way out of this function.
  auto reader = aligner::SeqReader::open(input, sam.threads);
  if (!reader.ok()) return fail("align", reader.status());
  aligner::SeqReaderSource source(*reader);
  aligner::PipelineOptions pipeline_options;
  pipeline_options.batch_size = batch_size;
  pipeline_options.max_mismatches = static_cast<unsigned>(k);
  pipeline_options.warming_threads = sam.threads >= 4 ? 2 : 0;  // where there are cores to spare
  std::uint64_t next_report = 1000000;
  pipeline_options.on_written = [&log, &next_report](const aligner::AlignTotals& totals) {
    if (totals.reads < next_report) return;
    log.info("%llu reads, %.0f reads/s", static_cast<unsigned long long>(totals.reads),
             static_cast<double>(totals.reads) / log.seconds());
    next_report += 1000000;
  };
  aligner::AlignPipeline pipeline(std::move(pipeline_options));
  pipeline.start_reading(source);
  auto backend = common.apply(log);
  if (!backend.ok()) return fail("align", backend.status());
  aligner::MismatchSearchEngine engine(batch_size, *backend, !io_only);
  auto index = load_dna_index(prefix, *backend, io_only);
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
  const double start_seconds = log.seconds();
  engine.start(*index, options);
  // Once the last batch is finished nothing uses the GPU or the indexes again, and the pipeline
  // then releases them on a thread of its own -- the aligner, the pinned batches, the index, then
  // the CUDA context -- while the writer formats and compresses the last batch. Left to the
  // process's exit, this teardown took some 0.17 s after the output was closed (H100 host;
  // bench/history/RESULTS-2026-11-26.md). Whatever happens after, the objects are empty and
  // their destructors touch no device.
  auto release_gpu_and_indexes = [&] {
    engine.release();
    { const fmindex::FmIndex gone = std::move(*index); }
    if (*backend == Backend::gpu) cudaDeviceReset();  // errors: nothing to do, the run is complete
  };
  struct Teardown {  // declared after what it releases: runs before their destructors
    aligner::AlignPipeline& pipeline;
    aligner::MismatchSearchEngine& engine;
    ~Teardown() {
      pipeline.wait_for_release();
      engine.release();  // before the index it searches
    }
  } teardown{pipeline, engine};
  aligner::SamWriterSink sink(*writer);
  const Status run = pipeline.run(io_only ? nullptr : &engine, sink, release_gpu_and_indexes);
  if (!run.ok()) return fail("align", run);  // the writer's destructor removes the partial file
  log_stage_times(log, pipeline, *reader, *writer, start_seconds, verbosity);
  log_summary(log, pipeline.totals());
  pipeline.wait_for_release();
  leave_finished_run();
}

}  // namespace wtmap::cli
