// Bi-intervals (bidirectional.hpp) against backward search and a naive scan: after every step of
// random mixes of left and right extensions, the rows of P equal backward_search(P), the rows of
// rc(P) equal backward_search(rc(P)), and the size equals P's count in the contigs, both strands
// (a naive scan) -- for matches and mismatches, and across contig ends and ambiguity runs, on every
// reference shape of the FmIndex suites. The functions are __host__ __device__ code; the GPU runs
// them inside the SMEM seeding kernel (test_smem.cpp, SmemSeederBackends).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "dna_cases.hpp"
#include "fm_queries.hpp"
#include "fm_support.hpp"
#include "wtmap/fmindex/bidirectional.hpp"

namespace wtmap::fmtest {
namespace {

using fmindex::BiInterval;

class Bidirectional : public ::testing::TestWithParam<DnaShape> {
 protected:
  void SetUp() override {
    contigs_ = make_contigs(GetParam());
    index_.emplace(build_index(load_reference(dir_, contigs_), Backend::cpu, 4));
    for (const TestContig& c : contigs_) normalized_.push_back(normalized(c.sequence));
  }
  const fmindex::FmIndexView& view() const { return index_->view(); }

  fmindex::SaInterval search(const std::string& p) const {
    const std::vector<std::uint8_t> codes = pattern_codes(p);
    return view().backward_search(codes.data(), static_cast<std::uint32_t>(codes.size()));
  }

  // The bi-interval of p agrees with backward search of p and rc(p) and with the naive count.
  ::testing::AssertionResult Agrees(const BiInterval& bi, const std::string& p) const {
    const std::uint64_t count = naive_count(p);
    if (bi.size != count) {
      return ::testing::AssertionFailure() << p << ": size " << bi.size << ", naive count " << count;
    }
    if (count == 0) return ::testing::AssertionSuccess();  // the rows of an absent pattern are no answer
    const fmindex::SaInterval rows = search(p), reverse_rows = search(revcomp(p));
    if (bi.rows().lo != rows.lo || bi.rows().hi != rows.hi) {
      return ::testing::AssertionFailure() << p << ": rows [" << bi.rows().lo << ", " << bi.rows().hi
                                           << "), backward search [" << rows.lo << ", " << rows.hi << ")";
    }
    if (bi.reverse_rows().lo != reverse_rows.lo || bi.reverse_rows().hi != reverse_rows.hi) {
      return ::testing::AssertionFailure() << p << ": reverse rows [" << bi.reverse_rows().lo << ", "
                                           << bi.reverse_rows().hi << "), backward search of rc [" << reverse_rows.lo
                                           << ", " << reverse_rows.hi << ")";
    }
    return ::testing::AssertionSuccess();
  }

  // Occurrences of p and of rc(p) in the contigs, by a scan (naive_hits' rule, without its sort).
  std::uint64_t naive_count(const std::string& p) const {
    std::uint64_t count = 0;
    for (const std::string& q : {p, revcomp(p)}) {
      for (const std::string& s : normalized_) {
        for (std::size_t at = s.find(q); at != std::string::npos; at = s.find(q, at + 1)) ++count;
      }
    }
    return count;
  }

  // Builds `target` (bases only) from its base at `seed_at` outwards, each step left or right as
  // rng says, and checks every intermediate pattern.
  void WalkTo(const std::string& target, std::size_t seed_at, std::mt19937& rng) const {
    std::size_t l = seed_at, r = seed_at + 1;
    BiInterval bi = fmindex::base_bi_interval(view(), std::string("ACGT").find(target[seed_at]));
    ASSERT_TRUE(Agrees(bi, target.substr(l, 1)));
    while (l > 0 || r < target.size()) {
      const bool right = l == 0 || (r < target.size() && rng() % 2 == 0);
      if (right) {
        bi = fmindex::extend_forward(view(), bi, std::string("ACGT").find(target[r++]));
      } else {
        bi = fmindex::extend_backward(view(), bi, std::string("ACGT").find(target[--l]));
      }
      ASSERT_TRUE(Agrees(bi, target.substr(l, r - l))) << (right ? "after a right" : "after a left") << " step";
    }
  }

  TempDir dir_;
  std::vector<TestContig> contigs_;
  std::vector<std::string> normalized_;
  std::optional<fmindex::FmIndex> index_;
};

INSTANTIATE_TEST_SUITE_P(Fm, Bidirectional, ::testing::ValuesIn(all_dna_shapes()),
                         [](const auto& info) { return std::string(shape_name(info.param)); });

TEST_P(Bidirectional, EmptyAndSingleBases) {
  const BiInterval whole = fmindex::whole_bi_interval(view());
  EXPECT_EQ(whole.x0, 0u);
  EXPECT_EQ(whole.x1, 0u);
  EXPECT_EQ(whole.size, view().rows);
  for (unsigned c = 0; c < 4; ++c) {
    const BiInterval base = fmindex::base_bi_interval(view(), c);
    EXPECT_TRUE(Agrees(base, std::string(1, "ACGT"[c])));
    const BiInterval left = fmindex::extend_backward(view(), whole, c);
    const BiInterval right = fmindex::extend_forward(view(), whole, c);
    for (const BiInterval& b : {left, right}) {
      EXPECT_EQ(b.size, base.size) << "ACGT"[c];
      if (base.size > 0) {
        EXPECT_EQ(b.x0, base.x0) << "ACGT"[c];
        EXPECT_EQ(b.x1, base.x1) << "ACGT"[c];
      }
    }
  }
}

// Substrings of the contigs (both strands) grown in random directions, and the same with one
// base replaced (a pattern that usually stops occurring at that step, and must then stay absent).
TEST_P(Bidirectional, RandomWalksMatchBackwardSearchBothStrands) {
  std::mt19937 rng(31);
  int walks = 0;
  for (std::string p : random_substrings(contigs_, 5, 150, 40)) {
    p = p.substr(0, p.find_first_not_of("ACGT"));  // up to the first ambiguity code
    if (p.empty()) continue;
    WalkTo(p, rng() % p.size(), rng);
    if (p.size() > 2) {
      p[rng() % p.size()] = "ACGT"[rng() % 4];
      WalkTo(p, rng() % p.size(), rng);
    }
    ++walks;
  }
  EXPECT_GT(walks, 50);
}

// Bases either side of contig ends and ambiguity runs, joined: never in the text as one piece, so
// the step that crosses the join must empty the interval from either direction.
TEST_P(Bidirectional, AcrossContigEndsAndAmbiguityRuns) {
  std::mt19937 rng(37);
  for (const std::string& p : across_separators(contigs_)) {
    if (p.find_first_not_of("ACGT") != std::string::npos) continue;
    WalkTo(p, rng() % p.size(), rng);
  }
}

// Random patterns of 1..12 bases: mostly absent past a few bases on the larger references.
TEST_P(Bidirectional, RandomPatterns) {
  std::mt19937 rng(41);
  for (int k = 0; k < 200; ++k) {
    std::string p;
    const std::size_t length = 1 + rng() % 12;
    for (std::size_t i = 0; i < length; ++i) p += "ACGT"[rng() % 4];
    WalkTo(p, rng() % p.size(), rng);
  }
}

}  // namespace
}  // namespace wtmap::fmtest
