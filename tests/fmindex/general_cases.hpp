// The protein and byte references and pattern sets of the GeneralFmIndex suites
// (test_general_fm_index.cpp, and the protein and byte kinds of the contract in
// fm_index_kinds.hpp), and a GeneralFmIndex built from test records and compared with the naive
// scan (naive_symbol_hits, general_support.hpp) -- what fm_queries.hpp is for FmIndex.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "fm_queries.hpp"
#include "fm_support.hpp"
#include "general_support.hpp"
#include "wtmap/fmindex/general_fm_index.hpp"

namespace wtmap::fmtest {

// ---- reference shapes --------------------------------------------------------------------

enum class SymbolShape {
  protein_random,     // 7 records, every protein letter, mixed case
  protein_large,      // 24 records, 80 k symbols: several rank blocks and select samples per level
  protein_repetitive, // tandem repeats of 1, 2, 3 and 7 letters, and one record of one letter
  protein_one_symbol, // every record the same letter: 1 symbol (tree sigma 2)
  protein_two_symbols,// A and W only: 2 symbols
  protein_tiny,       // one-letter records and a two-letter one
  byte_all,           // every one of the 254 possible bytes (256 text symbols with # and $)
  byte_text,          // repetitive text with blanks, punctuation and tabs
  byte_one_symbol,    // one byte value
  byte_two_symbols,   // NUL and 0xff
};

inline const std::vector<SymbolShape>& all_symbol_shapes() {
  static const std::vector<SymbolShape> shapes = {
      SymbolShape::protein_random,      SymbolShape::protein_large, SymbolShape::protein_repetitive,
      SymbolShape::protein_one_symbol,  SymbolShape::protein_two_symbols, SymbolShape::protein_tiny,
      SymbolShape::byte_all,            SymbolShape::byte_text,     SymbolShape::byte_one_symbol,
      SymbolShape::byte_two_symbols};
  return shapes;
}

inline SymbolKind kind_of(SymbolShape s) { return s >= SymbolShape::byte_all ? SymbolKind::byte : SymbolKind::protein; }
inline fmindex::Alphabet alphabet_of(SymbolKind k) {
  return k == SymbolKind::byte ? fmindex::Alphabet::byte : fmindex::Alphabet::protein;
}
inline fmindex::Alphabet alphabet_of(SymbolShape s) { return alphabet_of(kind_of(s)); }

inline std::vector<TestContig> make_records(SymbolShape shape) {
  switch (shape) {
    case SymbolShape::protein_random:
      return random_records(11, 7, 30, 400, protein_letters(), SymbolKind::protein);
    case SymbolShape::protein_large:
      return random_records(12, 24, 3000, 3700, "ACDEFGHIKLMNPQRSTVWY", SymbolKind::protein);
    case SymbolShape::protein_repetitive:
      return {{"mono", std::string(250, 'W')},
              {"di", repeat("GA", 80)},
              {"tri", repeat("MKV", 70) + "M"},
              {"hepta", repeat("PEPTIDE", 30)},
              {"mixed", repeat("ga", 10) + repeat("MKV", 5) + "*" + repeat("W", 9)}};
    case SymbolShape::protein_one_symbol:
      return {{"a1", std::string(300, 'L')}, {"a2", "l"}, {"a3", std::string(37, 'L')}};
    case SymbolShape::protein_two_symbols:
      return random_records(13, 4, 1, 200, "AW", SymbolKind::protein);
    case SymbolShape::protein_tiny:
      return {{"t1", "A"}, {"t2", "*"}, {"t3", "c"}, {"t4", "AC"}, {"t5", "A"}};
    case SymbolShape::byte_all: {
      auto records = random_records(14, 6, 100, 2500, all_record_bytes(), SymbolKind::byte);
      records.push_back({"every_byte", all_record_bytes().substr(1) + all_record_bytes().substr(0, 1)});  // '\0' last
      return records;
    }
    case SymbolShape::byte_text:
      return {{"t1", repeat("the cat sat on the mat. ", 12)},
              {"t2", "tab\tseparated\tvalues\t42, 7; the end!"},
              {"t3", repeat("ab", 40) + " " + repeat("abc", 20)},
              {"t4", "the"},
              {"t5", "x> not a header inside a line, nor @"}};
    case SymbolShape::byte_one_symbol:
      return {{"z1", std::string(200, 'z')}, {"z2", std::string(3, 'z')}};
    case SymbolShape::byte_two_symbols: {
      auto records = random_records(15, 3, 50, 300, std::string("\0\xff", 2), SymbolKind::byte);
      records.push_back({"nul", std::string(1, '\0')});
      return records;
    }
  }
  return {};
}

inline const char* shape_name(SymbolShape s) {
  switch (s) {
    case SymbolShape::protein_random: return "ProteinRandom";
    case SymbolShape::protein_large: return "ProteinLarge";
    case SymbolShape::protein_repetitive: return "ProteinRepetitive";
    case SymbolShape::protein_one_symbol: return "ProteinOneSymbol";
    case SymbolShape::protein_two_symbols: return "ProteinTwoSymbols";
    case SymbolShape::protein_tiny: return "ProteinTiny";
    case SymbolShape::byte_all: return "ByteAll254";
    case SymbolShape::byte_text: return "ByteText";
    case SymbolShape::byte_one_symbol: return "ByteOneSymbol";
    case SymbolShape::byte_two_symbols: return "ByteTwoSymbols";
  }
  return "?";
}

inline void PrintTo(SymbolShape s, std::ostream* os) { *os << shape_name(s); }

// Distinct normalised symbols of the records, sorted.
inline std::string distinct_symbols(const std::vector<TestContig>& records, SymbolKind kind) {
  std::set<unsigned char> seen;
  for (const TestContig& r : records) {
    for (char c : normalized_symbols(r.sequence, kind)) seen.insert(static_cast<unsigned char>(c));
  }
  return std::string(seen.begin(), seen.end());
}

// ---- building and asking a GeneralFmIndex --------------------------------------------------

// The reference of `records`, through a FASTA file in `dir` and read_symbol_fasta.
inline fmindex::SymbolReference load_symbol_reference(const TempDir& dir, const std::vector<TestContig>& records,
                                                      fmindex::Alphabet a) {
  const std::string path = dir.file("reference.fa");
  write_file(path, symbol_fasta_text(records, 61));
  auto ref = fmindex::read_symbol_fasta(path, a);
  if (!ref.ok()) throw std::runtime_error("read_symbol_fasta: " + ref.status().message());
  return std::move(ref).value();
}

inline fmindex::GeneralFmIndex build_general(const fmindex::SymbolReference& ref, Backend backend,
                                             std::uint32_t sample_rate) {
  fmindex::FmIndexOptions options;
  options.backend = backend;
  options.sample_rate = sample_rate;
  auto index = fmindex::GeneralFmIndex::build(ref, options);
  if (!index.ok()) throw std::runtime_error("GeneralFmIndex::build: " + index.status().message());
  return std::move(index).value();
}

// A pattern's codes, with the index's own symbol map.
inline std::vector<std::uint8_t> symbol_codes(const fmindex::GeneralFmIndex& index, const std::string& p) {
  std::vector<std::uint8_t> codes;
  for (char c : p) codes.push_back(index.code(c));
  return codes;
}

// What the index answers for each pattern.
inline Answers query_general(const fmindex::GeneralFmIndex& index, const std::vector<std::string>& patterns) {
  return query_with(index, patterns, [&](const std::string& p) { return symbol_codes(index, p); });
}

inline ::testing::AssertionResult MatchesNaiveScan(const fmindex::GeneralFmIndex& index,
                                                   const std::vector<TestContig>& records, SymbolKind kind,
                                                   const std::vector<std::string>& patterns) {
  return AnswersMatch(
      index, patterns, [&](const std::string& p) { return symbol_codes(index, p); },
      [&](const std::string& p) { return naive_symbol_hits(records, p, kind); });
}

// ---- pattern sets --------------------------------------------------------------------------

// Random substrings of the records, as written (protein in mixed case).
inline std::vector<std::string> random_substrings_of(const std::vector<TestContig>& records, std::uint32_t seed,
                                                     int count, std::size_t max_length) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    const std::string& s = records[rng() % records.size()].sequence;
    const std::size_t pos = rng() % s.size();
    out.push_back(s.substr(pos, 1 + rng() % std::min(max_length, s.size() - pos)));
  }
  return out;
}

// The end of each record joined to the start of the next (and of the first: wrap-around), which
// an index that let a match cross a separator or the terminator would find; and the same with the
// newline that separates records in the FASTA text.
inline std::vector<std::string> across_records(const std::vector<TestContig>& records) {
  std::vector<std::string> out;
  for (std::size_t len : {1, 2, 3, 5, 8}) {
    for (std::size_t k = 0; k < records.size(); ++k) {
      const std::string& a = records[k].sequence;
      const std::string& b = records[(k + 1) % records.size()].sequence;
      const std::string tail = a.substr(a.size() - std::min(len, a.size())), head = b.substr(0, len);
      out.push_back(tail + head);
      out.push_back(tail + "\n" + head);
    }
  }
  return out;
}

// Patterns that cannot occur: random long ones, and ones holding a symbol outside the index's
// alphabet -- a byte the records lack, a byte no reference of the alphabet can hold ('\n', '\r'),
// a digit or gap symbol in protein -- alone, at the start, in the middle and at the end of
// patterns that otherwise occur.
inline std::vector<std::string> absent_patterns(const std::vector<TestContig>& records, SymbolKind kind,
                                                std::uint32_t seed) {
  std::mt19937 rng(seed);
  const std::string present = distinct_symbols(records, kind);
  std::string outside = "\n\r";
  const std::string candidates = kind == SymbolKind::protein ? protein_letters() + "1-. #\x01\xff" : all_record_bytes();
  for (char c : candidates) {
    if (present.find(normalized_symbols(std::string(1, c), kind)[0]) == std::string::npos) outside += c;
  }
  std::vector<std::string> out;
  for (int i = 0; i < 40; ++i) {
    std::string p;
    for (int k = 0; k < 40; ++k) p += present[rng() % present.size()];
    out.push_back(p);
  }
  out.push_back(std::string(400, present[0]));
  const auto real = random_substrings_of(records, seed + 1, 60, 12);
  for (std::size_t i = 0; i < outside.size(); ++i) {
    const char c = outside[i];
    const std::string& r = real[i % real.size()];
    out.push_back(std::string(1, c));
    out.push_back(c + r);
    out.push_back(r + c);
    out.push_back(r.substr(0, r.size() / 2) + c + r.substr(r.size() / 2));
  }
  return out;
}

}  // namespace wtmap::fmtest
