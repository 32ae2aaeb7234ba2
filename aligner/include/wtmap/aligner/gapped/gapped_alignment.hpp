// wtmap aligner (gapped): what a gapped local alignment of a read is -- the result the gapped
// engine (seeds -> chains -> extension -> global alignment) hands to the output (SamWriter), as
// alignment.hpp's ReadAlignment is for the k-mismatch search. bwa mem's model (Li 2013,
// arXiv:1303.3997): a read has a primary alignment, maybe supplementary ones for other parts of a
// chimeric read (flag 0x800, SA tag), and alternative placements of its primary part that score
// close to it (XA tag); the mapping quality comes from the primary's score against the best other
// score of the same part of the read (sub_score, XS) and the read bases its seeds cover.
//
// Coordinates: `contig`, `position` on the forward strand, as SAM's POS (0-based here); the CIGAR in
// SAM order (along the forward strand), soft clips included, so its query length is the read's
// length; query_begin/query_end delimit the aligned part in the read as given (not reverse
// complemented), as bwa's qb/qe do.
//
// Space: a GappedHit is some 80 bytes plus 4 per CIGAR operation and its MD string; a
// GappedReadAlignment one hit plus its supplementary and alternative hits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace wtmap::aligner::gapped {

struct GappedHit {
  std::uint32_t contig = 0;
  std::uint64_t position = 0;        // 0-based leftmost reference base of the aligned part
  std::uint64_t reference_end = 0;   // one past its rightmost base (position + the CIGAR's reference length)
  bool reverse = false;              // the read's reverse complement aligns to the forward strand
  std::uint32_t query_begin = 0;     // aligned part of the read, in the read as given
  std::uint32_t query_end = 0;
  std::int32_t score = 0;            // AS: the local alignment's score (clipping penalties not counted)
  std::vector<std::uint32_t> cigar;  // BAM encoding (length << 4 | op), M/I/D/S, SAM order
  std::uint32_t edit_distance = 0;   // NM: mismatches (N included) + inserted + deleted bases
  std::string md;                    // MD:Z value
  // A supplementary hit's own mapping quality (mapping_quality of its region, as bwa mem's
  // mem_reg2sam computes it); the output caps it by the primary's. Unused on the primary (see
  // GappedReadAlignment::mapq) and on alternatives (XA carries none).
  std::uint8_t mapq = 0;
  // A supplementary hit's XS: its region's max(sub, csub) (mem_reg2aln). Unused on the primary
  // (GappedReadAlignment::sub_score and chain_sub_score) and on alternatives.
  std::int32_t sub_score = 0;
};

// A place of a read that pairing may choose (bwa mem's mem_pair scores every region of both
// mates, not only the reported ones): a region after finish_regions, without its CIGAR. bwa mem
// keeps every region; kMaxPairCandidates bounds them (a read has more only inside a repeat of
// more copies, where its pairs tie anyway). Some 56 bytes each.
struct PairCandidate {
  std::uint32_t contig = 0;
  std::uint64_t position = 0, reference_end = 0;  // forward strand, as GappedHit's
  bool reverse = false;
  std::uint32_t query_begin = 0, query_end = 0;  // in the read as given
  std::int32_t score = 0, true_score = 0;        // true_score: the band its global alignment needs
  std::int32_t secondary = -1;                   // the candidate it is secondary to; -1: a primary
  std::int32_t tandem_sub = 0;                   // bwa's csub, for pairing's cap (MateHit::tandem_sub)
};
constexpr std::size_t kMaxPairCandidates = 100;

struct GappedReadAlignment {
  bool mapped = false;
  GappedHit primary;
  // MAPQ inputs, as bwa mem's mem_alnreg_t names them.
  std::int32_t sub_score = 0;        // sub: best score of another alignment of the primary's part (XS; 0: none)
  std::int32_t chain_sub_score = 0;  // csub: best score of another seed chain over the same part
  std::uint32_t sub_count = 0;       // sub_n: how many other alignments score close to the primary
  std::uint32_t seed_coverage = 0;   // seedcov: read bases the primary's seeds cover
  float repeat_fraction = 0;         // frac_rep: share of the read in seeds of more than max_occ hits
  std::uint8_t mapq = 0;             // 0..60, gapped::mapping_quality of the fields above
  std::uint8_t flags = 0;            // SearchFlags (kTooShort, kTooLong, ...) where a read was not aligned
  std::vector<GappedHit> supplementary;  // other parts of a chimeric read (flag 0x800; SA)
  std::vector<GappedHit> alternatives;   // XA: other placements of the primary's part
  // Pairing's: every region of the read, best first (candidates[0] is the primary), and the hits
  // of those among them that pairing may write and no hit above holds (GappedMapper::rescue_mates
  // keeps there the rescued hits outside XA, and aligns those pairing chooses).
  std::vector<PairCandidate> candidates;
  std::vector<GappedHit> pair_hits;
};

}  // namespace wtmap::aligner::gapped
