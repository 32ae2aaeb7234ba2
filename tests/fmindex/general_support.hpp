// Helpers for the protein and byte suites (fmindex and CLI): reference generators with fixed
// seeds, FASTA text that keeps byte records intact, and the independent oracle -- a naive scan of
// every record for the pattern on its one strand.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fm_support.hpp"

namespace wtmap::fmtest {

// The 26 capital letters and '*': every protein symbol (alphabet.hpp).
inline const std::string& protein_letters() {
  static const std::string s = "ABCDEFGHIJKLMNOPQRSTUVWXYZ*";
  return s;
}

// The 254 bytes a byte reference may hold: all but '\n' and '\r'.
inline const std::string& all_record_bytes() {
  static const std::string s = [] {
    std::string b;
    for (int c = 0; c < 256; ++c) {
      if (c != '\n' && c != '\r') b += static_cast<char>(c);
    }
    return b;
  }();
  return s;
}

enum class SymbolKind { protein, byte };

// A record as the index sees it: protein letters upper-cased, bytes as they are.
inline std::string normalized_symbols(const std::string& s, SymbolKind kind) {
  std::string r = s;
  if (kind == SymbolKind::protein) {
    for (char& c : r) {
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
  }
  return r;
}

// FASTA text of byte or protein records with lines of about `width` symbols. A line of a byte
// record must not begin with '>' (it would be a header), so a break moves past such a byte; and
// a record may not begin with one either (the test generators avoid it).
inline std::string symbol_fasta_text(const std::vector<TestContig>& records, std::size_t width,
                                     const std::string& eol = "\n") {
  std::string s;
  for (const TestContig& r : records) {
    s += ">" + r.name + " a description" + eol;
    for (std::size_t i = 0; i < r.sequence.size();) {
      std::size_t end = std::min(r.sequence.size(), i + width);
      while (end < r.sequence.size() && r.sequence[end] == '>') ++end;
      s += r.sequence.substr(i, end - i) + eol;
      i = end;
    }
  }
  return s;
}

// `count` records of random length in [min_length, max_length] over `symbols`; protein records
// mix in lower case. No record begins with '>'.
inline std::vector<TestContig> random_records(std::uint32_t seed, int count, std::size_t min_length, std::size_t max_length,
                                              const std::string& symbols, SymbolKind kind) {
  std::mt19937 rng(seed);
  std::vector<TestContig> records;
  for (int k = 0; k < count; ++k) {
    const std::size_t length = std::uniform_int_distribution<std::size_t>(min_length, max_length)(rng);
    std::string s;
    while (s.size() < length) {
      char c = symbols[rng() % symbols.size()];
      if (s.empty() && c == '>') continue;
      if (kind == SymbolKind::protein && c >= 'A' && c <= 'Z' && rng() % 8 == 0) c = static_cast<char>(c - 'A' + 'a');
      s += c;
    }
    records.push_back({"rec" + std::to_string(k + 1), s});
  }
  return records;
}

// Every (record, position) where the normalised pattern equals the normalised record's
// substring: one strand, within one record. Sorted; strand always '+'.
inline std::vector<Hit> naive_symbol_hits(const std::vector<TestContig>& records, const std::string& pattern,
                                          SymbolKind kind) {
  std::vector<Hit> hits;
  const std::string p = normalized_symbols(pattern, kind);
  if (p.empty()) return hits;
  for (std::uint32_t k = 0; k < records.size(); ++k) {
    const std::string s = normalized_symbols(records[k].sequence, kind);
    for (std::size_t pos = 0; pos + p.size() <= s.size(); ++pos) {
      if (s.compare(pos, p.size(), p) == 0) hits.push_back({k, pos, '+'});
    }
  }
  return hits;
}

}  // namespace wtmap::fmtest
