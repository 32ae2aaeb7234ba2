// The DNA references and pattern sets of the FmIndex suites (test_fm_index.cpp, and the DNA kind
// of the contract in fm_index_kinds.hpp): reference shapes with fixed seeds, random substrings of
// both strands, patterns across separators, and absent patterns. The naive scan is naive_hits
// (fm_support.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "fm_support.hpp"

namespace wtmap::fmtest {

// ---- reference shapes --------------------------------------------------------------------

enum class DnaShape { random_small, random_large, tandem, all_a, tiny };

inline const std::vector<DnaShape>& all_dna_shapes() {
  static const std::vector<DnaShape> shapes = {DnaShape::random_small, DnaShape::random_large, DnaShape::tandem,
                                               DnaShape::all_a, DnaShape::tiny};
  return shapes;
}

inline std::vector<TestContig> make_contigs(DnaShape shape) {
  switch (shape) {
    case DnaShape::random_small: {
      RandomReferenceSpec spec;
      spec.seed = 101;
      spec.contigs = 5;
      spec.n_run_rate = 0.02;
      return random_reference(spec);
    }
    case DnaShape::random_large: {  // m > 2^15: 2m + 2 rows span two special-row buckets (2^16 rows)
      RandomReferenceSpec spec;
      spec.seed = 202;
      spec.contigs = 12;
      spec.min_length = 3000;
      spec.max_length = 4500;
      spec.n_run_rate = 0.002;
      spec.max_n_run = 30;
      return random_reference(spec);
    }
    case DnaShape::tandem:
      return {{"rep5", repeat("ACGTT", 60)},
              {"rep2", repeat("AC", 40) + "NN" + repeat("AC", 10)},
              {"rep3", repeat("GGC", 33) + "G"}};
    case DnaShape::all_a:
      return {{"polyA", std::string(300, 'A')}};
    case DnaShape::tiny:
      return {{"t1", "A"}, {"t2", "C"}, {"t3", "GT"},  {"t4", "TAG"},
              {"t5", "N"}, {"t6", "a"}, {"t7", "NCN"}, {"t8", "ACG"}};
  }
  return {};
}

inline const char* shape_name(DnaShape s) {
  switch (s) {
    case DnaShape::random_small: return "RandomSmall";
    case DnaShape::random_large: return "RandomLarge";
    case DnaShape::tandem: return "Tandem";
    case DnaShape::all_a: return "AllA";
    case DnaShape::tiny: return "Tiny";
  }
  return "?";
}

inline void PrintTo(DnaShape s, std::ostream* os) { *os << shape_name(s); }

// ---- pattern sets --------------------------------------------------------------------------

inline bool is_base(char c) { return c == 'A' || c == 'C' || c == 'G' || c == 'T'; }

// Random substrings of the contigs (they may hold ambiguity codes) and their reverse complements.
inline std::vector<std::string> random_substrings(const std::vector<TestContig>& contigs, std::uint32_t seed, int count,
                                                  std::size_t max_length) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    const std::string s = normalized(contigs[rng() % contigs.size()].sequence);
    const std::size_t pos = rng() % s.size();
    const std::size_t len = 1 + rng() % std::min(max_length, s.size() - pos);
    out.push_back(s.substr(pos, len));
    out.push_back(revcomp(out.back()));
  }
  return out;
}

// Up to `len` bases left of `end` and right of `begin`, stopping at ambiguity codes.
inline std::string bases_before(const std::string& s, std::size_t end, std::size_t len) {
  std::size_t b = end;
  while (b > 0 && end - b < len && is_base(s[b - 1])) --b;
  return s.substr(b, end - b);
}
inline std::string bases_after(const std::string& s, std::size_t begin, std::size_t len) {
  std::size_t e = begin;
  while (e < s.size() && e - begin < len && is_base(s[e])) ++e;
  return s.substr(begin, e - begin);
}

// Patterns that would match only if an index joined what a separator splits: the end of one
// contig + the start of the next, and the bases either side of each ambiguity run; also the
// run itself with its flanks (holding N: never a match).
inline std::vector<std::string> across_separators(const std::vector<TestContig>& contigs) {
  std::vector<std::string> out;
  for (std::size_t len : {1, 2, 3, 5, 8, 13}) {
    for (std::size_t k = 0; k + 1 < contigs.size(); ++k) {
      const std::string a = normalized(contigs[k].sequence), b = normalized(contigs[k + 1].sequence);
      out.push_back(bases_before(a, a.size(), len) + bases_after(b, 0, len));
    }
    for (const TestContig& c : contigs) {
      const std::string s = normalized(c.sequence);
      for (std::size_t i = 0; i < s.size();) {
        if (is_base(s[i])) {
          ++i;
          continue;
        }
        std::size_t j = i;
        while (j < s.size() && !is_base(s[j])) ++j;
        const std::string left = bases_before(s, i, len), right = bases_after(s, j, len);
        out.push_back(left + right);
        out.push_back(left + s.substr(i, j - i) + right);
        i = j;
      }
    }
  }
  out.erase(std::remove(out.begin(), out.end(), std::string()), out.end());
  return out;
}

// Random 40-mers (practically never in these references; the scan decides) and bases missing
// from the one-letter references.
inline std::vector<std::string> absent_patterns(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> out = {"CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC", "ACGTACGTACGTACGTACGTAGGGTTTCCAA",
                                  "CA", std::string(200, 'A')};
  for (int i = 0; i < 60; ++i) {
    std::string p;
    for (int k = 0; k < 40; ++k) p += "ACGT"[rng() % 4];
    out.push_back(p);
  }
  return out;
}

}  // namespace wtmap::fmtest
