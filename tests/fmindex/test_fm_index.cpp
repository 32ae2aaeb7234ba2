// FmIndex: counts and located positions (both strands) against a naive scan of the contigs, on
// the CPU and the GPU backends, for several reference shapes and SA sample rates; the index file
// (round trip, every single-byte corruption, truncation, foreign and future files, failed saves);
// and CPU/GPU agreement, answers and index files byte for byte.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "fm_queries.hpp"
#include "fm_support.hpp"
#include "golden_files.hpp"
#include "wtmap/fmindex/fm_index.hpp"

namespace wtmap::fmtest {
namespace {

using fmindex::FmIndex;

// ---- reference shapes --------------------------------------------------------------------

enum class Shape { random_small, random_large, tandem, all_a, tiny };

std::string repeat(const std::string& unit, std::size_t times) {
  std::string s;
  for (std::size_t i = 0; i < times; ++i) s += unit;
  return s;
}

std::vector<TestContig> make_contigs(Shape shape) {
  switch (shape) {
    case Shape::random_small: {
      RandomReferenceSpec spec;
      spec.seed = 101;
      spec.contigs = 5;
      spec.n_run_rate = 0.02;
      return random_reference(spec);
    }
    case Shape::random_large: {  // m > 2^15: 2m + 2 rows span two special-row buckets (2^16 rows)
      RandomReferenceSpec spec;
      spec.seed = 202;
      spec.contigs = 12;
      spec.min_length = 3000;
      spec.max_length = 4500;
      spec.n_run_rate = 0.002;
      spec.max_n_run = 30;
      return random_reference(spec);
    }
    case Shape::tandem:
      return {{"rep5", repeat("ACGTT", 60)},
              {"rep2", repeat("AC", 40) + "NN" + repeat("AC", 10)},
              {"rep3", repeat("GGC", 33) + "G"}};
    case Shape::all_a:
      return {{"polyA", std::string(300, 'A')}};
    case Shape::tiny:
      return {{"t1", "A"}, {"t2", "C"}, {"t3", "GT"},  {"t4", "TAG"},
              {"t5", "N"}, {"t6", "a"}, {"t7", "NCN"}, {"t8", "ACG"}};
  }
  return {};
}

const char* shape_name(Shape s) {
  switch (s) {
    case Shape::random_small: return "RandomSmall";
    case Shape::random_large: return "RandomLarge";
    case Shape::tandem: return "Tandem";
    case Shape::all_a: return "AllA";
    case Shape::tiny: return "Tiny";
  }
  return "?";
}

void PrintTo(Shape s, std::ostream* os) { *os << shape_name(s); }

const char* backend_label(Backend b) { return b == Backend::gpu ? "Gpu" : "Cpu"; }

// ---- pattern sets --------------------------------------------------------------------------

bool is_base(char c) { return c == 'A' || c == 'C' || c == 'G' || c == 'T'; }

// Random substrings of the contigs (they may hold ambiguity codes) and their reverse complements.
std::vector<std::string> random_substrings(const std::vector<TestContig>& contigs, std::uint32_t seed, int count,
                                           std::size_t max_length) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    const std::string s = normalized(contigs[rng() % contigs.size()].sequence);
    const std::size_t pos = rng() % s.size();
    const std::size_t len = 1 + rng() % std::min(max_length, s.size() - pos);
    out.push_back(s.substr(pos, len));
    out.push_back(revcomp(out.back()));
  }
  return out;
}

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

// Up to `len` bases left of `end` and right of `begin`, stopping at ambiguity codes.
std::string bases_before(const std::string& s, std::size_t end, std::size_t len) {
  std::size_t b = end;
  while (b > 0 && end - b < len && is_base(s[b - 1])) --b;
  return s.substr(b, end - b);
}
std::string bases_after(const std::string& s, std::size_t begin, std::size_t len) {
  std::size_t e = begin;
  while (e < s.size() && e - begin < len && is_base(s[e])) ++e;
  return s.substr(begin, e - begin);
}

// Patterns that would match only if an index joined what a separator splits: the end of one
// contig + the start of the next, and the bases either side of each ambiguity run; also the
// run itself with its flanks (holding N: never a match).
std::vector<std::string> across_separators(const std::vector<TestContig>& contigs) {
  std::vector<std::string> out;
  for (std::size_t len : {1, 2, 3, 5, 8, 13}) {
    for (std::size_t k = 0; k + 1 < contigs.size(); ++k) {
      const std::string a = normalized(contigs[k].sequence), b = normalized(contigs[k + 1].sequence);
      out.push_back(bases_before(a, a.size(), len) + bases_after(b, 0, len));
    }
    for (const TestContig& c : contigs) {
      const std::string s = normalized(c.sequence);
      for (std::size_t i = 0; i < s.size();) {
        if (is_base(s[i])) {
          ++i;
          continue;
        }
        std::size_t j = i;
        while (j < s.size() && !is_base(s[j])) ++j;
        const std::string left = bases_before(s, i, len), right = bases_after(s, j, len);
        out.push_back(left + right);
        out.push_back(left + s.substr(i, j - i) + right);
        i = j;
      }
    }
  }
  out.erase(std::remove(out.begin(), out.end(), std::string()), out.end());
  return out;
}

// Random 40-mers (practically never in these references; the scan decides) and bases missing
// from the one-letter references.
std::vector<std::string> absent_patterns(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> out = {"CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC", "ACGTACGTACGTACGTACGTAGGGTTTCCAA",
                                  "CA", std::string(200, 'A')};
  for (int i = 0; i < 60; ++i) {
    std::string p;
    for (int k = 0; k < 40; ++k) p += "ACGT"[rng() % 4];
    out.push_back(p);
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

using QueryParam = std::tuple<Backend, Shape, std::uint32_t>;

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
                       ::testing::Values(Shape::random_small, Shape::random_large, Shape::tandem, Shape::all_a, Shape::tiny),
                       ::testing::Values(1u, 2u, 32u, 37u)),
    [](const auto& info) {
      return std::string(backend_label(std::get<0>(info.param))) + shape_name(std::get<1>(info.param)) + "S" +
             std::to_string(std::get<2>(info.param));
    });

TEST_P(FmIndexQueries, Shape) {
  EXPECT_EQ(index().forward_length(), reference_.forward.size());
  EXPECT_EQ(index().view().rows, 2 * reference_.forward.size() + 2);
  EXPECT_EQ(index().sample_rate(), std::get<2>(GetParam()));
  EXPECT_EQ(index().backend(), backend());
  ASSERT_EQ(index().contigs().size(), contigs_.size());
  for (std::size_t k = 0; k < contigs_.size(); ++k) EXPECT_EQ(index().contigs()[k].name, contigs_[k].name);
  if (std::get<1>(GetParam()) == Shape::random_large) {
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

// Every row locates, and the rows' text positions are exactly 0..n-1 (the suffix array).
TEST_P(FmIndexQueries, LocateOfEveryRowIsAPermutation) {
  const std::uint64_t n = index().view().rows;
  std::vector<std::uint64_t> rows(n), positions(n, ~0ull);
  std::iota(rows.begin(), rows.end(), 0);
  ASSERT_TRUE(index().locate(rows.data(), positions.data(), n).ok());
  std::sort(positions.begin(), positions.end());
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(positions[i], i) << "text positions are not 0.." << n - 1;
}

TEST_P(FmIndexQueries, SaveLoadRoundTrip) {
  const std::string path = dir_.file("index.wtmap");
  ASSERT_TRUE(index().save(path).ok());
  const std::vector<std::string> patterns = random_substrings(contigs_, 21, 100, 25);
  const Answers before = query(index(), patterns);
  for (Backend target : {Backend::cpu, Backend::gpu}) {
    if (skip_backend(target)) continue;
    SCOPED_TRACE(backend_name(target));
    auto loaded = FmIndex::load(path, target);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    EXPECT_EQ(loaded->backend(), target);
    EXPECT_EQ(loaded->sample_rate(), index().sample_rate());
    EXPECT_EQ(loaded->forward_length(), index().forward_length());
    EXPECT_EQ(loaded->view().rows, index().view().rows);
    EXPECT_EQ(loaded->contigs().size(), index().contigs().size());
    EXPECT_EQ(loaded->fragments().size(), index().fragments().size());
    EXPECT_TRUE(query(*loaded, patterns) == before);
    EXPECT_TRUE(MatchesNaiveScan(*loaded, contigs_, patterns));
  }
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

TEST_P(FmIndexBackend, InvalidArguments) {
  const auto index = build_index(load_reference(dir_, {{"c", "ACGTTGCA"}}), GetParam(), 4);
  const std::uint8_t codes[4] = {0, 1, 2, 3};
  const fmindex::PatternRef past_end[2] = {{0, 4}, {2, 3}};
  fmindex::SaInterval out[2];
  EXPECT_FALSE(index.search(codes, 4, past_end, 2, out).ok()) << "a pattern running past the codes";
  const std::uint64_t rows[2] = {0, index.view().rows};
  std::uint64_t positions[2];
  EXPECT_FALSE(index.locate(rows, positions, 2).ok()) << "row == rows";

  fmindex::FmIndexOptions options;
  options.backend = GetParam();
  options.sample_rate = 0;
  auto bad = FmIndex::build(load_reference(dir_, {{"c", "ACGT"}}), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::invalid_argument);
}

// ---- the index file ------------------------------------------------------------------------

class FmIndexFile : public ::testing::Test {
 protected:
  void SetUp() override {
    RandomReferenceSpec spec;  // tiny: every byte of its file is corrupted once below
    spec.seed = 77;
    spec.contigs = 3;
    spec.min_length = 40;
    spec.max_length = 90;
    spec.n_run_rate = 0.03;
    contigs_ = random_reference(spec);
    index_.emplace(build_index(load_reference(dir_, contigs_), Backend::cpu, 8));
    good_path_ = dir_.file("good.wtmap");
    ASSERT_TRUE(index_->save(good_path_).ok());
    good_ = read_file(good_path_);
    ASSERT_GT(good_.size(), kHeaderPayload + 12 + 4);
    ASSERT_EQ(good_.substr(0, 4), "HEAD");
    ASSERT_EQ(good_.substr(kHeaderPayload, 8), "WTMAPIDX");
  }
  // Loads `bytes` written to a fresh file; the status, or ok.
  Status load_bytes(const std::string& bytes, Backend backend = Backend::cpu) {
    write_file(bad_path_, bytes);
    auto r = FmIndex::load(bad_path_, backend);
    return r.ok() ? Status{} : r.status();
  }

  TempDir dir_;
  std::vector<TestContig> contigs_;
  std::optional<FmIndex> index_;
  std::string good_path_, good_, bad_path_ = dir_.file("bad.wtmap");
};

TEST_F(FmIndexFile, TheUntouchedFileLoads) {
  EXPECT_TRUE(load_bytes(good_).ok());
  std::string same = good_;
  fix_header_crc(same);  // the test's CRC agrees with the writer's
  EXPECT_EQ(same, good_);
}

TEST_F(FmIndexFile, EverySingleByteCorruptionIsDetected) {
  EXPECT_TRUE(EveryFlippedByteIsRejected(good_, bad_path_, [&](const std::string& bytes) { return load_bytes(bytes); }));
}

TEST_F(FmIndexFile, TruncationIsAnError) {
  for (std::size_t len : {std::size_t{0}, std::size_t{1}, std::size_t{7}, good_.size() / 2, good_.size() - 1}) {
    const Status s = load_bytes(good_.substr(0, len));
    EXPECT_FALSE(s.ok()) << "truncated to " << len << " of " << good_.size();
    EXPECT_NE(s.message().find(bad_path_), std::string::npos) << s.message();
  }
  for (std::size_t len = 0; len < good_.size(); ++len) {  // and every other length
    ASSERT_FALSE(load_bytes(good_.substr(0, len)).ok()) << "truncated to " << len << " of " << good_.size();
  }
}

TEST_F(FmIndexFile, TrailingBytesAreAnError) { EXPECT_FALSE(load_bytes(good_ + std::string(1, '\0')).ok()); }

TEST_F(FmIndexFile, FutureVersionSaysNewer) {
  std::string future = good_;
  std::uint32_t version = 0;
  std::memcpy(&version, future.data() + kHeaderPayload + 8, 4);
  EXPECT_EQ(version, fmindex::kDnaIndexVersion) << "DNA indexes keep format version 1";
  // The next version after the newest this build reads. (Version 2 is not "future" any more: it
  // is the protein/byte format, whose loader tests are in test_general_fm_index.cpp.)
  version = fmindex::kIndexFormatVersion + 1;
  std::memcpy(&future[kHeaderPayload + 8], &version, 4);
  fix_header_crc(future);
  const Status s = load_bytes(future);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("newer"), std::string::npos) << s.message();
}

// The DNA index file of a fixed reference as wtmap wrote it before protein and byte indexes
// existed (format version 1; data/dna_v1.wtmap, compiled in by CMakeLists.txt): it still loads
// and answers as the naive scan does, and building the same reference today writes the same bytes.
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

    const FmIndex rebuilt = build_index(*reference, backend, 5);
    ASSERT_TRUE(rebuilt.save(dir.file("new.wtmap")).ok());
    EXPECT_TRUE(read_file(dir.file("new.wtmap")) == golden_dna_v1_wtmap()) << "the DNA index format changed";
  }
}

TEST_F(FmIndexFile, WrongMagicSaysNotAnIndex) {
  std::string foreign = good_;
  std::memcpy(&foreign[kHeaderPayload], "WTMAPIDY", 8);
  fix_header_crc(foreign);
  const Status s = load_bytes(foreign);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not a wtmap index"), std::string::npos) << s.message();

  const Status fasta = load_bytes(">chr1\nACGTACGTACGTACGTACGTACGTACGT\n");
  ASSERT_FALSE(fasta.ok());
  EXPECT_NE(fasta.message().find("not a wtmap index"), std::string::npos) << fasta.message();
}

TEST_F(FmIndexFile, MissingFileIsAnError) {
  auto r = FmIndex::load(dir_.file("nothing-here.wtmap"), Backend::cpu);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nothing-here.wtmap"), std::string::npos) << r.status().message();
}

TEST_F(FmIndexFile, FailedSaveLeavesNoFile) {
  const std::string in_missing_dir = dir_.file("no-such-dir") + "/index.wtmap";
  EXPECT_FALSE(index_->save(in_missing_dir).ok());
  EXPECT_FALSE(fs::exists(in_missing_dir));

  // The final name is taken by a directory: the rename fails, and the temporary file goes.
  const auto before = dir_.entries();
  fs::create_directory(dir_.file("taken"));
  EXPECT_FALSE(index_->save(dir_.file("taken")).ok());
  EXPECT_TRUE(fs::is_directory(dir_.file("taken")));
  EXPECT_TRUE(fs::is_empty(dir_.file("taken")));
  auto after = dir_.entries();
  after.erase(std::remove(after.begin(), after.end(), "taken"), after.end());
  EXPECT_EQ(after, before) << "a temporary file was left behind";
}

TEST_F(FmIndexFile, SaveReplacesAnExistingFile) {
  write_file(bad_path_, "an old file");
  ASSERT_TRUE(index_->save(bad_path_).ok());
  EXPECT_EQ(read_file(bad_path_), good_);
}

// ---- CPU and GPU agree -----------------------------------------------------------------------

class CpuVsGpu : public ::testing::TestWithParam<Shape> {};

INSTANTIATE_TEST_SUITE_P(Fm, CpuVsGpu,
                         ::testing::Values(Shape::random_small, Shape::random_large, Shape::tandem, Shape::all_a,
                                           Shape::tiny),
                         [](const auto& info) { return std::string(shape_name(info.param)); });

TEST_P(CpuVsGpu, SameAnswersAndSameIndexFile) {
  WTMAP_FM_SKIP_WITHOUT(Backend::gpu);
  TempDir dir;
  const auto contigs = make_contigs(GetParam());
  const auto reference = load_reference(dir, contigs);
  for (std::uint32_t rate : {1u, 37u}) {
    SCOPED_TRACE("sample rate " + std::to_string(rate));
    const FmIndex cpu = build_index(reference, Backend::cpu, rate);
    const FmIndex gpu = build_index(reference, Backend::gpu, rate);
    std::vector<std::string> patterns = random_substrings(contigs, 3, 200, 20);
    for (const auto& p : across_separators(contigs)) patterns.push_back(p);
    EXPECT_TRUE(query(cpu, patterns) == query(gpu, patterns));
    ASSERT_TRUE(cpu.save(dir.file("cpu.wtmap")).ok());
    ASSERT_TRUE(gpu.save(dir.file("gpu.wtmap")).ok());
    EXPECT_TRUE(read_file(dir.file("cpu.wtmap")) == read_file(dir.file("gpu.wtmap"))) << "index files differ";
  }
}

// A batch whose pattern codes span several pieces of the staged upload (pinned buffers of
// 16 MiB, upload_staged): 40 MB of codes, every answer equal to the CPU backend's.
TEST(FmIndexGpu, PatternBatchLargerThanTheUploadPieces) {
  WTMAP_FM_SKIP_WITHOUT(Backend::gpu);
  TempDir dir;
  const auto contigs = make_contigs(Shape::random_large);
  const auto reference = load_reference(dir, contigs);
  const FmIndex cpu = build_index(reference, Backend::cpu, 32);
  const FmIndex gpu = build_index(reference, Backend::gpu, 32);
  constexpr std::size_t kPatterns = 400000, kLength = 100;
  std::mt19937_64 rng(99);
  std::vector<std::uint8_t> codes;
  std::vector<fmindex::PatternRef> refs;
  for (std::size_t i = 0; i < kPatterns; ++i) {
    const std::string& s = contigs[rng() % contigs.size()].sequence;
    const std::string p = s.size() >= kLength ? s.substr(rng() % (s.size() - kLength + 1), kLength) : s;
    const auto c = pattern_codes(i % 3 == 0 ? p : std::string(p.rbegin(), p.rend()));  // some absent
    refs.push_back({codes.size(), static_cast<std::uint32_t>(c.size())});
    codes.insert(codes.end(), c.begin(), c.end());
  }
  ASSERT_GT(codes.size(), std::size_t{2} * (16 << 20));
  std::vector<fmindex::SaInterval> on_cpu(kPatterns), on_gpu(kPatterns);
  ASSERT_TRUE(cpu.search(codes.data(), codes.size(), refs.data(), kPatterns, on_cpu.data()).ok());
  ASSERT_TRUE(gpu.search(codes.data(), codes.size(), refs.data(), kPatterns, on_gpu.data()).ok());
  std::size_t differ = 0, found = 0;
  for (std::size_t i = 0; i < kPatterns; ++i) {
    differ += on_cpu[i].lo != on_gpu[i].lo || on_cpu[i].hi != on_gpu[i].hi;
    found += !on_cpu[i].empty();
  }
  EXPECT_EQ(differ, 0u);
  EXPECT_GT(found, kPatterns / 10);  // the comparison is not between empty answers (15 % on the CPU)
}

}  // namespace
}  // namespace wtmap::fmtest
