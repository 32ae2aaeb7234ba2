// wtmap aligner (gapped): bwa mem's single-end algorithm on the GPU or the CPU backend, the same
// steps on either (WTMAP_HD functions run by core's batch operations): SMEM seeds from the
// both-strand index (fmindex/smem.hpp), their occurrences located, chained on the diagonal,
// extended with banded affine-gap alignment and z-drop (extend.hpp), the regions deduplicated and
// marked primary or secondary, the primary's CIGAR from a banded global alignment (global.hpp),
// NM and MD from the reference (edit_tags.hpp). Options and defaults are bwa mem's.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "wtmap/aligner/gapped/gapped_alignment.hpp"
#include "wtmap/aligner/gapped/scoring.hpp"
#include "wtmap/aligner/seq_reader.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::fmindex {
class FmIndex;
}

namespace wtmap::aligner::gapped {

struct GappedOptions {
  Scoring scoring;                      // -A -B -O -E -L -w -d
  std::uint32_t min_seed_length = 19;   // bwa mem -k (wtmap align --min-seed)
  std::uint32_t max_occurrences = 500;  // -c: seeds with more hits are skipped (counted in repeat_fraction)
  std::int32_t min_output_score = 30;   // -T: a read whose best score is lower is reported unmapped
  float mask_level = 0.50f;             // a region overlapping a better one on the read by more is secondary to it
  float drop_ratio = 0.50f;             // -D: chains and regions below this share of the best are dropped
  float xa_drop_ratio = 0.80f;          // alternatives (XA) score at least this share of the primary
  std::uint32_t max_xa_hits = 5;        // -h: more alternatives than this: no XA at all
  std::uint32_t max_read_length = 1000; // longer reads are left unmapped (kTooLong)
};

// Aligns batches of reads against one index (which must outlive it). Not copyable; one batch at a time.
class GappedMapper {
 public:
  static Result<GappedMapper> create(const fmindex::FmIndex& index, const GappedOptions& options);
  GappedMapper(GappedMapper&&) noexcept;
  GappedMapper& operator=(GappedMapper&&) noexcept;
  ~GappedMapper();

  // One alignment per read (letters as SeqRecord::sequence holds them; anything but A/C/G/T/U is N),
  // the same bytes on either backend, for any batch size or thread count. mapq is filled.
  Status map(const std::vector<SeqRecord>& reads, std::vector<GappedReadAlignment>& alignments) {
    return map(reads.data(), reads.size(), alignments);
  }
  // The same for reads[0, count) of an array (a part of a batch). After a device_out_of_memory
  // the alignments are unspecified, and the same reads may be mapped again, whole or in parts.
  Status map(const SeqRecord* reads, std::size_t count, std::vector<GappedReadAlignment>& alignments);

  // Frees the device buffers kept between batches (seeding, locate, the DP's); the next map()
  // makes them anew, for its own size.
  void release_device_memory();

  const GappedOptions& options() const;

 private:
  struct Impl;
  explicit GappedMapper(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// bwa mem's mapping quality of a read's primary alignment (mem_approx_mapq_se): 0..60.
std::uint8_t mapping_quality(const GappedReadAlignment& a, const GappedOptions& options);

}  // namespace wtmap::aligner::gapped
