// wtmap fmindex: what the DNA index (FmIndex, fm_index.hpp) and the general one (GeneralFmIndex,
// general_fm_index.hpp) share on the host -- the build options, the contig and fragment tables, the
// sampled suffix array, and batched backward search and locate on the CPU or the GPU through the
// index's view. Both build, load and save through one pipeline beside this class
// (fmindex/src/fm_index_pipeline.hpp), each alphabet supplying its own steps as a policy.
//
// A View has rows, backward_search(codes, length) and locate(row) as __host__ __device__
// functions; FmIndexBase<View> runs them over a batch with core's batch machinery (one generic
// kernel, or a parallel loop on the CPU). Instantiated for FmIndexView and GeneralFmIndexView.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wtmap/core/config.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/alphabet.hpp"
#include "wtmap/fmindex/blockwise_suffix_array.hpp"
#include "wtmap/fmindex/reference.hpp"
#include "wtmap/fmindex/sa_interval.hpp"
#include "wtmap/fmindex/sampled_suffix_array.hpp"

namespace wtmap {
namespace detail {
class QueryWorkspace;
}

namespace fmindex {

// Index file format versions. A file's header names its version; a loader rejects versions newer
// than kIndexFormatVersion as written by a newer wtmap. Version 1 was the first DNA index;
// version 2 added the alphabet field and the symbol map of protein and byte indexes, so a wtmap
// that predates them says "newer" rather than misreading one; version 3 is a DNA index with the
// alphabet field and the packed forward text (PACK, packed_text.hpp). DNA indexes of version 1
// still load, without the text.
constexpr std::uint32_t kDnaIndexVersionWithoutText = 1;
constexpr std::uint32_t kGeneralIndexVersion = 2;
constexpr std::uint32_t kDnaIndexVersion = 3;
constexpr std::uint32_t kIndexFormatVersion = 3;  // the newest this build reads

// The k-mer table's length chosen by the index's size (KmerIntervalTable::default_length).
constexpr std::uint32_t kKmerLengthBySize = ~std::uint32_t{0};
// The SA sample rate chosen by the index's size (default_sample_rate).
constexpr std::uint32_t kSampleRateBySize = ~std::uint32_t{0};

// What FmIndex::load reads. search_only leaves out the sampled suffix array, the last sections
// and 57 % of a DNA index file (3.1 of 5.4 bits per symbol; their checksums unread too):
// search() works, locate() and save() fail (can_locate() is false). For a copy that only counts
// or searches.
enum class IndexParts { all, search_only };

// How the index build sorts the text's suffixes; both give the same index file, byte for byte.
// divsufsort: libdivsufsort's divsufsort64, one thread, the whole suffix array at 8 bytes a symbol
// (about 22 bytes per base of a DNA reference at the peak). blockwise: blockwise_suffix_array.hpp,
// all CPU threads, a round of rows at a time (at most 10 bytes per base: blockwise_build_bytes).
enum class SuffixArrayBuilder { divsufsort, blockwise };

inline const char* suffix_array_builder_name(SuffixArrayBuilder b) {
  return b == SuffixArrayBuilder::blockwise ? "blockwise" : "divsufsort";
}
inline std::optional<SuffixArrayBuilder> parse_suffix_array_builder(const std::string& name) {
  if (name == "divsufsort") return SuffixArrayBuilder::divsufsort;
  if (name == "blockwise") return SuffixArrayBuilder::blockwise;
  return std::nullopt;
}

// Host bytes that the blockwise build of an index of n rows holds at its peak, the reference
// itself not included: the largest of its three stages -- T encoded (n bytes) and packed; the sort
// (blockwise_suffix_array_bytes) with, from its first rows on, the collected BWT (n bytes),
// sampled-row marks (n / 8) and SA samples (8 n / s, 17/16 of that while they grow); then the BWT,
// the samples twice (host list and backend copy) and the tree being built (about n / 2). For a
// DNA reference of m bases (n = 2m + 2, 3-bit symbols, s = 32, v = 1024, 16 threads): about 7.2
// bytes per base at 3.1 Gbp, 8.2 with the reference's own byte.
std::uint64_t blockwise_build_bytes(std::uint64_t n, std::uint32_t bits, std::uint32_t sample_rate,
                                    const BlockwiseSuffixArrayOptions& options);

// How FmIndex::build and GeneralFmIndex::build make an index.
struct FmIndexOptions {
  SuffixArrayBuilder sa_builder = SuffixArrayBuilder::divsufsort;  // --sa-builder
  BlockwiseSuffixArrayOptions blockwise;  // its sizes for SuffixArrayBuilder::blockwise (0: by size)
  // SA sample every s text positions (-s); kSampleRateBySize: default_sample_rate (8 to 32).
  std::uint32_t sample_rate = kSampleRateBySize;
  std::uint32_t kmer_length = kKmerLengthBySize;  // k-mer table in memory (0: none); not in the file
  Backend backend = Backend::gpu;
  std::function<void(const std::string&)> progress;  // optional: one line per build stage
};

// The alphabet of the index file at `path`, from its header section alone (checked like any
// section): which of FmIndex (dna) and GeneralFmIndex (protein, byte) loads it.
Result<Alphabet> read_index_alphabet(const std::string& path);

// The contig table of the index file at `path` (names and lengths, the @SQ lines of an output),
// from its header and contig sections alone: a command checks what depends on it (a CRAM
// reference) before it loads the index.
Result<std::vector<Contig>> read_index_contigs(const std::string& path);

// A pattern inside a batch: codes[offset, offset + length) of the batch's code array.
struct PatternRef {
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
};

// A match in reference coordinates.
struct ReferenceHit {
  std::uint32_t contig = 0;
  std::uint64_t position = 0;  // 0-based leftmost base on the forward strand
  bool reverse = false;        // the pattern matches the reverse strand (DNA only)
};

template <class View>
class FmIndexBase {
 public:
  FmIndexBase(const FmIndexBase&) = delete;
  FmIndexBase& operator=(const FmIndexBase&) = delete;

  const View& view() const { return view_; }
  Backend backend() const { return sa_.backend(); }
  std::uint32_t sample_rate() const { return sample_rate_; }
  const std::vector<Contig>& contigs() const { return contigs_; }
  const std::vector<Fragment>& fragments() const { return fragments_; }
  std::uint64_t forward_length() const { return forward_length_; }  // m
  // Empty (no rows) for an index loaded with IndexParts::search_only.
  const SampledSuffixArray& sampled_suffix_array() const { return sa_; }

  // SA interval of each pattern; codes in host memory, as the index's search codes make them
  // (a code outside them never matches).
  Status search(const std::uint8_t* codes, std::uint64_t codes_size, const PatternRef* patterns, std::size_t count,
                SaInterval* out) const;
  // Whether locate works: false for an index loaded with IndexParts::search_only (no sampled
  // suffix array), whose view's locate must not be called either.
  bool can_locate() const { return sa_.marks().size() == view_.rows; }
  // Text position of each row (rows < view().rows); invalid_argument where !can_locate(); corrupt_data
  // where a walk meets no SA sample within s steps (a corrupt index the loader could not tell).
  Status locate(const std::uint64_t* rows, std::uint64_t* text_positions, std::size_t count) const;
  // Frees the device buffers that search() and locate() keep between batches (they are made anew
  // for the next one's size): after a batch too large for the device's memory.
  void release_workspace() const;

 protected:
  FmIndexBase(SampledSuffixArray&& sa, std::vector<Contig> contigs, std::vector<Fragment> fragments,
              std::uint64_t forward_length, std::uint32_t sample_rate);
  FmIndexBase(FmIndexBase&&) noexcept;
  FmIndexBase& operator=(FmIndexBase&&) noexcept;
  ~FmIndexBase();

  // The fragment holding forward-text position p (p not a separator).
  const Fragment& fragment_at(std::uint64_t p) const;

  SampledSuffixArray sa_;
  std::vector<Contig> contigs_;
  std::vector<Fragment> fragments_;
  std::uint64_t forward_length_ = 0;
  std::uint32_t sample_rate_ = 32;
  View view_{};  // set by the derived class once its tables are on the backend
  std::unique_ptr<detail::QueryWorkspace> workspace_;
};

}  // namespace fmindex
}  // namespace wtmap
