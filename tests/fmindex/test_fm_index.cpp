// FmIndex: counts and located positions (both strands) against a naive scan of the contigs, on
// the CPU and the GPU backends, for several reference shapes and SA sample rates; hand-checked
// answers; the version 1 index file of a fixed reference. What GeneralFmIndex keeps too (locate,
// round trip, the index file's checks, CPU/GPU agreement, arguments) is in
// test_fm_index_contract.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "dna_cases.hpp"
#include "fm_queries.hpp"
#include "fm_support.hpp"
#include "golden_files.hpp"
#include "wtmap/fmindex/fm_index.hpp"

namespace wtmap::fmtest {
namespace {

using fmindex::FmIndex;

// ---- pattern sets (the others: dna_cases.hpp) ------------------------------------------------

// Prefixes and suffixes of every contig, lengths 1..12.
std::vector<std::string> contig_ends(const std::vector<TestContig>& contigs) {
  std::vector<std::string> out;
  for (const TestContig& c : contigs) {
    const std::string s = normalized(c.sequence);
    for (std::size_t len = 1; len <= std::min<std::size_t>(12, s.size()); ++len) {
      out.push_back(s.substr(0, len));
      out.push_back(s.substr(s.size() - len));
    }
  }
  return out;
}

// Substrings with one base replaced by an ambiguity code, and patterns of ambiguity codes only.
std::vector<std::string> patterns_with_ambiguity(const std::vector<TestContig>& contigs, std::uint32_t seed) {
  std::vector<std::string> out = {"N", "NN", "R", "ANA", "n"};
  std::mt19937 rng(seed);
  for (std::string p : random_substrings(contigs, seed, 100, 20)) {
    p[rng() % p.size()] = "NRYn"[rng() % 4];
    out.push_back(p);
  }
  return out;
}

// ---- queries against the naive scan, per backend x shape x sample rate ----------------------

using QueryParam = std::tuple<Backend, DnaShape, std::uint32_t>;

class FmIndexQueries : public ::testing::TestWithParam<QueryParam> {
 protected:
  void SetUp() override {
    WTMAP_FM_SKIP_WITHOUT(backend());
    contigs_ = make_contigs(std::get<1>(GetParam()));
    reference_ = load_reference(dir_, contigs_);
    index_.emplace(build_index(reference_, backend(), std::get<2>(GetParam())));
  }
  Backend backend() const { return std::get<0>(GetParam()); }
  const FmIndex& index() const { return *index_; }

  TempDir dir_;
  std::vector<TestContig> contigs_;
  fmindex::Reference reference_;
  std::optional<FmIndex> index_;
};

INSTANTIATE_TEST_SUITE_P(
    Fm, FmIndexQueries,
    ::testing::Combine(::testing::Values(Backend::cpu, Backend::gpu),
                       ::testing::ValuesIn(all_dna_shapes()),
                       ::testing::Values(1u, 2u, 32u, 37u, fmindex::kSampleRateBySize)),
    [](const auto& info) {
      const std::uint32_t s = std::get<2>(info.param);
      return std::string(backend_label(std::get<0>(info.param))) + shape_name(std::get<1>(info.param)) + "S" +
             (s == fmindex::kSampleRateBySize ? std::string("BySize") : std::to_string(s));
    });

TEST_P(FmIndexQueries, Shape) {
  EXPECT_EQ(index().forward_length(), reference_.forward.size());
  EXPECT_EQ(index().view().rows, 2 * reference_.forward.size() + 2);
  const std::uint32_t asked = std::get<2>(GetParam());
  // By size: test references are far below 2^28 rows, so the densest rate (sampled_suffix_array.hpp).
  EXPECT_EQ(index().sample_rate(), asked == fmindex::kSampleRateBySize ? 8u : asked);
  EXPECT_EQ(index().backend(), backend());
  ASSERT_EQ(index().contigs().size(), contigs_.size());
  for (std::size_t k = 0; k < contigs_.size(); ++k) EXPECT_EQ(index().contigs()[k].name, contigs_[k].name);
  if (std::get<1>(GetParam()) == DnaShape::random_large) {
    EXPECT_GT(index().view().rows, 1u << 16) << "the large reference must span two special-row buckets";
  }
}

TEST_P(FmIndexQueries, RandomSubstringsBothStrands) {
  EXPECT_TRUE(MatchesNaiveScan(index(), contigs_, random_substrings(contigs_, 7, 250, 30)));
}

TEST_P(FmIndexQueries, ContigStartsAndEnds) { EXPECT_TRUE(MatchesNaiveScan(index(), contigs_, contig_ends(contigs_))); }

TEST_P(FmIndexQueries, AcrossContigBoundariesAndAmbiguityRuns) {
  EXPECT_TRUE(MatchesNaiveScan(index(), contigs_, across_separators(contigs_)));
}

TEST_P(FmIndexQueries, AbsentPatterns) { EXPECT_TRUE(MatchesNaiveScan(index(), contigs_, absent_patterns(9))); }

TEST_P(FmIndexQueries, PatternsWithAmbiguityCodesNeverMatch) {
  const auto patterns = patterns_with_ambiguity(contigs_, 13);
  const Answers got = query(index(), patterns);
  for (std::size_t i = 0; i < patterns.size(); ++i) EXPECT_EQ(got.counts[i], 0u) << patterns[i];
}

TEST_P(FmIndexQueries, SingleBases) {
  EXPECT_TRUE(MatchesNaiveScan(index(), contigs_, {"A", "C", "G", "T"}));
}

// ---- hand-checked answers ------------------------------------------------------------------

class FmIndexBackend : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { WTMAP_FM_SKIP_WITHOUT(GetParam()); }
  TempDir dir_;
};

INSTANTIATE_TEST_SUITE_P(Fm, FmIndexBackend, ::testing::Values(Backend::cpu, Backend::gpu),
                         [](const auto& info) { return std::string(backend_label(info.param)); });

TEST_P(FmIndexBackend, HandCheckedExamples) {
  //                   0123456789A
  const std::vector<TestContig> contigs = {{"c1", "ACGTACNNGGA"}, {"c2", "TTGCA"}};
  const auto index = build_index(load_reference(dir_, contigs), GetParam(), 3);
  struct Case {
    std::string pattern;
    std::vector<Hit> hits;
  };
  const std::vector<Case> cases = {
      {"GTAC", {{0, 2, '+'}, {0, 2, '-'}}},  // a reverse-complement palindrome: both strands
      {"TGCA", {{1, 1, '+'}, {1, 1, '-'}}},
      {"TCC", {{0, 8, '-'}}},                // GGA on the forward strand
      {"ACGTAC", {{0, 0, '+'}}},
      {"ACGG", {}},                           // AC|NN|GG: spans the N run
      {"ACNNG", {}},
      {"GATT", {}},                           // ...GGA|TTGCA: spans the contig boundary
      {"AATCC", {}},                          // its reverse complement
      {"GGATTGCA", {}},
      {"A", {{0, 0, '+'}, {0, 3, '-'}, {0, 4, '+'}, {0, 10, '+'}, {1, 0, '-'}, {1, 1, '-'}, {1, 4, '+'}}},
  };
  std::vector<std::string> patterns;
  for (const Case& c : cases) patterns.push_back(c.pattern);
  const Answers got = query(index, patterns);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(got.counts[i], cases[i].hits.size()) << cases[i].pattern;
    EXPECT_EQ(got.hits[i], cases[i].hits) << cases[i].pattern;
    EXPECT_EQ(naive_hits(contigs, cases[i].pattern), cases[i].hits) << "the oracle itself, " << cases[i].pattern;
  }
}

// ---- loading for search only ------------------------------------------------------------------

// IndexParts::search_only leaves out the sampled suffix array and the packed text: every interval
// is the one the naive scan counts (and the full load finds), locate() and save() are refused,
// and what it does read is still checked (a flipped byte of the skipped text, a file cut inside
// the wavelet tree are errors). The
// full load has the built index's text, word for word.
TEST_P(FmIndexBackend, SearchOnlyLoadSearchesAndRefusesLocate) {
  const std::vector<TestContig> contigs = make_contigs(DnaShape::random_small);
  const FmIndex built = build_index(load_reference(dir_, contigs), GetParam(), 4);
  const std::string path = dir_.file("index.wtmap");
  ASSERT_TRUE(built.save(path).ok());
  auto full = FmIndex::load(path, GetParam(), 0);
  auto search_only = FmIndex::load(path, GetParam(), 0, fmindex::IndexParts::search_only);
  ASSERT_TRUE(full.ok()) << full.status().message();
  ASSERT_TRUE(search_only.ok()) << search_only.status().message();

  std::vector<std::string> patterns = random_substrings(contigs, 5, 200, 25);
  for (const auto& p : absent_patterns(6)) patterns.push_back(p);
  std::vector<fmindex::SaInterval> got, expected;
  ASSERT_NO_THROW(got = search_intervals(*search_only, patterns));
  ASSERT_NO_THROW(expected = search_intervals(*full, patterns));
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    EXPECT_EQ(got[i].size(), naive_hits(contigs, patterns[i]).size()) << patterns[i];
    EXPECT_EQ(got[i].lo, expected[i].lo) << patterns[i];
  }

  const std::uint64_t row = 0;
  std::uint64_t position = 0;
  const Status located = search_only->locate(&row, &position, 1);
  EXPECT_EQ(located.code(), StatusCode::invalid_argument);
  EXPECT_NE(located.message().find("search only"), std::string::npos) << located.message();
  EXPECT_TRUE(full->locate(&row, &position, 1).ok());
  EXPECT_EQ(search_only->save(dir_.file("again.wtmap")).code(), StatusCode::invalid_argument);
  EXPECT_FALSE(fs::exists(dir_.file("again.wtmap")));
  EXPECT_TRUE(search_only->view().text.empty());
  auto built_words = built.packed_text().words(), loaded_words = full->packed_text().words();
  ASSERT_TRUE(built_words.ok() && loaded_words.ok());
  EXPECT_FALSE(built_words->empty());
  EXPECT_EQ(*loaded_words, *built_words);

  const std::string bytes = read_file(path);
  std::string flipped = bytes;  // a byte of the packed text, which search_only skips but checks
  const std::size_t pack = flipped.find("PACK");
  ASSERT_NE(pack, std::string::npos);
  flipped[pack + 4 + 8 + 8 + 3] ^= 0x10;  // past the tag, the size and the word count
  write_file(path, flipped);
  auto corrupt = FmIndex::load(path, GetParam(), 0, fmindex::IndexParts::search_only);
  EXPECT_EQ(corrupt.status().code(), StatusCode::corrupt_data);
  EXPECT_NE(corrupt.status().message().find("PACK"), std::string::npos) << corrupt.status().message();
  write_file(path, bytes.substr(0, bytes.size() / 4));  // inside the wavelet tree's section
  EXPECT_FALSE(FmIndex::load(path, GetParam(), 0, fmindex::IndexParts::search_only).ok());
}

// ---- the version 1 index file -----------------------------------------------------------------

// The DNA index file of a fixed reference as wtmap wrote it before protein and byte indexes
// existed (format version 1; data/dna_v1.wtmap, compiled in by CMakeLists.txt): it still loads
// and answers as the naive scan does, without the packed text, and saves as the same bytes;
// building the same reference today writes version 3, which adds the alphabet field and the
// packed text and nothing else.
TEST(FmIndexGoldenFile, VersionOneDnaIndexStillLoads) {
  TempDir dir;
  write_file(dir.file("ref.fa"), golden_dna_v1_fa());
  write_file(dir.file("old.wtmap"), golden_dna_v1_wtmap());
  auto reference = fmindex::read_fasta(dir.file("ref.fa"));
  ASSERT_TRUE(reference.ok()) << reference.status().message();
  std::vector<TestContig> contigs;
  for (const char* name : {"chr1", "chr2", "plasmid"}) contigs.push_back({name, ""});
  {  // the contig strings, for the naive scan
    std::size_t k = 0;
    const std::string& fa = golden_dna_v1_fa();
    for (std::size_t at = 0, end = 0; at < fa.size(); at = end + 1) {
      end = fa.find('\n', at);
      const std::string line = fa.substr(at, end - at);
      if (line[0] == '>') {
        k = line.rfind(">plasmid", 0) == 0 ? 2 : line.rfind(">chr2", 0) == 0 ? 1 : 0;
      } else {
        contigs[k].sequence += line;
      }
    }
  }
  for (Backend backend : {Backend::cpu, Backend::gpu}) {
    if (skip_backend(backend)) continue;
    SCOPED_TRACE(backend_name(backend));
    EXPECT_EQ(fmindex::read_index_alphabet(dir.file("old.wtmap")).value(), fmindex::Alphabet::dna);
    auto old = FmIndex::load(dir.file("old.wtmap"), backend);
    ASSERT_TRUE(old.ok()) << old.status().message();
    EXPECT_EQ(old->sample_rate(), 5u);
    ASSERT_EQ(old->contigs().size(), 3u);
    EXPECT_EQ(old->contigs()[2].name, "plasmid");
    std::vector<std::string> patterns = random_substrings(contigs, 5, 150, 20);
    for (const auto& p : across_separators(contigs)) patterns.push_back(p);
    EXPECT_TRUE(MatchesNaiveScan(*old, contigs, patterns));

    EXPECT_TRUE(old->view().text.empty()) << "a version 1 file has no packed text";
    ASSERT_TRUE(old->save(dir.file("resaved.wtmap")).ok());
    EXPECT_TRUE(read_file(dir.file("resaved.wtmap")) == golden_dna_v1_wtmap()) << "a version 1 index is no longer saved as it was";

    // Built today: version 3, the same sections plus the packed text.
    const FmIndex rebuilt = build_index(*reference, backend, 5);
    ASSERT_TRUE(rebuilt.save(dir.file("new.wtmap")).ok());
    const std::string v3 = read_file(dir.file("new.wtmap"));
    EXPECT_EQ(v3.size(), golden_dna_v1_wtmap().size() + 4 /* alphabet */ + 4 + 8 + 4 /* PACK tag, size, CRC */ + 8 +
                             8 * fmindex::PackedText::num_words(rebuilt.forward_length()));
    EXPECT_FALSE(rebuilt.view().text.empty());
  }
}

}  // namespace
}  // namespace wtmap::fmtest
