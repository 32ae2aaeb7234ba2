#include "wtmap/fmindex/alphabet.hpp"

#include <utility>

namespace wtmap::fmindex {

const char* alphabet_name(Alphabet a) {
  switch (a) {
    case Alphabet::dna: return "dna";
    case Alphabet::protein: return "protein";
    case Alphabet::byte: return "byte";
  }
  return "unknown";
}

std::optional<Alphabet> parse_alphabet(const std::string& name) {
  for (Alphabet a : {Alphabet::dna, Alphabet::protein, Alphabet::byte}) {
    if (name == alphabet_name(a)) return a;
  }
  return std::nullopt;
}

int normalized_symbol(Alphabet a, unsigned char byte) {
  switch (a) {
    case Alphabet::protein: {
      // The 20 standard amino acids with B (D or N), J (I or L), O (pyrrolysine), U
      // (selenocysteine), X (any) and Z (E or Q) are the 26 capital letters; '*' is the stop.
      const unsigned char upper = byte >= 'a' && byte <= 'z' ? static_cast<unsigned char>(byte - 'a' + 'A') : byte;
      if (upper == '*' || (upper >= 'A' && upper <= 'Z')) return upper;
      return -1;
    }
    case Alphabet::byte: return byte == '\n' || byte == '\r' ? -1 : byte;
    case Alphabet::dna: break;
  }
  return -1;
}

SymbolMap::SymbolMap(Alphabet alphabet, std::vector<std::uint8_t> symbols)
    : alphabet_(alphabet), symbols_(std::move(symbols)) {
  std::array<std::uint8_t, 256> code_of{};
  for (std::size_t k = 0; k < symbols_.size(); ++k) code_of[symbols_[k]] = static_cast<std::uint8_t>(k + 1);
  for (unsigned b = 0; b < 256; ++b) {
    const int symbol = normalized_symbol(alphabet_, static_cast<unsigned char>(b));
    codes_[b] = symbol < 0 ? 0 : code_of[static_cast<unsigned>(symbol)];
  }
}

}  // namespace wtmap::fmindex
