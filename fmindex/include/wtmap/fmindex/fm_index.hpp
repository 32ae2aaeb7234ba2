// wtmap fmindex: the owning FM-index of a DNA reference (both strands), its index file, and
// batched backward search and locate on the CPU or the GPU.
//
// Space: the BWT of 2m + 2 symbols (m = forward text length) in a quad-vector wavelet tree
// (2.3 bits per symbol), a sampled-row bit vector (1.06 bits per symbol) and 8 bytes per SA
// sample (every s-th text position, s = 32 by default: 2 bits per symbol), the forward text
// packed (2 bits per forward base: 1 bit per symbol; packed_text.hpp), plus small tables.
// Construction: the suffix array on the host by libdivsufsort's divsufsort64 (8 bytes per text
// symbol, the peak) or by the blockwise sorter a round of rows at a time (FmIndexOptions::
// sa_builder; blockwise_build_bytes), then the wavelet tree and bit vector on the chosen backend. See fm_index_view.hpp for queries.
// Protein and byte references have GeneralFmIndex (general_fm_index.hpp); both share the tables,
// the sampled suffix array, search and locate (fm_index_base.hpp), and one build, load and save
// pipeline with the alphabet as a policy (fmindex/src/fm_index_pipeline.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wtmap/core/buffer.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/core/wavelet_tree.hpp"
#include "wtmap/fmindex/fm_index_base.hpp"
#include "wtmap/fmindex/fm_index_view.hpp"
#include "wtmap/fmindex/kmer_interval_table.hpp"
#include "wtmap/fmindex/packed_text.hpp"
#include "wtmap/fmindex/reference.hpp"

namespace wtmap::fmindex {

extern template class FmIndexBase<FmIndexView>;
namespace pipeline {
struct DnaIndexPolicy;
}

// Inherited from FmIndexBase: view(), backend(), sample_rate(), contigs(), fragments(),
// forward_length(); search() with codes 0..3 (search_code in reference.hpp; any other code never
// matches) and locate().
class FmIndex : public FmIndexBase<FmIndexView> {
 public:
  FmIndex(FmIndex&&) noexcept;
  FmIndex& operator=(FmIndex&&) noexcept;
  ~FmIndex();

  static Result<FmIndex> build(const Reference& reference, const FmIndexOptions& options);

  // The index file: sections (header, contigs, fragments, C array, special rows, packed text,
  // wavelet tree, sampled rows, SA samples), each with a CRC-32; written to a temporary name,
  // then renamed. The format is version 3 (kDnaIndexVersion); an index loaded from a version 1
  // file, which has no packed text, is saved as version 1 again.
  Status save(const std::string& path) const;
  // Rejects truncated, corrupt, foreign and future-version files with a message saying which,
  // and protein and byte indexes (GeneralFmIndex loads those) naming their alphabet.
  // kmer_length as in FmIndexOptions: the table is built anew at every load. search_only leaves
  // out the packed text too (view().text is empty, as for a version 1 file).
  static Result<FmIndex> load(const std::string& path, Backend backend, std::uint32_t kmer_length = kKmerLengthBySize,
                              IndexParts parts = IndexParts::all);

  // Replaces the k-mer table by one of length k (0: none; kKmerLengthBySize: by size). Searches
  // give the same intervals with any k; a k of 10-12 saves that many steps of every search. On the
  // CPU the table holds at most KmerIntervalTable::kMaxStoredOnCpu levels, and most_levels
  // (kmer_interval steps the rest); on the GPU every level, with k lowered while its table would
  // take more than half the free device memory (kmer_length() says which k it is).
  Status set_kmer_length(std::uint32_t k, std::uint32_t most_levels = KmerIntervalTable::kMaxLength);
  std::uint32_t kmer_length() const { return kmers_.length(); }
  std::uint32_t kmer_levels() const { return kmers_.stored(); }  // levels the table holds

  std::size_t size_in_bytes() const;  // the k-mer table included

  // The forward text packed (empty for an index from a version 1 file or loaded search_only).
  const PackedText& packed_text() const { return text_; }

  // Reference coordinates of a match of `length` at text position `text_position`.
  ReferenceHit to_reference(std::uint64_t text_position, std::uint64_t length) const;

 private:
  FmIndex(WaveletTree<std::uint8_t, 4>&& bwt, SampledSuffixArray&& sa, std::vector<Contig> contigs,
          std::vector<Fragment> fragments, std::uint64_t forward_length, std::uint32_t sample_rate);
  Status bind(std::uint32_t kmer_length);
  friend struct pipeline::DnaIndexPolicy;  // build, load and save: DNA's steps of the pipeline

  WaveletTree<std::uint8_t, 4> bwt_;
  Buffer tables_;  // special rows | special counts per bucket, on the backend
  PackedText text_;
  std::vector<std::uint64_t> special_rows_host_;
  KmerIntervalTable kmers_;
  std::uint64_t C_[4] = {0, 0, 0, 0};
};

}  // namespace wtmap::fmindex
