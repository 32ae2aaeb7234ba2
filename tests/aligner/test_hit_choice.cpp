// hit_choice.hpp: tie_hash changes with any one base and spreads picks evenly over 2..8 tied rows; choose_hits against a flat list of a search result's
// rows: the reported row is the (hash % best rows)-th best row in slot order, XA lists every other
// kept row exactly when X0 + X1 <= N, and the hash is computed only for ties. (choose_and_locate
// on both backends is checked against a brute-force scan in test_mismatch_search's BatchAligner
// tests, and the GPU's choice against the CPU's in test_align_cli's identical-output tests.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "wtmap/aligner/hit_choice.hpp"
#include "wtmap/fmindex/reference.hpp"

namespace wtmap::altest {
namespace {

using aligner::ChosenHits;
using aligner::SearchResult;

std::vector<std::uint8_t> random_letters(std::mt19937_64& rng, std::size_t length, const std::string& alphabet) {
  std::vector<std::uint8_t> letters(length);
  for (auto& c : letters) c = static_cast<std::uint8_t>(alphabet[rng() % alphabet.size()]);
  return letters;
}

std::vector<std::uint8_t> codes_of(const std::vector<std::uint8_t>& letters) {
  std::vector<std::uint8_t> codes;
  for (std::uint8_t c : letters) codes.push_back(fmindex::search_code(static_cast<char>(c)));
  return codes;
}

std::uint64_t hash_of(const std::vector<std::uint8_t>& codes) {
  return aligner::tie_hash(codes.data(), static_cast<unsigned>(codes.size()));
}

// FNV-1a's steps and the finaliser are bijections of the 64-bit state, so reads that differ in one
// base always hash apart.
TEST(TieHash, AnyOneBaseChangesTheHash) {
  std::mt19937_64 rng(2);
  const auto codes = codes_of(random_letters(rng, 150, "ACGTN"));
  const std::uint64_t h = hash_of(codes);
  for (std::size_t i = 0; i < codes.size(); ++i) {
    for (std::uint8_t other = 0; other <= 4; ++other) {
      if (other == codes[i]) continue;
      auto changed = codes;
      changed[i] = other;
      EXPECT_NE(hash_of(changed), h) << "base " << i << " -> " << unsigned{other};
    }
  }
}

// Reads that differ little (one random substitution from a common read) still pick each of m tied
// rows about equally often: every count within 5 standard deviations of n / m.
TEST(TieHash, PicksSpreadEvenlyOverTiedRows) {
  std::mt19937_64 rng(3);
  const auto base = codes_of(random_letters(rng, 100, "ACGT"));
  constexpr int kReads = 40000;
  std::vector<std::uint64_t> hashes;
  for (int i = 0; i < kReads; ++i) {
    auto read = base;
    read[rng() % read.size()] = static_cast<std::uint8_t>(rng() % 4);
    read[rng() % read.size()] = static_cast<std::uint8_t>(rng() % 4);
    hashes.push_back(hash_of(read));
  }
  // Distinct reads only: two substitutions back to the same bases give the same read.
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  ASSERT_GT(hashes.size(), 10000u);
  for (std::uint64_t m = 2; m <= aligner::kMaxAlternatives; ++m) {
    std::vector<double> counts(m, 0);
    for (std::uint64_t h : hashes) ++counts[h % m];
    const double expected = static_cast<double>(hashes.size()) / m;
    const double sd = std::sqrt(expected * (1 - 1.0 / m));
    for (std::uint64_t b = 0; b < m; ++b) EXPECT_NEAR(counts[b], expected, 5 * sd) << "row " << b << " of " << m;
  }
}

// ---- choose_hits --------------------------------------------------------------------------------

// `mismatches` substitutions, placed by `salt` so that slots differ in their edits.
aligner::Edits edits_with(unsigned mismatches, unsigned salt = 0) {
  aligner::Edits e;
  for (unsigned i = 0; i < mismatches; ++i) e.push(10 * i + salt, (i + salt) % 4);
  return e;
}

bool same_edits(const aligner::Edits& a, const aligner::Edits& b) {
  if (a.count() != b.count()) return false;
  for (unsigned e = 0; e < a.count(); ++e) {
    if (a.position(e) != b.position(e) || a.base(e) != b.base(e)) return false;
  }
  return true;
}

struct Row {
  unsigned slot;
  std::uint64_t row;
  bool operator==(const Row& o) const { return slot == o.slot && row == o.row; }
};

// A result with slots of 1-3 rows each or located (a verified hit: one text position), at `best`
// or best + 1 mismatches, at least one at best; the counts are the kept occurrences, or
// (overflow) more than them.
SearchResult random_result(std::mt19937_64& rng, bool overflow) {
  SearchResult res{};
  res.best = static_cast<std::uint8_t>(rng() % aligner::kMaxMismatches);
  res.num_slots = 1 + static_cast<std::uint32_t>(rng() % SearchResult::kSlots);
  res.work = static_cast<std::uint32_t>(rng() % 100000);
  std::uint64_t next_row = rng() % 1000;
  for (unsigned s = 0; s < res.num_slots; ++s) {
    const unsigned mismatches = s == 0 || rng() % 2 ? res.best : res.best + 1u;
    const bool located = rng() % 3 == 0;
    const std::uint64_t rows = located ? 1 : 1 + rng() % 3;
    res.slots[s] = {next_row, located ? aligner::HitInterval::kTextPosition : next_row + rows, edits_with(mismatches, s)};
    res.count[mismatches] += rows;
    next_row += rows + rng() % 5;
  }
  if (overflow) {
    res.count[res.best] += 1 + rng() % 3;
    res.flags = aligner::kSlotsOverflow;
  }
  return res;
}

TEST(ChooseHits, ReportsTheHashedBestRowThenEveryOtherRowWhenFewEnough) {
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 20000; ++trial) {
    const SearchResult res = random_result(rng, trial % 3 == 0);
    const unsigned n = static_cast<unsigned>(rng() % (aligner::kMaxAlternatives + 1));
    const std::uint64_t hash = rng();
    // The oracle: every kept row (or a located slot's position) in slot order, and the best ones.
    std::vector<Row> all, best;
    for (unsigned s = 0; s < res.num_slots; ++s) {
      const bool located = res.slots[s].hi == aligner::HitInterval::kTextPosition;
      for (std::uint64_t row = res.slots[s].lo; row < (located ? res.slots[s].lo + 1 : res.slots[s].hi); ++row) {
        all.push_back({s, row});
        if (res.slots[s].edits.count() == res.best) best.push_back({s, row});
      }
    }
    const Row primary = best[hash % best.size()];
    std::vector<Row> expected = {primary};
    if (res.count[res.best] + (res.best < aligner::kMaxMismatches ? res.count[res.best + 1] : 0) <= n) {
      for (const Row& r : all) {
        if (!(r == primary)) expected.push_back(r);
      }
    }
    int hashed = 0;
    ChosenHits got{};
    aligner::choose_hits(res, n, [&] { ++hashed; return hash; }, got);
    SCOPED_TRACE("trial " + std::to_string(trial) + ", -N " + std::to_string(n));
    EXPECT_EQ(hashed, best.size() > 1 ? 1 : 0);
    ASSERT_EQ(got.count, expected.size());
    EXPECT_LE(got.count, std::max(1u, n));
    for (unsigned j = 0; j < got.count; ++j) {
      EXPECT_EQ(got.slot[j], expected[j].slot) << "row " << j;
      EXPECT_EQ(got.where[j], expected[j].row) << "row " << j;
    }
  }
}

// A choice split for a batch: the reported hit and the counts in the ReadChoice, the other hits in
// order at others[first_other, ...), and nothing else of `others` written.
TEST(SplitChoice, ReportedHitInTheChoiceOthersInTheirPlaces) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 2000; ++trial) {
    const SearchResult res = random_result(rng, trial % 3 == 0);
    ChosenHits chosen{};
    aligner::choose_hits(res, aligner::kMaxAlternatives, [&] { return rng(); }, chosen);
    const std::uint32_t first_other = static_cast<std::uint32_t>(rng() % 5);
    std::vector<aligner::OtherHit> others(first_other + aligner::kMaxAlternatives + 3, aligner::OtherHit{~0ull, {}});
    aligner::ReadChoice got{};
    aligner::split_choice(res, chosen, first_other, got, others.data());
    SCOPED_TRACE("trial " + std::to_string(trial));
    ASSERT_GE(chosen.count, 1u);
    EXPECT_EQ(got.count, chosen.count);
    EXPECT_EQ(got.where, chosen.where[0]);
    EXPECT_TRUE(same_edits(got.edits, res.slots[chosen.slot[0]].edits));
    EXPECT_EQ(got.best, res.best);
    EXPECT_EQ(got.flags, res.flags);
    EXPECT_EQ(got.work, res.work);
    EXPECT_EQ(got.best_count, res.count[res.best]);
    EXPECT_EQ(got.second_count, res.best < aligner::kMaxMismatches ? res.count[res.best + 1] : 0u);
    EXPECT_EQ(got.first_other, first_other);
    for (std::size_t i = 0; i < others.size(); ++i) {
      const bool listed = i >= first_other && i < first_other + chosen.count - 1u;
      if (listed) {
        const unsigned j = static_cast<unsigned>(i - first_other) + 1;
        EXPECT_EQ(others[i].where, chosen.where[j]) << i;
        EXPECT_TRUE(same_edits(others[i].edits, res.slots[chosen.slot[j]].edits)) << i;
      } else {
        EXPECT_EQ(others[i].where, ~0ull) << "written outside the read's places: " << i;
      }
    }
  }
}

TEST(ChooseHits, UnmappedReadListsNothingAndIsNotHashed) {
  SearchResult res{};
  res.best = 0xFF;
  ChosenHits got{};
  got.count = 7;
  int hashed = 0;
  aligner::choose_hits(res, 3, [&] { ++hashed; return std::uint64_t{0}; }, got);
  EXPECT_EQ(got.count, 0);
  EXPECT_EQ(hashed, 0);
  aligner::ReadChoice choice{};
  choice.best_count = choice.second_count = 9;
  aligner::split_choice(res, got, 0, choice, nullptr);
  EXPECT_EQ(choice.count, 0);
  EXPECT_EQ(choice.best, 0xFF);
  EXPECT_EQ(choice.best_count, 0u);
  EXPECT_EQ(choice.second_count, 0u);
}

}  // namespace
}  // namespace wtmap::altest
