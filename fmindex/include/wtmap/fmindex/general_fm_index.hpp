// wtmap fmindex: the owning FM-index of a protein or byte reference (one strand), its index file,
// and batched backward search and locate on the CPU or the GPU -- the thesis' general alphabets.
//
// Space: the BWT of n = m + 1 symbols (m = the records and their separators) in a binary
// level-wise wavelet tree over sigma = symbols + 1 codes: n * ceil(log2 sigma) bits at most (the
// reduced codes average less) plus 5.7 % for rank/select support; the sampled suffix array (1.06
// bits plus 64 / s bits per symbol, and 8 bytes per record); the contig and fragment tables. For
// 20 amino acids in records of a few hundred, s = 32: 8.2 bits per symbol. Construction:
// divsufsort64 on the host (8 bytes per symbol, plus the text, the BWT and the reference: about
// 12 bytes per symbol at the peak), then the tree and the sampled rows on the chosen backend.
// Queries: general_fm_index_view.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wtmap/core/status.hpp"
#include "wtmap/core/wavelet_tree.hpp"
#include "wtmap/fmindex/alphabet.hpp"
#include "wtmap/fmindex/fm_index_base.hpp"
#include "wtmap/fmindex/general_fm_index_view.hpp"
#include "wtmap/fmindex/symbol_reference.hpp"

namespace wtmap::fmindex {

extern template class FmIndexBase<GeneralFmIndexView>;
namespace pipeline {
struct GeneralIndexPolicy;
}

// Inherited from FmIndexBase: view(), backend(), sample_rate(), contigs(), fragments(),
// forward_length(); search() with the codes of symbols() (code(), below; 0 never matches) and
// locate().
class GeneralFmIndex : public FmIndexBase<GeneralFmIndexView> {
 public:
  GeneralFmIndex(GeneralFmIndex&&) noexcept;
  GeneralFmIndex& operator=(GeneralFmIndex&&) noexcept;
  ~GeneralFmIndex();

  // Uses options.sample_rate, .backend and .progress, as FmIndex::build does.
  static Result<GeneralFmIndex> build(const SymbolReference& reference, const FmIndexOptions& options);

  // The index file, format version 2 (kGeneralIndexVersion): sections header (with the
  // alphabet), contigs, fragments, symbol map, wavelet tree, sampled rows, SA samples, each with a
  // CRC-32; the same section code as FmIndex, written to a temporary name and renamed.
  Status save(const std::string& path) const;
  // Rejects truncated, corrupt, foreign and future-version files with a message saying which,
  // and DNA indexes (FmIndex loads those).
  static Result<GeneralFmIndex> load(const std::string& path, Backend backend);

  Alphabet alphabet() const { return symbols_.alphabet(); }
  // The symbols of the text and the search code of every byte.
  const SymbolMap& symbols() const { return symbols_; }
  std::uint8_t code(char byte) const { return symbols_.code(byte); }
  std::size_t size_in_bytes() const;

  // Reference coordinates of a match at text position `text_position`: the record and the
  // position in it, reverse always false. (`length` only keeps the signature FmIndex's: a
  // one-strand match starts where it is found.)
  ReferenceHit to_reference(std::uint64_t text_position, std::uint64_t length = 0) const;

 private:
  GeneralFmIndex(WaveletTree<std::uint8_t, 2>&& bwt, SampledSuffixArray&& sa, SymbolMap symbols,
                 std::vector<Contig> contigs, std::vector<Fragment> fragments, std::uint64_t forward_length,
                 std::uint32_t sample_rate);
  void bind();
  friend struct pipeline::GeneralIndexPolicy;  // build, load and save: the general alphabets' steps

  WaveletTree<std::uint8_t, 2> bwt_;
  SymbolMap symbols_;
};

}  // namespace wtmap::fmindex
