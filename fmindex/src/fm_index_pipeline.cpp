// The one pass over the suffix array that both FM-indexes' builds share (fm_index_pipeline.hpp).
#include "fm_index_pipeline.hpp"

namespace wtmap::fmindex::pipeline {

Result<BwtRows> bwt_and_samples(std::vector<std::uint8_t> text, std::vector<std::int64_t> sa, std::uint32_t sample_rate,
                                std::uint8_t tree_code_offset, bool list_separator_rows) {
  const std::uint64_t n = text.size();
  BwtRows rows{std::vector<std::uint8_t>(n), SampledSuffixArray::Builder(n, sample_rate), {}, {}};
  struct Piece {  // what each piece of rows keeps of its own, joined in row order below
    std::vector<std::uint64_t> separator_rows;
    std::array<std::uint64_t, 256> counts{};
  };
  std::vector<Piece> pieces(rows.samples.num_pieces());
  WTMAP_TRY(rows.samples.for_each_piece([&](std::uint64_t p, std::uint64_t begin, std::uint64_t end) {
    Piece& piece = pieces[p];
    for (std::uint64_t r = begin; r < end; ++r) {
      const auto pos = static_cast<std::uint64_t>(sa[r]);
      const std::uint8_t prev = text[pos == 0 ? n - 1 : pos - 1];
      const bool after_separator = prev < kFirstTextSymbol;
      const std::uint8_t code = after_separator ? 0 : static_cast<std::uint8_t>(prev - tree_code_offset);
      rows.bwt[r] = code;
      if (after_separator) {
        if (list_separator_rows) piece.separator_rows.push_back(r);
      } else {
        ++piece.counts[code];
      }
      rows.samples.add(p, r, pos, after_separator);
    }
  }));
  std::uint64_t separators = 0;
  for (const Piece& piece : pieces) separators += piece.separator_rows.size();
  rows.separator_rows.reserve(separators);
  for (Piece& piece : pieces) {
    rows.separator_rows.insert(rows.separator_rows.end(), piece.separator_rows.begin(), piece.separator_rows.end());
    for (unsigned c = 0; c < 256; ++c) rows.counts[c] += piece.counts[c];
    piece = Piece{};
  }
  return rows;
}

}  // namespace wtmap::fmindex::pipeline
