// gapped/extend.hpp: extend() and local_align() against a plain full Gotoh DP (gotoh_oracle.hpp) on
// random and planted pairs -- unbanded and z-drop off: every result field equal; banded: equal to
// the oracle with the cells outside the band masked; read backwards (ReverseCodes): equal to the
// oracle on the reversed sequences. Z-drop on closed-form cases where it must and must not stop,
// and on the mixed cases every cell it reports holds its DP score.
// local_align: equal to the oracle's Smith-Waterman; local_start: the range it gives aligns end to
// end (oracle, global mode) with that score. A profiled query (ProfiledQuery) equals the oracles too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gapped_cases.hpp"
#include "gotoh_oracle.hpp"
#include "wtmap/aligner/gapped/extend.hpp"

namespace wtmap::test {
namespace {

using aligner::gapped::DpRows;
using aligner::gapped::ExtendResult;
using aligner::gapped::ForwardCodes;
using aligner::gapped::ReverseCodes;

Scoring no_zdrop(std::int32_t band = 1 << 20) {
  Scoring sc;
  sc.zdrop = 0;
  sc.band = band;
  return sc;
}

ExtendResult run_extend(const Codes& q, const Codes& t, const Scoring& sc, std::int32_t h0, bool reversed = false) {
  std::vector<std::int32_t> scratch(aligner::gapped::extend_scratch_bytes(static_cast<std::uint32_t>(q.size())) / 4);
  const DpRows<1> s{scratch.data()};
  const auto ql = static_cast<std::uint32_t>(q.size()), tl = static_cast<std::uint32_t>(t.size());
  if (reversed)
    return aligner::gapped::extend(ReverseCodes{q.data(), ql}, ql, ReverseCodes{t.data(), tl}, tl, sc, h0, s);
  return aligner::gapped::extend(ForwardCodes{q.data()}, ql, ForwardCodes{t.data()}, tl, sc, h0, s);
}

::testing::AssertionResult same(const ExtendResult& got, const OracleExtension& want) {
  if (got.score == want.score && got.qle == want.qle && got.tle == want.tle && got.gscore == want.gscore &&
      got.gtle == want.gtle) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "got score " << got.score << " at (q " << got.qle << ", t " << got.tle
                                       << "), gscore " << got.gscore << " at t " << got.gtle << "; oracle score "
                                       << want.score << " at (q " << want.qle << ", t " << want.tle << "), gscore "
                                       << want.gscore << " at t " << want.gtle;
}

const std::int32_t kH0s[] = {1, 7, 30, 120};

// A DP row scores every read code against one reference code through Scoring::against; it must
// be substitution() itself, for every pair of codes (an N, and bytes past 4, on either side).
TEST(GappedScoring, AgainstABaseIsSubstitutionForEveryPairOfCodes) {
  Scoring sc;
  sc.match = 2;
  sc.mismatch = 5;
  sc.read_ambiguous = 3;
  for (unsigned b = 0; b < 256; ++b) {
    const Scoring::AgainstBase row = sc.against(static_cast<std::uint8_t>(b));
    for (unsigned a = 0; a < 256; ++a) {
      const auto qa = static_cast<std::uint8_t>(a), tb = static_cast<std::uint8_t>(b);
      ASSERT_EQ(row(qa, tb), sc.substitution(qa, tb)) << "read code " << a << ", reference code " << b;
    }
  }
}

// A query profile (the CPU's DP reads one) holds substitution() of every column against every
// reference code: codes past 4 on either side score as an N.
TEST(GappedScoring, AQueryProfileHoldsEachColumnsSubstitutionScores) {
  Scoring sc;
  sc.match = 3;
  sc.mismatch = 2;
  sc.read_ambiguous = 5;
  const Codes query{0, 1, 2, 3, 4, 9, 255, 2};
  const auto qlen = static_cast<std::int32_t>(query.size());
  std::vector<std::int32_t> scores(5 * query.size());
  aligner::gapped::fill_query_profile(ForwardCodes{query.data()}, qlen, sc, scores.data());
  const aligner::gapped::ProfiledQuery<ForwardCodes> profiled{ForwardCodes{query.data()}, scores.data(), qlen};
  for (unsigned b = 0; b < 256; ++b) {
    for (std::int32_t j = 0; j < qlen; ++j) {
      const auto tb = static_cast<std::uint8_t>(b);
      ASSERT_EQ(profiled.against(tb)[j], sc.substitution(query[j], tb)) << "column " << j << ", reference code " << b;
      ASSERT_EQ(profiled[j], query[j]);
    }
  }
}

// extend() and local_align() of a profiled query (as the CPU backend runs them) against the same
// oracles, forwards and backwards, for several scorings.
TEST(GappedExtend, AProfiledQueryEqualsTheFullGotohDp) {
  Scoring a = no_zdrop(), b = no_zdrop(), c = no_zdrop(30);
  a.open_del = 3, a.extend_del = 2, a.open_ins = 9, a.extend_ins = 1, a.read_ambiguous = 3;
  b.match = 2, b.mismatch = 1;
  int compared = 0;
  for (const Scoring& sc : {no_zdrop(), a, b, c}) {
    for (const Pair& p : mixed_pairs(31)) {
      const auto ql = static_cast<std::int32_t>(p.query.size());
      const auto tl = static_cast<std::uint32_t>(p.target.size());
      std::vector<std::int32_t> scratch(aligner::gapped::extend_scratch_bytes(static_cast<std::uint32_t>(ql)) / 4);
      std::vector<std::int32_t> scores(5 * p.query.size());
      const ReverseCodes backwards{p.query.data(), static_cast<std::uint32_t>(ql)};
      aligner::gapped::fill_query_profile(backwards, ql, sc, scores.data());
      const ExtendResult left = aligner::gapped::extend(
          aligner::gapped::ProfiledQuery<ReverseCodes>{backwards, scores.data(), ql}, static_cast<std::uint32_t>(ql),
          ReverseCodes{p.target.data(), tl}, tl, sc, 20, DpRows<1>{scratch.data()});
      const Codes rq(p.query.rbegin(), p.query.rend()), rt(p.target.rbegin(), p.target.rend());
      ASSERT_TRUE(same(left, extension_answer(gotoh(rq, rt, sc, OracleMode::extension, 20, band_of(sc.band)), 20)))
          << p.what << ", backwards";
      aligner::gapped::fill_query_profile(ForwardCodes{p.query.data()}, ql, sc, scores.data());
      const aligner::gapped::ProfiledQuery<ForwardCodes> q{ForwardCodes{p.query.data()}, scores.data(), ql};
      const ExtendResult local = aligner::gapped::local_align(q, static_cast<std::uint32_t>(ql),
                                                              ForwardCodes{p.target.data()}, tl, sc, DpRows<1>{scratch.data()});
      const auto want = local_answer(gotoh(p.query, p.target, sc, OracleMode::local, 0, band_of(sc.band)));
      ASSERT_EQ(local.score, want.score) << p.what;
      ASSERT_EQ(local.qle, want.qle) << p.what;
      ASSERT_EQ(local.tle, want.tle) << p.what;
      ++compared;
    }
  }
  EXPECT_GT(compared, 100);
}

TEST(GappedExtend, UnbandedEqualsTheFullGotohDp) {
  int compared = 0;
  for (const Pair& p : mixed_pairs(25)) {
    for (std::int32_t h0 : kH0s) {
      const Scoring sc = no_zdrop();
      const auto want = extension_answer(gotoh(p.query, p.target, sc, OracleMode::extension, h0, unbanded()), h0);
      ASSERT_TRUE(same(run_extend(p.query, p.target, sc, h0), want)) << p.what << ", h0 " << h0;
      ++compared;
    }
  }
  EXPECT_GT(compared, 100);
}

TEST(GappedExtend, OtherScoringsEqualTheFullGotohDp) {
  // Unequal deletion and insertion penalties, free gap opens, a large match score.
  // Free gaps and mismatches (d): ties everywhere, so the tie rules are compared too.
  Scoring a = no_zdrop(), b = no_zdrop(), c = no_zdrop(), d = no_zdrop();
  a.open_del = 3, a.extend_del = 2, a.open_ins = 9, a.extend_ins = 1;
  b.open_del = 0, b.open_ins = 0, b.mismatch = 2;
  c.match = 3, c.mismatch = 1, c.extend_ins = 0;
  d.open_del = d.open_ins = d.extend_ins = d.mismatch = 0;
  for (const Scoring& sc : {a, b, c, d}) {
    for (const Pair& p : mixed_pairs(77, false)) {
      const auto want = extension_answer(gotoh(p.query, p.target, sc, OracleMode::extension, 20, unbanded()), 20);
      ASSERT_TRUE(same(run_extend(p.query, p.target, sc, 20), want)) << p.what;
    }
  }
}

TEST(GappedExtend, BandedEqualsTheDpMaskedToTheBand) {
  for (const Pair& p : mixed_pairs(26, false)) {
    for (std::int32_t w : {0, 1, 2, 5, 17, 60}) {
      for (std::int32_t h0 : {7, 120}) {
        const Scoring sc = no_zdrop(w);
        const auto want = extension_answer(gotoh(p.query, p.target, sc, OracleMode::extension, h0, band_of(w)), h0);
        ASSERT_TRUE(same(run_extend(p.query, p.target, sc, h0), want)) << p.what << ", band " << w << ", h0 " << h0;
      }
    }
  }
}

TEST(GappedExtend, ReadingBackwardsEqualsTheDpOnReversedSequences) {
  for (const Pair& p : mixed_pairs(27)) {
    const Codes rq(p.query.rbegin(), p.query.rend()), rt(p.target.rbegin(), p.target.rend());
    const Scoring sc = no_zdrop(40);
    const auto want = extension_answer(gotoh(rq, rt, sc, OracleMode::extension, 30, band_of(40)), 30);
    ASSERT_TRUE(same(run_extend(p.query, p.target, sc, 30, true), want)) << p.what;
  }
}

// With z-drop the extension stops early, but every row it computed is exact: the best cell and
// the global end it reports hold exactly those scores in the full DP, and nothing beats the DP.
TEST(GappedExtend, WithZdropTheReportedCellsHoldTheirDpScores) {
  int stopped_early = 0;
  for (const Pair& p : mixed_pairs(29)) {
    for (std::int32_t zdrop : {5, 20, 100}) {
      Scoring sc;
      sc.zdrop = zdrop;
      sc.band = 1 << 20;
      const std::int32_t h0 = 25;
      const GotohMatrices g = gotoh(p.query, p.target, sc, OracleMode::extension, h0, unbanded());
      const ExtendResult r = run_extend(p.query, p.target, sc, h0);
      const OracleExtension full = extension_answer(g, h0);
      ASSERT_LE(r.score, full.score) << p.what;
      if (r.qle > 0) {
        ASSERT_EQ(r.score, g.best(r.tle, r.qle)) << p.what << ", z-drop " << zdrop;
      } else {
        ASSERT_EQ(r.score, h0) << p.what;
      }
      if (r.gscore >= 0) {
        ASSERT_EQ(r.gscore, g.best(r.gtle, g.cols - 1)) << p.what << ", z-drop " << zdrop;
      }
      stopped_early += r.score < full.score;
    }
  }
  EXPECT_GT(stopped_early, 0);  // the cases do exercise an early stop
}

TEST(GappedExtend, ClosedFormCases) {
  const Scoring sc = no_zdrop();
  // Identical: every base matches; the best and the global end are the whole query.
  const Codes s = codes_of("ACGTACGTTTGCA");
  const ExtendResult r = run_extend(s, s, sc, 10);
  EXPECT_EQ(r.score, 23);
  EXPECT_EQ(r.qle, 13);
  EXPECT_EQ(r.tle, 13);
  EXPECT_EQ(r.gscore, 23);
  EXPECT_EQ(r.gtle, 13);
  EXPECT_EQ(r.max_off, 0);
  // Ties: with free insertions "AA" against "A" scores h0 + 1 at query end 1 and 2; the largest
  // query end is reported.
  Scoring free_ins = sc;
  free_ins.open_ins = free_ins.extend_ins = 0;
  const ExtendResult tie = run_extend(codes_of("AA"), codes_of("A"), free_ins, 10);
  EXPECT_EQ(tie.score, 11);
  EXPECT_EQ(tie.qle, 2);
  EXPECT_EQ(tie.tle, 1);
  // A first mismatch kills an h0 of 4 (4 - 4 = 0): nothing beats the start, no path reaches the end.
  const ExtendResult dead = run_extend(codes_of("AAAA"), codes_of("CAAA"), sc, 4);
  EXPECT_EQ(dead.score, 4);
  EXPECT_EQ(dead.qle, 0);
  EXPECT_EQ(dead.tle, 0);
  EXPECT_EQ(dead.gscore, -1);
  // An N in the reference scores as a mismatch, one in the read -1 (bwa mem's), against a base or
  // an N: 8 matches around it, h0 10: 10 + 8 - 4, and 10 + 8 - 1; an N facing an N is the
  // reference's.
  EXPECT_EQ(run_extend(codes_of("ACGTACGTA"), codes_of("ACGTNCGTA"), sc, 10).gscore, 14);
  EXPECT_EQ(run_extend(codes_of("ACGTNCGTA"), codes_of("ACGTACGTA"), sc, 10).gscore, 17);
  EXPECT_EQ(run_extend(codes_of("ACGTNCGTA"), codes_of("ACGTNCGTA"), sc, 10).gscore, 14);
  // A 3-base deletion after 20 matches, 30 matches after it: 20 + 30 - (6 + 3); max_off 3.
  std::mt19937_64 rng(5);
  const Codes left = random_codes(rng, 20), gap = codes_of("GGG"), right = random_codes(rng, 30);
  Codes target = left, query = left;
  target.insert(target.end(), gap.begin(), gap.end());
  target.insert(target.end(), right.begin(), right.end());
  query.insert(query.end(), right.begin(), right.end());
  const ExtendResult del = run_extend(query, target, sc, 50);
  EXPECT_EQ(del.score, 50 + 50 - 9);
  EXPECT_EQ(del.qle, 50);
  EXPECT_EQ(del.tle, 53);
  EXPECT_EQ(del.max_off, 3);
}

// Gaps impossible (opening costs more than any score): only the diagonal lives, so the drop after
// P matches and K mismatches is exactly K * B.
TEST(GappedExtend, ZdropStopsExactlyWhenTheDiagonalDropsMoreThanD) {
  Scoring sc;
  sc.open_del = sc.open_ins = 10000;
  const unsigned P = 40, K = 5, R = 60;
  std::mt19937_64 rng(9);
  Codes target = random_codes(rng, P + K + R), query = target;
  for (unsigned k = P; k < P + K; ++k) query[k] = static_cast<std::uint8_t>((target[k] + 2) % 4);
  const std::int32_t h0 = 10;
  sc.zdrop = static_cast<std::int32_t>(K) * sc.mismatch - 1;  // K * B > d: stops at row P + K
  const ExtendResult stopped = run_extend(query, target, sc, h0);
  EXPECT_EQ(stopped.score, h0 + static_cast<std::int32_t>(P));
  EXPECT_EQ(stopped.qle, static_cast<std::int32_t>(P));
  EXPECT_EQ(stopped.gscore, -1);                          // never reached the query's end
  sc.zdrop = static_cast<std::int32_t>(K) * sc.mismatch;  // the drop never exceeds d
  const ExtendResult through = run_extend(query, target, sc, h0);
  const std::int32_t total = h0 + static_cast<std::int32_t>(P + R) - static_cast<std::int32_t>(K) * sc.mismatch;
  EXPECT_EQ(through.score, total);
  EXPECT_EQ(through.qle, static_cast<std::int32_t>(P + K + R));
  EXPECT_EQ(through.gscore, total);
  EXPECT_EQ(through.gtle, static_cast<std::int32_t>(P + K + R));
}

// A gap's drop is offset by its length times the extension penalty (bwa's rule): with free gap
// opens a g-base gap drops the score by g and the diagonals differ by g, so even z-drop 1 does not
// stop, on either side; mismatches cost 100, so no path but the gapped one lives.
TEST(GappedExtend, ZdropDiscountsTheGapLength) {
  Scoring sc;
  sc.mismatch = 100;
  sc.open_del = sc.open_ins = 0;
  sc.zdrop = 1;
  const unsigned P = 30, G = 12, R = 40;
  std::mt19937_64 rng(11);
  Codes x(P), y(R);
  for (auto& c : x) c = static_cast<std::uint8_t>(1 + rng() % 3);  // C, G, T: never A
  for (auto& c : y) c = static_cast<std::uint8_t>(1 + rng() % 3);
  Codes with_gap = x, without = x;
  with_gap.insert(with_gap.end(), G, 0);  // G bases of A
  with_gap.insert(with_gap.end(), y.begin(), y.end());
  without.insert(without.end(), y.begin(), y.end());
  const std::int32_t h0 = 5, want = h0 + static_cast<std::int32_t>(P + R - G);
  const ExtendResult del = run_extend(without, with_gap, sc, h0);  // target longer: deletion
  EXPECT_EQ(del.score, want);
  EXPECT_EQ(del.qle, static_cast<std::int32_t>(P + R));
  EXPECT_EQ(del.tle, static_cast<std::int32_t>(P + G + R));
  const ExtendResult ins = run_extend(with_gap, without, sc, h0);  // query longer: insertion
  EXPECT_EQ(ins.score, want);
  EXPECT_EQ(ins.qle, static_cast<std::int32_t>(P + G + R));
  EXPECT_EQ(ins.tle, static_cast<std::int32_t>(P + R));
  // The same gaps with mismatches instead stop at z-drop G * B - 1 (contrast: the rule is not off).
  Codes mism = x;
  mism.insert(mism.end(), G, 0);
  mism.insert(mism.end(), y.begin(), y.end());
  Codes other = x;
  other.insert(other.end(), G, 1);
  other.insert(other.end(), y.begin(), y.end());
  Scoring diag = sc;
  diag.open_del = diag.open_ins = 10000;
  diag.mismatch = 4;
  diag.zdrop = static_cast<std::int32_t>(G) * 4 - 1;
  EXPECT_EQ(run_extend(mism, other, diag, h0).qle, static_cast<std::int32_t>(P));
}

// bwa mem's choice between a clipped (local) end and the query's end, at the boundary.
TEST(GappedExtend, ChooseEndClipsUnlessTheEndScoresMoreThanTheBestLessThePenalty) {
  ExtendResult r;
  r.score = 50, r.qle = 40, r.tle = 41, r.gscore = 45, r.gtle = 60;
  const auto clipped = aligner::gapped::choose_end(r, 70, 5);  // 45 <= 50 - 5 (the boundary): clip
  EXPECT_FALSE(clipped.to_end);
  EXPECT_EQ(clipped.query_bases, 40);
  EXPECT_EQ(clipped.target_bases, 41);
  EXPECT_EQ(clipped.true_score, 50);
  const auto to_end = aligner::gapped::choose_end(r, 70, 6);  // 45 > 50 - 6: to the end
  EXPECT_TRUE(to_end.to_end);
  EXPECT_EQ(to_end.query_bases, 70);
  EXPECT_EQ(to_end.target_bases, 60);
  EXPECT_EQ(to_end.score, 50);
  EXPECT_EQ(to_end.true_score, 45);
  r.gscore = -1;  // no live path reaches the end
  EXPECT_FALSE(aligner::gapped::choose_end(r, 70, 100).to_end);
}

TEST(GappedLocal, EqualsTheFullSmithWatermanAndLocalStartFindsItsStart) {
  int with_start = 0;
  for (const Pair& p : mixed_pairs(28)) {
    for (std::int32_t w : {1 << 20, 3, 30}) {
      Scoring sc = no_zdrop(w);
      const auto want = local_answer(gotoh(p.query, p.target, sc, OracleMode::local, 0, band_of(w)));
      std::vector<std::int32_t> scratch(
          aligner::gapped::extend_scratch_bytes(static_cast<std::uint32_t>(p.query.size())) / 4);
      const auto ql = static_cast<std::uint32_t>(p.query.size()), tl = static_cast<std::uint32_t>(p.target.size());
      const ExtendResult got = aligner::gapped::local_align(
          ForwardCodes{p.query.data()}, ql, ForwardCodes{p.target.data()}, tl, sc, DpRows<1>{scratch.data()});
      ASSERT_EQ(got.score, want.score) << p.what << ", band " << w;
      ASSERT_EQ(got.qle, want.qle) << p.what << ", band " << w;
      ASSERT_EQ(got.tle, want.tle) << p.what << ", band " << w;
      if (w != 1 << 20 || got.score == 0) continue;
      // The start: the sub-ranges it delimits align end to end with the optimal local score.
      std::vector<std::int32_t> back(aligner::gapped::extend_scratch_bytes(static_cast<std::uint32_t>(got.qle)) / 4);
      const ExtendResult start = aligner::gapped::local_start(
          ForwardCodes{p.query.data()}, ForwardCodes{p.target.data()}, got, sc, DpRows<1>{back.data()});
      ASSERT_EQ(start.score, got.score + 1) << p.what;
      const Codes q(p.query.begin() + (got.qle - start.qle), p.query.begin() + got.qle);
      const Codes t(p.target.begin() + (got.tle - start.tle), p.target.begin() + got.tle);
      const GotohMatrices g = gotoh(q, t, sc, OracleMode::global, 0, unbanded());
      EXPECT_EQ(g.best(g.rows - 1, g.cols - 1), got.score)
          << p.what << ": start (" << got.qle - start.qle << ", " << got.tle - start.tle << ")";
      ++with_start;
    }
  }
  EXPECT_GT(with_start, 20);
}

// tandem_score (bwa's csub of a rescued hit) equals ksw_align2's score2 worked out from the full
// Smith-Waterman (gotoh_oracle.hpp's ksw_score2) on the mixed pairs, several floors and scorings.
TEST(GappedLocal, TandemScoreIsKswsScore2) {
  int nonzero = 0;
  for (const Pair& p : mixed_pairs(29)) {
    for (const std::int32_t floor : {19, 8, 30}) {
      for (const std::int32_t match : {1, 2}) {
        Scoring sc = no_zdrop();
        sc.match = match;
        const GotohMatrices g = gotoh(p.query, p.target, sc, OracleMode::local, 0, unbanded());
        const OracleExtension best = local_answer(g);
        std::vector<std::int32_t> scratch(
            aligner::gapped::extend_scratch_bytes(static_cast<std::uint32_t>(p.query.size())) / 4);
        const auto ql = static_cast<std::uint32_t>(p.query.size()), tl = static_cast<std::uint32_t>(p.target.size());
        const ForwardCodes q{p.query.data()}, t{p.target.data()};
        const ExtendResult end = aligner::gapped::local_align(q, ql, t, tl, sc, DpRows<1>{scratch.data()});
        const std::int32_t got = aligner::gapped::tandem_score(q, ql, t, tl, end, sc, floor, DpRows<1>{scratch.data()});
        ASSERT_EQ(got, ksw_score2(g, floor, best.score, best.tle, match))
            << p.what << ", floor " << floor << ", match " << match;
        nonzero += got > 0;
      }
    }
  }
  EXPECT_GT(nonzero, 10);
}

// A window holding the read and, 150 bases on, a copy with 2 mismatches: the second copy's
// score, 100 - 2 (A + B) = 90, ends 250 rows after the best's, beyond its reach of 100 rows.
// Without the copy the window has no other alignment of 19.
TEST(GappedLocal, TandemScoreOfASecondCopyIsItsScore) {
  std::mt19937_64 rng(5);
  const Codes read = random_codes(rng, 100);
  Codes copy = read;
  copy[30] = (copy[30] + 1) % 4;
  copy[70] = (copy[70] + 2) % 4;
  const Codes left = random_codes(rng, 50), spacer = random_codes(rng, 150), right = random_codes(rng, 50);
  Codes with_copy = left, without = left;
  for (const Codes* part : std::initializer_list<const Codes*>{&read, &spacer, &copy, &right}) with_copy.insert(with_copy.end(), part->begin(), part->end());
  for (const Codes* part : std::initializer_list<const Codes*>{&read, &spacer, &right}) without.insert(without.end(), part->begin(), part->end());
  const Scoring sc = no_zdrop();
  for (const Codes* window : {&with_copy, &without}) {
    std::vector<std::int32_t> scratch(aligner::gapped::extend_scratch_bytes(100) / 4);
    const auto tl = static_cast<std::uint32_t>(window->size());
    const ForwardCodes q{read.data()}, t{window->data()};
    const ExtendResult end = aligner::gapped::local_align(q, 100, t, tl, sc, DpRows<1>{scratch.data()});
    ASSERT_EQ(end.score, 100);
    ASSERT_EQ(end.tle, 150);
    EXPECT_EQ(aligner::gapped::tandem_score(q, 100, t, tl, end, sc, 19, DpRows<1>{scratch.data()}),
              window == &with_copy ? 100 - 2 * (sc.match + sc.mismatch) : 0);
  }
}

}  // namespace
}  // namespace wtmap::test
