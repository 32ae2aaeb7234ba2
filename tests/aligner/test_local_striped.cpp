// gapped/local_striped.hpp (private to aligner/src/gapped): the CPU's striped local DP returns
// what local_align and tandem_score (extend.hpp, themselves checked against the full
// Smith-Waterman in test_gapped_extend) return, field for field, ties included: on the mixed pairs,
// on every query length across the stripes' edges, on planted windows holding a read and a second
// copy, for several scorings; and striped_fits refuses what 16-bit lanes cannot hold.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gapped_cases.hpp"
#include "local_striped.hpp"
#include "wtmap/aligner/gapped/extend.hpp"

namespace wtmap::test {
namespace {

using aligner::gapped::DpRows;
using aligner::gapped::ExtendResult;
using aligner::gapped::ForwardCodes;
using aligner::gapped::Scoring;

Scoring unbanded_scoring() {
  Scoring sc;
  sc.zdrop = 0;
  sc.band = 1 << 20;
  return sc;
}

std::vector<Scoring> scorings() {
  Scoring a = unbanded_scoring(), b = unbanded_scoring(), c = unbanded_scoring();
  a.open_del = 3, a.extend_del = 2, a.open_ins = 9, a.extend_ins = 1, a.read_ambiguous = 3;
  b.match = 2, b.mismatch = 1, b.open_ins = 0;
  c.open_del = c.open_ins = 0, c.extend_del = 0, c.mismatch = 0;  // ties everywhere
  return {unbanded_scoring(), a, b, c};
}

// The striped DP against the scalar one on one pair: the best (score, query end, target end),
// then the tandem score for two floors.
::testing::AssertionResult same_as_scalar(const Codes& query, const Codes& target, const Scoring& sc) {
  const auto ql = static_cast<std::uint32_t>(query.size()), tl = static_cast<std::uint32_t>(target.size());
  if (!aligner::gapped::striped_fits(ql, tl, sc)) return ::testing::AssertionFailure() << "striped_fits refuses the pair";
  std::vector<std::int32_t> scratch(aligner::gapped::extend_scratch_bytes(ql) / 4);
  const ForwardCodes q{query.data()}, t{target.data()};
  const ExtendResult want = aligner::gapped::local_align(q, ql, t, tl, sc, DpRows<1>{scratch.data()});
  const ExtendResult got = aligner::gapped::local_align_striped(query.data(), ql, target.data(), tl, sc);
  if (got.score != want.score || got.qle != want.qle || got.tle != want.tle) {
    return ::testing::AssertionFailure() << "best " << got.score << " at (q " << got.qle << ", t " << got.tle
                                         << "), scalar " << want.score << " at (q " << want.qle << ", t " << want.tle << ")";
  }
  for (const std::int32_t floor : {19, 5}) {
    const std::int32_t scalar = aligner::gapped::tandem_score(q, ql, t, tl, want, sc, floor, DpRows<1>{scratch.data()});
    const std::int32_t striped =
        aligner::gapped::tandem_score_striped(query.data(), ql, target.data(), tl, want, sc, floor);
    if (striped != scalar) {
      return ::testing::AssertionFailure() << "tandem score " << striped << ", scalar " << scalar << " (floor " << floor << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

class LocalStriped : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!aligner::gapped::striped_fits(150, 600, unbanded_scoring())) GTEST_SKIP() << "no SSE2 on this machine";
  }
};

TEST_F(LocalStriped, MixedPairsEqualTheScalarDp) {
  int compared = 0;
  for (const Scoring& sc : scorings()) {
    for (const Pair& p : mixed_pairs(61)) {
      // striped_fits refuses an empty query
      if (!p.query.empty()) {
        ASSERT_TRUE(same_as_scalar(p.query, p.target, sc)) << p.what;
      }
      if (!p.target.empty()) {
        ASSERT_TRUE(same_as_scalar(p.target, p.query, sc)) << p.what << ", swapped";
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 100);
}

// Every query length from 1 to 70 (a stripe is 8 lanes: full and partial last vectors, one
// vector, many), against random and related targets, Ns included.
TEST_F(LocalStriped, EveryQueryLengthAcrossTheStripesEdges) {
  std::mt19937_64 rng(62);
  for (std::size_t length = 1; length <= 70; ++length) {
    for (const Scoring& sc : scorings()) {
      const Codes query = random_codes(rng, length, true);
      ASSERT_TRUE(same_as_scalar(query, random_codes(rng, 1 + rng() % 90, true), sc)) << "length " << length;
      Codes related = random_codes(rng, rng() % 30);
      related.insert(related.end(), query.begin(), query.end());
      for (std::size_t k = 0; k < related.size(); k += 7) related[k] = static_cast<std::uint8_t>(rng() % 5);
      const Codes tail = random_codes(rng, rng() % 30);
      related.insert(related.end(), tail.begin(), tail.end());
      ASSERT_TRUE(same_as_scalar(query, related, sc)) << "length " << length << ", related";
    }
  }
}

// Rescue windows as the mapper makes them: a 150 bp read with edits, planted in a window of 600,
// and a second copy with other edits 200 bases on (the tandem pass scores it).
TEST_F(LocalStriped, PlantedWindowsWithASecondCopyEqualTheScalarDp) {
  std::mt19937_64 rng(63);
  for (int k = 0; k < 40; ++k) {
    const Pair p = planted_pair(rng, 150, {static_cast<unsigned>(k % 5), k % 3 == 0 ? 1u : 0u, k % 3 == 1 ? 2u : 0u, 8,
                                           static_cast<unsigned>(k % 2), 0, 0});
    Codes window = random_codes(rng, 100 + rng() % 100);
    window.insert(window.end(), p.target.begin(), p.target.end());
    const Codes gap = random_codes(rng, 50);
    window.insert(window.end(), gap.begin(), gap.end());
    Codes copy = p.target;
    for (std::size_t i = 0; i < copy.size(); i += 37) copy[i] = static_cast<std::uint8_t>((copy[i] + 1) % 4);
    window.insert(window.end(), copy.begin(), copy.end());
    const Codes end = random_codes(rng, 150);
    window.insert(window.end(), end.begin(), end.end());
    for (const Scoring& sc : scorings()) ASSERT_TRUE(same_as_scalar(p.query, window, sc)) << p.what;
  }
}

TEST(LocalStripedFits, RefusesWhatSixteenBitLanesCannotHold) {
  Scoring sc = unbanded_scoring();
  sc.band = 600;
  EXPECT_FALSE(aligner::gapped::striped_fits(0, 600, sc));    // no query
  EXPECT_FALSE(aligner::gapped::striped_fits(150, 601, sc));  // banded: the scalar DP's
  sc.band = 1 << 20;
  EXPECT_FALSE(aligner::gapped::striped_fits(8192, 9000, sc));  // a best of 8192 > 8191
  sc.match = 100;
  EXPECT_FALSE(aligner::gapped::striped_fits(100, 600, sc));  // 10,000
  sc.match = 1;
  sc.open_del = 9000;
  EXPECT_FALSE(aligner::gapped::striped_fits(150, 600, sc));
}

}  // namespace
}  // namespace wtmap::test
