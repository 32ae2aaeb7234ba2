#include "wtmap/fmindex/general_fm_index.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "index_file.hpp"

namespace wtmap::fmindex {
namespace {

// Symbols of the suffix-sorted text: $ < # < the symbol of code 1 < ... (code c is c + 1 here);
// in the BWT's tree $ and # both become code 0 and code c stays c (GeneralFmIndexView).
constexpr std::uint8_t kTextEnd = 0, kTextSeparator = 1;

std::string byte_name(unsigned b) {
  char s[8];
  std::snprintf(s, sizeof s, "0x%02x", b);
  return s;
}

}  // namespace

GeneralFmIndex::GeneralFmIndex(GeneralFmIndex&&) noexcept = default;
GeneralFmIndex& GeneralFmIndex::operator=(GeneralFmIndex&&) noexcept = default;
GeneralFmIndex::~GeneralFmIndex() = default;

GeneralFmIndex::GeneralFmIndex(WaveletTree<std::uint8_t, 2>&& bwt, SampledSuffixArray&& sa, SymbolMap symbols,
                               std::vector<Contig> contigs, std::vector<Fragment> fragments, std::uint64_t forward_length,
                               std::uint32_t sample_rate)
    : FmIndexBase(std::move(sa), std::move(contigs), std::move(fragments), forward_length, sample_rate),
      bwt_(std::move(bwt)),
      symbols_(std::move(symbols)) {}

std::size_t GeneralFmIndex::size_in_bytes() const { return bwt_.size_in_bytes() + sa_.size_in_bytes(); }

Result<GeneralFmIndex> GeneralFmIndex::build(const SymbolReference& ref, const FmIndexOptions& options) {
  auto progress = [&](const std::string& s) {
    if (options.progress) options.progress(s);
  };
  if (options.sample_rate == 0) return invalid_argument("the SA sample rate must be at least 1");
  if (ref.alphabet == Alphabet::dna) return invalid_argument("GeneralFmIndex holds protein and byte references; DNA has FmIndex");
  if (ref.fragments.empty() || ref.fragments.size() != ref.contigs.size()) {
    return invalid_argument("the reference needs one fragment per record, and at least one record");
  }
  const std::uint64_t m = ref.forward.size();
  const std::uint64_t n = m + 1;
  const std::uint32_t sample_rate =
      options.sample_rate == kSampleRateBySize ? default_sample_rate(n) : options.sample_rate;

  // The alphabet actually used, mapped to the minimal one: code k + 1 for the k-th smallest byte.
  bool present[256] = {};
  for (const std::uint8_t b : ref.forward) present[b] = true;
  present[kRecordSeparator] = false;
  std::vector<std::uint8_t> used;
  for (unsigned b = 0; b < 256; ++b) {
    if (!present[b]) continue;
    if (normalized_symbol(ref.alphabet, static_cast<unsigned char>(b)) != static_cast<int>(b)) {
      return invalid_argument("byte " + byte_name(b) + " is no symbol of the " + alphabet_name(ref.alphabet) + " alphabet");
    }
    used.push_back(static_cast<std::uint8_t>(b));
  }
  if (used.empty()) return invalid_argument("the reference holds no symbols");
  const SymbolMap symbols(ref.alphabet, std::move(used));
  const std::uint64_t sigma = symbols.size() + 1;  // with code 0 for the separators and $

  // T = r0 # r1 # ... # rk $
  std::vector<std::uint8_t> text(n);
  for (std::uint64_t i = 0; i < m; ++i) {
    const std::uint8_t b = ref.forward[i];
    text[i] = b == kRecordSeparator ? kTextSeparator : static_cast<std::uint8_t>(symbols.code(static_cast<char>(b)) + 1);
  }
  text[n - 1] = kTextEnd;

  progress("suffix array of " + std::to_string(n) + " symbols (divsufsort64)");
  auto suffixes = full_suffix_array(text.data(), n);
  if (!suffixes.ok()) return suffixes.status();
  std::vector<std::int64_t> sa = std::move(suffixes.value());

  progress("BWT and SA samples (every " + std::to_string(sample_rate) + " text positions)");
  std::vector<std::uint8_t> bwt(n);
  SampledSuffixArray::Builder samples(n, sample_rate);
  WTMAP_TRY(samples.for_each_piece([&](std::uint64_t p, std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t r = begin; r < end; ++r) {
      const auto pos = static_cast<std::uint64_t>(sa[r]);
      const std::uint8_t prev = text[pos == 0 ? n - 1 : pos - 1];
      const bool after_separator = prev <= kTextSeparator;
      bwt[r] = after_separator ? GeneralFmIndexView::kSeparatorCode : static_cast<std::uint8_t>(prev - 1);
      samples.add(p, r, pos, after_separator);
    }
  }));
  sa.clear();
  sa.shrink_to_fit();
  text.clear();
  text.shrink_to_fit();

  progress("wavelet tree (" + std::to_string(sigma) + " symbols) and sampled-row vector on the " +
           std::string(backend_name(options.backend)));
  auto tree = WaveletTree<std::uint8_t, 2>::build(bwt.data(), n, {options.backend, sigma});
  if (!tree.ok()) return tree.status();
  auto sampled = samples.finish(options.backend);
  if (!sampled.ok()) return sampled.status();

  GeneralFmIndex index(std::move(tree.value()), std::move(sampled.value()), symbols, ref.contigs, ref.fragments, m,
                       sample_rate);
  index.bind();
  return std::move(index);
}

void GeneralFmIndex::bind() {
  view_ = GeneralFmIndexView{};
  view_.bwt = bwt_.view();
  view_.rows = bwt_.size();
  view_.sa = sa_.view();
  view_.sa.sample_rate = sample_rate_;  // bounds every locate walk
}

ReferenceHit GeneralFmIndex::to_reference(std::uint64_t p, std::uint64_t) const {
  const Fragment& f = fragment_at(p);
  ReferenceHit hit;
  hit.contig = f.contig;
  hit.position = f.contig_offset + (p - f.text_start);
  return hit;
}

Status GeneralFmIndex::save(const std::string& path) const {
  file::IndexHeader h;
  h.version = kGeneralIndexVersion;
  h.alphabet = alphabet();
  h.sample_rate = sample_rate_;
  h.forward_length = forward_length_;
  h.rows = bwt_.size();
  // The symbol map: the count, then the symbols in code order (code k + 1 for symbols[k]).
  std::vector<file::Section> own = {{"SYMB", {}}};
  file::put<std::uint32_t>(own[0].payload, static_cast<std::uint32_t>(symbols_.size()));
  own[0].payload.append(symbols_.symbols().begin(), symbols_.symbols().end());
  return file::write_index(path, h, contigs_, fragments_, std::move(own), bwt_, sa_);
}

Result<GeneralFmIndex> GeneralFmIndex::load(const std::string& path, Backend backend) {
  std::ifstream in;
  auto header = file::open_index(in, path);
  if (!header.ok()) return header.status();
  if (header->alphabet == Alphabet::dna) {
    return invalid_argument(path + ": a DNA index; this needs a protein or byte index (wtmap index --alphabet protein|byte)");
  }
  const Alphabet alphabet = header->alphabet;
  const std::uint64_t m = header->forward_length, n = header->rows;
  if (n != m + 1) return corrupt_data(path + ": inconsistent index header");

  auto contigs = file::read_contigs(in, path);
  if (!contigs.ok()) return contigs.status();
  auto fragments = file::read_fragments(in, path, *contigs, m);
  if (!fragments.ok()) return fragments.status();
  // One fragment per record, whole, in order, one separator apart, the last ending the text.
  if (fragments->size() != contigs->size()) return corrupt_data(path + ": corrupt fragment table");
  for (std::size_t j = 0; j < fragments->size(); ++j) {
    const Fragment& f = (*fragments)[j];
    const std::uint64_t start = j == 0 ? 0 : (*fragments)[j - 1].text_start + (*fragments)[j - 1].length + 1;
    if (f.contig != j || f.contig_offset != 0 || f.length != (*contigs)[j].length || f.length == 0 || f.text_start != start) {
      return corrupt_data(path + ": corrupt fragment table");
    }
  }
  if (fragments->back().text_start + fragments->back().length != m) return corrupt_data(path + ": corrupt fragment table");

  auto symbol_section = file::read_section(in, "SYMB", path);
  if (!symbol_section.ok()) return symbol_section.status();
  std::vector<std::uint8_t> used;
  {
    file::PayloadReader r(*symbol_section, path + ": symbol map");
    std::uint32_t count = 0;
    WTMAP_TRY(r.get(count));
    if (count == 0 || count > SymbolMap::kMaxSymbols) return corrupt_data(path + ": symbol map section has an impossible count");
    used.resize(count);
    for (std::uint8_t& b : used) WTMAP_TRY(r.get(b));
    WTMAP_TRY(r.finish());
    for (std::size_t k = 0; k < used.size(); ++k) {
      if ((k > 0 && used[k] <= used[k - 1]) || normalized_symbol(alphabet, used[k]) != static_cast<int>(used[k])) {
        return corrupt_data(path + ": corrupt symbol map");
      }
    }
  }
  SymbolMap symbols(alphabet, std::move(used));

  auto tree = file::read_streamed_section(in, "BWTW", path, [&](std::istream& payload, std::uint64_t) {
    return WaveletTree<std::uint8_t, 2>::load(payload, backend);
  });
  if (!tree.ok()) return tree.status();
  // Sampled besides the multiples of s: every record's start (0 follows the terminator).
  std::vector<std::uint64_t> record_starts;
  for (const Fragment& f : *fragments) record_starts.push_back(f.text_start);
  auto sa = file::read_sampled_suffix_array(in, path, n, header->sample_rate, record_starts, backend);
  if (!sa.ok()) return sa.status();
  WTMAP_TRY(file::expect_end(in, path));

  // Cross-checks that keep every query in bounds: the tree spans the text with the identity map
  // over the symbols and code 0, which occurs once per record (the separators and $).
  if (tree->size() != n) return corrupt_data(path + ": sections disagree on the text length");
  if (tree->sigma() != symbols.size() + 1 || tree->view().alphabet != nullptr) {
    return corrupt_data(path + ": the wavelet tree disagrees with the symbol map");
  }
  const RankQuery<std::uint8_t> separators{n, GeneralFmIndexView::kSeparatorCode};
  std::uint64_t separator_count = 0;
  WTMAP_TRY(tree->rank(&separators, &separator_count, 1));  // the tree may live on the GPU
  if (separator_count != fragments->size()) return corrupt_data(path + ": the wavelet tree disagrees with the record count");
  // The rows of # and $ must be sampled: an LF step through one would take the merged code's rank.
  std::vector<SelectQuery<std::uint8_t>> separator_rows(separator_count);
  for (std::uint64_t k = 0; k < separator_count; ++k) separator_rows[k] = {k + 1, GeneralFmIndexView::kSeparatorCode};
  std::vector<std::uint64_t> rows(separator_count);
  std::vector<std::uint8_t> marked(separator_count);
  WTMAP_TRY(tree->select(separator_rows.data(), rows.data(), rows.size()));
  WTMAP_TRY(sa->marks().access(rows.data(), marked.data(), marked.size()));
  if (std::count(marked.begin(), marked.end(), 0) != 0) {
    return corrupt_data(path + ": corrupt sampled-row marks (SMPB: a separator row is not marked as sampled)");
  }

  GeneralFmIndex index(std::move(tree.value()), std::move(sa.value()), std::move(symbols), std::move(contigs.value()),
                       std::move(fragments.value()), m, header->sample_rate);
  index.bind();
  return std::move(index);
}

}  // namespace wtmap::fmindex
