// wtmap align: FASTQ/FASTA reads -> SAM/BAM/CRAM, gapped local alignment (bwa mem's) or the exhaustive
// k-mismatch backward search (-k), on the GPU or the CPU.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli.hpp"
#include "run_trace.hpp"
#include "stats_json.hpp"
#include "wtmap/aligner/align_pipeline.hpp"
#include "wtmap/aligner/align_stages.hpp"
#include "wtmap/aligner/batch_aligner.hpp"
#include "wtmap/aligner/gapped/gapped_mapper.hpp"
#include "wtmap/aligner/sam_writer.hpp"
#include "wtmap/aligner/seq_reader.hpp"
#include "wtmap/core/device_memory.hpp"
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
    "Usage: wtmap align -x <index> [options] <reads.fq[.gz] | reads.fa[.gz] | ->\n"
    "       wtmap align -x <index> [options] <r1.fq[.gz]> <r2.fq[.gz]>   (pairs)\n"
    "       wtmap align -x <index> [options] -p <interleaved.fq[.gz]>    (pairs)\n"
    "\n"
    "Aligns DNA reads on both strands, single or in pairs (in either mode), and writes SAM\n"
    "(default, stdout), BAM or CRAM, in input order or (--sort) coordinate-sorted and indexed.\n"
    "Two modes:\n"
    "  gapped (default)  local alignment with affine gaps, as `bwa mem` aligns (its scoring,\n"
    "                    options and defaults): SMEM seeds, chains, banded extension with\n"
    "                    z-drop; CIGAR with M/I/D/S, NM, MD, AS, XS, XA (alternative hits),\n"
    "                    SA and flag 0x800 for split (chimeric) reads; MAPQ 0..60 as bwa mem\n"
    "                    computes it. Reads of --min-seed..1000 bases.\n"
    "  -k INT            exhaustive k-mismatch search (no gaps), like `bwa aln -o 0 -n k` +\n"
    "                    `bwa samse`: every alignment with at most k mismatches is found;\n"
    "                    the best are reported (ties broken by a hash of the read's bases),\n"
    "                    the next stratum counted (X1). An N in a read is a mismatch. Reads\n"
    "                    of 10..512 bases.\n"
    "\n"
    "Options of both modes:\n"
    "  -x STR            a DNA index (not --alphabet protein|byte): its prefix (reads\n"
    "                    STR.wtmap), the .wtmap file, or the FASTA it was built from (ref.fa:\n"
    "                    ref.fa.wtmap, else ref.wtmap)\n"
    "  -o FILE           output file, - for stdout; .bam gives BAM, .cram CRAM, .sam.gz (any\n"
    "                    .gz) SAM in BGZF blocks (as samtools writes it), anything else SAM\n"
    "                    [stdout]\n"
    "  -O STR            sam, bam or cram, overriding -o's extension; --output-fmt STR is the\n"
    "                    same (-O INT[,INT] stays the gap open penalties)\n"
    "  --reference FILE  CRAM: the reference FASTA (uncompressed or bgzip-compressed) the\n"
    "                    records are encoded against; it must hold every contig of the index\n"
    "                    (same name and length). Its .fai (.gzi) is made beside it where\n"
    "                    missing, as samtools faidx makes it. The CRAM file names its path and\n"
    "                    MD5 (@SQ UR, M5): samtools view finds it there; keep it. Unsorted\n"
    "                    CRAM: htslib keeps each contig the records touch in memory, up to\n"
    "                    the whole reference [the FASTA -x names, or the one the index is\n"
    "                    named after (ref.fa.wtmap: ref.fa); else required: an index does\n"
    "                    not record its FASTA]\n"
    "  --sort            coordinate-sorted BAM or CRAM (@HD SO:coordinate; samtools sort's\n"
    "                    order: contig, position, forward before reverse strand, then input\n"
    "                    order; unmapped reads not placed at a mate last) and its index beside\n"
    "                    it: FILE.bam.bai, or FILE.bam.csi where a contig has 2^29 or more\n"
    "                    bases (BAI's limit); FILE.cram.crai. Needs BAM or CRAM to a file (-o\n"
    "                    FILE.bam or FILE.cram). The records are written when the last read\n"
    "                    is aligned\n"
    "  --sort-mem SIZE   --sort's memory for records, e.g. 2G or 500M (K, M, G: powers of\n"
    "                    1024; at least 1M); beyond it sorted runs go to temporary files\n"
    "                    beside the output (FILE.bam.tmp.* or FILE.cram.tmp.*, removed at\n"
    "                    the end, on errors and on interrupts) and are merged at the end [an\n"
    "                    eighth of the memory, or of the container's limit where lower]\n"
    "  -l INT            compression level, 0..9. BAM and .sam.gz: zlib's, 0 (none) .. 9\n"
    "                    (smallest) [1, the fastest, as STAR writes BAM; samtools writes 6];\n"
    "                    unsorted BAM at 1 is deflated by ISA-L (2.3x htslib's speed at level\n"
    "                    1, the file some 2 % larger).\n"
    "                    CRAM: htslib's CRAM level (samtools' -O cram,level=INT): 0 stores\n"
    "                    blocks uncompressed, 1 tries only the fastest codecs, higher levels\n"
    "                    more codecs and stronger settings [htslib's default, 5]\n"
    "  -R STR            read group line, e.g. '@RG\\tID:lane1\\tSM:sample'\n"
    "  -t INT            CPU threads for parsing, formatting and BAM/CRAM compression [all\n"
    "                    cores]\n"
    "  --batch INT       reads per batch, 1..10^7 [50000 in the gapped mode, 10000 there on\n"
    "                    the CPU, 100000 with -k]; memory holds at most 17 batches (about 1 KB\n"
    "                    per read): 6 read ahead (while the index loads), 9 in the stages, 2\n"
    "                    made ahead; in the gapped mode one more per mapping thread (5 on a\n"
    "                    GPU); 10 more per GPU beyond the first (20 in the gapped mode)\n"
    "  --device S        auto, gpu or cpu [auto]\n"
    "  --gpus S          all, N (the first N GPUs) or i,j,... (those device ordinals, as\n"
    "                    CUDA_VISIBLE_DEVICES leaves them): the GPUs to align on [all]. Each\n"
    "                    holds its own copy of the index and takes the next batch when it is\n"
    "                    free; batches are written in input order, so the output is the same\n"
    "                    bytes for any choice (and the CPU backend's, but for the k-mer table's\n"
    "                    note below). Pairs' mate rescue runs on the first\n"
    "  --progress FLOAT  a progress line (reads, reads/s and, reading files, the share of the\n"
    "                    input done and the time left) after the first batch written once\n"
    "                    FLOAT seconds have passed since the last [5]; 0: after every batch\n"
    "  -q, --quiet       no progress or information lines on stderr, errors only\n"
    "  --stats-json FILE the summary as one JSON object: reads, mapped, mapq_above_0,\n"
    "                    split_reads, too_short, too_long, stopped_by_work_cap, mapq_histogram\n"
    "                    (mapped reads' primary records by MAPQ, from 0), and pairs (null for\n"
    "                    single reads): pairs, properly_paired, both_mapped, singletons (one\n"
    "                    mate mapped), insert_size_model, proper_insert_size (mean, sd)\n"
    "  --version         print the version and exit\n"
    "  --io-only         read and write only, every read unmapped: the I/O floor of a run\n"
    "  -p                the one read file holds pairs, mate 1 then mate 2 (bwa mem -p)\n"
    "  -I FLOAT,FLOAT[,INT[,INT]]  pairs' insert size: mean, std, max, min [estimated from\n"
    "                    the first 10000 pairs of confident unique mates among the first 10^5\n"
    "                    pairs; max, min: mean +- 4 std]; none: no model, no pair proper\n"
    "                    (--stats-json's insert_size_model.option gives a run's model exactly)\n"
    "  -U INT            pairs: penalty of an unpaired pair against a proper one, 0..1000 [17]\n"
    "  -v                at the end, print the busy seconds of each pipeline stage (and of\n"
    "                    the gapped mapper's steps) and the GPU memory held; twice (-v -v),\n"
    "                    also when the start-up steps ended, each batch's reads and when each\n"
    "                    stage began and ended it. On several GPUs: search and finish summed\n"
    "                    over them, the memory of the GPU holding the most\n"
    "\n"
    "Gapped mode (bwa mem's names and defaults; INT,INT: deletions, insertions or 5', 3'):\n"
    "  -A INT            match score, 1..1000 [1]\n"
    "  -B INT            mismatch penalty, 0..1000 [4]; an N in the reference is one, an N\n"
    "                    in the read costs 1 (bwa mem's)\n"
    "  -O INT[,INT]      gap open penalties, 0..1000 [6,6] (-O sam|bam|cram: the output\n"
    "                    format)\n"
    "  -E INT[,INT]      gap extension penalties, 0..1000 [1,1]; a gap of k costs O + k*E\n"
    "  -L INT[,INT]      clipping penalties of the 5' and 3' ends, 0..1000 [5,5]\n"
    "  -w INT            band width, 0..1000 [100]\n"
    "  -d INT            z-drop, 0..1000000 [100]; 0 turns it off\n"
    "  -T INT            minimum score to output, 0..1000000 [30]\n"
    "  -c INT            a seed with more than INT occurrences is repetitive: only INT of\n"
    "                    them, evenly spread, are chained (as bwa mem does), 1..10^9 [500]\n"
    "  -D FLOAT          drop chains shorter than FLOAT of the longest overlapping one,\n"
    "                    0..1 [0.5]\n"
    "  -h INT            list up to INT alternative hits in XA (none if there are more),\n"
    "                    0..1000 [5] (-h without a number: this help)\n"
    "  -Y                soft-clip supplementary alignments (default: hard clips, as bwa mem)\n"
    "  --min-seed INT    minimum seed length, 1..1000 [19] (bwa mem's -k: wtmap keeps -k for\n"
    "                    the k-mismatch mode, so that existing command lines keep their meaning)\n"
    "\n"
    "k-mismatch mode (-k; --mismatches INT is the same option under a name that says what it\n"
    "counts, for scripts):\n"
    "  -k INT            mismatches allowed, 0..4; selects this mode\n"
    "  -N INT            list the other hits in XA when best + second-best hits <= INT, 0..8 [3]\n"
    "  --max-work INT    search nodes per read before giving up on a repetitive read [65536];\n"
    "                    reads past 1024 nodes (2048 for references of 537 Mbp and more)\n"
    "                    are searched again from the start by groups of 256 threads (a GPU\n"
    "                    block) that take 256 nodes a step\n"
    "  A mode's options are refused in the other mode.\n"
    "\n"
    "Reads outside a mode's lengths, and k-mismatch reads the work cap stopped, are kept\n"
    "(unmapped, or MAPQ 0) and counted in the summary on stderr.\n"
    "\n"
    "Pairs (mates named alike but for /1 and /2, which names lose), in either mode: each mate\n"
    "is aligned as a read, then the two are paired as bwa mem pairs them: a hit's score is its\n"
    "AS (k-mismatch mode: its length minus 5 per mismatch, bwa mem's -A 1 -B 4), a pair's the\n"
    "two scores plus log4 of the likelihood of its insert size, and a pair in FR orientation\n"
    "within the insert-size bounds is proper if it beats the two best hits unpaired minus -U;\n"
    "pairing raises the mates' MAPQ. The gapped mode also rescues mates as bwa mem does: where\n"
    "a hit of one mate (within -U of its best) has no proper mate, the other mate is aligned\n"
    "locally (Smith-Waterman, on the device) in the window the insert sizes allow; a find\n"
    "scoring at least --min-seed and -T joins that mate's hits.\n"
    "\n"
    "Memory on each GPU (--device, --gpus): the index (wtmap index --help); in the k-mismatch\n"
    "mode also a table of the SA intervals of all k-mers, 16 * 4^k bytes, for the smallest k with\n"
    "4^k >= 8 * the reference length, at most 15: 1 GiB from about 2 Mbp of reference on,\n"
    "4 GiB from 8.4 Mbp, 16 GiB from 34 Mbp. A GPU without room for it (half its free memory)\n"
    "takes a shorter k (on several GPUs, every GPU takes the smallest); then a read stopped by\n"
    "the work cap may differ from the CPU backend's.\n"
    "The CPU backend keeps 13 levels of the table (1 GiB) and steps the rest.\n"
    "Beyond the index, device memory grows with --batch. A GPU short of memory for a batch\n"
    "searches it in halves (down to one read or pair), with the same output, says so once on\n"
    "stderr and keeps the smaller batches.\n";

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

// --batch's bound: 17 batches of 10^7 reads hold some 17 GB of host memory (more in the gapped
// mode and with --gpus).
constexpr std::uint64_t kMostBatchReads = 10000000;

double percent(std::uint64_t part, std::uint64_t whole) { return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole); }

// The DNA index in `path`, with the k-mismatch search's k-mer table unless `without_table`.
Result<fmindex::FmIndex> load_dna_index(const std::string& path, Backend backend, bool without_table) {
  // Reads are DNA: a protein or byte index (wtmap index --alphabet) has nothing to align them to.
  auto alphabet = fmindex::read_index_alphabet(path);
  if (!alphabet.ok()) return alphabet.status();
  if (*alphabet != fmindex::Alphabet::dna) {
    return invalid_argument(path + " is a " + fmindex::alphabet_name(*alphabet) +
                            " index; wtmap align needs a DNA index (wtmap count searches " +
                            fmindex::alphabet_name(*alphabet) + " indexes)");
  }
  auto index = fmindex::FmIndex::load(path, backend, kNoKmerTable);
  if (index.ok() && !without_table) index = with_search_table(std::move(index));
  return index;
}

// When the run's start-up steps ended (log seconds): the backend chosen (CUDA's driver asked), the
// index copies loaded (the GPUs' contexts, the file, the uploads), the engines started.
struct StartTimes {
  double backend = 0, indexes = 0, engines = 0;
};

// The pipeline's stages by the names -v -v and WTMAP_TRACE give them, in a batch's order.
std::array<std::pair<const char*, const StageClock*>, 4> named_stages(const aligner::StageClocks& clocks) {
  return {{{"parse", &clocks.read}, {"search", &clocks.search}, {"finish", &clocks.finish}, {"write", &clocks.write}}};
}

// -v: each stage's busy seconds against the pipeline's wall time (the stage close to it is the
// limit); -v -v: and when the start-up steps ended, and when each stage began and ended each batch.
void log_stage_times(const Log& log, const aligner::AlignPipeline& pipeline, const aligner::SeqReader& reader,
                     const aligner::SamWriter& writer, double start_seconds, const StartTimes& started,
                     unsigned verbosity) {
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
  log.info("start: backend chosen by %.3f s, index loaded by %.3f s, engines started by %.3f s", started.backend,
           started.indexes, started.engines);
  // Batch i is the i-th call of each stage, since batches pass the stages in order (the reader's
  // last call may find no reads, and the writer's last call is the close). Where a stage's
  // batches follow each other without a gap, that stage is the limit.
  const auto stages = named_stages(clocks);
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

// A paired run's summary, the insert size as bwa mem prints it.
void log_pair_summary(const Log& log, const aligner::PairedSamWriterSink& sink) {
  const aligner::InsertSizeModel& m = sink.model();
  if (m.given && !m.known) {
    log.info("insert size: none given by -I; no pair is proper");
  } else if (m.given) {
    log.info("insert size (FR, given by -I): mean %.2f, std %.2f; proper pairs within [%lld, %lld]", m.mean, m.std,
             static_cast<long long>(m.low), static_cast<long long>(m.high));
  } else if (m.known) {
    log.info("insert size (FR, from %llu pairs): quartiles (%lld, %lld, %lld); mean %.2f, std %.2f; proper pairs "
             "within [%lld, %lld]", static_cast<unsigned long long>(m.pairs), static_cast<long long>(m.q25),
             static_cast<long long>(m.q50), static_cast<long long>(m.q75), m.mean, m.std,
             static_cast<long long>(m.low), static_cast<long long>(m.high));
  } else {
    log.info("insert size: not estimated, %llu confident pairs (fewer than %llu); no pair is proper (-I gives one)",
             static_cast<unsigned long long>(m.pairs), static_cast<unsigned long long>(aligner::kMinInsertPairs));
  }
  const aligner::PairTotals& t = sink.totals();
  log.info("%llu pairs; %llu properly paired (%.2f%%), %llu with both mates mapped (%llu on different contigs), "
           "%llu singletons; %llu mates with MAPQ > 0 after pairing (%.2f%%)", static_cast<unsigned long long>(t.pairs),
           static_cast<unsigned long long>(t.proper), percent(t.proper, t.pairs),
           static_cast<unsigned long long>(t.both_mapped), static_cast<unsigned long long>(t.different_contigs),
           static_cast<unsigned long long>(t.singletons), static_cast<unsigned long long>(t.mates_mapq_positive),
           percent(t.mates_mapq_positive, 2 * t.pairs));
}

// "12 s", "7 min", "2.5 h": a time left, as precise as an estimate deserves.
std::string rough_duration(double seconds) {
  char text[32];
  if (seconds < 120) {
    std::snprintf(text, sizeof text, "%.0f s", seconds);
  } else if (seconds < 7200) {
    std::snprintf(text, sizeof text, "%.0f min", seconds / 60);
  } else {
    std::snprintf(text, sizeof text, "%.1f h", seconds / 3600);
  }
  return text;
}

// Progress on long runs, called after each batch is written: a line once `every_seconds` have
// passed since the last, with the reads written and reads/s; where every input is a file of known
// size, also the share of the input done and the time left at the pace so far. The input's reads
// are counted from its size and the bytes its reads so far came from (compressed ones of a .gz),
// which holds however far reading runs ahead of writing.
struct ProgressLines {
  const Log& log;
  std::vector<const aligner::SeqReader*> readers;
  double every_seconds, next_seconds;

  void operator()(const aligner::AlignTotals& totals) {
    const double seconds = log.seconds();
    if (seconds < next_seconds) return;
    next_seconds = seconds + every_seconds;
    const double rate = seconds > 0 ? static_cast<double>(totals.reads) / seconds : 0.0;
    double expected_reads = 0;  // in the whole input
    bool known = rate > 0;
    for (const aligner::SeqReader* r : readers) {
      const aligner::SeqReader::InputProgress p = r->input_progress();
      known = known && r->input_size() > 0 && p.bytes > 0 && p.records > 0;
      if (known) expected_reads += static_cast<double>(p.records) * static_cast<double>(r->input_size()) / static_cast<double>(p.bytes);
    }
    const double done = static_cast<double>(totals.reads);
    if (!known) {
      log.info("%llu reads, %.0f reads/s", static_cast<unsigned long long>(totals.reads), rate);
      return;
    }
    expected_reads = std::max(expected_reads, done);
    log.info("%llu reads, %.0f reads/s; %.0f%% of the input, about %s left", static_cast<unsigned long long>(totals.reads),
             rate, 100 * done / expected_reads, rough_duration((expected_reads - done) / rate).c_str());
  }
};

// --sort: how the records were sorted and where the index went; -v: the sort's seconds.
void log_sort_summary(const Log& log, const aligner::CoordinateSorter::Stats& s, const std::string& index, unsigned verbosity) {
  if (s.runs_spilled == 0) {
    log.info("%llu records coordinate-sorted in memory; index %s", static_cast<unsigned long long>(s.records), index.c_str());
  } else {
    log.info("%llu records coordinate-sorted through %llu runs in temporary files (past --sort-mem), merged; index %s",
             static_cast<unsigned long long>(s.records), static_cast<unsigned long long>(s.runs_spilled), index.c_str());
  }
  if (verbosity >= 1) {
    log.info("sorting, seconds: runs sorted and spilled %.2f (a thread of their own, %llu merges of %zu runs), last run "
             "sorted and all merged into the output %.2f", s.spill_seconds, static_cast<unsigned long long>(s.run_merges),
             aligner::CoordinateSorter::kMostRuns, s.finish_seconds);
  }
}

// The run's summary: reads, mapped, MAPQ > 0, speed, and the reads not fully searched.
void log_summary(const Log& log, const aligner::AlignTotals& totals, const aligner::gapped::GappedOptions* gapped) {
  const double seconds = log.seconds();
  log.info("%llu reads; %llu mapped (%.2f%%), %llu with MAPQ > 0 (%.2f%%); %.1f s, %.0f reads/s",
           static_cast<unsigned long long>(totals.reads), static_cast<unsigned long long>(totals.mapped),
           percent(totals.mapped, totals.reads), static_cast<unsigned long long>(totals.unique),
           percent(totals.unique, totals.reads), seconds, seconds > 0 ? static_cast<double>(totals.reads) / seconds : 0.0);
  if (gapped) {
    log.info("%llu split reads (%.2f%%: supplementary alignments, flag 0x800)", static_cast<unsigned long long>(totals.split),
             percent(totals.split, totals.reads));
    if (totals.too_long + totals.too_short > 0) {
      log.info("not aligned: %llu shorter than --min-seed (%u), %llu longer than %u bases",
               static_cast<unsigned long long>(totals.too_short), gapped->min_seed_length,
               static_cast<unsigned long long>(totals.too_long), gapped->max_read_length);
    }
    return;
  }
  if (totals.capped + totals.too_short + totals.too_long > 0) {
    log.info("not fully searched: %llu stopped by the work cap (MAPQ 0), %llu shorter than %u, %llu longer than %u bases",
             static_cast<unsigned long long>(totals.capped), static_cast<unsigned long long>(totals.too_short),
             aligner::kMinReadLength, static_cast<unsigned long long>(totals.too_long), aligner::kMaxReadLength);
  }
}

// What `wtmap align`'s command line asks for.
struct AlignCommand {
  CommonOptions common;
  std::string prefix, input, second_input;  // second_input: mate 2's file
  std::string insert_size;                   // -I as given
  std::int32_t unpaired = 17;                // -U
  bool interleaved = false;                  // -p
  aligner::SamOptions sam;
  aligner::AlignOptions exhaustive;   // the k-mismatch mode's
  aligner::gapped::GappedOptions gapped;
  std::uint64_t mismatches = 4, alternatives = 3, batch_size = 0, max_work = 1u << 16, level = 1;
  bool level_given = false;  // -l; else CRAM takes htslib's default level, the rest `level`
  bool io_only = false;
  unsigned verbosity = 0;  // -v: busy seconds per stage; -v -v: and each batch's timeline
  double progress_seconds = 5;  // --progress: often enough that a run never looks stalled
  std::string stats_json;       // --stats-json FILE
  std::string trace;            // WTMAP_TRACE's file (run_trace.hpp), for developers
  bool sort_memory_given = false;  // --sort-mem (refused without --sort)
  // The first option given of each mode, for the clash messages: -k (or --mismatches), which
  // selects the k-mismatch mode; one that needs it (-N, --max-work); one of the gapped mode.
  std::string exhaustive_option, exhaustive_only_option, gapped_option;
  bool is_gapped() const { return exhaustive_option.empty(); }
  // --batch, or the mode's: the gapped mode's mappers run five batches at once, and halving them
  // took 14 % off a run end to end (fewer bytes of buffers made, a shorter last wave).
  std::uint64_t batch_reads() const { return batch_size != 0 ? batch_size : is_gapped() ? aligner::GappedSearchEngine::kDefaultBatchReads : 100000; }
  // The gapped mode's default on the CPU backend: the pipeline holds up to 17 batches, and on the
  // CPU, where no launch is to fill, large ones only cost pages (10^5 pairs, -t 2: peak memory
  // 0.33 GB against 0.90 GB, system time 0.3-0.5 s against 1.5-1.7 s, CPU time 13.2-16.0 s
  // against 17.1-17.3 s; the same records).
  static constexpr std::uint64_t kCpuGappedBatchReads = 10000;
  std::uint64_t batch_reads_on(Backend backend) const {
    return backend == Backend::cpu && batch_size == 0 && is_gapped() ? kCpuGappedBatchReads : batch_reads();
  }
  bool is_paired() const { return interleaved || !second_input.empty(); }
};

// Whether two output paths name one file: the same path once links and dot segments are
// resolved (an output not yet made has no inode to compare).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec_a, ec_b;
  const std::filesystem::path pa = std::filesystem::weakly_canonical(a, ec_a), pb = std::filesystem::weakly_canonical(b, ec_b);
  return ec_a || ec_b ? a == b : pa == pb;
}

// An integer option value in [low, high].
bool parse_int(const char* text, std::int64_t low, std::int64_t high, std::int32_t& value) {
  std::uint64_t v = 0;
  if (!parse_count(text, v) || static_cast<std::int64_t>(v) < low || static_cast<std::int64_t>(v) > high) return false;
  value = static_cast<std::int32_t>(v);
  return true;
}

// INT or INT,INT (bwa mem's -O, -E, -L): one value sets both.
bool parse_int_pair(const char* text, std::int64_t high, std::int32_t& first, std::int32_t& second) {
  const std::string t = text;
  const auto comma = t.find(',');
  if (comma == std::string::npos) return parse_int(text, 0, high, first) && parse_int(text, 0, high, second);
  return parse_int(t.substr(0, comma).c_str(), 0, high, first) && parse_int(t.substr(comma + 1).c_str(), 0, high, second);
}

// A number of seconds, 0 or more (and at most a year, so that it stays a count of seconds).
bool parse_seconds(const char* text, double& value) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !(v >= 0.0 && v <= 365.0 * 86400)) return false;
  value = v;
  return true;
}

bool parse_fraction(const char* text, float& value) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !(v >= 0.0 && v <= 1.0)) return false;
  value = static_cast<float>(v);
  return true;
}

// --sort-mem's least: runs of half a MiB already make some 2000 temporary files per 10^6 reads.
constexpr std::uint64_t kLeastSortMemory = std::uint64_t{1} << 20;

// A size in bytes: digits with K, M or G (either case: powers of 1024), as samtools sort -m.
bool parse_memory_size(const char* text, std::uint64_t& bytes) {
  std::string t = text;
  unsigned shift = 0;
  if (!t.empty()) {
    const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(t.back())));
    shift = unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0;
    if (shift != 0) t.pop_back();
  }
  std::uint64_t v = 0;
  if (!parse_count(t.c_str(), v) || v > (UINT64_MAX >> shift)) return false;
  bytes = v << shift;
  return true;
}

// A gapped-mode option `a` with its value: taken (yes), not one (no), or a bad value (the
// message in `error`). Bounds: scores and penalties up to 1000 keep a 1000-base read's scores
// far from overflowing 32 bits.
enum class Parsed { no, yes, bad };
Parsed parse_gapped_option(const std::string& a, const char* value, aligner::gapped::GappedOptions& g, std::string& error) {
  aligner::gapped::Scoring& s = g.scoring;
  struct Single {
    const char* name;
    std::int64_t low, high;
    std::int32_t* target;
  };
  const Single singles[] = {{"-A", 1, 1000, &s.match},          {"-B", 0, 1000, &s.mismatch},
                            {"-w", 0, 1000, &s.band},           {"-d", 0, 1000000, &s.zdrop},
                            {"-T", 0, 1000000, &g.min_output_score}};
  for (const Single& o : singles) {
    if (a != o.name) continue;
    error = a + " needs an integer in " + std::to_string(o.low) + ".." + std::to_string(o.high);
    return parse_int(value, o.low, o.high, *o.target) ? Parsed::yes : Parsed::bad;
  }
  struct Pair {
    const char* name;
    std::int32_t *first, *second;
  };
  const Pair pairs[] = {{"-O", &s.open_del, &s.open_ins}, {"-E", &s.extend_del, &s.extend_ins}, {"-L", &s.clip5, &s.clip3}};
  for (const Pair& o : pairs) {
    if (a != o.name) continue;
    error = a + " needs INT or INT,INT in 0..1000";
    return parse_int_pair(value, 1000, *o.first, *o.second) ? Parsed::yes : Parsed::bad;
  }
  struct Count {
    const char* name;
    std::int64_t low, high;
    std::uint32_t* target;
  };
  const Count counts[] = {{"-c", 1, 1000000000, &g.max_occurrences}, {"-h", 0, 1000, &g.max_xa_hits},
                          {"--min-seed", 1, 1000, &g.min_seed_length}};
  for (const Count& o : counts) {
    if (a != o.name) continue;
    error = a + " needs an integer in " + std::to_string(o.low) + ".." + std::to_string(o.high);
    std::int32_t v = 0;
    if (!parse_int(value, o.low, o.high, v)) return Parsed::bad;
    *o.target = static_cast<std::uint32_t>(v);
    return Parsed::yes;
  }
  if (a == "-D") {
    error = "-D needs a number in 0..1";
    return parse_fraction(value, g.drop_ratio) ? Parsed::yes : Parsed::bad;
  }
  return Parsed::no;
}

// Parses the command line into `c`; returns -1 to run, else the exit status.
int parse_align_command(int argc, char** argv, AlignCommand& c) {
  for (int i = 1; i < argc; ++i) {
    if (i > 1) c.sam.command_line += ' ';
    c.sam.command_line += argv[i];
  }
  c.sam.command_line = "wtmap align " + c.sam.command_line;
  bool operands_only = false;
  std::vector<int> operand_at;  // the read files' places in argv
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (take_operand(a, i, operands_only, operand_at)) continue;
    const bool has_value = i + 1 < argc;
    std::string error;
    // -h before a number is bwa mem's XA limit; alone (or before anything else) it asks for help.
    const bool xa_limit = a == "-h" && has_value && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9';
    // -O before a name (a letter first) is samtools' output format; else bwa mem's gap open
    // penalties, whose errors ("-O -1") stay theirs.
    const bool format_name = a == "-O" && has_value && std::isalpha(static_cast<unsigned char>(argv[i + 1][0]));
    if ((a != "-h" || xa_limit) && !format_name) {
      const Parsed p = has_value ? parse_gapped_option(a, argv[i + 1], c.gapped, error) : Parsed::no;
      if (p == Parsed::bad) return usage_error("align", error);
      if (p == Parsed::yes) {
        if (c.gapped_option.empty()) c.gapped_option = a;
        ++i;
        continue;
      }
    }
    if (a == "-x" && has_value) {
      c.prefix = argv[++i];
    } else if (a == "-o" && has_value) {
      c.sam.path = argv[++i];
    } else if ((a == "--output-fmt" || format_name) && has_value) {
      std::string f = argv[++i];
      for (char& ch : f) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      c.sam.format = f;
    } else if (a == "-l" && has_value) {
      if (!parse_count(argv[++i], c.level) || c.level > 9) return usage_error("align", "-l needs an integer in 0..9");
      c.level_given = true;
    } else if (a == "--reference" && has_value) {
      c.sam.reference = argv[++i];
    } else if ((a == "-k" || a == "--mismatches") && has_value) {
      if (!parse_count(argv[++i], c.mismatches) || c.mismatches > aligner::kMaxMismatches) {
        return usage_error("align", a + " needs an integer in 0..4");
      }
      c.exhaustive_option = a;
    } else if (a == "-N" && has_value) {
      if (!parse_count(argv[++i], c.alternatives) || c.alternatives > aligner::kMaxAlternatives) {
        return usage_error("align", "-N needs an integer in 0.." + std::to_string(aligner::kMaxAlternatives));
      }
      c.exhaustive_only_option = c.exhaustive_only_option.empty() ? a : c.exhaustive_only_option;
    } else if (a == "--max-work" && has_value) {
      if (!parse_count(argv[++i], c.max_work) || c.max_work == 0 || c.max_work > UINT32_MAX) {
        return usage_error("align", "--max-work needs a positive 32-bit integer");
      }
      c.exhaustive_only_option = c.exhaustive_only_option.empty() ? a : c.exhaustive_only_option;
    } else if (a == "-Y") {
      c.sam.soft_clip_supplementary = true;
      if (c.gapped_option.empty()) c.gapped_option = a;
    } else if (a == "-R" && has_value) {
      c.sam.read_group = argv[++i];
    } else if (a == "--batch" && has_value) {
      if (!parse_count(argv[++i], c.batch_size) || c.batch_size == 0 || c.batch_size > kMostBatchReads) {
        return usage_error("align", "--batch needs an integer in 1.." + std::to_string(kMostBatchReads));
      }
    } else if (a == "-p") {
      c.interleaved = true;
    } else if (a == "-I" && has_value) {
      c.insert_size = argv[++i];
    } else if (a == "-U" && has_value) {
      if (!parse_int(argv[++i], 0, 1000, c.unpaired)) return usage_error("align", "-U needs an integer in 0..1000");
    } else if (a == "--io-only") {
      c.io_only = true;
    } else if (a == "-v") {
      ++c.verbosity;
    } else if (a == "--sort") {
      c.sam.sort = true;
    } else if (a == "--sort-mem" && has_value) {
      if (!parse_memory_size(argv[++i], c.sam.sort_memory) || c.sam.sort_memory < kLeastSortMemory) {
        return usage_error("align", "--sort-mem needs a size of at least 1M, e.g. 500M or 2G");
      }
      c.sort_memory_given = true;
    } else if (a == "--stats-json" && has_value) {
      c.stats_json = argv[++i];
    } else if (a == "--progress" && has_value) {
      if (!parse_seconds(argv[++i], c.progress_seconds)) return usage_error("align", "--progress needs seconds, 0 or more");
    } else if (const int rc = handle_common_or_unknown(c.common, argc, argv, i, "align", kUsage); rc >= 0) {
      return rc;
    }
  }
  if (c.prefix.empty()) {
    if (const int rc = hint_bwa_order("align", argc, argv, operand_at); rc >= 0) return rc;
  }
  if (operand_at.size() > 2) return usage_error("align", "more than two read files given");
  if (!operand_at.empty()) c.input = argv[operand_at[0]];
  if (operand_at.size() == 2) c.second_input = argv[operand_at[1]];
  if (c.prefix.empty()) return usage_or_error(argc, "align", "no index given (-x INDEX)", kUsage);
  if (c.input.empty()) return usage_or_error(argc, "align", "no read file given", kUsage);
  if (c.interleaved && !c.second_input.empty()) return usage_error("align", "-p takes one read file, not two");
  if (c.common.quiet && c.verbosity > 0) return usage_error("align", "-q and -v ask for opposite things");
  if (c.sort_memory_given && !c.sam.sort) return usage_error("align", "--sort-mem sizes the memory of --sort, which is not given");
  // A mode's options in the other mode would be silently ignored: refused instead.
  if (!c.exhaustive_option.empty() && !c.gapped_option.empty()) {
    return usage_error("align", c.gapped_option + " is an option of the gapped mode; " + c.exhaustive_option +
                                    " selects the k-mismatch mode");
  }
  if (c.exhaustive_option.empty() && !c.exhaustive_only_option.empty()) {
    return usage_error("align", c.exhaustive_only_option + " is an option of the k-mismatch mode (-k INT); the gapped mode " +
                                    "lists alternative hits up to -h");
  }
  return -1;
}

// Before any work: the output's format, its place (the reads and the index are never
// overwritten) and --stats-json's, made now as a temporary. Returns -1 to go on, else the exit
// status.
int check_outputs(AlignCommand& c, const std::string& index_file, std::optional<io::OutputFile>& stats_file) {
  aligner::SamOptions& sam = c.sam;
  if (aligner::requested_format(sam) == "cram" && sam.reference.empty()) sam.reference = fasta_of_index(c.prefix, index_file);
  Result<aligner::SamFormat> format = aligner::sam_format(sam);
  if (!format.ok()) return usage_error("align", format.status().message());
  const bool cram = *format == aligner::SamFormat::cram;
  sam.compression_level = c.level_given || !cram ? static_cast<int>(c.level) : -1;
  sam.inputs = {c.input, index_file};
  if (!c.second_input.empty()) sam.inputs.push_back(c.second_input);
  if (cram) sam.inputs.push_back(sam.reference);
  if (sam.path != "-") {
    if (const Status place = io::check_output_path(sam.path, sam.inputs); !place.ok()) return fail("align", place);
  }
  // Before the index loads: a contig BAM cannot hold or a wrong CRAM reference is told in a
  // moment, not after minutes.
  if (*format == aligner::SamFormat::bam || cram) {
    Result<std::vector<fmindex::Contig>> contigs = fmindex::read_index_contigs(index_file);
    if (!contigs.ok()) return fail("align", contigs.status());
    if (const Status fits = aligner::check_contigs_fit(*format, *contigs); !fits.ok()) return fail("align", fits);
    if (cram) {
      if (const Status ready = aligner::prepare_cram_reference(sam.reference, *contigs); !ready.ok()) return fail("align", ready);
    }
  }
  if (c.stats_json.empty()) return -1;
  if (sam.path != "-" && same_file(sam.path, c.stats_json)) return usage_error("align", "--stats-json and -o name the same file");
  Result<io::OutputFile> created = io::OutputFile::create(c.stats_json, sam.inputs);
  if (!created.ok()) return fail("align", created.status());
  stats_file.emplace(std::move(*created));
  return -1;
}

// The reads: single, two files of mates, or one interleaved file (-p).
std::unique_ptr<aligner::ReadSource> make_read_source(aligner::SeqReader& reader, const std::string& path,
                                                      std::optional<aligner::SeqReader>& second,
                                                      const std::string& second_path, bool interleaved) {
  if (second) return std::make_unique<aligner::PairedReadSource>(reader, path, *second, second_path);
  if (interleaved) return std::make_unique<aligner::PairedReadSource>(reader, path);
  return std::make_unique<aligner::SeqReaderSource>(reader);
}

}  // namespace

// The line saying what was loaded and how the reads will be aligned.
void log_index_loaded(const Log& log, const AlignCommand& c, const fmindex::FmIndex& index, Backend backend) {
  if (c.is_gapped()) {
    const aligner::gapped::Scoring& s = c.gapped.scoring;
    log.info("index loaded on the %s; gapped alignment: -A %d -B %d -O %d,%d -E %d,%d -L %d,%d -w %d -d %d -T %d "
             "--min-seed %u",
             backend_name(backend), s.match, s.mismatch, s.open_del, s.open_ins, s.extend_del, s.extend_ins, s.clip5,
             s.clip3, s.band, s.zdrop, c.gapped.min_output_score, c.gapped.min_seed_length);
    return;
  }
  log.info("index loaded on the %s (k-mer table of k = %u, %u levels held); aligning with up to %llu mismatches",
           backend_name(backend), index.kmer_length(), index.kmer_levels(), static_cast<unsigned long long>(c.mismatches));
  if (const std::uint32_t wanted = aligner::search_kmer_length(index.view().rows); !c.io_only && index.kmer_length() < wanted) {
    log.info("note: k = %u, not %u: the device has no room for the larger table; a read stopped by the work "
             "cap may differ from the CPU backend's", index.kmer_length(), wanted);
  }
}

// GPU memory (device_memory.hpp's counts): held by the index and engine before the first batch,
// the peak while loading them, the peak of the batches.
// On several GPUs, the one that holds the most (the most any one needs).
struct DeviceMemoryUse {
  std::size_t before_batches, load_peak, batches_peak;
  std::size_t gpus;
};

// -v's lines after the stage times: GPU memory (on a GPU), the gapped
// mapper's steps (gapped mode: its engines, one per GPU), the write stage's rescue and pairing
// (pairs); those that do not apply are null or empty.
void log_engine_details(const Log& log, const DeviceMemoryUse* memory,
                        const std::vector<const aligner::GappedSearchEngine*>& gapped,
                        const aligner::PairedSamWriterSink* pairs) {
  if (memory != nullptr) {
    log.info("GPU memory held: %zu bytes before the first batch (%zu at the peak of loading), %zu at the peak of "
             "the batches%s", memory->before_batches, memory->load_peak, memory->batches_peak,
             memory->gpus > 1 ? ", on the GPU holding the most" : "");
  }
  if (!gapped.empty()) {
    aligner::gapped::GappedStageSeconds t;
    std::size_t threads = 0;
    for (const aligner::GappedSearchEngine* engine : gapped) {
      t += engine->stage_seconds();
      threads += engine->mapping_threads();
    }
    log.info("gapped mapping, seconds summed over %zu mapping threads: seeds %.2f, locate %.2f, chains %.2f, "
             "extension %.2f (device calls %.2f; %llu seeds in %llu rounds), region choice %.2f, CIGAR and tags "
             "%.2f (device calls %.2f)",
             threads, t.seed, t.locate, t.chain, t.extend,
             t.extend_dp, static_cast<unsigned long long>(t.seeds_extended),
             static_cast<unsigned long long>(t.extension_rounds), t.choose, t.cigar, t.cigar_dp);
  }
  if (pairs != nullptr) {
    double mapping_rescue = 0;
    for (const aligner::GappedSearchEngine* engine : gapped) mapping_rescue += engine->mapping_rescue_seconds();
    log.info("pairs: mate rescue on the mapping threads %.2f s (summed), busy seconds of the write stage: mate "
             "rescue %.2f, pairing %.2f", mapping_rescue, pairs->rescue_seconds(), pairs->pairing_seconds());
  }
}

// One GPU's part of a run (or the CPU's): its copy of the index and its engine of the mode, each
// made, started and released with that GPU current. Space: the index, and the engine's device
// buffers and pinned batches.
struct GpuLane {
  int gpu = -1;  // -1: the CPU
  std::unique_ptr<aligner::MismatchSearchEngine> mismatch;  // the k-mismatch mode's
  aligner::GappedSearchEngine gapped;
  std::optional<fmindex::FmIndex> index;
  aligner::SearchEngine* engine = nullptr;  // the started one; null for --io-only

  GpuLane() = default;
  GpuLane(const GpuLane&) = delete;
  GpuLane& operator=(const GpuLane&) = delete;
  ~GpuLane() { release(); }
  // The engines before the index they search; the GPU's resources with the GPU current.
  void release() {
    if (mismatch) mismatch->release();
    gapped.release();
    const ScopedGpu here(gpu);
    index.reset();
  }
};
using GpuLanes = std::vector<std::unique_ptr<GpuLane>>;

// A lane per GPU --gpus selected (one for --io-only, which searches nothing), or the CPU's
// (CommonOptions::lane_devices).
// The k-mismatch engine's pinned batches warm up while the index loads; the gapped mode needs
// neither them nor the k-mer table of the k-mismatch search. A GPU short of memory for a batch:
// smaller batches (pairs kept whole), said once on stderr.
GpuLanes make_lanes(const AlignCommand& c, Backend backend, const std::function<void(const std::string&)>& say) {
  std::vector<int> gpus = c.common.lane_devices(backend);
  if (c.io_only) gpus.resize(1);
  GpuLanes lanes;
  for (int gpu : gpus) {
    auto lane = std::make_unique<GpuLane>();
    lane->gpu = gpu;
    if (!c.is_gapped()) {
      lane->mismatch = std::make_unique<aligner::MismatchSearchEngine>(c.batch_reads(), backend, !c.io_only, gpu);
      lane->mismatch->configure_splitting(c.is_paired() ? 2 : 1, say);
    }
    lane->gapped.bind_to_gpu(gpu);
    lane->gapped.configure_splitting(c.is_paired() ? 2 : 1, say);
    lanes.push_back(std::move(lane));
  }
  return lanes;
}

// The index loaded on every lane's GPU at once, each on a thread bound to it. The k-mismatch
// search's k-mer tables then all take the smallest k any GPU had room for, so that a read the
// work cap stops gets the same answer on every GPU.
Status load_indexes(GpuLanes& lanes, const std::string& path, Backend backend, bool without_table) {
  std::vector<Status> loaded(lanes.size());
  std::vector<std::thread> loaders;
  for (std::size_t k = 0; k < lanes.size(); ++k) {
    loaders.emplace_back([&, k] {
      loaded[k] = guarded([&]() -> Status {
        WTMAP_TRY(use_gpu(lanes[k]->gpu));
        auto index = load_dna_index(path, backend, without_table);
        if (!index.ok()) return index.status();
        lanes[k]->index.emplace(std::move(*index));
        return {};
      });
    });
  }
  for (std::thread& t : loaders) t.join();
  for (std::size_t k = 0; k < lanes.size(); ++k) {
    if (!loaded[k].ok()) return lanes[k]->gpu < 0 ? loaded[k] : Status{loaded[k].code(), "GPU " + std::to_string(lanes[k]->gpu) + ": " + loaded[k].message()};
  }
  if (without_table) return {};
  for (;;) {  // k only goes down: at most a few rounds
    std::uint32_t least = lanes[0]->index->kmer_length();
    for (const auto& lane : lanes) least = std::min(least, lane->index->kmer_length());
    bool equal = true;
    for (const auto& lane : lanes) {
      if (lane->index->kmer_length() == least) continue;
      equal = false;
      const ScopedGpu here(lane->gpu);
      WTMAP_TRY(here.status());
      WTMAP_TRY(lane->index->set_kmer_length(least));
    }
    if (equal) return {};
  }
}

// WTMAP_TRACE's tracks: each pipeline stage's batches (the writer's last span its close), then each
// gapped mapping thread's steps, lane by lane, and the writer stage's rescue where it rescued.
std::vector<TraceTrack> trace_tracks(const aligner::StageClocks& clocks, const GpuLanes& lanes) {
  std::vector<TraceTrack> tracks;
  for (const auto& [name, clock] : named_stages(clocks)) {
    TraceTrack& track = tracks.emplace_back();
    track.name = name;
    for (const StageClock::Span& span : clock->spans()) {
      track.spans.push_back({"batch " + std::to_string(track.spans.size() + 1), span.begin, span.end});
    }
  }
  if (!tracks.back().spans.empty()) tracks.back().spans.back().name = "close";
  for (const auto& lane : lanes) {
    const std::string where = lane->gpu < 0 ? std::string("CPU") : "GPU " + std::to_string(lane->gpu);
    const std::vector<std::vector<aligner::gapped::StepSpan>> threads = lane->gapped.step_spans();
    for (std::size_t k = 0; k < threads.size(); ++k) {
      const bool writer = k + 1 == threads.size();
      if (writer && threads[k].empty()) continue;
      TraceTrack& track = tracks.emplace_back();
      track.name = where + (writer ? " writer's rescue" : " mapping thread " + std::to_string(k + 1));
      for (const aligner::gapped::StepSpan& span : threads[k]) track.spans.push_back({span.step, span.begin, span.end});
    }
  }
  return tracks;
}

// Mapping threads of a gapped engine: on a GPU the most (each one's host steps overlap the
// others' device calls); on the CPU backend no more than -t, as each maps on the shared pool of
// -t threads anyway: with -t 2, two mappers held 0.87 GB at the peak against 1.25 GB for five, in
// the same time (10^5 E. coli pairs, 2 cores). Output does not depend on it.
unsigned mapping_threads(const AlignCommand& c, Backend backend) {
  constexpr unsigned kMost = aligner::GappedSearchEngine::kMostMappers;
  return backend == Backend::gpu ? kMost : std::clamp(c.sam.threads, 1u, kMost);
}

// Each lane's engine of the mode started on its copy of the index, with its GPU current; the
// gapped mappers of every GPU share the first lane's copy of the reference. Not for --io-only.
Status start_engines(GpuLanes& lanes, const AlignCommand& c, Backend backend) {
  for (const auto& lane : lanes) {
    const ScopedGpu here(lane->gpu);
    WTMAP_TRY(here.status());
    if (c.is_gapped()) {
      if (!c.trace.empty()) lane->gapped.keep_step_spans();
      WTMAP_TRY(lane->gapped.start(*lane->index, c.gapped, mapping_threads(c, backend),
                                   lane == lanes.front() ? nullptr : &lanes.front()->gapped));
      lane->engine = &lane->gapped;
    } else {
      lane->mismatch->start(*lane->index, c.exhaustive);
      lane->engine = lane->mismatch.get();
    }
  }
  return {};
}

namespace {

// Every batch allocates and frees the same buffers of up to some MB on each mapping thread. By
// default glibc serves blocks from 128 KiB (its threshold then adapts upward) with fresh mmaps
// and returns them at free: each batch then faults in and zeroes its pages again, the threads
// contending for the address space's lock (perf on the H100 host: osq_lock and clear_page among
// the top kernel symbols). Blocks under 32 MiB from the heaps, kept when freed up to 1 GiB at a
// heap's top, took the gapped single-end E. coli run from 2.13 s to 2.03 s (medians of 3
// alternated runs, H100 host, GLIBC_TUNABLES). Settings the user gave in GLIBC_TUNABLES stand.
// Built with jemalloc (WTMAP_JEMALLOC, the default) glibc's malloc serves nothing: no settings.
void keep_batch_memory_for_reuse() {
#if defined(__GLIBC__) && !defined(WTMAP_WITH_JEMALLOC)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace

int align_main(int argc, char** argv) {
  AlignCommand c;
  if (const int rc = parse_align_command(argc, argv, c); rc >= 0) return rc;
  if (const char* trace = std::getenv(kTraceVariable)) c.trace = trace;
  keep_batch_memory_for_reuse();
  aligner::SamOptions& sam = c.sam;
  const bool gapped = c.is_gapped();
  c.exhaustive.search.max_mismatches = static_cast<std::uint8_t>(c.mismatches);
  c.exhaustive.search.work_cap = static_cast<std::uint32_t>(c.max_work);
  c.exhaustive.max_alternatives = static_cast<unsigned>(c.alternatives);
  sam.max_mismatches = static_cast<unsigned>(c.mismatches);
  sam.threads = c.common.threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : static_cast<unsigned>(c.common.threads);
  aligner::InsertSizeModel insert_size;
  if (!c.insert_size.empty()) {
    auto given = aligner::parse_insert_size(c.insert_size);
    if (!given.ok()) return usage_error("align", given.status().message());
    insert_size = *given;
  }

  Result<std::string> index_file = resolve_index(c.prefix);
  if (!index_file.ok()) return fail("align", index_file.status());
  std::optional<io::OutputFile> stats_file;
  if (const int rc = check_outputs(c, *index_file, stats_file); rc >= 0) return rc;
  const Log log("align", c.common.quiet);
  // Reading starts first, so that inflating the first batches overlaps with the CUDA start-up
  // and the index loads (a second or two for a large genome). The pipeline's destructor stops
  // and joins the reader on every way out of this function.
  auto reader = aligner::SeqReader::open(c.input, sam.threads);
  if (!reader.ok()) return fail("align", reader.status());
  std::optional<aligner::SeqReader> second_reader;
  if (!c.second_input.empty()) {
    auto opened = aligner::SeqReader::open(c.second_input, sam.threads);
    if (!opened.ok()) return fail("align", opened.status());
    second_reader.emplace(std::move(*opened));
  }
  std::unique_ptr<aligner::ReadSource> source = make_read_source(*reader, c.input, second_reader, c.second_input, c.interleaved);
  aligner::PipelineOptions pipeline_options;
  // --device cpu: the CPU's batch size from the first batch; auto: once the backend is known.
  pipeline_options.batch_size = c.common.device == "cpu" ? c.batch_reads_on(Backend::cpu) : c.batch_reads();
  // WTMAP_FIRST_BATCH=N, for developers timing a run's start: batches from N reads up
  // (PipelineOptions::first_batch_size). The records do not depend on it.
  std::uint64_t first_batch = 0;
  if (parse_count(std::getenv("WTMAP_FIRST_BATCH"), first_batch)) pipeline_options.first_batch_size = first_batch;
  pipeline_options.max_mismatches = static_cast<unsigned>(c.mismatches);
  pipeline_options.warming_threads = sam.threads >= 4 ? 2 : 0;  // where there are cores to spare
  ProgressLines progress{log, {&*reader}, c.progress_seconds, c.progress_seconds};
  if (second_reader) progress.readers.push_back(&*second_reader);
  pipeline_options.on_written = std::ref(progress);
  aligner::AlignPipeline pipeline(std::move(pipeline_options));
  pipeline.start_reading(*source);
  StartTimes started;
  auto backend = c.common.apply(log);
  if (!backend.ok()) return fail("align", backend.status());
  started.backend = log.seconds();
  pipeline.limit_batch_size(c.batch_reads_on(*backend));
  auto say = [&log](const std::string& line) { log.info("%s", line.c_str()); };
  GpuLanes lanes = make_lanes(c, *backend, say);
  if (const Status loaded = load_indexes(lanes, *index_file, *backend, c.io_only || gapped); !loaded.ok()) {
    return fail("align", loaded);
  }
  started.indexes = log.seconds();
  const fmindex::FmIndex& index = *lanes.front()->index;
  auto writer = aligner::SamWriter::open(sam, index.contigs());
  if (!writer.ok()) return fail("align", writer.status());
  writer->set_sort_note(say);
  log_index_loaded(log, c, index, *backend);
  if (*backend == Backend::gpu && !c.io_only) {
    log.info("on %s: one index copy each, batches to whichever is free", c.common.gpus_used().c_str());
  }

  // reader thread -> search (a thread per GPU, this one the first's: the letters to the GPU, the
  // launch of the search, of the long reads' group search and of the hit choice and locate; or
  // the gapped mapping of the batch) -> finish (a thread per GPU: the GPU's results, placement)
  // -> writer thread, in input order. A batch's search runs while the finish stage works on the
  // one before.
  const double start_seconds = log.seconds();
  if (!c.io_only) {
    if (const Status engines = start_engines(lanes, c, *backend); !engines.ok()) return fail("align", engines);
  }
  started.engines = log.seconds();
  std::vector<aligner::SearchEngine*> engines;
  for (const auto& lane : lanes) engines.push_back(lane->engine);
  aligner::GappedSearchEngine* const gapped_engine = !c.io_only && gapped ? &lanes.front()->gapped : nullptr;
  // Once the last batch is finished nothing uses the GPUs or the indexes again, and the pipeline
  // then releases them on a thread of its own -- the engines, the pinned batches, the indexes,
  // then the CUDA contexts -- while the writer formats and compresses the last batch. Left to the
  // process's exit, this teardown took some 0.17 s after the output was closed (H100 host;
  // bench/history/RESULTS-2026-11-26.md). Whatever happens after, the objects are empty and
  // their destructors touch no device.
  // -v -v: when the release began, when the engines and indexes were freed, when the contexts were.
  double release_times[3] = {-1, -1, -1};
  auto release_gpu_and_indexes = [&] {
    release_times[0] = log.seconds();
    // Bound to the first GPU, as the caller's thread is: ScopedGpu restores a device whose
    // context exists (binding a thread to a device starts its context).
    if (!use_gpu(lanes.front()->gpu).ok()) return;
    for (const auto& lane : lanes) lane->release();
    release_times[1] = log.seconds();
    for (const auto& lane : lanes) {  // no device made current again after its reset
      if (lane->gpu >= 0 && use_gpu(lane->gpu).ok()) cudaDeviceReset();  // errors: nothing to do, the run is complete
    }
    release_times[2] = log.seconds();
  };
  struct Teardown {  // declared after what it releases: runs before their destructors
    aligner::AlignPipeline& pipeline;
    GpuLanes& lanes;
    ~Teardown() {
      pipeline.wait_for_release();
      for (const auto& lane : lanes) lane->release();  // the engines before the indexes they search
    }
  } teardown{pipeline, lanes};
  // -v: what the index and the engine hold, what loading them took at most, and the batches' peak.
  DeviceMemoryUse device_memory{device_memory_held_on_busiest(), device_memory_peak_on_busiest(), 0, lanes.size()};
  reset_device_memory_peak();
  aligner::SamWriterSink single_sink(*writer);
  std::optional<aligner::PairedSamWriterSink> pair_sink;
  if (c.is_paired()) {
    aligner::PairScoring pair_scoring;
    pair_scoring.unpaired = c.unpaired;
    if (gapped) {
      pair_scoring = aligner::gapped_pair_scoring(c.gapped.scoring, c.unpaired);
      pair_scoring.xa_drop_ratio = c.gapped.xa_drop_ratio;
      pair_scoring.max_xa_hits = c.gapped.max_xa_hits;
    }
    pair_sink.emplace(*writer, static_cast<unsigned>(c.mismatches), insert_size, pair_scoring);
    if (gapped_engine != nullptr) {  // on the first GPU (the writer's thread binds itself to it)
      pair_sink->set_rescue([gapped_engine, unpaired = c.unpaired](const std::vector<aligner::SeqRecord>& reads,
                                                                  std::vector<aligner::gapped::GappedReadAlignment>& alignments,
                                                                  const aligner::InsertSizeModel& model) {
        return gapped_engine->rescue_mates(reads, alignments, model, unpaired);
      });
      // Once the model is settled, every lane's mapping threads rescue the batches they map.
      pair_sink->set_on_settled([&lanes, unpaired = c.unpaired](const aligner::InsertSizeModel& model) {
        for (const auto& lane : lanes) lane->gapped.rescue_on_mapping_threads(model, unpaired);
      });
    }
  }
  aligner::AlignmentSink& sink = pair_sink ? static_cast<aligner::AlignmentSink&>(*pair_sink) : single_sink;
  // Gapped pairs may be rescued on the writer's thread (the batches mapped before the model was
  // settled), with the engine's mappers, until the last is written.
  const bool rescuing = c.is_paired() && gapped_engine != nullptr;
  const Status run = pipeline.run(engines, sink, rescuing ? std::function<void()>{} : std::function<void()>{release_gpu_and_indexes});
  if (!run.ok()) return fail("align", run);  // the writer's destructor removes the partial file
  device_memory.batches_peak = device_memory_peak_on_busiest();
  log_stage_times(log, pipeline, *reader, *writer, start_seconds, started, c.verbosity);
  if (c.verbosity >= 1) {
    std::vector<const aligner::GappedSearchEngine*> gapped_engines;
    for (const auto& lane : lanes) {
      if (gapped_engine != nullptr) gapped_engines.push_back(&lane->gapped);
    }
    log_engine_details(log, *backend == Backend::gpu ? &device_memory : nullptr, gapped_engines,
                       pair_sink ? &*pair_sink : nullptr);
  }
  aligner::AlignTotals totals = pipeline.totals();
  if (pair_sink) {  // the mates as written: after rescue and pairing
    const aligner::PairTotals& t = pair_sink->totals();
    totals.mapped = 2 * t.both_mapped + t.singletons;
    totals.unique = t.mates_mapq_positive;
  }
  log_summary(log, totals, gapped && !c.io_only ? &c.gapped : nullptr);
  if (pair_sink) log_pair_summary(log, *pair_sink);
  if (const auto sorted = writer->sort_stats()) log_sort_summary(log, *sorted, writer->index_path(), c.verbosity);
  if (!c.trace.empty()) {  // a diagnostic: the run's output stands without it
    if (const Status traced = write_trace(c.trace, trace_tracks(pipeline.clocks(), lanes), log.start()); !traced.ok()) {
      std::fprintf(stderr, "[wtmap align] warning: no trace written (%s)\n", traced.message().c_str());
    }
  }
  if (stats_file) {
    RunStats stats{c.io_only ? "io-only" : gapped ? "gapped" : "k-mismatch", log.seconds(), totals, &writer->counts(),
                   pair_sink ? &pair_sink->totals() : nullptr, pair_sink ? &pair_sink->model() : nullptr};
    if (const Status written = write_and_commit(*stats_file, stats_json(stats)); !written.ok()) return fail("align", written);
  }
  pipeline.wait_for_release();
  if (c.verbosity >= 2 && release_times[2] >= 0) {  // a release that ran to its end
    log.info("released the engines and indexes %.3f-%.3f, the GPU contexts %.3f-%.3f", release_times[0],
             release_times[1], release_times[1], release_times[2]);
  }
  leave_finished_run();
}

}  // namespace wtmap::cli
