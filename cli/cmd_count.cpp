// wtmap count: exact matches of many patterns (both strands of a DNA index, the one strand of a
// protein or byte index) -> one TSV line per pattern.
#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cli.hpp"
#include "wtmap/aligner/batch_reader.hpp"
#include "wtmap/aligner/bounded_queue.hpp"
#include "wtmap/aligner/reorder_queue.hpp"
#include "wtmap/aligner/seq_reader.hpp"
#include "wtmap/core/detail/parallel.hpp"
#include "wtmap/fmindex/fm_index.hpp"
#include "wtmap/fmindex/general_fm_index.hpp"

namespace wtmap::cli {
namespace {

constexpr const char* kUsage =
    "Usage: wtmap count -x <index> [options] <patterns.fa|fq[.gz] | ->\n"
    "\n"
    "Counts the exact matches of every pattern in the indexed reference and writes one line per\n"
    "pattern to stdout: name TAB count [TAB contig:position:strand,...]. Positions are 1-based.\n"
    "A DNA index is searched on both strands (positions leftmost on the forward strand); patterns\n"
    "with N or other ambiguity codes count 0. A protein or byte index (wtmap index --alphabet) is\n"
    "searched on its one strand (strand always +) with the alphabet read from the index: every\n"
    "byte of a sequence line is a symbol (protein in either case, byte verbatim), and a pattern\n"
    "with a symbol the reference does not hold counts 0. No match spans two contigs or records.\n"
    "A malformed record stops the run with its number and the reason.\n"
    "A DNA index is held with the suffix-array rows of every k-mer, so a search of m bases takes\n"
    "m - k steps: k is 8 for 5 Mbp, 10 for 100 Mbp, 12 (256 MiB) from 1.1 Gbp on.\n"
    "\n"
    "Options:\n"
    "  -x STR          the index: its prefix (reads STR.wtmap), the .wtmap file, or the FASTA\n"
    "                  it was built from (ref.fa: ref.fa.wtmap, else ref.wtmap)\n"
    "  --locate        also print the positions of the matches\n"
    "  --max-hits INT  positions printed per pattern at most [100]\n"
    "  --batch INT     patterns searched per batch [1000000]\n"
    "  -t INT          CPU threads [all cores]\n"
    "  --device S      auto, gpu or cpu [auto]\n"
    "  --gpus S        all, N (the first N GPUs) or i,j,... (those device ordinals): the GPUs\n"
    "                  searching, each with its own copy of the index, taking the next batch\n"
    "                  as it is free; lines in input order, the same for any choice [all]\n"
    "  -q, --quiet     no progress or information lines on stderr, errors only\n"
    "  --version       print the version and exit\n";

// The search code of every byte under the index's alphabet.
using CodeTable = std::array<std::uint8_t, 256>;

CodeTable dna_codes() {
  CodeTable t{};
  for (unsigned b = 0; b < 256; ++b) t[b] = fmindex::search_code(static_cast<char>(b));
  return t;
}

// Patterns as the search takes them: names, codes and where each pattern's codes are
// (start_batch_reader fills it).
struct Batch {
  const CodeTable* code_of = nullptr;
  std::vector<std::string> names;
  std::vector<std::uint8_t> codes;
  std::vector<fmindex::PatternRef> patterns;
  aligner::SeqRecord record;  // read into, then encoded: one record's buffers serve them all

  aligner::SeqRecord& next_record() { return record; }
  void keep_record() {
    names.push_back(record.name);
    patterns.push_back({codes.size(), static_cast<std::uint32_t>(record.sequence.size())});
    for (char c : record.sequence) codes.push_back((*code_of)[static_cast<unsigned char>(c)]);
  }
  void end_filling() {}
  std::size_t size() const { return patterns.size(); }
};

// A batch's lines, formatted, and what it counted.
struct BatchLines {
  std::vector<std::string> parts;  // to be written in order
  std::uint64_t patterns = 0, hits = 0;
};

// Searches one batch, locates up to max_hits rows per pattern, formats the lines. Index is
// FmIndex or GeneralFmIndex (the same search, locate and to_reference).
template <class Index>
Status run_batch(const Index& index, const Batch& batch, bool locate, std::uint64_t max_hits, BatchLines& lines) {
  lines.patterns = batch.patterns.size();
  std::uint64_t& total_hits = lines.hits;
  std::vector<fmindex::SaInterval> intervals(batch.patterns.size());
  WTMAP_TRY(index.search(batch.codes.data(), batch.codes.size(), batch.patterns.data(), batch.patterns.size(),
                         intervals.data()));
  // The empty pattern is a prefix of every suffix, but an empty record matches nothing.
  for (std::size_t p = 0; p < intervals.size(); ++p) {
    if (batch.patterns[p].length == 0) intervals[p] = {0, 0};
  }
  std::vector<std::uint64_t> rows, first_row(batch.patterns.size() + 1, 0);
  if (locate) {
    for (std::size_t p = 0; p < intervals.size(); ++p) {
      first_row[p] = rows.size();
      const std::uint64_t take = std::min<std::uint64_t>(intervals[p].size(), max_hits);
      for (std::uint64_t k = 0; k < take; ++k) rows.push_back(intervals[p].lo + k);
    }
    first_row[intervals.size()] = rows.size();
  }
  std::vector<std::uint64_t> positions(rows.size());
  WTMAP_TRY(index.locate(rows.data(), positions.data(), rows.size()));
  for (const auto& iv : intervals) total_hits += iv.size();
  // The lines, formatted in parallel into one string per range of patterns, written in order.
  constexpr std::uint64_t kPatternsPerPart = 1 << 14;
  std::vector<std::string>& parts = lines.parts;
  parts.assign((intervals.size() + kPatternsPerPart - 1) / kPatternsPerPart, std::string());
  detail::parallel_for_ranges(parts.size(), [&](std::uint64_t first_part, std::uint64_t last_part) {
    std::vector<fmindex::ReferenceHit> hits;
    for (std::uint64_t part = first_part; part < last_part; ++part) {
      std::string& out = parts[part];
      const std::size_t end = std::min<std::size_t>(intervals.size(), (part + 1) * kPatternsPerPart);
      for (std::size_t p = part * kPatternsPerPart; p < end; ++p) {
        out += batch.names[p];
        out += '\t';
        out += std::to_string(intervals[p].size());
        if (locate) {
          hits.clear();
          for (std::uint64_t k = first_row[p]; k < first_row[p + 1]; ++k) {
            hits.push_back(index.to_reference(positions[k], batch.patterns[p].length));
          }
          std::sort(hits.begin(), hits.end(), [](const auto& a, const auto& b) {
            return std::tie(a.contig, a.position, a.reverse) < std::tie(b.contig, b.position, b.reverse);
          });
          out += '\t';
          for (std::size_t k = 0; k < hits.size(); ++k) {
            if (k > 0) out += ',';
            out += index.contigs()[hits[k].contig].name;
            out += ':';
            out += std::to_string(hits[k].position + 1);
            out += hits[k].reverse ? ":-" : ":+";
          }
        }
        out += '\n';
      }
    }
  }, 1);
  return {};
}

// The patterns' batches searched by one thread per index copy (one per GPU, or the CPU's one):
// each thread, bound to its GPU, takes the next batch read when it is free and formats its lines;
// the caller's thread writes them in input order, so the output is the same for any number of
// GPUs. Space: two batches read ahead, one per searcher, and up to two formatted per searcher
// waiting for an earlier one.
template <class Index>
class BatchSearchers {
 public:
  BatchSearchers(const std::vector<const Index*>& copies, const std::vector<int>& gpus, bool locate,
                 std::uint64_t max_hits, aligner::BoundedQueue<Batch>& to_search)
      : to_search_(to_search), done_(2 * copies.size()), statuses_(copies.size()), searchers_(copies.size()) {
    for (std::size_t k = 0; k < copies.size(); ++k) {
      threads_.emplace_back([this, k, index = copies[k], gpu = gpus[k], locate, max_hits] {
        statuses_[k] = guarded([&] { return search_all(*index, gpu, locate, max_hits); });
        if (!statuses_[k].ok() && gpu >= 0 && searchers_ > 1) {  // which GPU failed
          statuses_[k] = {statuses_[k].code(), "GPU " + std::to_string(gpu) + ": " + statuses_[k].message()};
        }
        if (!statuses_[k].ok()) stop();
        const std::lock_guard<std::mutex> lock(mutex_);
        if (++ended_ == searchers_) done_.close();  // the last one: every batch is in
      });
    }
  }
  ~BatchSearchers() {
    stop();
    for (std::thread& t : threads_) t.join();
  }
  BatchSearchers(const BatchSearchers&) = delete;
  BatchSearchers& operator=(const BatchSearchers&) = delete;

  // The next batch's lines in input order; none once every batch was handed out or a search failed.
  std::optional<BatchLines> next() { return done_.pop(); }
  void stop() {
    to_search_.close();
    done_.close();
  }
  // The first searcher's error, once the searchers were joined (after next() gave none).
  Status join() {
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    for (const Status& s : statuses_) {
      if (!s.ok()) return s;
    }
    return {};
  }

 private:
  Status search_all(const Index& index, int gpu, bool locate, std::uint64_t max_hits) {
    WTMAP_TRY(use_gpu(gpu));
    for (;;) {
      std::optional<Batch> batch;
      std::uint64_t number = 0;
      {
        const std::lock_guard<std::mutex> lock(take_mutex_);  // a batch and its number together
        batch = to_search_.pop();
        number = taken_++;
      }
      if (!batch) return {};
      BatchLines lines;
      WTMAP_TRY(run_batch(index, *batch, locate, max_hits, lines));
      if (!done_.push(number, std::move(lines))) return {};
    }
  }

  aligner::BoundedQueue<Batch>& to_search_;
  aligner::ReorderQueue<BatchLines> done_;
  std::vector<Status> statuses_;
  std::mutex take_mutex_, mutex_;
  std::uint64_t taken_ = 0;
  const std::size_t searchers_;
  std::size_t ended_ = 0;
  std::vector<std::thread> threads_;
};

// The index loaded on each of `gpus` (-1: once, on the CPU), each with its GPU current. Each copy
// is freed with its GPU current too (GpuCopy).
template <class Index>
struct GpuCopy {
  int gpu;
  std::optional<Index> index;
  explicit GpuCopy(int g) : gpu(g) {}
  ~GpuCopy() {
    const ScopedGpu here(gpu);
    index.reset();
  }
  GpuCopy(const GpuCopy&) = delete;
  GpuCopy& operator=(const GpuCopy&) = delete;
};

template <class Index>
using GpuCopies = std::vector<std::unique_ptr<GpuCopy<Index>>>;

template <class Index>
Result<GpuCopies<Index>> load_copies(const std::string& path, Backend backend, const std::vector<int>& gpus) {
  GpuCopies<Index> copies;
  for (int gpu : gpus) {
    copies.push_back(std::make_unique<GpuCopy<Index>>(gpu));
    const ScopedGpu here(gpu);
    WTMAP_TRY(here.status());
    auto loaded = Index::load(path, backend);
    if (!loaded.ok()) return loaded.status();
    copies.back()->index.emplace(std::move(*loaded));
  }
  return copies;
}

template <class Index>
std::vector<const Index*> views_of(const GpuCopies<Index>& copies) {
  std::vector<const Index*> views;
  for (const auto& copy : copies) views.push_back(&*copy->index);
  return views;
}

// Reads the patterns, searches them in the index copies batch by batch (`gpus`: each copy's GPU,
// -1 for the CPU), prints the lines.
template <class Index>
int count_with(const std::vector<const Index*>& copies, const std::vector<int>& gpus, const CodeTable& code_of,
               aligner::SequenceBytes bytes, const std::string& input, bool locate, std::uint64_t max_hits,
               std::uint64_t batch_size, const Log& log) {
  auto reader = aligner::SeqReader::open(input, wtmap::detail::cpu_threads(), bytes);
  if (!reader.ok()) return fail("count", reader.status());

  // reader thread (parsing) -> a searcher per index copy (search, locate, format) -> this thread
  // (output in input order).
  aligner::BoundedQueue<Batch> to_search(2);
  Status read_status;
  std::thread read_thread = aligner::start_batch_reader<Batch>(*reader, batch_size, to_search, read_status, nullptr, [&code_of] {
    Batch batch;
    batch.code_of = &code_of;
    return batch;
  });
  std::uint64_t patterns = 0, hits = 0;
  Status search_status;
  {
    BatchSearchers<Index> searchers(copies, gpus, locate, max_hits, to_search);
    Status write_status;
    while (auto lines = searchers.next()) {
      for (const std::string& out : lines->parts) {
        if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) {
          write_status = {StatusCode::io_error, "writing to stdout failed"};
          break;
        }
      }
      if (!write_status.ok()) break;
      patterns += lines->patterns;
      hits += lines->hits;
      log.info("%llu patterns", static_cast<unsigned long long>(patterns));
    }
    searchers.stop();  // on a search or write error, stop the reader and the other searchers too
    search_status = searchers.join();
    if (search_status.ok()) search_status = write_status;
  }
  read_thread.join();
  // A bad record stops the run where it is; the lines before it are already written.
  if (!read_status.ok()) return fail("count", read_status);
  if (!search_status.ok()) return fail("count", search_status);
  // stdio holds the last lines until here: a full disk or a closed pipe shows only now.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) return fail("count", {StatusCode::io_error, "writing to stdout failed"});
  const double seconds = log.seconds();
  log.info("%llu patterns, %llu matches, %.1f s (%.0f patterns/s)", static_cast<unsigned long long>(patterns),
           static_cast<unsigned long long>(hits), seconds, seconds > 0 ? static_cast<double>(patterns) / seconds : 0.0);
  return 0;
}

}  // namespace

int count_main(int argc, char** argv) {
  CommonOptions common;
  std::string prefix, input;
  std::uint64_t max_hits = 100, batch_size = 1000000;
  bool locate = false;
  bool operands_only = false;
  std::vector<int> operand_at;  // the pattern file's place in argv
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (take_operand(a, i, operands_only, operand_at)) continue;
    const bool has_value = i + 1 < argc;
    if (a == "-x" && has_value) {
      prefix = argv[++i];
    } else if (a == "--locate") {
      locate = true;
    } else if (a == "--max-hits" && has_value) {
      if (!parse_count(argv[++i], max_hits)) return usage_error("count", "--max-hits needs an integer");
    } else if (a == "--batch" && has_value) {
      if (!parse_count(argv[++i], batch_size) || batch_size == 0) return usage_error("count", "--batch needs a positive integer");
    } else if (const int rc = handle_common_or_unknown(common, argc, argv, i, "count", kUsage); rc >= 0) {
      return rc;
    }
  }
  if (prefix.empty()) {
    if (const int rc = hint_bwa_order("count", argc, argv, operand_at); rc >= 0) return rc;
  }
  if (operand_at.size() > 1) return usage_error("count", "more than one pattern file given");
  if (!operand_at.empty()) input = argv[operand_at[0]];
  if (prefix.empty()) return usage_or_error(argc, "count", "no index given (-x INDEX)", kUsage);
  if (input.empty()) return usage_or_error(argc, "count", "no pattern file given", kUsage);
  Result<std::string> index_file = resolve_index(prefix);
  if (!index_file.ok()) return fail("count", index_file.status());
  const std::string& path = *index_file;
  const Log log("count", common.quiet);
  auto backend = common.apply(log);
  if (!backend.ok()) return fail("count", backend.status());
  auto alphabet = fmindex::read_index_alphabet(path);
  if (!alphabet.ok()) return fail("count", alphabet.status());
  const std::vector<int> gpus = common.lane_devices(*backend);
  if (*backend == Backend::gpu) log.info("searching on %s, one index copy each", common.gpus_used().c_str());
  if (*alphabet == fmindex::Alphabet::dna) {
    auto copies = load_copies<fmindex::FmIndex>(path, *backend, gpus);
    if (!copies.ok()) return fail("count", copies.status());
    log.info("DNA index, k-mer table of k = %u", copies->front()->index->kmer_length());
    static const CodeTable kDnaCodes = dna_codes();
    return count_with(views_of(*copies), gpus, kDnaCodes, aligner::SequenceBytes::letters, input, locate, max_hits,
                      batch_size, log);
  }
  auto copies = load_copies<fmindex::GeneralFmIndex>(path, *backend, gpus);
  if (!copies.ok()) return fail("count", copies.status());
  const fmindex::GeneralFmIndex& index = *copies->front()->index;
  log.info("%s index of %zu symbols", fmindex::alphabet_name(*alphabet), index.symbols().size());
  // Every byte of a pattern is encoded with the index's symbol map: one it does not hold -- a
  // digit in a protein pattern, any byte absent from a byte reference -- makes the pattern count
  // 0 rather than stop the run as a malformed record.
  return count_with(views_of(*copies), gpus, index.symbols().codes(), aligner::SequenceBytes::any, input, locate,
                    max_hits, batch_size, log);
}

}  // namespace wtmap::cli
