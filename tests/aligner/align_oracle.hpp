// Helpers of the aligner suites: reference shapes, reads planted with substitutions and N at the
// interesting places, and the independent oracle -- a brute-force Hamming scan of every window
// of every contig on both strands -- with what follows from it (substitutions, MD, MAPQ).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fm_support.hpp"

namespace wtmap::altest {

using fmtest::normalized;
using fmtest::repeat;
using fmtest::revcomp;
using fmtest::TestContig;

// ---- reference shapes ------------------------------------------------------------------------

enum class Shape { random_with_n, tandem, near_copy, repeat_family };

inline const char* shape_name(Shape s) {
  switch (s) {
    case Shape::random_with_n: return "RandomWithN";
    case Shape::tandem: return "Tandem";
    case Shape::near_copy: return "NearCopy";
    case Shape::repeat_family: return "RepeatFamily";
  }
  return "?";
}

inline void PrintTo(Shape s, std::ostream* os) { *os << shape_name(s); }

inline std::string random_bases(std::mt19937& rng, std::size_t length) {
  std::string s;
  for (std::size_t i = 0; i < length; ++i) s += "ACGT"[rng() % 4];
  return s;
}

// `s` with one substitution every `every` bases on average (never at an ambiguity code).
inline std::string with_substitutions(std::string s, std::size_t every, std::mt19937& rng) {
  for (std::size_t i = 0; i < s.size(); i += 1 + rng() % (2 * every)) {
    const auto at = std::string("ACGT").find(normalized(s.substr(i, 1))[0]);
    if (at != std::string::npos) s[i] = "ACGT"[(at + 1 + rng() % 3) % 4];
  }
  return s;
}

inline std::vector<TestContig> make_reference(Shape shape) {
  switch (shape) {
    case Shape::random_with_n: {  // mixed case, U, N runs, isolated IUPAC codes
      fmtest::RandomReferenceSpec spec;
      spec.seed = 4242;
      spec.contigs = 4;
      spec.min_length = 400;
      spec.max_length = 1500;
      spec.n_run_rate = 0.004;
      spec.max_n_run = 12;
      spec.iupac_rate = 0.001;
      return fmtest::random_reference(spec);
    }
    case Shape::tandem: {
      std::mt19937 rng(77);
      const std::string unit37 = random_bases(rng, 37);
      return {{"rep5", repeat("ACGTT", 100)},
              {"rep2", repeat("AC", 100) + "NNN" + repeat("AC", 80)},
              {"rep37", with_substitutions(repeat(unit37, 12), 90, rng)},
              {"flanked", random_bases(rng, 400) + repeat("ACGTT", 40) + random_bases(rng, 300)}};
    }
    case Shape::near_copy: {  // a copy with few substitutions, and a reverse-strand copy
      std::mt19937 rng(5150);
      const std::string original = random_bases(rng, 1500);
      const std::string copy = with_substitutions(original.substr(0, 700), 45, rng) +
                               with_substitutions(original.substr(700), 160, rng);
      const std::string rc_copy = with_substitutions(revcomp(original.substr(200, 600)), 120, rng);
      const std::string other = random_bases(rng, 500) + "NNNNNNNN" + random_bases(rng, 400);
      return {{"original", original}, {"copy", copy}, {"rc_copy", rc_copy}, {"other", other}};
    }
    case Shape::repeat_family: {  // 20 copies of a unit, each with its own two substitutions
      std::mt19937 rng(31337);
      const std::string unit = random_bases(rng, 160);
      std::string family = unit;
      for (int copy = 0; copy < 20; ++copy) {
        std::string member = unit;
        for (int m = 0; m < 2; ++m) {
          const std::size_t at = rng() % member.size();
          member[at] = "ACGT"[(std::string("ACGT").find(member[at]) + 1 + rng() % 3) % 4];
        }
        family += random_bases(rng, 25) + (copy % 3 == 0 ? revcomp(member) : member);
      }
      return {{"family", family}, {"single", random_bases(rng, 600)}};
    }
  }
  return {};
}

// ---- reads -------------------------------------------------------------------------------------

// Reads of `length` at the interesting places: every contig's start and end, next to and across
// every ambiguity run, and `random_count` random places; each with 0..max_substitutions + 1
// substitutions (sometimes one of them an N), half of them reverse-complemented. Windows over
// ambiguity codes give reads with N. Deterministic for a seed.
inline std::vector<std::string> planted_reads(const std::vector<TestContig>& contigs, std::size_t length,
                                              unsigned max_substitutions, std::uint32_t seed,
                                              std::size_t random_count = 100) {
  std::mt19937 rng(seed);
  std::vector<std::pair<std::size_t, std::size_t>> starts;  // contig, position
  for (std::size_t c = 0; c < contigs.size(); ++c) {
    const std::string s = normalized(contigs[c].sequence);
    if (s.size() < length) continue;
    const std::size_t last = s.size() - length;
    starts.push_back({c, 0});
    starts.push_back({c, last});
    for (std::size_t i = 0; i < s.size();) {  // each ambiguity run [i, j)
      if (std::string("ACGT").find(s[i]) != std::string::npos) {
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j < s.size() && std::string("ACGT").find(s[j]) == std::string::npos) ++j;
      if (i >= length) starts.push_back({c, i - length});      // ends just before the run
      if (i + 1 >= length) starts.push_back({c, i + 1 - length});  // its last base is the run's first
      if (j <= last) starts.push_back({c, j});                 // starts just after the run
      i = j;
    }
  }
  std::vector<std::size_t> long_enough;
  for (std::size_t c = 0; c < contigs.size(); ++c) {
    if (contigs[c].sequence.size() >= length) long_enough.push_back(c);
  }
  for (std::size_t r = 0; r < random_count && !long_enough.empty(); ++r) {
    const std::size_t c = long_enough[rng() % long_enough.size()];
    starts.push_back({c, rng() % (contigs[c].sequence.size() - length + 1)});
  }
  std::vector<std::string> reads;
  for (const auto& [c, pos] : starts) {
    std::string read = normalized(contigs[c].sequence.substr(pos, length));
    for (char& b : read) {
      if (std::string("ACGT").find(b) == std::string::npos) b = 'N';
    }
    const unsigned planted = rng() % (max_substitutions + 2);
    for (unsigned m = 0; m < planted; ++m) {
      const std::size_t at = rng() % length;
      const auto code = std::string("ACGT").find(read[at]);
      read[at] = rng() % 6 == 0 || code == std::string::npos ? 'N' : "ACGT"[(code + 1 + rng() % 3) % 4];
    }
    reads.push_back(rng() % 2 == 0 ? read : revcomp(read));
  }
  return reads;
}

// ---- the oracle --------------------------------------------------------------------------------

// A place a read may align: `length` bases of a contig from `position` (0-based), on a strand.
struct Window {
  std::uint32_t contig = 0;
  std::uint64_t position = 0;
  bool reverse = false;
  unsigned distance = 0;  // mismatches of the read against it
  auto key() const { return std::make_tuple(contig, position, reverse); }
  friend bool operator<(const Window& a, const Window& b) { return a.key() < b.key(); }
  friend bool operator==(const Window& a, const Window& b) { return a.key() == b.key(); }
  friend std::ostream& operator<<(std::ostream& os, const Window& w) {
    return os << w.contig << ":" << w.position << ":" << (w.reverse ? '-' : '+') << "/" << w.distance;
  }
};

// A substitution in read coordinates: the read position and the reference base there, as the
// read (or its reverse complement, on the reverse strand) sees it.
using Substitution = std::pair<unsigned, char>;

// What a correct k-mismatch aligner must report for a read.
struct Expected {
  bool mapped = false;
  unsigned mismatches = 0;                 // d, the best stratum
  std::uint64_t x0 = 0, x1 = 0;            // windows at d; at d + 1 when d + 1 <= k
  std::vector<Window> reportable;          // windows at d and (when d + 1 <= k) d + 1, sorted
  bool is_best(const Window& w) const {
    auto it = std::lower_bound(reportable.begin(), reportable.end(), w);
    return it != reportable.end() && *it == w && it->distance == mismatches;
  }
};

class BruteForce {
 public:
  explicit BruteForce(const std::vector<TestContig>& contigs) {
    for (const TestContig& c : contigs) {
      contigs_.push_back(normalized(c.sequence));
      std::vector<std::uint32_t> ambiguous(1, 0);  // prefix counts of non-ACGT letters
      for (char b : contigs_.back()) ambiguous.push_back(ambiguous.back() + (std::string("ACGT").find(b) == std::string::npos));
      ambiguous_.push_back(std::move(ambiguous));
    }
  }

  const std::string& contig(std::uint32_t c) const { return contigs_.at(c); }

  // The read as aligned to the window's strand: itself, or its reverse complement (N for non-ACGT).
  static std::string oriented(const std::string& read, bool reverse) {
    std::string r = normalized(read);
    for (char& b : r) {
      if (std::string("ACGT").find(b) == std::string::npos) b = 'N';
    }
    return reverse ? revcomp(r) : r;
  }

  // Mismatches of the read against contig[position, position + length) on a strand, stopping at
  // limit + 1; a window over an ambiguity code, or past the contig's end, is never a match.
  unsigned distance(const std::string& read, std::uint32_t contig, std::uint64_t position, bool reverse,
                    unsigned limit = 1000) const {
    const std::string& s = contigs_.at(contig);
    const std::vector<std::uint32_t>& amb = ambiguous_.at(contig);
    if (position + read.size() > s.size() || amb[position + read.size()] != amb[position]) return limit + 1;
    const std::string r = oriented(read, reverse);
    unsigned d = 0;
    for (std::size_t i = 0; i < r.size() && d <= limit; ++i) d += r[i] == 'N' || r[i] != s[position + i];
    return d;
  }

  // Every window within `limit` mismatches, sorted.
  std::vector<Window> windows(const std::string& read, unsigned limit) const {
    std::vector<Window> found;
    const std::string fwd = oriented(read, false), rev = oriented(read, true);
    for (std::uint32_t c = 0; c < contigs_.size(); ++c) {
      const std::string& s = contigs_[c];
      const std::vector<std::uint32_t>& amb = ambiguous_[c];
      for (std::uint64_t p = 0; p + read.size() <= s.size(); ++p) {
        if (amb[p + read.size()] != amb[p]) continue;
        for (bool reverse : {false, true}) {
          const std::string& r = reverse ? rev : fwd;
          unsigned d = 0;
          for (std::size_t i = 0; i < r.size() && d <= limit; ++i) d += r[i] == 'N' || r[i] != s[p + i];
          if (d <= limit) found.push_back({c, p, reverse, d});
        }
      }
    }
    std::sort(found.begin(), found.end());
    return found;
  }

  Expected expect(const std::string& read, unsigned k) const {
    Expected e;
    const std::vector<Window> all = windows(read, k);
    if (all.empty()) return e;
    e.mapped = true;
    e.mismatches = std::min_element(all.begin(), all.end(), [](const Window& a, const Window& b) {
                     return a.distance < b.distance;
                   })->distance;
    for (const Window& w : all) {
      if (w.distance == e.mismatches) {
        ++e.x0;
        e.reportable.push_back(w);
      } else if (w.distance == e.mismatches + 1) {
        ++e.x1;
        e.reportable.push_back(w);
      }
    }
    return e;
  }

  // The substitutions of the read against a window, in read coordinates, sorted.
  std::vector<Substitution> substitutions(const std::string& read, std::uint32_t contig, std::uint64_t position,
                                          bool reverse) const {
    const std::string window = contigs_.at(contig).substr(position, read.size());
    const std::string ref = reverse ? revcomp(window) : window;  // as the read sees it
    const std::string r = oriented(read, false);
    std::vector<Substitution> subs;
    for (unsigned i = 0; i < r.size(); ++i) {
      if (r[i] == 'N' || r[i] != ref[i]) subs.push_back({i, ref[i]});
    }
    return subs;
  }

  // The MD tag of the read at a window, from the reference and SAM's SEQ (the read, reverse-
  // complemented on the reverse strand): matched run lengths and the reference base of each mismatch.
  std::string md(const std::string& read, std::uint32_t contig, std::uint64_t position, bool reverse) const {
    const std::string seq = oriented(read, reverse);
    const std::string ref = contigs_.at(contig).substr(position, seq.size());
    std::string md;
    std::size_t run = 0;
    for (std::size_t i = 0; i < seq.size(); ++i) {
      if (seq[i] != 'N' && seq[i] == ref[i]) {
        ++run;
        continue;
      }
      md += std::to_string(run) + ref[i];
      run = 0;
    }
    return md + std::to_string(run);
  }

 private:
  std::vector<std::string> contigs_;
  std::vector<std::vector<std::uint32_t>> ambiguous_;
};

// bwa aln's mapping quality, as a closed form: 0 unmapped or X0 > 1; 25 for a unique hit that used
// all k mismatches; 37 for a unique hit without suboptimal ones; else 23 - 4.343 ln(min(X1, 255)),
// rounded, at least 0.
inline int expected_mapq(bool mapped, std::uint64_t x0, std::uint64_t x1, unsigned mismatches, unsigned k) {
  if (!mapped || x0 > 1) return 0;
  if (mismatches == k) return 25;
  if (x1 == 0) return 37;
  const double n = static_cast<double>(std::min<std::uint64_t>(x1, 255));
  return std::max(0, 23 - static_cast<int>(std::lround(4.343 * std::log(n))));
}

inline std::string describe(const std::vector<Window>& ws) {
  std::ostringstream s;
  s << ws.size() << " [";
  for (std::size_t i = 0; i < ws.size() && i < 8; ++i) s << (i ? " " : "") << ws[i];
  if (ws.size() > 8) s << " ...";
  return s.str() + "]";
}

}  // namespace wtmap::altest
