// KmerIntervalTable (kmer_interval_table.hpp): the default length in closed form; every k-mer's
// interval, and searches of lengths around k, against the naive scan (fm_support.hpp); the same
// intervals with and without the table; lengths refused; the length a load asks for.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "dna_cases.hpp"
#include "fm_queries.hpp"
#include "fm_support.hpp"
#include "wtmap/fmindex/fm_index.hpp"
#include "wtmap/fmindex/kmer_interval_table.hpp"

namespace wtmap::fmtest {
namespace {

using fmindex::FmIndex;
using fmindex::KmerIntervalTable;

TEST(KmerTableDefaultLength, LargestKWhoseTableTakesAnEighthOfAByteARow) {
  // 16 * 4^k bytes <= rows / 8  <=>  rows >= 128 * 4^k, with k capped at 12.
  EXPECT_EQ(KmerIntervalTable::default_length(0), 0u);
  EXPECT_EQ(KmerIntervalTable::default_length(511), 0u);
  for (std::uint32_t k = 1; k <= 12; ++k) {
    const std::uint64_t rows = std::uint64_t{128} << (2 * k);
    EXPECT_EQ(KmerIntervalTable::default_length(rows), k) << rows;
    EXPECT_EQ(KmerIntervalTable::default_length(rows - 1), k - 1) << rows - 1;
  }
  EXPECT_EQ(KmerIntervalTable::default_length(std::uint64_t{1} << 40), 12u);
  EXPECT_EQ(KmerIntervalTable::default_length(~std::uint64_t{0}), 12u);
}

// All 4^k strings of k bases.
std::vector<std::string> every_kmer(std::uint32_t k) {
  std::vector<std::string> out;
  for (std::uint64_t key = 0; key < (std::uint64_t{1} << (2 * k)); ++key) {
    std::string s(k, 'A');
    for (std::uint32_t j = k, v = static_cast<std::uint32_t>(key); j-- > 0; v >>= 2) s[j] = "ACGT"[v & 3];
    out.push_back(s);
  }
  return out;
}

// Substrings of lengths k - 1 .. k + 1, 2k and 40 (some hold ambiguity codes), the same with an N
// in their last k bases (the table's part) or in front of them, and random base strings.
std::vector<std::string> patterns_around(const std::vector<TestContig>& contigs, std::uint32_t k) {
  std::mt19937 rng(k);
  std::vector<std::string> out;
  for (std::uint32_t length : {k - 1, k, k + 1, 2 * k, 40u}) {
    if (length == 0) continue;
    for (int i = 0; i < 40; ++i) {
      const std::string& s = contigs[rng() % contigs.size()].sequence;
      if (s.size() < length) continue;
      std::string p = s.substr(rng() % (s.size() - length + 1), length);
      out.push_back(p);
      std::string tail_n = p;
      tail_n[p.size() - 1 - rng() % std::min<std::size_t>(k, p.size())] = 'N';
      out.push_back(tail_n);
      if (p.size() > k) {
        std::string head_n = p;
        head_n[rng() % (p.size() - k)] = 'N';
        out.push_back(head_n);
      }
      std::string random(length, 'A');
      for (char& c : random) c = "ACGT"[rng() % 4];
      out.push_back(random);
    }
  }
  return out;
}

using Param = std::tuple<Backend, DnaShape, std::uint32_t>;

class KmerTable : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    WTMAP_FM_SKIP_WITHOUT(backend());
    contigs_ = make_contigs(std::get<1>(GetParam()));
    fmindex::FmIndexOptions options;
    options.backend = backend();
    options.sample_rate = 4;
    options.kmer_length = k();
    auto index = FmIndex::build(load_reference(dir_, contigs_), options);
    ASSERT_TRUE(index.ok()) << index.status().message();
    index_.emplace(std::move(index).value());
  }
  Backend backend() const { return std::get<0>(GetParam()); }
  std::uint32_t k() const { return std::get<2>(GetParam()); }
  FmIndex& index() { return *index_; }

  TempDir dir_;
  std::vector<TestContig> contigs_;
  std::optional<FmIndex> index_;
};

INSTANTIATE_TEST_SUITE_P(Fm, KmerTable,
                         ::testing::Combine(::testing::Values(Backend::cpu, Backend::gpu),
                                            ::testing::Values(DnaShape::random_small, DnaShape::tandem, DnaShape::all_a),
                                            ::testing::Values(1u, 3u, 5u)),
                         [](const auto& info) {
                           return std::string(backend_name(std::get<0>(info.param))) + "_" +
                                  shape_name(std::get<1>(info.param)) + "_k" + std::to_string(std::get<2>(info.param));
                         });

TEST_P(KmerTable, HasTheLengthAndSizeAskedFor) {
  EXPECT_EQ(index().kmer_length(), k());
  const std::size_t with_table = index().size_in_bytes();
  ASSERT_TRUE(index().set_kmer_length(0).ok());
  EXPECT_EQ(index().kmer_length(), 0u);
  EXPECT_EQ(with_table - index().size_in_bytes(), std::size_t{16} << (2 * k()));
}

TEST_P(KmerTable, EveryKmerMatchesTheNaiveScan) {
  EXPECT_TRUE(MatchesNaiveScan(index(), contigs_, every_kmer(k())));
}

TEST_P(KmerTable, PatternsAroundTheTableLengthMatchTheNaiveScan) {
  EXPECT_TRUE(MatchesNaiveScan(index(), contigs_, patterns_around(contigs_, k())));
}

// The table holds exactly what the first k steps give: the same rows, even for empty intervals.
TEST_P(KmerTable, IntervalsAreTheSameWithoutTheTable) {
  std::vector<std::string> patterns = patterns_around(contigs_, k());
  for (const std::string& p : every_kmer(k())) patterns.push_back(p);
  const auto with_table = search_intervals(index(), patterns);
  ASSERT_TRUE(index().set_kmer_length(0).ok());
  const auto without = search_intervals(index(), patterns);
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    EXPECT_EQ(with_table[i].lo, without[i].lo) << patterns[i];
    EXPECT_EQ(with_table[i].hi, without[i].hi) << patterns[i];
  }
}

// A table holding fewer levels than k answers kmer_interval (and searches) with the same
// intervals: its last `stored` bases from the table, the others stepped. (On the CPU: a GPU table
// holds every level.)
TEST_P(KmerTable, FewerLevelsGiveTheSameIntervals) {
  if (backend() != Backend::cpu) GTEST_SKIP() << "a GPU table holds every level";
  std::vector<std::string> patterns = patterns_around(contigs_, k());
  for (const std::string& p : every_kmer(k())) patterns.push_back(p);
  const auto all_levels = search_intervals(index(), patterns);
  for (std::uint32_t stored = 1; stored < k(); ++stored) {
    ASSERT_TRUE(index().set_kmer_length(k(), stored).ok());
    EXPECT_EQ(index().kmer_length(), k());
    EXPECT_EQ(index().kmer_levels(), stored);
    const auto fewer = search_intervals(index(), patterns);
    for (std::size_t i = 0; i < patterns.size(); ++i) {
      EXPECT_EQ(fewer[i].lo, all_levels[i].lo) << patterns[i] << ", " << stored << " levels";
      EXPECT_EQ(fewer[i].hi, all_levels[i].hi) << patterns[i] << ", " << stored << " levels";
    }
    const fmindex::FmIndexView v = index().view();
    for (std::uint64_t key = 0; key < (std::uint64_t{1} << (2 * k())); ++key) {
      const fmindex::SaInterval iv = v.kmer_interval(key);
      const fmindex::SaInterval expected = all_levels[patterns.size() - (std::uint64_t{1} << (2 * k())) + key];
      ASSERT_EQ(iv.empty(), expected.empty()) << key << ", " << stored << " levels";
      if (!iv.empty()) {
        ASSERT_EQ(iv.lo, expected.lo) << key << ", " << stored << " levels";
        ASSERT_EQ(iv.hi, expected.hi) << key << ", " << stored << " levels";
      }
    }
  }
}

TEST_P(KmerTable, ALengthBeyondTheMaximumIsRefusedAndTheTableKept) {
  const Status s = index().set_kmer_length(KmerIntervalTable::kMaxLength + 1);
  EXPECT_EQ(s.code(), StatusCode::invalid_argument);
  EXPECT_NE(s.message().find(std::to_string(KmerIntervalTable::kMaxLength + 1)), std::string::npos) << s.message();
  EXPECT_EQ(index().kmer_length(), k());
  EXPECT_TRUE(MatchesNaiveScan(index(), contigs_, patterns_around(contigs_, k())));
}

TEST_P(KmerTable, LoadBuildsTheLengthAskedFor) {
  const std::string path = dir_.file("index.wtmap");
  ASSERT_TRUE(index().save(path).ok());
  for (std::uint32_t asked : {0u, 2u, fmindex::kKmerLengthBySize}) {
    auto loaded = FmIndex::load(path, backend(), asked);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    const std::uint32_t expected =
        asked == fmindex::kKmerLengthBySize ? KmerIntervalTable::default_length(loaded->view().rows) : asked;
    EXPECT_EQ(loaded->kmer_length(), expected) << asked;
    EXPECT_TRUE(MatchesNaiveScan(*loaded, contigs_, patterns_around(contigs_, k()))) << asked;
  }
}

// The table is query-time memory: the file is the same whatever its length.
TEST_P(KmerTable, TheFileDoesNotDependOnTheTable) {
  const std::string with_table = dir_.file("with.wtmap"), without = dir_.file("without.wtmap");
  ASSERT_TRUE(index().save(with_table).ok());
  ASSERT_TRUE(index().set_kmer_length(0).ok());
  ASSERT_TRUE(index().save(without).ok());
  EXPECT_EQ(read_file(with_table), read_file(without));
}

}  // namespace
}  // namespace wtmap::fmtest
