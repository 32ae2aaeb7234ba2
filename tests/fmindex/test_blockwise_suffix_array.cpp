// The blockwise suffix sorter (blockwise_suffix_array.hpp) and its parts against independent
// references: the packed windows against the symbols one by one, the difference cover against its
// definition, the sample's ranks and compare_suffixes against the order of a naive sort, and the
// suffix array against libdivsufsort's divsufsort64 and a naive sort -- on random texts, all-A,
// periods 2, 3 and 7, tandem repeats longer than the period, many tiny contigs, separator runs,
// every size up to 90 with buckets and rounds forced down to one suffix; and whole index files
// byte-identical to the divsufsort build's, DNA, protein and byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "dna_cases.hpp"
#include "fm_queries.hpp"
#include "fm_support.hpp"
#include "general_cases.hpp"
#include "gpu_round_sorter.hpp"
#include "wtmap/core/detail/parallel.hpp"
#include "wtmap/fmindex/blockwise_suffix_array.hpp"
#include "wtmap/fmindex/difference_cover_sample.hpp"
#include "wtmap/fmindex/fm_index.hpp"
#include "wtmap/fmindex/general_fm_index.hpp"
#include "wtmap/fmindex/packed_symbols.hpp"
#include "wtmap/fmindex/sampled_suffix_array.hpp"

namespace wtmap::fmtest {
namespace {

using fmindex::BlockwiseSuffixArrayOptions;
using fmindex::DifferenceCoverSample;
using fmindex::PackedSymbols;
using Text = std::vector<std::uint8_t>;

// ---- texts -----------------------------------------------------------------------------------

// T = F # rc(F) $ as the DNA index encodes it ($ 0, # 1, A C G T 2..5), F's separators given as 'N'.
Text dna_text(const std::string& forward) {
  const std::string codes = "ACGT";
  const std::uint64_t m = forward.size();
  Text t(2 * m + 2);
  for (std::uint64_t i = 0; i < m; ++i) {
    const auto at = codes.find(forward[i]);
    t[i] = at == std::string::npos ? 1 : static_cast<std::uint8_t>(2 + at);
    t[2 * m - i] = at == std::string::npos ? 1 : static_cast<std::uint8_t>(2 + 3 - at);
  }
  t[m] = 1;
  t[2 * m + 1] = 0;
  return t;
}

std::string random_bases(std::uint32_t seed, std::size_t length, const std::string& from = "ACGT") {
  std::mt19937 rng(seed);
  std::string s(length, 'A');
  for (char& c : s) c = from[rng() % from.size()];
  return s;
}

// Random codes 1..sigma - 1, then the terminator 0.
Text random_text(std::uint32_t seed, std::size_t length, unsigned sigma) {
  std::mt19937 rng(seed);
  Text t(length + 1, 0);
  for (std::size_t i = 0; i < length; ++i) t[i] = static_cast<std::uint8_t>(1 + rng() % (sigma - 1));
  return t;
}

// ---- references --------------------------------------------------------------------------------

std::vector<std::uint64_t> naive_suffix_array(const Text& t) {
  std::vector<std::uint64_t> sa(t.size());
  std::iota(sa.begin(), sa.end(), 0);
  std::sort(sa.begin(), sa.end(), [&](std::uint64_t a, std::uint64_t b) {
    return std::lexicographical_compare(t.begin() + a, t.end(), t.begin() + b, t.end());
  });
  return sa;
}

std::vector<std::uint64_t> divsufsort_suffix_array(const Text& t) {
  auto sa = fmindex::full_suffix_array(t.data(), t.size());
  if (!sa.ok()) throw std::runtime_error(sa.status().message());
  return std::vector<std::uint64_t>(sa->begin(), sa->end());
}

// The blockwise sorter's rows, checking that they come in order, each call's first row the
// previous call's end.
std::vector<std::uint64_t> blockwise(const Text& t, const BlockwiseSuffixArrayOptions& options) {
  auto packed = PackedSymbols::build(t.data(), t.size());
  if (!packed.ok()) throw std::runtime_error(packed.status().message());
  std::vector<std::uint64_t> rows;
  const Status sorted = fmindex::blockwise_suffix_array(
      packed->view(), options, [&](std::uint64_t first_row, const std::uint64_t* sa, std::uint64_t count) {
        EXPECT_EQ(first_row, rows.size());
        EXPECT_GT(count, 0u);
        rows.insert(rows.end(), sa, sa + count);
        return Status{};
      });
  if (!sorted.ok()) throw std::runtime_error(sorted.message());
  return rows;
}

BlockwiseSuffixArrayOptions sizes(std::uint32_t period, std::uint64_t bucket, std::uint64_t round,
                                  Backend backend = Backend::cpu) {
  BlockwiseSuffixArrayOptions o;
  o.period = period;
  o.bucket_size = bucket;
  o.round_size = round;
  o.backend = backend;
  return o;
}

BlockwiseSuffixArrayOptions on(Backend backend) { return sizes(BlockwiseSuffixArrayOptions{}.period, 0, 0, backend); }

// ---- packed symbols ------------------------------------------------------------------------------

TEST(PackedSymbols, WindowsAreTheSymbolsOneByOneAtEveryWidth) {
  for (unsigned bits = 1; bits <= 8; ++bits) {
    for (std::size_t n : {1u, 2u, 20u, 21u, 22u, 63u, 64u, 65u, 130u, 301u}) {
      std::mt19937 rng(bits * 1000 + static_cast<unsigned>(n));
      Text t(n);
      for (auto& c : t) c = static_cast<std::uint8_t>(rng() % (1u << bits));
      t[rng() % n] = static_cast<std::uint8_t>((1u << bits) - 1);  // the width is the largest code's
      auto packed = PackedSymbols::build(t.data(), n);
      ASSERT_TRUE(packed.ok());
      const auto& v = packed->view();
      ASSERT_EQ(v.bits, bits);
      ASSERT_EQ(v.per_window, 64 / bits);
      for (std::uint64_t i = 0; i < n + 3; ++i) {
        std::uint64_t expected = 0;
        for (std::uint64_t k = 0; k < v.per_window; ++k) expected = (expected << bits) | (i + k < n ? t[i + k] : 0);
        ASSERT_EQ(v.window(i), expected) << "bits " << bits << " n " << n << " i " << i;
        ASSERT_EQ(v.symbol(i), i < n ? t[i] : 0u);
      }
    }
  }
}

// ---- the difference cover and the sample ------------------------------------------------------

TEST(DifferenceCover, EveryPairOfPositionsMeetsInTheSampleWithinThePeriod) {
  for (std::uint32_t v = 1; v <= 4096; v *= 2) {
    auto dc = DifferenceCoverSample::cover(v);
    ASSERT_TRUE(dc.ok()) << v;
    const auto& view = dc->view();
    const auto& d = dc->cover_residues();
    EXPECT_LE(d.size() * d.size(), 8u * v + 8) << "|D| < 2 sqrt(2v) for v = " << v;
    // Every difference covered (the definition), then the offset of pairs of positions.
    std::vector<bool> covered(v, false);
    for (auto a : d) {
      for (auto b : d) covered[(b - a) % v] = true;
    }
    EXPECT_EQ(std::count(covered.begin(), covered.end(), false), 0) << v;
    std::mt19937_64 rng(v);
    for (int k = 0; k < 2000; ++k) {
      const std::uint64_t i = rng() % (1u << 30), j = k < 1000 ? i + k % (2 * v + 1) : rng() % (1u << 30);
      const std::uint32_t h = view.offset(i, j);
      ASSERT_LT(h, v);
      ASSERT_TRUE(std::binary_search(d.begin(), d.end(), (i + h) % v)) << v << " " << i << " " << j;
      ASSERT_TRUE(std::binary_search(d.begin(), d.end(), (j + h) % v)) << v << " " << i << " " << j;
    }
  }
  EXPECT_EQ(DifferenceCoverSample::cover(4096)->cover_residues().size(), 127u);
  for (std::uint32_t bad : {0u, 3u, 12u, (1u << 20) + 1, 1u << 21}) {
    EXPECT_EQ(DifferenceCoverSample::cover(bad).status().code(), StatusCode::invalid_argument) << bad;
  }
}

// The texts of the sorter's cases: name and text.
std::vector<std::pair<std::string, Text>> shaped_texts() {
  std::vector<std::pair<std::string, Text>> texts;
  texts.emplace_back("RandomDna", dna_text(random_bases(1, 3000)));
  texts.emplace_back("AllA", dna_text(std::string(2500, 'A')));
  texts.emplace_back("Period2", dna_text(repeat("AC", 900)));
  texts.emplace_back("Period3", dna_text(repeat("GGT", 700)));
  texts.emplace_back("Period7", dna_text(repeat("ACGTTGA", 300) + "C" + repeat("ACGTTGA", 200)));
  // A 157-base unit 30 times with one substitution, then 20 times: repeats far past the period.
  const std::string unit = random_bases(2, 157);
  std::string mutated = unit;
  mutated[70] = mutated[70] == 'A' ? 'C' : 'A';
  texts.emplace_back("LongTandem", dna_text(repeat(unit, 30) + mutated + repeat(unit, 20)));
  std::string tiny;  // many tiny contigs: bases one separator apart
  for (std::uint32_t k = 0; k < 600; ++k) tiny += random_bases(k + 10, 1 + k % 4) + "N";
  texts.emplace_back("ManyTinyContigs", dna_text(tiny));
  std::string runs = random_bases(3, 400) + std::string(50, 'N') + random_bases(4, 300) + "NNN" + std::string(200, 'A');
  texts.emplace_back("SeparatorRuns", dna_text(runs + "N" + random_bases(5, 100, "AC") + std::string(30, 'N')));
  texts.emplace_back("Protein", random_text(6, 3000, 22));
  texts.emplace_back("Bytes", random_text(7, 2000, 256));
  texts.emplace_back("BytesTwoSymbols", random_text(8, 2000, 3));
  return texts;
}

// The sample's ranks on each backend (the GPU's: gpu_sample_ranker.hpp).
class DifferenceCoverSampleOn : public testing::TestWithParam<Backend> {};

TEST_P(DifferenceCoverSampleOn, RanksOrderTheSampleAsItsSuffixesSort) {
  WTMAP_FM_SKIP_WITHOUT(GetParam());
  for (const auto& [name, t] : shaped_texts()) {
    const auto sa = divsufsort_suffix_array(t);
    std::vector<std::uint64_t> row(t.size());
    for (std::uint64_t r = 0; r < sa.size(); ++r) row[sa[r]] = r;
    auto packed = PackedSymbols::build(t.data(), t.size());
    for (std::uint32_t v : {1u, 4u, 16u, 64u, 4096u}) {
      auto dc = DifferenceCoverSample::build(packed->view(), v, GetParam());
      ASSERT_TRUE(dc.ok()) << name;
      const auto& view = dc->view();
      std::vector<std::uint64_t> in_row_order;  // the sample's positions in suffix order
      for (std::uint64_t p : sa) {
        if (view.in_sample(p)) in_row_order.push_back(p);
      }
      for (std::uint64_t k = 0; k < in_row_order.size(); ++k) {
        ASSERT_EQ(view.ranks[view.sample_index(in_row_order[k])], k) << name << " v " << v;
      }
      // compare_suffixes against the rows, on pairs near and far.
      std::mt19937_64 rng(v);
      for (int k = 0; k < 3000; ++k) {
        const std::uint64_t i = rng() % t.size(), j = k % 2 ? rng() % t.size() : (i + 1 + rng() % (3 * v)) % t.size();
        const int expected = i == j ? 0 : (row[i] < row[j] ? -1 : 1);
        ASSERT_EQ(fmindex::compare_suffixes(packed->view(), view, i, j), expected) << name << " v " << v;
        std::uint64_t lcp = 0;  // told how far they agree, it skips those symbols
        while (i != j && std::max(i, j) + lcp < t.size() && t[i + lcp] == t[j + lcp]) ++lcp;
        ASSERT_EQ(fmindex::compare_suffixes(packed->view(), view, i, j, lcp), expected) << name << " v " << v;
      }
    }
  }
}

// A first pass of over 2^20 sample suffixes, which the ranker sorts and splits on every thread in
// pieces cut where a run of equal keys starts: most of the text a tandem repeat, so that the runs
// are long and many cuts fall inside one; 5 threads, v 1 (every suffix sampled) and 4.
TEST_P(DifferenceCoverSampleOn, ALargeSampleRanksAlikeOnManyThreads) {
  WTMAP_FM_SKIP_WITHOUT(GetParam());
  const std::string unit = random_bases(21, 157);
  std::string forward = random_bases(22, 300000);
  for (int k = 0; k < 3000; ++k) forward += unit;
  forward[400000] = forward[400000] == 'A' ? 'C' : 'A';  // one substitution inside the repeat
  const Text t = dna_text(forward);
  const auto sa = divsufsort_suffix_array(t);
  auto packed = PackedSymbols::build(t.data(), t.size());
  set_cpu_threads(5);
  for (std::uint32_t v : {1u, 4u}) {
    auto dc = DifferenceCoverSample::build(packed->view(), v, GetParam());
    ASSERT_TRUE(dc.ok()) << v;
    const auto& view = dc->view();
    std::uint64_t k = 0;
    for (std::uint64_t p : sa) {
      if (!view.in_sample(p)) continue;
      ASSERT_EQ(view.ranks[view.sample_index(p)], k) << "v " << v << ", suffix " << p;
      ++k;
    }
    EXPECT_GE(k, std::uint64_t{1} << 20) << "v " << v << ": the sample is too small to test the large pass";
  }
  set_cpu_threads(0);
}

INSTANTIATE_TEST_SUITE_P(Backends, DifferenceCoverSampleOn, testing::Values(Backend::cpu, Backend::gpu),
                         [](const testing::TestParamInfo<Backend>& info) { return backend_label(info.param); });

// ---- the suffix array ----------------------------------------------------------------------------

// A round's suffixes by its bounding splitters (the GPU's selection) against the naive count of
// splitters below each suffix (bucket_of's definition), on every text shape, rounds of 1 to 4 buckets.
TEST(RoundBounds, ARoundHoldsTheSuffixesOfItsBuckets) {
  for (const auto& [name, t] : shaped_texts()) {
    const auto sa = divsufsort_suffix_array(t);
    std::vector<std::uint64_t> row(t.size());
    for (std::uint64_t r = 0; r < sa.size(); ++r) row[sa[r]] = r;
    auto packed = PackedSymbols::build(t.data(), t.size());
    const auto& text = packed->view();
    for (std::uint32_t v : {1u, 16u, 1024u}) {
      auto dc = DifferenceCoverSample::build(text, v);
      ASSERT_TRUE(dc.ok()) << name;
      std::mt19937_64 rng(v);
      std::vector<std::uint64_t> splitters;  // ascending by suffix, as the sorter's
      for (int k = 0; k < 12; ++k) splitters.push_back(sa[rng() % sa.size()]);
      for (std::uint64_t p : {sa.front(), sa.back()}) splitters.push_back(p);
      std::sort(splitters.begin(), splitters.end(), [&](std::uint64_t a, std::uint64_t b) { return row[a] < row[b]; });
      splitters.erase(std::unique(splitters.begin(), splitters.end()), splitters.end());
      const std::uint64_t buckets = splitters.size() + 1;
      for (std::uint64_t first = 0; first < buckets; ++first) {
        for (std::uint64_t last = first + 1; last <= std::min(buckets, first + 4); ++last) {
          fmindex::detail::RoundBounds bounds;
          bounds.has_lower = first > 0;
          bounds.has_upper = last <= splitters.size();
          if (bounds.has_lower) bounds.lower = splitters[first - 1], bounds.lower_key = text.window(bounds.lower);
          if (bounds.has_upper) bounds.upper = splitters[last - 1], bounds.upper_key = text.window(bounds.upper);
          for (std::uint64_t i = 0; i < t.size(); ++i) {
            const auto below = static_cast<std::uint64_t>(std::count_if(
                splitters.begin(), splitters.end(), [&](std::uint64_t s) { return row[s] < row[i]; }));
            ASSERT_EQ(bounds.contains(text, dc->view(), i, text.window(i)), below >= first && below < last)
                << name << " v " << v << " buckets [" << first << ", " << last << ") suffix " << i;
          }
        }
      }
    }
  }
}

// The suffix array on each backend (the GPU's rounds: gpu_round_sorter.hpp).
class BlockwiseSuffixArrayOn : public testing::TestWithParam<Backend> {};

TEST_P(BlockwiseSuffixArrayOn, EqualsDivsufsortOnShapedTexts) {
  const Backend b = GetParam();
  WTMAP_FM_SKIP_WITHOUT(b);
  for (const auto& [name, t] : shaped_texts()) {
    const auto expected = divsufsort_suffix_array(t);
    EXPECT_EQ(blockwise(t, on(b)), expected) << name << " default sizes";
    EXPECT_EQ(blockwise(t, sizes(16, 50, 400, b)), expected) << name << " v 16, buckets of ~50, rounds of 400";
    EXPECT_EQ(blockwise(t, sizes(4, 7, 7, b)), expected) << name << " v 4, buckets of ~7, rounds of 7";
    if (b == Backend::cpu) {  // a round per suffix: thousands of GPU rounds
      EXPECT_EQ(blockwise(t, sizes(64, 1, 1, b)), expected) << name << " every suffix a splitter, a round each";
    } else {
      EXPECT_EQ(blockwise(t, sizes(64, 1, 300, b)), expected) << name << " every suffix a splitter";
    }
  }
}

TEST_P(BlockwiseSuffixArrayOn, EverySizeWithTinyBucketsAndRounds) {
  const Backend b = GetParam();
  WTMAP_FM_SKIP_WITHOUT(b);
  const std::vector<std::uint64_t> round_sizes = b == Backend::cpu ? std::vector<std::uint64_t>{1, 5, 1000}
                                                                   : std::vector<std::uint64_t>{5, 1000};
  for (std::size_t length = 0; length < 90; ++length) {
    const Text texts[] = {random_text(static_cast<std::uint32_t>(length), length, 6), Text(length + 1, 2),
                          dna_text(repeat("AC", length / 2) + (length % 2 ? "N" : ""))};
    for (Text t : texts) {
      t.back() = 0;
      const auto expected = naive_suffix_array(t);
      for (std::uint32_t v : {1u, 8u}) {
        for (std::uint64_t bucket : {1u, 3u, 1000u}) {
          for (std::uint64_t round : round_sizes) {
            ASSERT_EQ(blockwise(t, sizes(v, bucket, round, b)), expected)
                << "n " << t.size() << " v " << v << " bucket " << bucket << " round " << round;
          }
        }
      }
    }
  }
}

TEST_P(BlockwiseSuffixArrayOn, LargerRandomDnaAgainstDivsufsort) {
  const Backend b = GetParam();
  WTMAP_FM_SKIP_WITHOUT(b);
  std::string forward = random_bases(9, 200000);
  for (std::size_t k = 0; k < 40; ++k) forward.replace(k * 4999, 1 + k % 7, std::string(1 + k % 7, 'N'));
  forward += repeat(forward.substr(1000, 20000), 2);  // a segmental duplication of 20 kb, twice
  const Text t = dna_text(forward);
  const auto expected = divsufsort_suffix_array(t);
  EXPECT_EQ(blockwise(t, sizes(4096, 3000, 100000, b)), expected);
  EXPECT_EQ(blockwise(t, sizes(256, 500, 20000, b)), expected);
  // More buckets (27,500) than a GPU block counts in shared memory.
  EXPECT_EQ(blockwise(t, sizes(64, 16, 100000, b)), expected);
}

TEST(BlockwiseSuffixArray, RefusesATextWithoutItsOnlyTerminatorLast) {
  auto run = [](Text t) {
    auto packed = PackedSymbols::build(t.data(), t.size());
    return fmindex::blockwise_suffix_array(packed->view(), {}, [](std::uint64_t, const std::uint64_t*, std::uint64_t) {
      return Status{};
    });
  };
  EXPECT_EQ(run({}).code(), StatusCode::invalid_argument);
  EXPECT_EQ(run({2, 3, 1}).code(), StatusCode::invalid_argument);     // no 0
  EXPECT_EQ(run({2, 0, 3, 0}).code(), StatusCode::invalid_argument);  // a second 0
  EXPECT_TRUE(run({2, 3, 0}).ok());
  EXPECT_TRUE(run({0}).ok());
  // Texts longer than a packed window (the check reads K symbols at a time), at bit widths 1, 3
  // and 8: a second 0 anywhere is refused, its absence accepted.
  for (std::uint8_t largest : {1, 5, 200}) {
    Text t(150, largest);
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<std::uint8_t>(1 + i * 7 % largest);
    t.back() = 0;
    EXPECT_TRUE(run(t).ok()) << int(largest);
    for (std::size_t at = 0; at + 1 < t.size(); ++at) {
      Text second = t;
      second[at] = 0;
      EXPECT_EQ(run(second).code(), StatusCode::invalid_argument) << int(largest) << " at " << at;
    }
  }
}

TEST_P(BlockwiseSuffixArrayOn, AConsumersErrorStopsTheSort) {
  WTMAP_FM_SKIP_WITHOUT(GetParam());
  const Text t = dna_text(random_bases(11, 500));
  auto packed = PackedSymbols::build(t.data(), t.size());
  int calls = 0;
  const Status s = fmindex::blockwise_suffix_array(packed->view(), sizes(16, 10, 100, GetParam()),
                                                   [&](std::uint64_t, const std::uint64_t*, std::uint64_t) {
                                                     ++calls;
                                                     return Status{StatusCode::io_error, "stop"};
                                                   });
  EXPECT_EQ(s.code(), StatusCode::io_error);
  EXPECT_EQ(calls, 1);
}

INSTANTIATE_TEST_SUITE_P(Backends, BlockwiseSuffixArrayOn, testing::Values(Backend::cpu, Backend::gpu),
                         [](const testing::TestParamInfo<Backend>& info) { return backend_label(info.param); });

// The memory budget of issue 27: with the reference's own byte, at most 10 bytes per base for DNA
// references from 300 Mbp (sample rate 32) to 32 Gbp, on 1 to 128 threads; at 100 Mbp the default
// rate of 8 makes the samples alone 2 bytes per base (the index 3.1), and 10.5 is the bound. The
// estimate is the sum of its stages' arrays (blockwise_build_bytes).
TEST(BlockwiseBuildBytes, AtMostTenBytesPerBaseWithTheReference) {
  for (unsigned threads : {1u, 16u, 128u}) {
    wtmap::detail::cpu_thread_limit() = threads;
    for (std::uint64_t m : {std::uint64_t{100'000'000}, std::uint64_t{300'000'000}, std::uint64_t{3'100'000'000},
                            std::uint64_t{14'500'000'000}, std::uint64_t{32'000'000'000}}) {
      const std::uint64_t n = 2 * m + 2;
      const std::uint64_t bytes = fmindex::blockwise_build_bytes(n, 3, fmindex::default_sample_rate(n), {});
      EXPECT_LE(static_cast<double>(bytes + m) / static_cast<double>(m), m < 200'000'000 ? 10.5 : 10.0)
          << m << " bases, " << threads << " threads";
    }
  }
  wtmap::detail::cpu_thread_limit() = 0;
}

// ---- whole index files ---------------------------------------------------------------------------

// The index file that `build` writes with each suffix-array builder, sorting and building the tree
// on `backend`.
template <class Build>
std::string index_bytes(const TempDir& dir, fmindex::SuffixArrayBuilder builder, const BlockwiseSuffixArrayOptions& sizes,
                        std::uint32_t sample_rate, Build build, Backend backend = Backend::cpu) {
  fmindex::FmIndexOptions options;
  options.backend = backend;
  options.sample_rate = sample_rate;
  options.kmer_length = 0;
  options.sa_builder = builder;
  options.blockwise = sizes;
  auto index = build(options);
  if (!index.ok()) throw std::runtime_error(index.status().message());
  const std::string path = dir.file(std::string(fmindex::suffix_array_builder_name(builder)) + ".wtmap");
  if (!index->save(path).ok()) throw std::runtime_error("save failed");
  return read_file(path);
}

// The blockwise builds on each backend against divsufsort's on the CPU.
class BlockwiseIndexFileOn : public testing::TestWithParam<Backend> {};

TEST_P(BlockwiseIndexFileOn, DnaIndexesAreByteIdenticalToDivsufsorts) {
  const Backend b = GetParam();
  WTMAP_FM_SKIP_WITHOUT(b);
  TempDir dir;
  for (DnaShape shape : all_dna_shapes()) {
    const fmindex::Reference ref = load_reference(dir, make_contigs(shape));
    auto build = [&](const fmindex::FmIndexOptions& o) { return fmindex::FmIndex::build(ref, o); };
    for (std::uint32_t s : {1u, 5u, 32u}) {
      const std::string expected = index_bytes(dir, fmindex::SuffixArrayBuilder::divsufsort, {}, s, build);
      EXPECT_TRUE(index_bytes(dir, fmindex::SuffixArrayBuilder::blockwise, {}, s, build, b) == expected)
          << shape_name(shape) << " -s " << s;
      EXPECT_TRUE(index_bytes(dir, fmindex::SuffixArrayBuilder::blockwise, sizes(8, 3, 1000), s, build, b) == expected)
          << shape_name(shape) << " -s " << s << " tiny buckets and rounds";
    }
  }
}

TEST_P(BlockwiseIndexFileOn, ProteinAndByteIndexesAreByteIdenticalToDivsufsorts) {
  const Backend b = GetParam();
  WTMAP_FM_SKIP_WITHOUT(b);
  TempDir dir;
  for (SymbolShape shape : all_symbol_shapes()) {
    const fmindex::SymbolReference ref = load_symbol_reference(dir, make_records(shape), alphabet_of(shape));
    auto build = [&](const fmindex::FmIndexOptions& o) { return fmindex::GeneralFmIndex::build(ref, o); };
    const std::string expected = index_bytes(dir, fmindex::SuffixArrayBuilder::divsufsort, {}, 4, build);
    EXPECT_TRUE(index_bytes(dir, fmindex::SuffixArrayBuilder::blockwise, {}, 4, build, b) == expected) << shape_name(shape);
    EXPECT_TRUE(index_bytes(dir, fmindex::SuffixArrayBuilder::blockwise, sizes(4, 5, 40), 4, build, b) == expected)
        << shape_name(shape) << " tiny buckets and rounds";
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, BlockwiseIndexFileOn, testing::Values(Backend::cpu, Backend::gpu),
                         [](const testing::TestParamInfo<Backend>& info) { return backend_label(info.param); });

}  // namespace
}  // namespace wtmap::fmtest
