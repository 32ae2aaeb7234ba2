// wtmap fmindex: the alphabets an index can be built over, and the byte -> symbol-code map of
// the general (protein, byte) indexes.
//
// dna: A/C/G/T, both strands, ambiguity codes as separators (reference.hpp, FmIndex).
// protein: the 20 standard amino acids plus B, J, O, U, X, Z and the stop '*' (lower case read
// as upper case); one strand (GeneralFmIndex).
// byte: any byte but '\n' and '\r' (a FASTA line cannot hold them), taken verbatim, case and
// all; one strand (GeneralFmIndex). At most 254 distinct symbols, so with the separator and the
// terminator the suffix-sorted text never needs more than the 256 values of a byte.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wtmap::fmindex {

enum class Alphabet : std::uint32_t { dna = 0, protein = 1, byte = 2 };

const char* alphabet_name(Alphabet a);
// "dna", "protein" or "byte"; nothing for anything else.
std::optional<Alphabet> parse_alphabet(const std::string& name);

// The normalised form of a reference or pattern byte under a one-strand alphabet: protein
// letters upper-cased, -1 for a byte the alphabet does not hold; byte: the byte itself, -1 for
// '\n' and '\r'. (Not for Alphabet::dna: see nucleotide_code in reference.hpp.)
int normalized_symbol(Alphabet a, unsigned char byte);

// The symbols a general index holds -- the distinct normalised bytes of its text, sorted -- and
// their codes: symbols[k] has code k + 1. Code 0 is kept for the separators and the terminator
// (GeneralFmIndexView), so it doubles as the code of every byte outside the alphabet: a code no
// backward search extends by.
class SymbolMap {
 public:
  static constexpr std::size_t kMaxSymbols = 254;

  SymbolMap() { codes_.fill(0); }
  // `symbols` sorted, distinct, normalised bytes of `alphabet`, at most kMaxSymbols of them
  // (the caller checks; the index loader rejects other maps as corrupt).
  SymbolMap(Alphabet alphabet, std::vector<std::uint8_t> symbols);

  Alphabet alphabet() const { return alphabet_; }
  const std::vector<std::uint8_t>& symbols() const { return symbols_; }
  std::size_t size() const { return symbols_.size(); }
  // Search code of a pattern byte: 1..size() for the alphabet's symbols (after normalisation,
  // so 'a' finds 'A' in a protein index), 0 for anything else.
  std::uint8_t code(char byte) const { return codes_[static_cast<unsigned char>(byte)]; }
  const std::array<std::uint8_t, 256>& codes() const { return codes_; }

 private:
  Alphabet alphabet_ = Alphabet::protein;
  std::vector<std::uint8_t> symbols_;
  std::array<std::uint8_t, 256> codes_{};
};

}  // namespace wtmap::fmindex
