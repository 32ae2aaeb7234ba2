// What both FM-indexes' builds share beyond the templates of fm_index_pipeline.hpp: the pass over
// the suffix array's rows (divsufsort64's whole array, or the blockwise sorter's rounds) that
// derives the BWT, the SA samples, the separator rows and the counts.
#include "fm_index_pipeline.hpp"

#include <algorithm>
#include <optional>

#include "wtmap/fmindex/packed_symbols.hpp"

namespace wtmap::fmindex {
namespace pipeline {
namespace {

// Takes the suffix array's rows in order, any number at a time, and keeps what the index needs of
// them. Space: the BWT (n bytes), the marks (n / 8 bytes), the samples (8 bytes each).
class BwtRowsCollector {
 public:
  BwtRowsCollector(const PackedSymbolsView& text, std::uint32_t sample_rate, std::uint8_t tree_code_offset,
                   bool list_separator_rows)
      : text_(text), offset_(tree_code_offset), list_separators_(list_separator_rows),
        rows_{std::vector<std::uint8_t>(text.n), SampledSuffixArray::Builder(text.n, sample_rate), {}, {}} {}

  // Rows [first_row, first_row + count): the suffixes at sa[0, count).
  Status add(std::uint64_t first_row, const std::uint64_t* sa, std::uint64_t count);
  BwtRows finish() { return std::move(rows_); }

 private:
  struct Piece {  // what each piece of rows keeps of its own, joined in row order
    std::vector<std::uint64_t> separator_rows;
    std::array<std::uint64_t, 256> counts{};
  };

  const PackedSymbolsView& text_;
  std::uint8_t offset_;
  bool list_separators_;
  BwtRows rows_;
};

Status BwtRowsCollector::add(std::uint64_t first_row, const std::uint64_t* sa, std::uint64_t count) {
  const std::uint64_t n = text_.n;
  std::vector<Piece> pieces(rows_.samples.num_pieces());
  WTMAP_TRY(rows_.samples.for_each_piece(first_row, first_row + count, [&](std::uint64_t p, std::uint64_t begin,
                                                                            std::uint64_t end) {
    Piece& piece = pieces[p];
    constexpr std::uint64_t kAhead = 32;  // rows: the symbol before each is a cache miss, asked for early
    for (std::uint64_t r = begin; r < end; ++r) {
      if (r + kAhead < end) {
        const std::uint64_t later = sa[r + kAhead - first_row];
        __builtin_prefetch(text_.words + ((later == 0 ? n - 1 : later - 1) * text_.bits >> 6));
      }
      const std::uint64_t pos = sa[r - first_row];
      const auto prev = static_cast<std::uint8_t>(text_.symbol(pos == 0 ? n - 1 : pos - 1));
      const bool after_separator = prev < kFirstTextSymbol;
      const std::uint8_t code = after_separator ? 0 : static_cast<std::uint8_t>(prev - offset_);
      rows_.bwt[r] = code;
      if (after_separator) {
        if (list_separators_) piece.separator_rows.push_back(r);
      } else {
        ++piece.counts[code];
      }
      rows_.samples.add(p, r, pos, after_separator);
    }
  }));
  for (const Piece& piece : pieces) {
    rows_.separator_rows.insert(rows_.separator_rows.end(), piece.separator_rows.begin(), piece.separator_rows.end());
    for (unsigned c = 0; c < 256; ++c) rows_.counts[c] += piece.counts[c];
  }
  return {};
}

Status no_memory_for_rows() { return Status{StatusCode::out_of_memory, "out of host memory for the BWT and the SA samples"}; }

}  // namespace

Result<BwtRows> suffix_sorted_rows(TextCodes text, std::uint32_t sample_rate, const FmIndexOptions& options,
                                   std::uint8_t tree_code_offset, bool list_separator_rows) {
  const std::uint64_t n = text.size();
  std::vector<std::int64_t> whole;  // divsufsort64's, sorted before the text is packed
  if (options.sa_builder == SuffixArrayBuilder::divsufsort) {
    auto sa = full_suffix_array(text.data(), n);
    if (!sa.ok()) return sa.status();
    whole = std::move(sa.value());
  }
  auto packed = PackedSymbols::build(text.data(), n);
  if (!packed.ok()) return packed.status();
  TextCodes().swap(text);  // freed: `text = {}` would keep its capacity
  try {
    // Made at the first rows: the BWT is not held beside the blockwise sorter's ranking of its
    // sample, whose sort takes more (3 bytes a symbol) than a round does.
    std::optional<BwtRowsCollector> collector;
    auto add = [&](std::uint64_t first_row, const std::uint64_t* sa, std::uint64_t count) {
      if (!collector) collector.emplace(packed->view(), sample_rate, tree_code_offset, list_separator_rows);
      return collector->add(first_row, sa, count);
    };
    if (options.sa_builder == SuffixArrayBuilder::divsufsort) {
      static_assert(sizeof(std::int64_t) == sizeof(std::uint64_t), "the rows are read as unsigned");
      WTMAP_TRY(add(0, reinterpret_cast<const std::uint64_t*>(whole.data()), n));
    } else {
      BlockwiseSuffixArrayOptions blockwise = options.blockwise;
      if (!blockwise.progress) blockwise.progress = options.progress;
      blockwise.backend = options.backend;
      WTMAP_TRY(blockwise_suffix_array(packed->view(), blockwise, add));
    }
    return collector->finish();
  } catch (const std::bad_alloc&) {
    return no_memory_for_rows();
  }
}

}  // namespace pipeline

std::uint64_t blockwise_build_bytes(std::uint64_t n, std::uint32_t bits, std::uint32_t sample_rate,
                                    const BlockwiseSuffixArrayOptions& options) {
  const std::uint64_t packed = PackedSymbols::num_words(n, bits) * 8;
  const std::uint64_t samples = 8 * (n / std::max<std::uint32_t>(sample_rate, 1) + 1);
  const std::uint64_t encode = n + packed;
  const std::uint64_t sort = blockwise_suffix_array_bytes(n, bits, options, n + n / 8 + samples + samples / 16);
  const std::uint64_t tree = n + n / 8 + 2 * samples + n / 2;
  return std::max({encode, sort, tree});
}

}  // namespace wtmap::fmindex
