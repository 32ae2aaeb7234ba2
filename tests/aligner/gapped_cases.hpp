// Sequence pairs for the gapped-alignment suites: random codes, and a query made from a target by
// planted edits (mismatches, insertions and deletions of 1-50 bases, Ns on either side, a garbage
// end worth clipping), reproducible from a seed.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace wtmap::test {

using Codes = std::vector<std::uint8_t>;

inline Codes random_codes(std::mt19937_64& rng, std::size_t n, bool with_n = false) {
  Codes c(n);
  for (auto& x : c) x = static_cast<std::uint8_t>(rng() % (with_n ? 5 : 4));
  return c;
}

// Codes from a string of ACGTN.
inline Codes codes_of(const std::string& s) {
  Codes c;
  for (char ch : s) c.push_back(static_cast<std::uint8_t>(std::string("ACGTN").find(ch)));
  return c;
}

struct Edits {
  unsigned mismatches = 0, insertions = 0, deletions = 0, max_gap = 50;
  unsigned query_ns = 0, target_ns = 0;
  unsigned garbage_end = 0;  // last bases of the query replaced by random ones
};

struct Pair {
  Codes query, target;
  std::string what;
};

// target: random of `length`; query: the target with `edits` applied at random places.
inline Pair planted_pair(std::mt19937_64& rng, std::size_t length, const Edits& edits) {
  Pair p;
  p.target = random_codes(rng, length);
  p.query = p.target;
  auto pick = [&](std::size_t n) { return n == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % n); };
  for (unsigned k = 0; k < edits.mismatches && !p.query.empty(); ++k) {
    auto& b = p.query[pick(p.query.size())];
    b = static_cast<std::uint8_t>((b + 1 + rng() % 3) % 4);
  }
  for (unsigned k = 0; k < edits.insertions; ++k) {
    const Codes ins = random_codes(rng, 1 + pick(edits.max_gap));
    p.query.insert(p.query.begin() + static_cast<std::ptrdiff_t>(pick(p.query.size() + 1)), ins.begin(), ins.end());
  }
  for (unsigned k = 0; k < edits.deletions && p.query.size() > 1; ++k) {
    const std::size_t at = pick(p.query.size()),
                      len = std::min<std::size_t>(1 + pick(edits.max_gap), p.query.size() - at);
    p.query.erase(p.query.begin() + static_cast<std::ptrdiff_t>(at),
                  p.query.begin() + static_cast<std::ptrdiff_t>(at + len));
  }
  for (unsigned k = 0; k < edits.query_ns && !p.query.empty(); ++k) p.query[pick(p.query.size())] = 4;
  for (unsigned k = 0; k < edits.target_ns && !p.target.empty(); ++k) p.target[pick(p.target.size())] = 4;
  for (std::size_t k = 0; k < edits.garbage_end && k < p.query.size(); ++k) {
    p.query[p.query.size() - 1 - k] = static_cast<std::uint8_t>(rng() % 4);
  }
  p.what = "length " + std::to_string(length) + ", " + std::to_string(edits.mismatches) + " mismatches, " +
           std::to_string(edits.insertions) + " insertions, " + std::to_string(edits.deletions) + " deletions, Ns " +
           std::to_string(edits.query_ns) + "/" + std::to_string(edits.target_ns) + ", garbage end " +
           std::to_string(edits.garbage_end);
  return p;
}

// A mix of pairs: very short and empty ones, random unrelated ones, planted ones of 150 bp and
// 1,000 bp with every kind of edit.
inline std::vector<Pair> mixed_pairs(std::uint64_t seed, bool include_long = true) {
  std::mt19937_64 rng(seed);
  std::vector<Pair> pairs;
  pairs.push_back({{}, {}, "both empty"});
  pairs.push_back({codes_of("ACGT"), {}, "empty target"});
  pairs.push_back({{}, codes_of("ACGT"), "empty query"});
  pairs.push_back({codes_of("A"), codes_of("A"), "one base"});
  pairs.push_back({codes_of("N"), codes_of("N"), "N against N"});
  pairs.push_back({codes_of("ACGTTGCA"), codes_of("ACGTNGCA"), "N in the target"});
  for (int k = 0; k < 12; ++k) {
    pairs.push_back({random_codes(rng, 1 + rng() % 12, true), random_codes(rng, 1 + rng() % 12, true), "short random"});
  }
  for (int k = 0; k < 6; ++k) {
    pairs.push_back({random_codes(rng, 40 + rng() % 40), random_codes(rng, 40 + rng() % 40), "unrelated"});
  }
  const Edits kinds[] = {
      {},
      {3, 0, 0, 50, 0, 0, 0},
      {0, 1, 0, 5, 0, 0, 0},
      {0, 0, 1, 5, 0, 0, 0},
      {0, 1, 0, 50, 0, 0, 0},
      {0, 0, 1, 50, 0, 0, 0},
      {2, 1, 1, 20, 1, 1, 0},
      {1, 0, 0, 50, 0, 2, 0},
      {0, 0, 0, 50, 2, 0, 25},
      {4, 2, 2, 10, 1, 1, 30},
  };
  for (const Edits& e : kinds) pairs.push_back(planted_pair(rng, 150, e));
  if (include_long) {
    pairs.push_back(planted_pair(rng, 1000, {5, 2, 2, 50, 1, 1, 0}));
    pairs.push_back(planted_pair(rng, 1000, {20, 3, 3, 30, 2, 2, 60}));
  }
  return pairs;
}

}  // namespace wtmap::test
