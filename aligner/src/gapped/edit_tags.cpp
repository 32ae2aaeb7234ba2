// A CIGAR's text, and NM and MD from codes and a CIGAR (see edit_tags.hpp).
#include "wtmap/aligner/gapped/edit_tags.hpp"

#include <algorithm>
#include <cstring>

namespace wtmap::aligner::gapped {

namespace {
constexpr char kBaseLetters[] = "ACGTN";
char letter(std::uint8_t code) { return kBaseLetters[code < 4 ? code : 4]; }

// Whether a[0, 8) and b[0, 8) hold the same bases, none of them N (a code of 4 or more).
bool equal_bases8(const std::uint8_t* a, const std::uint8_t* b) {
  std::uint64_t x = 0, y = 0;
  std::memcpy(&x, a, 8);
  std::memcpy(&y, b, 8);
  return x == y && (x & 0xFCFCFCFCFCFCFCFCull) == 0;
}
}  // namespace

std::string cigar_text(const std::vector<std::uint32_t>& cigar) {
  if (cigar.empty()) return "*";
  std::string text;
  for (const std::uint32_t op : cigar) {
    text += std::to_string(op >> 4);
    text += "MIDNSHP=X"[std::min<std::uint32_t>(op & 0xF, 8)];  // BAM's operation codes 0..8
  }
  return text;
}

Result<EditTags> edit_tags(const std::uint8_t* query, std::uint64_t query_length, const std::uint8_t* ref,
                           std::uint64_t ref_length, const std::uint32_t* cigar, std::uint32_t n_cigar) {
  EditTags tags;
  std::uint64_t q = 0, r = 0, run = 0;  // run: matching bases since the last MD item
  for (std::uint32_t k = 0; k < n_cigar; ++k) {
    const std::uint32_t op = cigar[k] & 0xF, len = cigar[k] >> 4;
    switch (op) {
      case 0:
      case 7:
      case 8:  // M, =, X
        if (q + len > query_length || r + len > ref_length) return invalid_argument("CIGAR runs past the sequences");
        // Most columns match: eight at a time where eight do (equal words, no N), else one.
        for (std::uint32_t i = 0; i < len;) {
          if (len - i >= 8 && equal_bases8(query + q, ref + r)) {
            run += 8, i += 8, q += 8, r += 8;
            continue;
          }
          if (query[q] == ref[r] && query[q] < 4) {
            ++run;
          } else {
            ++tags.nm;
            tags.md += std::to_string(run);
            tags.md += letter(ref[r]);
            run = 0;
          }
          ++i, ++q, ++r;
        }
        break;
      case 1:  // I
        if (q + len > query_length) return invalid_argument("CIGAR runs past the query");
        q += len;
        tags.nm += len;
        break;
      case 2:  // D
        if (r + len > ref_length) return invalid_argument("CIGAR runs past the reference");
        tags.md += std::to_string(run);
        tags.md += '^';
        for (std::uint32_t i = 0; i < len; ++i) tags.md += letter(ref[r++]);
        tags.nm += len;
        run = 0;
        break;
      case 4:
      case 5:  // S, H: not aligned (query starts after a leading clip)
        break;
      default:
        return invalid_argument("CIGAR operation " + std::to_string(op) + " has no place in a read's alignment");
    }
  }
  tags.md += std::to_string(run);
  return tags;
}

}  // namespace wtmap::aligner::gapped
