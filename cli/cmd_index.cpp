// wtmap index: FASTA reference -> <prefix>.wtmap
#include <cstring>
#include <optional>
#include <string>

#include "cli.hpp"
#include "wtmap/core/detail/parallel.hpp"
#include "wtmap/io/output_file.hpp"
#include "wtmap/fmindex/fm_index.hpp"
#include "wtmap/fmindex/general_fm_index.hpp"

namespace wtmap::cli {
namespace {

constexpr const char* kUsage =
    "Usage: wtmap index [options] <ref.fa[.gz]>\n"
    "\n"
    "Builds the FM-index of a FASTA reference and writes <prefix>.wtmap.\n"
    "dna (default): both strands; runs of ambiguity codes (N, R, Y, ...) and contig ends become\n"
    "separators: no match spans them.\n"
    "protein: one strand of amino-acid letters (A-Z, either case, and '*'); any other byte is an\n"
    "error. byte: one strand, every byte of a sequence line taken verbatim ('\\r' only as the\n"
    "end of a CRLF line; a line that begins with '>' is a header). For both, record ends are\n"
    "separators: no match spans two records.\n"
    "\n"
    "Options:\n"
    "  -p STR          index prefix [the FASTA path]\n"
    "  --alphabet STR  dna, protein or byte [dna]\n"
    "  -s INT          suffix-array sample rate: a locate costs at most INT steps [8, 16 or\n"
    "                  32, the smallest whose samples fit 256 MiB: 8 up to 134 Mbp, 32 past 268]\n"
    "  --sa-builder S  auto, divsufsort or blockwise: how the suffixes are sorted; all write\n"
    "                  the same index file, byte for byte [auto: blockwise on a GPU or with\n"
    "                  2 or more threads, divsufsort with one]. divsufsort: one thread, the\n"
    "                  whole suffix array in memory. blockwise: the suffix array a round of\n"
    "                  blocks at a time (Karkkainen's difference-cover method), at half the\n"
    "                  memory and, on a genome, in less time even on one thread; sorted on\n"
    "                  the GPU (--device), else on all threads (-t)\n"
    "  -t INT          CPU threads [all cores]\n"
    "  --device S      auto, gpu or cpu: where the blockwise sort (its sample's ranks, bucket\n"
    "                  counts and rounds) runs and the wavelet tree is built [auto]\n"
    "  --gpus S        all, N (the first N GPUs) or i,j,... (those device ordinals): the\n"
    "                  index is built on the first of them, one GPU [all: GPU 0]\n"
    "  -q, --quiet     no progress or information lines on stderr, errors only\n"
    "  --version       print the version and exit\n"
    "\n"
    "Peak memory: dna about 21 bytes per reference base with divsufsort (2 strands x 8-byte\n"
    "suffix array plus text and BWT), e.g. 2.1 GB for 100 Mbp, and at most 10 with blockwise\n"
    "(2 strands x 1-byte BWT, the packed text and an eighth of the suffix array at a time:\n"
    "about 8 for a human genome); the index takes about 1.1 + 16 / s bytes per base\n"
    "(1.6 at -s 32, 3.1 at -s 8). protein and byte about 12 bytes per symbol (one strand), 6\n"
    "with blockwise past 100 M symbols; the index takes about (log2 of the alphabet size + 2)\n"
    "/ 8 + 8 / s bytes per symbol, e.g. 1.0 for 20 amino acids at -s 32.\n";

// Builds and writes the index of `reference`; Index is FmIndex or GeneralFmIndex.
template <class Index, class Reference>
int build_and_save(const Reference& reference, const fmindex::FmIndexOptions& options, const std::string& prefix,
                   std::uint64_t symbols, const char* unit, const Log& log) {
  auto index = Index::build(reference, options);
  if (!index.ok()) return fail("index", index.status());
  const std::string path = index_path(prefix);
  log.info("writing %s", path.c_str());
  const Status saved = index->save(path);
  if (!saved.ok()) return fail("index", saved);
  log.info("done: %.1f MB index, %.2f bytes per %s", static_cast<double>(index->size_in_bytes()) / 1e6,
           static_cast<double>(index->size_in_bytes()) / static_cast<double>(symbols), unit);
  return 0;
}

}  // namespace

int index_main(int argc, char** argv) {
  CommonOptions common;
  std::string prefix, fasta;
  std::uint64_t sample_rate = fmindex::kSampleRateBySize;
  fmindex::Alphabet alphabet = fmindex::Alphabet::dna;
  std::optional<fmindex::SuffixArrayBuilder> sa_builder;  // none: auto, by the threads -t leaves
  bool operands_only = false;
  std::vector<int> operand_at;  // the reference's place in argv
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (take_operand(a, i, operands_only, operand_at)) continue;
    const bool has_value = i + 1 < argc;
    if (a == "-p" && has_value) {
      prefix = argv[++i];
    } else if (a == "-s" && has_value) {
      if (!parse_count(argv[++i], sample_rate) || sample_rate == 0 || sample_rate > fmindex::kMaxSampleRate) {
        return usage_error("index", "-s needs an integer in 1..1048576");
      }
    } else if (a == "--sa-builder" && has_value) {
      const std::string value = argv[++i];
      const auto parsed = fmindex::parse_suffix_array_builder(value);
      if (!parsed && value != "auto") return usage_error("index", "--sa-builder needs auto, divsufsort or blockwise");
      sa_builder = parsed;
    } else if (a == "--alphabet" && has_value) {
      const auto parsed = fmindex::parse_alphabet(argv[++i]);
      if (!parsed) return usage_error("index", "--alphabet needs dna, protein or byte");
      alphabet = *parsed;
    } else if (const int rc = handle_common_or_unknown(common, argc, argv, i, "index", kUsage); rc >= 0) {
      return rc;
    }
  }
  if (operand_at.size() > 1) return usage_error("index", "more than one reference given");
  if (operand_at.empty()) return usage_or_error(argc, "index", "no reference given", kUsage);
  fasta = argv[operand_at[0]];
  if (prefix.empty()) prefix = fasta == "-" ? "stdin" : fasta;
  // Where the index goes is checked now, not after an hour of building.
  if (const Status place = io::check_output_path(index_path(prefix), {fasta}); !place.ok()) return fail("index", place);
  const Log log("index", common.quiet);
  auto backend = common.apply(log);
  if (!backend.ok()) return fail("index", backend.status());
  // One GPU builds the index (apply made the first selected one current).
  if (*backend == Backend::gpu) log.info("building on GPU %d, the first of %s", common.gpus.front(), common.gpus_used().c_str());

  fmindex::FmIndexOptions options;
  options.sample_rate = static_cast<std::uint32_t>(sample_rate);
  options.backend = *backend;
  // auto: the blockwise sorter on a GPU, which sorts its rounds, or wherever it has a second thread
  // (on 2 cores, 50 Mbp: 5.5-5.8 s against divsufsort's 10.5, at half the memory); divsufsort on
  // one CPU thread, where the blockwise sorter is faster on genomes (8.5-8.7 s) but slower on long
  // exact repeats, which divsufsort's induced sorting takes in its stride.
  const bool blockwise_by_default = *backend == Backend::gpu || wtmap::detail::cpu_threads() >= 2;
  options.sa_builder = sa_builder.value_or(blockwise_by_default ? fmindex::SuffixArrayBuilder::blockwise
                                                                : fmindex::SuffixArrayBuilder::divsufsort);
  options.kmer_length = 0;  // a query-time table, not part of the file
  options.progress = [&](const std::string& stage) { log.info("%s", stage.c_str()); };

  if (alphabet != fmindex::Alphabet::dna) {
    log.info("reading %s (%s)", fasta.c_str(), fmindex::alphabet_name(alphabet));
    auto reference = fmindex::read_symbol_fasta(fasta, alphabet);
    if (!reference.ok()) return fail("index", reference.status());
    const std::uint64_t symbols = reference->forward.size() + 1 - reference->contigs.size();
    log.info("%zu records, %llu symbols", reference->contigs.size(), static_cast<unsigned long long>(symbols));
    return build_and_save<fmindex::GeneralFmIndex>(*reference, options, prefix, symbols, "symbol", log);
  }
  log.info("reading %s", fasta.c_str());
  auto reference = fmindex::read_fasta(fasta);
  if (!reference.ok()) return fail("index", reference.status());
  std::uint64_t bases = 0;
  for (const auto& c : reference->contigs) bases += c.length;
  log.info("%zu contigs, %llu bases (%llu ambiguous, in %zu fragments of A/C/G/T)", reference->contigs.size(),
           static_cast<unsigned long long>(bases), static_cast<unsigned long long>(reference->ambiguous_bases),
           reference->fragments.size());
  return build_and_save<fmindex::FmIndex>(*reference, options, prefix, bases, "base", log);
}

}  // namespace wtmap::cli
