// wtmap fmindex: the owning FM-index of a DNA reference (both strands), its index file, and
// batched backward search and locate on the CPU or the GPU.
//
// Space: the BWT of 2m + 2 symbols (m = forward text length) in a quad-vector wavelet tree
// (2.3 bits per symbol), a sampled-row bit vector (1.06 bits per symbol) and 8 bytes per SA
// sample (every s-th text position, s = 32 by default: 2 bits per symbol), plus small tables.
// Construction: libdivsufsort's divsufsort64 on the host (8 bytes per text symbol, the peak),
// then the wavelet tree and bit vector on the chosen backend. See fm_index_view.hpp for queries.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "wtmap/core/bit_vector.hpp"
#include "wtmap/core/buffer.hpp"
#include "wtmap/core/status.hpp"
#include "wtmap/core/wavelet_tree.hpp"
#include "wtmap/fmindex/fm_index_view.hpp"
#include "wtmap/fmindex/reference.hpp"

namespace wtmap::fmindex {

struct FmIndexOptions {
  std::uint32_t sample_rate = 32;  // SA sample every s text positions (-s)
  Backend backend = Backend::gpu;
  std::function<void(const std::string&)> progress;  // optional: one line per build stage
};

// A pattern inside a batch: codes[offset, offset + length) of the batch's code array.
struct PatternRef {
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
};

// A match in reference coordinates.
struct ReferenceHit {
  std::uint32_t contig = 0;
  std::uint64_t position = 0;  // 0-based leftmost base on the forward strand
  bool reverse = false;        // the pattern matches the reverse strand
};

class FmIndex {
 public:
  FmIndex(FmIndex&&) noexcept;
  FmIndex& operator=(FmIndex&&) noexcept;
  FmIndex(const FmIndex&) = delete;
  FmIndex& operator=(const FmIndex&) = delete;
  ~FmIndex();

  static Result<FmIndex> build(const Reference& reference, const FmIndexOptions& options);

  // The index file: sections (header, contigs, fragments, C array, special rows, wavelet tree,
  // sampled rows, SA samples), each with a CRC-32; written to a temporary name, then renamed.
  Status save(const std::string& path) const;
  // Rejects truncated, corrupt, foreign and future-version files with a message saying which.
  static Result<FmIndex> load(const std::string& path, Backend backend);

  const FmIndexView& view() const { return view_; }
  Backend backend() const { return bwt_.backend(); }
  std::uint32_t sample_rate() const { return sample_rate_; }
  const std::vector<Contig>& contigs() const { return contigs_; }
  const std::vector<Fragment>& fragments() const { return fragments_; }
  std::uint64_t forward_length() const { return forward_length_; }  // m
  std::size_t size_in_bytes() const;

  // Reference coordinates of a match of `length` at text position `text_position`.
  ReferenceHit to_reference(std::uint64_t text_position, std::uint64_t length) const;

  // SA interval of each pattern; codes (0..3, anything else never matches) in host memory.
  Status search(const std::uint8_t* codes, std::uint64_t codes_size, const PatternRef* patterns, std::size_t count,
                SaInterval* out) const;
  // Text position of each row (rows < view().rows).
  Status locate(const std::uint64_t* rows, std::uint64_t* text_positions, std::size_t count) const;

 private:
  FmIndex(WaveletTree<std::uint8_t, 4>&& bwt, RankSelectBitVector&& sampled);
  Status bind(const std::vector<std::uint64_t>& samples);

  WaveletTree<std::uint8_t, 4> bwt_;
  RankSelectBitVector sampled_;
  Buffer tables_;  // special rows | special counts per bucket | SA samples, on the backend
  std::vector<std::uint64_t> special_rows_host_;
  std::uint64_t num_samples_ = 0;
  std::uint64_t C_[5] = {0, 0, 0, 0, 0};
  std::vector<Contig> contigs_;
  std::vector<Fragment> fragments_;
  std::uint64_t forward_length_ = 0;
  std::uint32_t sample_rate_ = 32;
  FmIndexView view_{};
  std::unique_ptr<detail::QueryWorkspace> workspace_;
};

}  // namespace wtmap::fmindex
