// gapped/global.hpp and gapped/edit_tags.hpp: global_align's score equals a full Gotoh DP's optimum
// (unbanded, and masked to the band it reports using), its CIGAR consumes both sequences exactly,
// never puts an insertion next to a deletion, rescored from the sequences alone gives the returned
// score, and htslib reads it with both lengths. edit_tags: hand-written cases, and on every
// alignment NM counted from the columns and the reference rebuilt from the read, the CIGAR and MD
// (SAM's grammar for MD).
#include <gtest/gtest.h>
#include <htslib/sam.h>

#include <cstdint>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "gapped_cases.hpp"
#include "gotoh_oracle.hpp"
#include "wtmap/aligner/gapped/edit_tags.hpp"
#include "wtmap/aligner/gapped/global.hpp"

namespace wtmap::test {
namespace {

using aligner::gapped::ForwardCodes;
using aligner::gapped::GlobalResult;

struct Aligned {
  GlobalResult result;
  std::vector<std::uint32_t> cigar;
};

Aligned run_global(const Codes& q, const Codes& t, const Scoring& sc, std::int32_t w) {
  const auto ql = static_cast<std::uint32_t>(q.size()), tl = static_cast<std::uint32_t>(t.size());
  std::vector<std::uint32_t> scratch(aligner::gapped::global_scratch_bytes(ql, tl, w) / 4);
  Aligned a;
  a.cigar.assign(aligner::gapped::global_max_cigar_ops(ql, tl), 0xDEADBEEF);
  a.result = aligner::gapped::global_align(ForwardCodes{q.data()}, ql, ForwardCodes{t.data()}, tl, sc, w,
                                           scratch.data(), a.cigar.data(), static_cast<std::uint32_t>(a.cigar.size()));
  a.cigar.resize(a.result.n_cigar);
  return a;
}

std::string cigar_string(const std::vector<std::uint32_t>& cigar) {
  std::string s;
  for (std::uint32_t c : cigar) s += std::to_string(c >> 4) + "MIDNSHP=X"[c & 0xF];
  return s;
}

// The score, the CIGAR's consistency and its rescoring, against the oracle with the band masked.
::testing::AssertionResult optimal_and_consistent(const Codes& q, const Codes& t, const Scoring& sc, std::int32_t w) {
  const Aligned a = run_global(q, t, sc, w);
  const std::int32_t band =
      aligner::gapped::global_band(static_cast<std::uint32_t>(q.size()), static_cast<std::uint32_t>(t.size()), w);
  const GotohMatrices g = gotoh(q, t, sc, OracleMode::global, 0, band_of(band));
  const std::int64_t want = g.best(g.rows - 1, g.cols - 1);
  const std::int64_t rescored = rescore(q, t, a.cigar, sc);
  if (a.result.score != want || rescored != want) {
    return ::testing::AssertionFailure() << "score " << a.result.score << ", CIGAR " << cigar_string(a.cigar)
                                         << " rescored " << rescored << ", oracle " << want << " (band " << band << ")";
  }
  return ::testing::AssertionSuccess();
}

TEST(GappedGlobal, UnbandedScoreIsTheOptimumAndTheCigarRescoresToIt) {
  int compared = 0;
  for (const Pair& p : mixed_pairs(31)) {
    ASSERT_TRUE(optimal_and_consistent(p.query, p.target, Scoring{}, 1 << 20)) << p.what;
    ++compared;
  }
  EXPECT_GT(compared, 30);
}

TEST(GappedGlobal, BandedScoreIsTheOptimumInsideTheBand) {
  for (const Pair& p : mixed_pairs(32, false)) {
    for (std::int32_t w : {0, 1, 3, 10, 51})
      ASSERT_TRUE(optimal_and_consistent(p.query, p.target, Scoring{}, w)) << p.what << ", w " << w;
  }
}

TEST(GappedGlobal, OtherScorings) {
  Scoring a, b, c;
  a.open_del = 2, a.extend_del = 3, a.open_ins = 11, a.extend_ins = 1;
  b.open_del = b.open_ins = 0, b.mismatch = 1;
  c.open_del = c.open_ins = c.extend_ins = c.mismatch = 0;  // ties everywhere
  for (const Scoring& sc : {a, b, c}) {
    for (const Pair& p : mixed_pairs(33, false))
      ASSERT_TRUE(optimal_and_consistent(p.query, p.target, sc, 20)) << p.what;
  }
}

// The band from the optimum's score holds every alignment that good: the banded alignment is the
// unbanded one, score and CIGAR (ties included), for other gap costs too.
TEST(GappedGlobal, TheBandForAScoreKeepsEveryAlignmentThatGood) {
  Scoring cheap_gaps;
  cheap_gaps.open_del = 1, cheap_gaps.open_ins = 2;
  Scoring free_insertions;
  free_insertions.extend_ins = 0;
  Scoring uneven;
  uneven.match = 2, uneven.open_del = 3, uneven.extend_del = 2, uneven.open_ins = 7, uneven.extend_ins = 1;
  int narrowed = 0;
  for (const Scoring& sc : {Scoring{}, cheap_gaps, free_insertions, uneven}) {
    for (const Pair& p : mixed_pairs(35)) {
      const auto ql = static_cast<std::uint32_t>(p.query.size()), tl = static_cast<std::uint32_t>(p.target.size());
      const Aligned unbanded = run_global(p.query, p.target, sc, 1 << 20);
      const std::int32_t band = aligner::gapped::global_band_for_score(ql, tl, unbanded.result.score, sc);
      const Aligned banded = run_global(p.query, p.target, sc, band);
      EXPECT_EQ(banded.result.score, unbanded.result.score) << p.what << ", band " << band;
      EXPECT_EQ(cigar_string(banded.cigar), cigar_string(unbanded.cigar)) << p.what << ", band " << band;
      narrowed += band < static_cast<std::int32_t>(std::max(ql, tl));
    }
  }
  EXPECT_GT(narrowed, 50);  // the cases do test narrow bands
  // Closed form. 100 bases each: straying s diagonals takes s insertions and s deletions and
  // leaves 100 - s pairs, scoring at most 100 - s - 12 - 2 s: 70 allows s = 6 (94 - 12 - 12),
  // not 7 (93 - 12 - 14 = 67); 91 allows none.
  EXPECT_EQ(aligner::gapped::global_band_for_score(100, 100, 70, Scoring{}), 6);
  EXPECT_EQ(aligner::gapped::global_band_for_score(100, 100, 71, Scoring{}), 5);
  EXPECT_EQ(aligner::gapped::global_band_for_score(100, 100, 91, Scoring{}), 0);
  EXPECT_EQ(aligner::gapped::global_band_for_score(100, 100, 100, Scoring{}), 0);
  // 3 bases more on one side: the 3 gap bases they need cost 3 more, so 70 allows (100 - 70 - 12 - 3) / 3 = 5.
  EXPECT_EQ(aligner::gapped::global_band_for_score(100, 103, 70, Scoring{}), 3 + 5);
  EXPECT_EQ(aligner::gapped::global_band_for_score(103, 100, 70, Scoring{}), 3 + 5);
  EXPECT_EQ(aligner::gapped::global_band_for_score(100, 110, 91, Scoring{}), 10);  // the length difference
  // Free insertions: straying still costs a deletion and a pair a diagonal.
  EXPECT_EQ(aligner::gapped::global_band_for_score(120, 100, 70, free_insertions), 20 + (100 - 70 - 12) / 2);
  EXPECT_EQ(aligner::gapped::global_band_for_score(100, 120, 10, Scoring{}), 20 + (100 - 10 - 12 - 20) / 3);
  EXPECT_EQ(aligner::gapped::global_band_for_score(10, 10, -100, Scoring{}), 10);  // at most the longer length
}

TEST(GappedGlobal, ClosedFormCigars) {
  const Scoring sc;
  const Aligned same = run_global(codes_of("ACGTACGT"), codes_of("ACGTACGT"), sc, 5);
  EXPECT_EQ(cigar_string(same.cigar), "8M");
  EXPECT_EQ(same.result.score, 8);
  // A 3-base deletion in the middle of 20 + 20 bases: 40 - (6 + 3).
  std::mt19937_64 rng(3);
  const Codes x = random_codes(rng, 20), y = random_codes(rng, 20);
  Codes q = x, t = x;
  q.insert(q.end(), y.begin(), y.end());
  t.insert(t.end(), {0, 1, 2});
  t.insert(t.end(), y.begin(), y.end());
  const Aligned del = run_global(q, t, sc, 10);
  EXPECT_EQ(del.result.score, 31);
  EXPECT_EQ(del.result.n_cigar, 3u);
  EXPECT_EQ(del.cigar[1], 3u << 4 | aligner::gapped::kCigarDel);
  const Aligned ins = run_global(t, q, sc, 10);
  EXPECT_EQ(ins.result.score, 31);
  EXPECT_EQ(ins.cigar[1], 3u << 4 | aligner::gapped::kCigarIns);
  // Against nothing: the whole other sequence is one gap.
  EXPECT_EQ(cigar_string(run_global(codes_of("ACG"), {}, sc, 0).cigar), "3I");
  EXPECT_EQ(run_global(codes_of("ACG"), {}, sc, 0).result.score, -9);
  EXPECT_EQ(cigar_string(run_global({}, codes_of("ACGTA"), sc, 0).cigar), "5D");
  EXPECT_EQ(run_global({}, {}, sc, 0).result.n_cigar, 0u);
  EXPECT_EQ(run_global({}, {}, sc, 0).result.score, 0);
}

// The CIGAR is BAM's encoding as htslib reads it: its query and reference lengths are the two
// sequences', its letters M, I, D.
TEST(GappedGlobal, HtslibReadsTheCigar) {
  for (const Pair& p : mixed_pairs(36)) {
    const Aligned a = run_global(p.query, p.target, Scoring{}, 30);
    const auto n = static_cast<int>(a.cigar.size());
    EXPECT_EQ(bam_cigar2qlen(n, a.cigar.data()), static_cast<hts_pos_t>(p.query.size())) << p.what;
    EXPECT_EQ(bam_cigar2rlen(n, a.cigar.data()), static_cast<hts_pos_t>(p.target.size())) << p.what;
    for (std::uint32_t c : a.cigar) EXPECT_NE(std::string("MID").find(bam_cigar_opchr(c)), std::string::npos);
  }
}

TEST(GappedGlobal, ACigarThatDoesNotFitIsReportedNotWrittenPast) {
  const Codes q = codes_of("ACGTAAAACGT"), t = codes_of("ACGTACGT");
  std::vector<std::uint32_t> scratch(aligner::gapped::global_scratch_bytes(11, 8, 5) / 4);
  std::uint32_t cigar[3] = {0, 0, 7};
  const GlobalResult r = aligner::gapped::global_align(ForwardCodes{q.data()}, 11, ForwardCodes{t.data()}, 8, Scoring{},
                                                       5, scratch.data(), cigar, 2);  // needs 3: 4M3I4M
  EXPECT_EQ(r.n_cigar, 0u);
  EXPECT_EQ(r.score, aligner::gapped::kUnreachable);
  EXPECT_EQ(cigar[2], 7u);
}

// ---- NM and MD --------------------------------------------------------------------------------

aligner::gapped::EditTags tags_of(const std::string& q, const std::string& r, const std::vector<std::uint32_t>& cigar) {
  const Codes qc = codes_of(q), rc = codes_of(r);
  auto t = aligner::gapped::edit_tags(qc.data(), qc.size(), rc.data(), rc.size(), cigar.data(),
                                      static_cast<std::uint32_t>(cigar.size()));
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? t.value() : aligner::gapped::EditTags{};
}

constexpr std::uint32_t op(std::uint32_t len, char c) {
  return len << 4 | (c == 'M' ? 0u : c == 'I' ? 1u : c == 'D' ? 2u : c == 'S' ? 4u : 9u);
}

TEST(GappedEditTags, HandWrittenCases) {
  EXPECT_EQ(tags_of("ACGT", "ACGT", {op(4, 'M')}).md, "4");
  EXPECT_EQ(tags_of("ACGT", "ACGT", {op(4, 'M')}).nm, 0u);
  EXPECT_EQ(tags_of("ACTT", "ACGT", {op(4, 'M')}).md, "2G1");
  EXPECT_EQ(tags_of("TCGA", "ACGT", {op(4, 'M')}).md, "0A2T0");
  // Deletions: "^" and the deleted bases; a mismatch right after one is preceded by a 0.
  const auto del = tags_of("ACGTTT", "ACGGATCT", {op(3, 'M'), op(2, 'D'), op(3, 'M')});
  EXPECT_EQ(del.md, "3^GA1C1");
  EXPECT_EQ(del.nm, 3u);
  const auto del_mismatch = tags_of("ACGATT", "ACGGATCT", {op(3, 'M'), op(2, 'D'), op(3, 'M')});
  EXPECT_EQ(del_mismatch.md, "3^GA0T0C1");
  EXPECT_EQ(del_mismatch.nm, 4u);
  // An insertion adds to NM but not to MD; a soft clip is skipped.
  const auto ins = tags_of("ACGGGTA", "ACGTA", {op(3, 'M'), op(2, 'I'), op(2, 'M')});
  EXPECT_EQ(ins.md, "5");
  EXPECT_EQ(ins.nm, 2u);
  EXPECT_EQ(tags_of("ACGT", "ACGT", {op(4, 'M'), op(3, 'S')}).md, "4");
  // N on either side is a mismatch (samtools calmd), MD shows the reference's letter.
  const auto ns = tags_of("ANGT", "ACGN", {op(4, 'M')});
  EXPECT_EQ(ns.md, "1C1N0");
  EXPECT_EQ(ns.nm, 2u);
  EXPECT_EQ(tags_of("N", "N", {op(1, 'M')}).md, "0N0");
}

// edit_tags against a column-by-column count on long alignments: M runs of 1 to 300 columns whose
// mismatches and Ns (codes 4 to 6, on either side or both) fall at any offset from a run's start
// (edit_tags skips matching columns eight at a time), with a leading clip, insertions and
// deletions between runs; from no edits to one column in two.
TEST(GappedEditTags, EqualsAColumnByColumnCountOnLongRuns) {
  std::mt19937 rng(25);
  const double rates[] = {0, 0.002, 0.02, 0.2, 0.5};
  for (int trial = 0; trial < 3000; ++trial) {
    const double rate = rates[trial % 5];
    std::bernoulli_distribution edit(rate), n_code(0.3);
    Codes q, r;
    std::vector<std::uint32_t> cigar;
    std::string md;
    std::uint32_t nm = 0, run = 0;
    const auto base = [&] { return static_cast<std::uint8_t>(rng() % 4); };
    if (rng() % 3 == 0) cigar.push_back(op(1 + rng() % 20, 'S'));  // q starts after it, as edit_tags reads
    const int segments = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < segments; ++k) {
      if (k > 0) {  // an insertion or a deletion between two runs
        const std::uint32_t len = 1 + rng() % 5;
        if (rng() % 2 == 0) {
          for (std::uint32_t i = 0; i < len; ++i) q.push_back(base());
          cigar.push_back(op(len, 'I'));
          nm += len;
        } else {
          md += std::to_string(run) + "^";
          for (std::uint32_t i = 0; i < len; ++i) {
            r.push_back(base());
            md += "ACGT"[r.back()];
          }
          cigar.push_back(op(len, 'D'));
          nm += len;
          run = 0;
        }
      }
      const std::uint32_t len = 1 + rng() % 300;
      for (std::uint32_t i = 0; i < len; ++i) {
        std::uint8_t a = base(), b = a;
        if (edit(rng)) {
          if (n_code(rng)) {  // an N on one side or both
            const unsigned side = rng() % 3;
            if (side != 1) a = static_cast<std::uint8_t>(4 + rng() % 3);
            if (side != 0) b = 4;
          } else {
            b = static_cast<std::uint8_t>((a + 1 + rng() % 3) % 4);
          }
        }
        q.push_back(a);
        r.push_back(b);
        if (a == b && a < 4) {
          ++run;
        } else {
          ++nm;
          md += std::to_string(run) + "ACGTN"[b < 4 ? b : 4];
          run = 0;
        }
      }
      cigar.push_back(op(len, 'M'));
    }
    md += std::to_string(run);
    auto got = aligner::gapped::edit_tags(q.data(), q.size(), r.data(), r.size(), cigar.data(),
                                          static_cast<std::uint32_t>(cigar.size()));
    ASSERT_TRUE(got.ok()) << got.status().message();
    ASSERT_EQ(got->md, md) << "trial " << trial;
    ASSERT_EQ(got->nm, nm) << "trial " << trial;
  }
}

TEST(GappedEditTags, RefusesCigarsThatRunPastTheSequences) {
  const Codes q = codes_of("ACG"), r = codes_of("ACGT");
  const std::uint32_t too_long[] = {op(4, 'M')}, bad_op[] = {op(2, 'N')}, long_del[] = {op(1, 'M'), op(4, 'D')};
  EXPECT_FALSE(aligner::gapped::edit_tags(q.data(), q.size(), r.data(), r.size(), too_long, 1).ok());
  EXPECT_FALSE(aligner::gapped::edit_tags(q.data(), q.size(), r.data(), r.size(), bad_op, 1).ok());
  EXPECT_FALSE(aligner::gapped::edit_tags(q.data(), q.size(), r.data(), r.size(), long_del, 2).ok());
}

// On every global alignment: NM counted from the CIGAR's columns; MD matches SAM's grammar and,
// replayed on the read, rebuilds the reference exactly.
TEST(GappedEditTags, MdRebuildsTheReferenceAndNmCountsTheEdits) {
  const std::regex grammar("[0-9]+(([A-Z]|\\^[A-Z]+)[0-9]+)*");
  for (const Pair& p : mixed_pairs(34)) {
    const Aligned a = run_global(p.query, p.target, Scoring{}, 60);
    auto tags = aligner::gapped::edit_tags(p.query.data(), p.query.size(), p.target.data(), p.target.size(),
                                           a.cigar.data(), a.result.n_cigar);
    ASSERT_TRUE(tags.ok()) << tags.status().message();
    ASSERT_TRUE(std::regex_match(tags->md, grammar)) << tags->md;
    std::uint32_t nm = 0;
    std::size_t qi = 0, ti = 0;
    for (std::uint32_t c : a.cigar) {
      const std::uint32_t len = c >> 4;
      if ((c & 0xF) == 0) {
        for (std::uint32_t k = 0; k < len; ++k, ++qi, ++ti) nm += p.query[qi] != p.target[ti] || p.query[qi] == 4;
      } else if ((c & 0xF) == 1) {
        nm += len, qi += len;
      } else {
        nm += len, ti += len;
      }
    }
    EXPECT_EQ(tags->nm, nm) << p.what;
    // Replay: MD's numbers copy read bases (M columns, skipping insertions), letters replace them.
    std::string aligned_ref;   // the reference as M and D columns give it, from read + MD
    std::vector<char> read_m;  // the read's bases in M columns, in order
    qi = 0;
    for (std::uint32_t c : a.cigar) {
      if ((c & 0xF) == 0) {
        for (std::uint32_t k = 0; k < (c >> 4); ++k) read_m.push_back("ACGTN"[p.query[qi++]]);
      } else if ((c & 0xF) == 1) {
        qi += c >> 4;
      } else {
        read_m.insert(read_m.end(), c >> 4, '^');  // placeholders for deleted bases
      }
    }
    std::size_t at = 0;
    for (std::size_t i = 0; i < tags->md.size();) {
      if (std::isdigit(static_cast<unsigned char>(tags->md[i]))) {
        std::size_t n = 0;
        while (i < tags->md.size() && std::isdigit(static_cast<unsigned char>(tags->md[i])))
          n = n * 10 + (tags->md[i++] - '0');
        for (std::size_t k = 0; k < n && at < read_m.size(); ++k) aligned_ref += read_m[at++];
      } else if (tags->md[i] == '^') {
        ++i;
        while (i < tags->md.size() && std::isalpha(static_cast<unsigned char>(tags->md[i])))
          aligned_ref += tags->md[i++], ++at;
      } else {
        aligned_ref += tags->md[i++];
        ++at;
      }
    }
    std::string want;
    for (std::uint8_t c : p.target) want += "ACGTN"[c];
    EXPECT_EQ(aligned_ref, want) << p.what << ", MD " << tags->md;
  }
}

}  // namespace
}  // namespace wtmap::test
