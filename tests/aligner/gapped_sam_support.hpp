// Test support (gapped output): fixed pseudo-random reference bases, and NM and MD recomputed from
// the reference for a SAM record as read back (the tests' own `samtools calmd`), independent of
// the aligner's edit_tags.
#pragma once

#include <cctype>
#include <cstdint>
#include <string>

namespace wtmap::altest {

// Bases from a linear congruential generator: a reference without repeats of note.
inline std::string pseudo_random_bases(std::size_t length, std::uint32_t seed) {
  std::string s;
  for (std::size_t i = 0; i < length; ++i) {
    seed = seed * 1103515245u + 12345u;
    s += "ACGT"[(seed >> 16) & 3];
  }
  return s;
}

struct MdTags {
  std::int64_t nm = 0;
  std::string md;
};

// NM and MD of `seq` (SEQ as SAM stores it) aligned at 0-based `pos` of `ref` with the CIGAR text
// `cigar`: an N on either side is a mismatch, H is not in SEQ (SAM specification; samtools calmd).
inline MdTags recompute_md(const std::string& ref, std::int64_t pos, const std::string& cigar, const std::string& seq) {
  MdTags out;
  std::size_t q = 0, r = static_cast<std::size_t>(pos), matches = 0, at = 0;
  while (at < cigar.size()) {
    std::size_t end = at;
    while (std::isdigit(static_cast<unsigned char>(cigar[end]))) ++end;
    const std::size_t length = std::stoul(cigar.substr(at, end - at));
    const char code = cigar[end];
    at = end + 1;
    if (code == 'M') {
      for (std::size_t i = 0; i < length; ++i, ++q, ++r) {
        if (seq[q] == ref[r] && seq[q] != 'N') {
          ++matches;
        } else {
          out.md += std::to_string(matches) + ref[r];
          matches = 0;
          ++out.nm;
        }
      }
    } else if (code == 'I') {
      q += length;
      out.nm += static_cast<std::int64_t>(length);
    } else if (code == 'D') {
      out.md += std::to_string(matches) + "^" + ref.substr(r, length);
      matches = 0;
      r += length;
      out.nm += static_cast<std::int64_t>(length);
    } else if (code == 'S') {
      q += length;
    }
  }
  out.md += std::to_string(matches);
  return out;
}

}  // namespace wtmap::altest
