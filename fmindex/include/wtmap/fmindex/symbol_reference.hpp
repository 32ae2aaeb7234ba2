// wtmap fmindex: a protein or byte reference read from FASTA -- the text of a GeneralFmIndex.
//
// Each record is one fragment (no symbol splits it; only DNA has ambiguity codes that do), and
// the records are joined by one separator each, so no match spans two records. Protein: lower
// case is upper-cased and any byte that is no amino-acid code is an error. Byte: sequence lines
// are taken verbatim (a line that begins with '>' is a header, as in any FASTA file); the lines
// of a record are concatenated, a '\r' ending a line (CRLF) is dropped and any other '\r' is an
// error. Errors name the file, the line and the contig, as read_fasta's do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wtmap/core/status.hpp"
#include "wtmap/fmindex/alphabet.hpp"
#include "wtmap/fmindex/reference.hpp"

namespace wtmap::fmindex {

// The separator between records in SymbolReference::forward: '\n' ends every FASTA line, so no
// record of either alphabet can hold it.
constexpr std::uint8_t kRecordSeparator = '\n';

struct SymbolReference {
  Alphabet alphabet = Alphabet::protein;
  std::vector<Contig> contigs;
  std::vector<Fragment> fragments;  // one per contig, the whole record, in text order
  // The records' normalised bytes joined by kRecordSeparator: F = r0 \n r1 \n ... rk. Length m.
  std::vector<std::uint8_t> forward;
};

// Reads FASTA or gzip-compressed FASTA (`-` for standard input) under `alphabet` (protein or
// byte). Errors: as read_fasta (empty input, duplicate or empty names, a record without
// symbols, sequence before the first header), and bytes the alphabet does not hold.
Result<SymbolReference> read_symbol_fasta(const std::string& path, Alphabet alphabet);

}  // namespace wtmap::fmindex
