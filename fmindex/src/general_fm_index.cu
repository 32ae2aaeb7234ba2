#include "wtmap/fmindex/general_fm_index.hpp"

#include <algorithm>
#include <cstdio>

#include "fm_index_pipeline.hpp"
#include "index_file.hpp"

namespace wtmap::fmindex {
namespace {

std::string byte_name(unsigned b) {
  char s[8];
  std::snprintf(s, sizeof s, "0x%02x", b);
  return s;
}

// The alphabet actually used by the reference's bytes, mapped to the minimal one: code k + 1 for
// the k-th smallest byte. invalid_argument for a byte that is no symbol of the alphabet.
Result<SymbolMap> symbols_of(const SymbolReference& ref) {
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
  return SymbolMap(ref.alphabet, std::move(used));
}

// One fragment per record, whole, in order, one separator apart, the last ending the text.
Status check_one_fragment_per_record(const std::vector<Contig>& contigs, const std::vector<Fragment>& fragments,
                                     std::uint64_t m, const std::string& path) {
  if (fragments.size() != contigs.size()) return corrupt_data(path + ": corrupt fragment table");
  for (std::size_t j = 0; j < fragments.size(); ++j) {
    const Fragment& f = fragments[j];
    const std::uint64_t start = j == 0 ? 0 : fragments[j - 1].text_start + fragments[j - 1].length + 1;
    if (f.contig != j || f.contig_offset != 0 || f.length != contigs[j].length || f.length == 0 || f.text_start != start) {
      return corrupt_data(path + ": corrupt fragment table");
    }
  }
  if (fragments.back().text_start + fragments.back().length != m) return corrupt_data(path + ": corrupt fragment table");
  return {};
}

// SYMB: the count, then the symbols in code order (code k + 1 for symbols[k]), sorted, distinct
// and normalised bytes of the alphabet.
Result<SymbolMap> read_symbol_map(std::istream& in, const std::string& path, Alphabet alphabet) {
  auto section = file::read_section(in, "SYMB", path);
  if (!section.ok()) return section.status();
  std::vector<std::uint8_t> used;
  file::PayloadReader r(*section, path + ": symbol map");
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
  return SymbolMap(alphabet, std::move(used));
}

}  // namespace

namespace pipeline {

// The protein and byte alphabets' steps of the pipeline (fm_index_pipeline.hpp): one strand,
// T = r0 # r1 # ... # rk $, the BWT in a binary wavelet tree over the symbols the text uses (code
// k for the k-th smallest, 0 for # and $ merged), and the symbol map (SYMB).
struct GeneralIndexPolicy {
  using Index = GeneralFmIndex;
  using Reference = SymbolReference;
  using Tree = WaveletTree<std::uint8_t, 2>;
  static constexpr std::uint8_t kTreeCodeOffset = 1;   // code k: text code k + 1, tree code k
  static constexpr bool kListsSeparatorRows = false;  // code 0 in the tree says which they are

  SymbolMap symbols;

  Result<TextCodes> encode_text(const Reference& ref) {
    if (ref.alphabet == Alphabet::dna) return invalid_argument("GeneralFmIndex holds protein and byte references; DNA has FmIndex");
    if (ref.fragments.empty() || ref.fragments.size() != ref.contigs.size()) {
      return invalid_argument("the reference needs one fragment per record, and at least one record");
    }
    auto used = symbols_of(ref);
    if (!used.ok()) return used.status();
    symbols = std::move(used.value());
    // T = r0 # r1 # ... # rk $
    const std::uint64_t m = ref.forward.size();
    TextCodes text(m + 1);
    for (std::uint64_t i = 0; i < m; ++i) {
      const std::uint8_t b = ref.forward[i];
      text[i] = b == kRecordSeparator ? kTextSeparator : static_cast<std::uint8_t>(symbols.code(static_cast<char>(b)) + 1);
    }
    text[m] = kTextEnd;
    return text;
  }
  std::uint64_t sigma() const { return symbols.size() + 1; }  // with code 0 for the separators and $
  std::string tree_name() const { return "wavelet tree (" + std::to_string(sigma()) + " symbols)"; }
  Status keep_build_tables(const Reference&, BwtRows&, Backend) { return {}; }

  Status check_header(const file::IndexHeader& header, const std::string& path) const {
    if (header.alphabet == Alphabet::dna) {
      return invalid_argument(path + ": a DNA index; this needs a protein or byte index (wtmap index --alphabet protein|byte)");
    }
    if (header.rows != header.forward_length + 1) return corrupt_data(path + ": inconsistent index header");
    return {};
  }
  Status read_tables(std::istream& in, const std::string& path, const file::IndexHeader& header,
                     const std::vector<Contig>& contigs, const std::vector<Fragment>& fragments, IndexParts, Backend) {
    WTMAP_TRY(check_one_fragment_per_record(contigs, fragments, header.forward_length, path));
    auto map = read_symbol_map(in, path, header.alphabet);
    if (!map.ok()) return map.status();
    symbols = std::move(map.value());
    return {};
  }
  // Sampled besides the multiples of s: every record's start (0 follows the terminator).
  std::vector<std::uint64_t> sampled_after_separators(const std::vector<Fragment>& fragments, std::uint64_t) const {
    std::vector<std::uint64_t> record_starts;
    for (const Fragment& f : fragments) record_starts.push_back(f.text_start);
    return record_starts;
  }
  // The tree spans the text with the identity map over the symbols and code 0, which occurs once
  // per record (the separators and $), and the rows of # and $ are sampled: an LF step through
  // one would take the merged code's rank.
  Status check_tables(const Tree& tree, const SampledSuffixArray& sa, const std::vector<Fragment>& fragments, IndexParts,
                      const std::string& path) const {
    if (tree.sigma() != symbols.size() + 1 || tree.view().alphabet != nullptr) {
      return corrupt_data(path + ": the wavelet tree disagrees with the symbol map");
    }
    const RankQuery<std::uint8_t> separators{tree.size(), GeneralFmIndexView::kSeparatorCode};
    std::uint64_t separator_count = 0;
    WTMAP_TRY(tree.rank(&separators, &separator_count, 1));  // the tree may live on the GPU
    if (separator_count != fragments.size()) {
      return corrupt_data(path + ": the wavelet tree disagrees with the record count");
    }
    std::vector<SelectQuery<std::uint8_t>> separator_rows(separator_count);
    for (std::uint64_t k = 0; k < separator_count; ++k) separator_rows[k] = {k + 1, GeneralFmIndexView::kSeparatorCode};
    std::vector<std::uint64_t> rows(separator_count);
    std::vector<std::uint8_t> marked(separator_count);
    WTMAP_TRY(tree.select(separator_rows.data(), rows.data(), rows.size()));
    WTMAP_TRY(sa.marks().access(rows.data(), marked.data(), marked.size()));
    if (std::count(marked.begin(), marked.end(), 0) != 0) {
      return corrupt_data(path + ": corrupt sampled-row marks (SMPB: a separator row is not marked as sampled)");
    }
    return {};
  }

  Result<Index> make_index(Tree&& tree, SampledSuffixArray&& sa, std::vector<Contig> contigs,
                           std::vector<Fragment> fragments, std::uint64_t m, std::uint32_t sample_rate) {
    GeneralFmIndex index(std::move(tree), std::move(sa), std::move(symbols), std::move(contigs), std::move(fragments), m,
                         sample_rate);
    index.bind();
    return std::move(index);
  }

  static const Tree& tree(const Index& index) { return index.bwt_; }
  // Version 2: the header's alphabet field and the symbol map.
  static Status file_parts(const Index& index, file::IndexHeader& header, std::vector<file::Section>& own) {
    header.version = kGeneralIndexVersion;
    header.alphabet = index.alphabet();
    own = {{"SYMB", {}}};
    file::put<std::uint32_t>(own[0].payload, static_cast<std::uint32_t>(index.symbols_.size()));
    own[0].payload.append(index.symbols_.symbols().begin(), index.symbols_.symbols().end());
    return {};
  }
};

}  // namespace pipeline

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
  return pipeline::build_index(ref, options, pipeline::GeneralIndexPolicy{});
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
  return pipeline::save_index<pipeline::GeneralIndexPolicy>(*this, path);
}

Result<GeneralFmIndex> GeneralFmIndex::load(const std::string& path, Backend backend) {
  return pipeline::load_index(path, backend, IndexParts::all, pipeline::GeneralIndexPolicy{});
}

}  // namespace wtmap::fmindex
