// wtmap fmindex: a DNA reference read from FASTA, cut into fragments of unambiguous bases.
//
// The rule for ambiguity: every maximal run of IUPAC ambiguity codes (N, R, Y, ...) inside a
// contig becomes one separator, as do contig ends; no match, count or alignment may span a
// separator, by construction of the index text. (bwa instead replaces them by random bases;
// we prefer never to report a match over bases the reference does not know.) Lower case is
// upper-cased, U is read as T. Any other byte in a sequence line is an error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wtmap/core/config.hpp"
#include "wtmap/core/status.hpp"

namespace wtmap::fmindex {

struct Contig {
  std::string name;
  std::uint64_t length = 0;  // bases, ambiguity codes included
};

// A maximal run of A/C/G/T inside one contig, and where it sits in the forward text.
struct Fragment {
  std::uint64_t text_start = 0;     // position in the forward text
  std::uint64_t length = 0;
  std::uint64_t contig_offset = 0;  // 0-based position in the contig
  std::uint32_t contig = 0;
};

// Codes of the forward text: bases 0..3 (A, C, G, T) and the separator.
constexpr std::uint8_t kSeparator = 4;

struct Reference {
  std::vector<Contig> contigs;
  std::vector<Fragment> fragments;  // in text order
  // Fragments joined by one separator each: F = f0 # f1 # ... # fk. Its length is m.
  std::vector<std::uint8_t> forward;
  std::uint64_t ambiguous_bases = 0;  // bases that became separators

  // Fragment holding forward-text position p (p must not be a separator).
  const Fragment& fragment_at(std::uint64_t p) const;
};

// Reads FASTA or gzip-compressed FASTA (`-` for standard input). Errors name the file, the
// contig and the line: an empty input, duplicate, empty or invalid (is_valid_contig_name) contig
// names, a contig without
// bases, sequence before the first header, and bytes that are no IUPAC nucleotide code.
Result<Reference> read_fasta(const std::string& path);

// Whether `name` may name a reference sequence in SAM (SAM v1.6, 1.2.1: [0-9A-Za-z!#$%&+./:;?@^_|~-]
// then [0-9A-Za-z!#$%&*+./:;=?@^_|~-]*): no '*' alone (it means "none"), no ',' (XA and SA lists
// split on it), no control or NUL byte. Contig names are checked when read and when an index loads.
bool is_valid_contig_name(std::string_view name);

// Base code of a nucleotide letter: 0..3 for A/C/G/T/U (either case), 4 for other IUPAC
// codes, -1 for anything else.
int nucleotide_code(char c);

// The search code of a pattern or read letter: 0..3 for A/C/G/T/U (either case), 4 for every
// other byte -- a code no backward search extends by, so a pattern holding one matches nothing
// (an N in a read is a mismatch). On the host and the device: `wtmap align` encodes its reads
// on the GPU.
WTMAP_HD constexpr std::uint8_t search_code(char c) {
  // Setting bit 5 folds upper onto lower case, and no byte but a letter onto a letter.
  const unsigned lower = static_cast<unsigned char>(c) | 0x20u;
  return lower == 'a' ? 0 : lower == 'c' ? 1 : lower == 'g' ? 2 : lower == 't' || lower == 'u' ? 3 : 4;
}

}  // namespace wtmap::fmindex
