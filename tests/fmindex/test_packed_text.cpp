// packed_text_view.hpp's word helpers against base-by-base loops; PackedText and its view
// (packed_text.hpp) against the index text built naively from the reference's forward codes,
// T = F # rc(F) $, as FmIndex::build lays it out: every base of either strand, alone and 32 at a
// time, for every window of up to 40 symbols whether it holds bases of one fragment only, and
// where the bases from each position on end. On random references with N runs, IUPAC codes and
// short contigs, and on one of a single fragment whose length is not a multiple of 32 (the last
// word's unused bits).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fm_queries.hpp"
#include "wtmap/fmindex/packed_text.hpp"

namespace wtmap::fmtest {
namespace {

constexpr std::uint8_t kNaiveSeparator = 4, kNaiveEnd = 5;

// T as codes: 0..3 bases, 4 separators (and the strand junction), 5 the terminator.
std::vector<std::uint8_t> naive_text(const std::vector<std::uint8_t>& forward) {
  const std::uint64_t m = forward.size();
  std::vector<std::uint8_t> t(2 * m + 2);
  for (std::uint64_t i = 0; i < m; ++i) {
    t[i] = forward[i] < 4 ? forward[i] : kNaiveSeparator;
    t[2 * m - i] = forward[i] < 4 ? static_cast<std::uint8_t>(3 - forward[i]) : kNaiveSeparator;
  }
  t[m] = kNaiveSeparator;
  t[2 * m + 1] = kNaiveEnd;
  return t;
}

void expect_matches_naive_text(const fmindex::Reference& ref) {
  auto packed = fmindex::PackedText::build(ref.forward, ref.fragments, Backend::cpu);
  ASSERT_TRUE(packed.ok()) << packed.status().message();
  const fmindex::PackedTextView& v = packed->view();
  const std::vector<std::uint8_t> t = naive_text(ref.forward);
  ASSERT_EQ(v.forward_length, ref.forward.size());
  std::size_t wrong_bases = 0, wrong_words = 0, wrong_windows = 0, clear_windows = 0, wrong_ends = 0;
  for (std::uint64_t q = 0; q < t.size() + 2; ++q) {  // fragment_end also past T's end
    std::uint64_t end = q;
    while (end < t.size() && t[end] < 4) ++end;
    if (v.fragment_end(q) != end && ++wrong_ends <= 5) {
      ADD_FAILURE() << "fragment_end(" << q << ") is " << v.fragment_end(q) << ", not " << end;
    }
    if (q >= t.size()) continue;
    if (t[q] < 4 && v.base(q) != t[q]) ++wrong_bases;
    if (q <= 2 * v.forward_length) {  // bases32: the bases up to the next separator
      const std::uint64_t w = v.bases32(q);
      for (unsigned j = 0; j < 32 && q + j < t.size() && t[q + j] < 4; ++j) wrong_words += ((w >> (2 * j)) & 3) != t[q + j];
    }
    bool clear = true;
    for (std::uint64_t b = q + 1; b <= t.size() && b <= q + 40; ++b) {
      clear = clear && t[b - 1] < 4;
      clear_windows += clear;
      if (v.one_fragment(q, b) != clear) {
        if (++wrong_windows <= 5) ADD_FAILURE() << "T[" << q << ", " << b << "): one_fragment says " << !clear;
      }
    }
  }
  EXPECT_EQ(wrong_bases, 0u);
  EXPECT_EQ(wrong_words, 0u);
  EXPECT_EQ(wrong_windows, 0u);
  EXPECT_EQ(wrong_ends, 0u);
  EXPECT_GT(clear_windows, 0u);

  // The saved words give the same view back; a count that does not fit m is corrupt data.
  auto words = packed->words();
  ASSERT_TRUE(words.ok());
  EXPECT_EQ(words->size(), (ref.forward.size() + 31) / 32);
  auto again = fmindex::PackedText::from_words(*words, ref.forward.size(), ref.fragments, Backend::cpu);
  ASSERT_TRUE(again.ok());
  for (std::uint64_t q = 0; q < t.size(); ++q) {
    if (t[q] < 4) {
      ASSERT_EQ(again->view().base(q), t[q]) << q;
    }
  }
  words->push_back(0);
  auto longer = fmindex::PackedText::from_words(*words, ref.forward.size(), ref.fragments, Backend::cpu);
  EXPECT_EQ(longer.status().code(), StatusCode::corrupt_data);
}

// ---- the word helpers -------------------------------------------------------------------------

std::uint64_t random_word(std::mt19937_64& rng) { return rng(); }
unsigned base_at(std::uint64_t w, unsigned j) { return static_cast<unsigned>(w >> (2 * j)) & 3u; }

TEST(PackedWords, Bases32ReadsAcrossWords) {
  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> words(6);
  for (auto& w : words) w = random_word(rng);
  for (std::uint64_t first = 0; first + 32 <= 32 * 5; ++first) {
    const std::uint64_t got = fmindex::bases32(words.data(), first);
    for (unsigned j = 0; j < 32; ++j) {
      const std::uint64_t i = first + j;
      ASSERT_EQ(base_at(got, j), base_at(words[i / 32], static_cast<unsigned>(i % 32))) << first << " " << j;
    }
  }
}

TEST(PackedWords, ReverseComplementAndDifferingBases) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::uint64_t a = random_word(rng), b = trial % 2 ? random_word(rng) : a ^ (rng() & rng() & rng());
    const std::uint64_t rc = fmindex::reverse_complement32(a), diff = fmindex::differing_bases(a, b);
    for (unsigned j = 0; j < 32; ++j) {
      ASSERT_EQ(base_at(rc, j), 3u - base_at(a, 31 - j));
      ASSERT_EQ((diff >> (2 * j)) & 3, base_at(a, j) != base_at(b, j) ? 1u : 0u);
    }
  }
}

// ---- PackedText ---------------------------------------------------------------------------------

TEST(PackedText, MatchesTheNaiveTextOfRandomReferences) {
  for (std::uint32_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RandomReferenceSpec spec;
    spec.seed = seed;
    spec.contigs = 5;
    spec.min_length = 1;
    spec.max_length = 300;
    spec.n_run_rate = 0.02;
    const TempDir dir;
    expect_matches_naive_text(load_reference(dir, random_reference(spec)));
  }
}

TEST(PackedText, OneFragmentOfOddLength) {
  RandomReferenceSpec spec;
  spec.contigs = 1;
  spec.min_length = spec.max_length = 97;
  spec.n_run_rate = spec.iupac_rate = 0;
  const TempDir dir;
  const fmindex::Reference ref = load_reference(dir, random_reference(spec));
  ASSERT_EQ(ref.fragments.size(), 1u);
  expect_matches_naive_text(ref);
}

}  // namespace
}  // namespace wtmap::fmtest
