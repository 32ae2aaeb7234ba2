#include "wtmap/fmindex/fm_index.hpp"

#include <algorithm>

#include "fm_index_pipeline.hpp"
#include "index_file.hpp"
#include "wtmap/core/detail/parallel.hpp"
#include "wtmap/core/device_memory.hpp"

namespace wtmap::fmindex {
namespace {

// The text positions of T = F # rc(F) $ that follow a separator, or (0) the terminator, for F
// the fragments one separator apart: every fragment's start on either strand (the sampled
// positions besides the multiples of s), one per special row.
std::vector<std::uint64_t> positions_after_separators(const std::vector<Fragment>& fragments, std::uint64_t m) {
  std::vector<std::uint64_t> after = {0, m + 1};
  for (std::size_t j = 0; j + 1 < fragments.size(); ++j) {
    const std::uint64_t separator = fragments[j].text_start + fragments[j].length;  // in F
    after.push_back(separator + 1);
    after.push_back(2 * m - separator + 1);  // its mirror in rc(F)
  }
  std::sort(after.begin(), after.end());
  return after;
}

// The C array and the special rows against the tree (FmIndexView's rank and LF take them on
// trust): C[0] is the number of # and $ (one per fragment and strand), as many special rows,
// each holding the placeholder A in the tree and (with a sampled suffix array) marked as sampled
// -- so that no LF step leaves through one -- and C[c + 1] - C[c] (C[4] = n) the BWT's count of
// base c, what the tree holds at n less the special rows for A. Then every LF step stays < n.
Status check_dna_tables(const WaveletTree<std::uint8_t, 4>& tree, const std::uint64_t (&C)[4],
                    const std::vector<std::uint64_t>& special_rows, std::uint64_t separators,
                    const SampledSuffixArray& sa, bool has_sa) {
  const std::uint64_t n = tree.size();
  for (std::size_t j = 0; j < special_rows.size(); ++j) {
    if (special_rows[j] >= n || (j > 0 && special_rows[j] <= special_rows[j - 1])) {
      return corrupt_data("corrupt special-row table (SPEC: rows not ascending below n = " + std::to_string(n) + ")");
    }
  }
  if (special_rows.size() != separators) {
    return corrupt_data("corrupt special-row table (SPEC: " + std::to_string(special_rows.size()) +
                        " rows; the fragments imply " + std::to_string(separators) + " separators)");
  }
  if (C[0] != separators) {
    return corrupt_data("corrupt C array (CARR: C[0] = " + std::to_string(C[0]) + ", not the " + std::to_string(separators) +
                        " separator and terminator rows)");
  }
  RankQuery<std::uint8_t> at_end[4];
  for (unsigned c = 0; c < 4; ++c) at_end[c] = {n, static_cast<std::uint8_t>(c)};
  std::uint64_t occ[4];
  WTMAP_TRY(tree.rank(at_end, occ, 4));  // the tree may live on the GPU
  if (occ[0] < separators) return corrupt_data("corrupt C array (CARR: fewer A in the tree than special rows)");
  occ[0] -= separators;
  for (unsigned c = 0; c < 4; ++c) {
    const std::uint64_t next = c < 3 ? C[c + 1] : n;
    if (next < C[c] || next - C[c] != occ[c]) {
      return corrupt_data("corrupt C array (CARR: C[" + std::to_string(c + 1) + "] - C[" + std::to_string(c) +
                          "] is not the BWT's count of " + std::string(1, "ACGT"[c]) + ")");
    }
  }
  std::vector<std::uint8_t> symbols(special_rows.size()), marked(special_rows.size());
  WTMAP_TRY(tree.access(special_rows.data(), symbols.data(), symbols.size()));
  if (std::count(symbols.begin(), symbols.end(), 0) != static_cast<std::ptrdiff_t>(symbols.size())) {
    return corrupt_data("corrupt special-row table (SPEC: a special row does not hold the placeholder A)");
  }
  if (!has_sa) return {};
  WTMAP_TRY(sa.marks().access(special_rows.data(), marked.data(), marked.size()));
  if (std::count(marked.begin(), marked.end(), 0) != 0) {
    return corrupt_data("corrupt sampled-row marks (SMPB: a special row is not marked as sampled)");
  }
  return {};
}

// CARR: C[0..3].
Status read_c_array(std::istream& in, const std::string& path, std::uint64_t (&C)[4]) {
  auto carray = file::read_section(in, "CARR", path);
  if (!carray.ok()) return carray.status();
  file::PayloadReader r(*carray, path + ": C array");
  for (auto& c : C) WTMAP_TRY(r.get(c));
  return r.finish();
}

// SPEC: at most n special rows (check_dna_tables checks them against the tree).
Status read_special_rows(std::istream& in, const std::string& path, std::uint64_t n, std::vector<std::uint64_t>& rows) {
  auto specials = file::read_section(in, "SPEC", path);
  if (!specials.ok()) return specials.status();
  file::PayloadReader r(*specials, path + ": special-row");
  WTMAP_TRY(r.get_array(rows, n));
  return r.finish();
}

// PACK: the forward text's words; for IndexParts::search_only checksummed on the way past and
// not kept (text stays empty).
Status read_packed_text(std::istream& in, const std::string& path, std::uint64_t m, const std::vector<Fragment>& fragments,
                        IndexParts parts, Backend backend, PackedText& text) {
  using Words = std::vector<std::uint64_t>;
  auto read_words = [&](std::istream& payload, std::uint64_t size) -> Result<Words> {
    if (parts == IndexParts::search_only) {
      payload.ignore(static_cast<std::streamsize>(size));
      if (static_cast<std::uint64_t>(payload.gcount()) != size) return corrupt_data("truncated index file (in the PACK section)");
      return Words{};
    }
    return file::read_u64_array(payload, size, PackedText::num_words(m), "packed text");
  };
  auto words = file::read_streamed_section(in, "PACK", path, read_words);
  if (!words.ok()) return words.status();
  if (parts == IndexParts::search_only) return {};
  auto packed = PackedText::from_words(*words, m, fragments, backend);
  if (!packed.ok()) return Status{packed.status().code(), path + ": " + packed.status().message()};
  text = std::move(packed.value());
  return {};
}

}  // namespace

namespace pipeline {

// The DNA alphabet's steps of the pipeline (fm_index_pipeline.hpp): T = F # rc(F) $ over both
// strands, the BWT in one quad-vector level with # and $ as a placeholder A listed as special
// rows (CARR, SPEC), the packed forward text (PACK) and the k-mer table built at every load.
struct DnaIndexPolicy {
  using Index = FmIndex;
  using Reference = fmindex::Reference;
  using Tree = WaveletTree<std::uint8_t, 4>;
  static constexpr std::uint8_t kTreeCodeOffset = kFirstTextSymbol;  // base c: text code 2 + c, tree code c
  static constexpr bool kListsSeparatorRows = true;                  // the special rows

  std::uint32_t kmer_length = kKmerLengthBySize;
  std::uint64_t C[4] = {0, 0, 0, 0};
  std::vector<std::uint64_t> special_rows;
  PackedText text;

  // T = F # rc(F) $
  Result<TextCodes> encode_text(const Reference& ref) const {
    const std::uint64_t m = ref.forward.size();
    const std::uint64_t n = 2 * m + 2;
    TextCodes t(n);
    // On every CPU thread: a human genome's 6 G symbols took seconds on one.
    wtmap::detail::parallel_for_ranges(m, [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t i = begin; i < end; ++i) {
        const std::uint8_t c = ref.forward[i];
        t[i] = c == kSeparator ? kTextSeparator : static_cast<std::uint8_t>(kFirstTextSymbol + c);
        t[2 * m - i] = c == kSeparator ? kTextSeparator : static_cast<std::uint8_t>(kFirstTextSymbol + 3 - c);
      }
    });
    t[m] = kTextSeparator;
    t[n - 1] = kTextEnd;
    return t;
  }
  std::uint64_t sigma() const { return 4; }
  std::string tree_name() const { return "wavelet tree"; }
  Status keep_build_tables(const Reference& ref, BwtRows& rows, Backend backend) {
    C[0] = rows.separator_rows.size();  // the rows whose suffix starts with $ or #
    for (unsigned c = 0; c + 1 < 4; ++c) C[c + 1] = C[c] + rows.counts[c];
    special_rows = std::move(rows.separator_rows);
    auto packed = PackedText::build(ref.forward, ref.fragments, backend);
    if (!packed.ok()) return packed.status();
    text = std::move(packed.value());
    return {};
  }

  Status check_header(const file::IndexHeader& header, const std::string& path) const {
    if (header.alphabet != Alphabet::dna) {
      return invalid_argument(path + ": a " + std::string(alphabet_name(header.alphabet)) +
                              " index (wtmap index --alphabet " + alphabet_name(header.alphabet) +
                              "); this needs a DNA index");
    }
    if (header.rows != 2 * header.forward_length + 2) return corrupt_data(path + ": inconsistent index header");
    return {};
  }
  Status read_tables(std::istream& in, const std::string& path, const file::IndexHeader& header,
                     const std::vector<Contig>&, const std::vector<Fragment>& fragments, IndexParts parts,
                     Backend backend) {
    WTMAP_TRY(read_c_array(in, path, C));
    WTMAP_TRY(read_special_rows(in, path, header.rows, special_rows));
    if (header.version < kDnaIndexVersion) return {};  // no packed text in a version 1 file
    return read_packed_text(in, path, header.forward_length, fragments, parts, backend, text);
  }
  std::vector<std::uint64_t> sampled_after_separators(const std::vector<Fragment>& fragments, std::uint64_t m) const {
    return positions_after_separators(fragments, m);
  }
  Status check_tables(const Tree& tree, const SampledSuffixArray& sa, const std::vector<Fragment>& fragments,
                      IndexParts parts, const std::string& path) const {
    if (tree.sigma() != 4) return corrupt_data(path + ": sections disagree on the text length");
    if (Status checked = check_dna_tables(tree, C, special_rows, 2 * fragments.size(), sa, parts == IndexParts::all);
        !checked.ok()) {
      return Status{checked.code(), path + ": " + checked.message()};
    }
    return {};
  }

  Result<Index> make_index(Tree&& tree, SampledSuffixArray&& sa, std::vector<Contig> contigs,
                           std::vector<Fragment> fragments, std::uint64_t m, std::uint32_t sample_rate) {
    FmIndex index(std::move(tree), std::move(sa), std::move(contigs), std::move(fragments), m, sample_rate);
    std::copy(C, C + 4, index.C_);
    index.special_rows_host_ = std::move(special_rows);
    index.text_ = std::move(text);
    WTMAP_TRY(index.bind(kmer_length));
    return std::move(index);
  }

  static const Tree& tree(const Index& index) { return index.bwt_; }
  // Version 3 with the packed text, version 1 again for an index loaded from one (no text).
  static Status file_parts(const Index& index, file::IndexHeader& header, std::vector<file::Section>& own) {
    const bool has_text = !index.text_.view().empty();
    header.version = has_text ? kDnaIndexVersion : kDnaIndexVersionWithoutText;
    header.alphabet = Alphabet::dna;
    own = {{"CARR", {}}, {"SPEC", {}}};
    for (unsigned c = 0; c < 4; ++c) file::put(own[0].payload, index.C_[c]);
    file::put_array(own[1].payload, index.special_rows_host_);
    if (!has_text) return {};
    own.push_back({"PACK", {}, [&index](std::ostream& out) {
                     auto words = index.text_.words();
                     return words.ok() ? file::write_array(out, *words) : words.status();
                   }});
    return {};
  }
};

}  // namespace pipeline

FmIndex::FmIndex(FmIndex&&) noexcept = default;
FmIndex& FmIndex::operator=(FmIndex&&) noexcept = default;
FmIndex::~FmIndex() = default;

std::size_t FmIndex::size_in_bytes() const {
  return bwt_.size_in_bytes() + sa_.size_in_bytes() + tables_.size() + text_.size_in_bytes() + kmers_.size_in_bytes();
}

Result<FmIndex> FmIndex::build(const Reference& ref, const FmIndexOptions& options) {
  pipeline::DnaIndexPolicy dna;
  dna.kmer_length = options.kmer_length;
  return pipeline::build_index(ref, options, std::move(dna));
}

FmIndex::FmIndex(WaveletTree<std::uint8_t, 4>&& bwt, SampledSuffixArray&& sa, std::vector<Contig> contigs,
                 std::vector<Fragment> fragments, std::uint64_t forward_length, std::uint32_t sample_rate)
    : FmIndexBase(std::move(sa), std::move(contigs), std::move(fragments), forward_length, sample_rate),
      bwt_(std::move(bwt)) {}

// Lays out the backend tables (special rows, their bucket counts) and the view.
Status FmIndex::bind(std::uint32_t kmer_length) {
  const std::uint64_t n = bwt_.size();
  const std::uint64_t buckets = (n >> FmIndexView::kBucketShift) + 1;
  std::vector<std::uint64_t> before(buckets, 0);
  for (std::uint64_t b = 0, j = 0; b < buckets; ++b) {
    while (j < special_rows_host_.size() && special_rows_host_[j] < (b << FmIndexView::kBucketShift)) ++j;
    before[b] = j;
  }
  const std::uint64_t specials = special_rows_host_.size();
  auto tables = Buffer::allocate(backend(), (specials + buckets) * 8, "FM-index tables");
  if (!tables.ok()) return tables.status();
  tables_ = std::move(tables.value());
  WTMAP_TRY(tables_.copy_from_host(0, special_rows_host_.data(), specials * 8));
  WTMAP_TRY(tables_.copy_from_host(specials * 8, before.data(), buckets * 8));

  const auto* base = reinterpret_cast<const std::uint64_t*>(tables_.data());
  view_ = FmIndexView{};
  view_.bwt = bwt_.view();
  view_.rows = n;
  for (unsigned c = 0; c < 4; ++c) view_.C[c] = C_[c];
  view_.C[4] = n;
  view_.special_rows = base;
  view_.num_special = specials;
  view_.special_before_bucket = base + specials;
  view_.sa = sa_.view();
  view_.sa.sample_rate = sample_rate_;
  view_.text = text_.view();
  return set_kmer_length(kmer_length);
}

Status FmIndex::set_kmer_length(std::uint32_t k, std::uint32_t most_levels) {
  if (k == kKmerLengthBySize) k = KmerIntervalTable::default_length(view_.rows);
  KmerIntervalTable table;
  if (k != 0) {  // searched through the current table, if any: the intervals are the same
    // Levels held: on the CPU at most kMaxStoredOnCpu (and most_levels); on the GPU all of them
    // (kmer_interval does not step on the device), k itself lowered until its table takes at most
    // half the device memory available (free, within WTMAP_GPU_MEM_LIMIT; the rest is the batches').
    std::uint32_t stored = std::max(1u, std::min(k, most_levels));
    if (backend() == Backend::cpu) {
      stored = std::min(stored, KmerIntervalTable::kMaxStoredOnCpu);
    } else if (k <= KmerIntervalTable::kMaxLength) {
      const Result<std::size_t> available = device_memory_available();
      if (!available.ok()) return available.status();
      const std::size_t free_bytes = available.value();
      while (k > 1 && (sizeof(SaInterval) << (2 * k)) > free_bytes / 2) --k;
      stored = k;
    }
    auto built = KmerIntervalTable::build(*this, k, stored);
    if (!built.ok()) return built.status();  // the index keeps its table
    table = std::move(built.value());
  }
  kmers_ = std::move(table);
  view_.kmers = kmers_.view();
  return {};
}

ReferenceHit FmIndex::to_reference(std::uint64_t p, std::uint64_t length) const {
  const std::uint64_t m = forward_length_;
  ReferenceHit hit;
  std::uint64_t forward_start = p;
  if (p > m) {  // reverse-complement half: rc(F) starts at m + 1
    hit.reverse = true;
    forward_start = m - (p - (m + 1)) - length;
  }
  const Fragment& f = fragment_at(forward_start);
  hit.contig = f.contig;
  hit.position = f.contig_offset + (forward_start - f.text_start);
  return hit;
}

Status FmIndex::save(const std::string& path) const { return pipeline::save_index<pipeline::DnaIndexPolicy>(*this, path); }

Result<FmIndex> FmIndex::load(const std::string& path, Backend backend, std::uint32_t kmer_length, IndexParts parts) {
  pipeline::DnaIndexPolicy dna;
  dna.kmer_length = kmer_length;
  return pipeline::load_index(path, backend, parts, std::move(dna));
}

}  // namespace wtmap::fmindex
