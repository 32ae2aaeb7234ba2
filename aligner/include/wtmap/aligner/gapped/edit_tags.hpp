// wtmap aligner (gapped): the SAM text of a CIGAR, and the NM and MD tags of an alignment, from
// the read's and the reference's codes and the CIGAR (SAM specification 1.6, optional fields; samtools calmd's rules:
// an N on either side counts as a mismatch).
//
// Space: the MD string. Time: O(CIGAR length + aligned bases).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wtmap/core/status.hpp"

namespace wtmap::aligner::gapped {

// A BAM-encoded CIGAR (length << 4 | op) as SAM writes it, "10S80M2D10M"; "*" when it is empty
// (SAM's "unavailable"), as in the MC tag of an unmapped mate.
std::string cigar_text(const std::vector<std::uint32_t>& cigar);

struct EditTags {
  std::uint32_t nm = 0;  // mismatches + inserted bases + deleted bases
  std::string md;        // e.g. "10A5^AC6": matches, the reference base of a mismatch, ^deleted bases
};

// query: the read's codes from its first aligned base (after any leading soft clip); ref: the
// reference's codes from the alignment's first position; cigar: BAM-encoded operations. M, =, X
// compare bases, I adds to NM, D to NM and MD, S and H are skipped; N and P are refused, as is a
// CIGAR that runs past query_length or ref_length.
Result<EditTags> edit_tags(const std::uint8_t* query, std::uint64_t query_length, const std::uint8_t* ref,
                           std::uint64_t ref_length, const std::uint32_t* cigar, std::uint32_t n_cigar);

}  // namespace wtmap::aligner::gapped
