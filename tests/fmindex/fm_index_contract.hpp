// The contract every FM-index keeps, whatever its alphabet: locate of every row is the suffix
// array, save/load round trip, argument checks; the index file (every single-byte corruption,
// truncation, trailing bytes, foreign, missing and future-version files, failed and replacing
// saves); and the CPU and GPU backends giving the same answers and the same index file, also for
// a pattern batch larger than the upload pieces. Written once for the kinds of fm_index_kinds.hpp
// and instantiated per kind and backend in test_fm_index_contract.cpp; what only one kind does
// (DNA strands and ambiguity runs, the alphabet field) stays in test_fm_index.cpp and
// test_general_fm_index.cpp. Every expectation is against the naive scan, the text positions
// 0..n-1, or the other backend, never the index's own earlier answer alone.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "fm_index_kinds.hpp"
#include "fm_queries.hpp"
#include "fm_support.hpp"

namespace wtmap::fmtest {

// Runs check(dir, records, index) on the index of every shape of the kind at every sample rate,
// built on `backend`. Failures name the shape and rate; an ASSERT ends that one check only.
template <class Config, class Check>
void for_each_index(Backend backend, Check check) {
  for (const NamedRecords& shape : Config::shapes()) {
    for (std::uint32_t rate : Config::sample_rates()) {
      SCOPED_TRACE(shape.name + "S" + std::to_string(rate));
      TempDir dir;
      check(dir, shape.records, build_kind<Config>(dir, shape.records, backend, rate));
    }
  }
}

template <class Patterns>
void append(Patterns& to, const Patterns& more) {
  to.insert(to.end(), more.begin(), more.end());
}

// At most `most` of the patterns, evenly spread over them.
inline std::vector<std::string> spread(const std::vector<std::string>& patterns, std::size_t most) {
  if (patterns.size() <= most) return patterns;
  std::vector<std::string> out;
  for (std::size_t i = 0; i < most; ++i) out.push_back(patterns[i * patterns.size() / most]);
  return out;
}

// ---- queries, per kind and backend ----------------------------------------------------------

template <class Config>
class FmIndexContract : public ::testing::Test {
 protected:
  void SetUp() override { WTMAP_FM_SKIP_WITHOUT(Config::backend); }
};

TYPED_TEST_SUITE_P(FmIndexContract);

// Every row locates, and the rows' text positions are exactly 0..n-1 (the suffix array).
TYPED_TEST_P(FmIndexContract, LocateOfEveryRowIsAPermutation) {
  for_each_index<TypeParam>(TypeParam::backend, [](const TempDir&, const std::vector<TestContig>&, const auto& index) {
    const std::uint64_t n = index.view().rows;
    std::vector<std::uint64_t> rows(n), positions(n, ~0ull);
    std::iota(rows.begin(), rows.end(), 0);
    ASSERT_TRUE(index.locate(rows.data(), positions.data(), n).ok());
    std::sort(positions.begin(), positions.end());
    for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(positions[i], i) << "text positions are not 0.." << n - 1;
  });
}

// The saved index loads on either backend with the same tables and the naive scan's answers, and
// saves the same bytes again.
TYPED_TEST_P(FmIndexContract, SaveLoadRoundTrip) {
  using Config = TypeParam;
  for_each_index<Config>(Config::backend, [](const TempDir& dir, const std::vector<TestContig>& records,
                                             const auto& index) {
    const std::string path = dir.file("index.wtmap");
    ASSERT_TRUE(index.save(path).ok());
    auto alphabet = fmindex::read_index_alphabet(path);
    ASSERT_TRUE(alphabet.ok()) << alphabet.status().message();
    EXPECT_EQ(*alphabet, Config::alphabet);
    // The contig table alone (what `wtmap align` checks a CRAM reference against before loading).
    auto contigs = fmindex::read_index_contigs(path);
    ASSERT_TRUE(contigs.ok()) << contigs.status().message();
    ASSERT_EQ(contigs->size(), index.contigs().size());
    for (std::size_t c = 0; c < contigs->size(); ++c) {
      EXPECT_EQ((*contigs)[c].name, index.contigs()[c].name);
      EXPECT_EQ((*contigs)[c].length, index.contigs()[c].length);
    }
    std::vector<std::string> patterns = Config::substrings(records, 21, 100, 25);
    // All of them for the protein and byte shapes (240 at most); a sample of the large DNA
    // reference's 3834, whose naive scan takes seconds (the query suites check them all).
    append(patterns, spread(Config::boundary_patterns(records), 300));
    const Answers before = query_kind<Config>(index, patterns);
    for (Backend target : {Backend::cpu, Backend::gpu}) {
      if (skip_backend(target)) continue;
      SCOPED_TRACE(backend_name(target));
      auto loaded = Config::Index::load(path, target);
      ASSERT_TRUE(loaded.ok()) << loaded.status().message();
      EXPECT_EQ(loaded->backend(), target);
      Config::expect_same_symbols(*loaded, index);
      EXPECT_EQ(loaded->sample_rate(), index.sample_rate());
      EXPECT_EQ(loaded->forward_length(), index.forward_length());
      EXPECT_EQ(loaded->view().rows, index.view().rows);
      EXPECT_EQ(loaded->contigs().size(), index.contigs().size());
      EXPECT_EQ(loaded->fragments().size(), index.fragments().size());
      EXPECT_TRUE(query_kind<Config>(*loaded, patterns) == before);
      EXPECT_TRUE(MatchesKindNaiveScan<Config>(*loaded, records, patterns));
      ASSERT_TRUE(loaded->save(dir.file("again.wtmap")).ok());
      EXPECT_TRUE(read_file(dir.file("again.wtmap")) == read_file(path)) << "a loaded index saves other bytes";
    }
  });
}

TYPED_TEST_P(FmIndexContract, InvalidArguments) {
  using Config = TypeParam;
  TempDir dir;
  const std::vector<TestContig> records = Config::tiny();
  const auto index = build_kind<Config>(dir, records, Config::backend, 4);
  const std::vector<std::uint8_t> codes = Config::encode(index, records[0].sequence.substr(0, 4));
  ASSERT_EQ(codes.size(), 4u);
  const fmindex::PatternRef past_end[2] = {{0, 4}, {2, 3}};
  fmindex::SaInterval out[2];
  EXPECT_FALSE(index.search(codes.data(), codes.size(), past_end, 2, out).ok()) << "a pattern running past the codes";
  const std::uint64_t rows[2] = {0, index.view().rows};
  std::uint64_t positions[2];
  EXPECT_FALSE(index.locate(rows, positions, 2).ok()) << "row == rows";

  fmindex::FmIndexOptions options;
  options.backend = Config::backend;
  options.sample_rate = 0;
  auto bad = Config::Index::build(Config::reference(dir, records), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::invalid_argument);
}

REGISTER_TYPED_TEST_SUITE_P(FmIndexContract, LocateOfEveryRowIsAPermutation, SaveLoadRoundTrip, InvalidArguments);

// ---- the index file, per kind and backend ---------------------------------------------------

template <class Config>
class FmIndexFileContract : public SavedIndexFile<Config> {};

TYPED_TEST_SUITE_P(FmIndexFileContract);

TYPED_TEST_P(FmIndexFileContract, TheUntouchedFileLoads) {
  EXPECT_TRUE(this->load_bytes(this->good_).ok());
  std::string same = this->good_;
  fix_header_crc(same);
  EXPECT_EQ(same, this->good_) << "the test's CRC disagrees with the writer's";
  EXPECT_EQ(this->header_field(8), TypeParam::format_version);
  auto alphabet = fmindex::read_index_alphabet(this->good_path_);
  ASSERT_TRUE(alphabet.ok()) << alphabet.status().message();
  EXPECT_EQ(*alphabet, TypeParam::alphabet);
}

TYPED_TEST_P(FmIndexFileContract, EverySingleByteCorruptionIsDetected) {
  EXPECT_TRUE(EveryFlippedByteIsRejected(this->good_, this->bad_path_,
                                         [&](const std::string& bytes) { return this->load_bytes(bytes); }));
}

TYPED_TEST_P(FmIndexFileContract, TruncationIsAnError) {
  for (std::size_t len = 0; len < this->good_.size(); ++len) {
    const Status s = this->load_bytes(this->good_.substr(0, len));
    ASSERT_FALSE(s.ok()) << "truncated to " << len << " of " << this->good_.size();
    ASSERT_NE(s.message().find(this->bad_path_), std::string::npos) << s.message();
  }
}

TYPED_TEST_P(FmIndexFileContract, TrailingBytesAreAnError) {
  EXPECT_FALSE(this->load_bytes(this->good_ + std::string(1, '\0')).ok());
}

TYPED_TEST_P(FmIndexFileContract, FutureVersionSaysNewer) {
  std::string future = this->good_;
  const std::uint32_t version = fmindex::kIndexFormatVersion + 1;  // the next after the newest this build reads
  std::memcpy(&future[kHeaderPayload + 8], &version, 4);
  fix_header_crc(future);
  const Status s = this->load_bytes(future);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("newer"), std::string::npos) << s.message();
  EXPECT_FALSE(fmindex::read_index_alphabet(this->bad_path_).ok());
  EXPECT_FALSE(fmindex::read_index_contigs(this->bad_path_).ok());
}

TYPED_TEST_P(FmIndexFileContract, WrongMagicSaysNotAnIndex) {
  std::string foreign = this->good_;
  std::memcpy(&foreign[kHeaderPayload], "WTMAPIDY", 8);
  fix_header_crc(foreign);
  const Status s = this->load_bytes(foreign);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not a wtmap index"), std::string::npos) << s.message();

  const Status fasta = this->load_bytes(">chr1\nACGTACGTACGTACGTACGTACGTACGT\n");
  ASSERT_FALSE(fasta.ok());
  EXPECT_NE(fasta.message().find("not a wtmap index"), std::string::npos) << fasta.message();
}

TYPED_TEST_P(FmIndexFileContract, MissingFileIsAnError) {
  auto r = TypeParam::Index::load(this->dir_.file("nothing-here.wtmap"), TypeParam::backend);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nothing-here.wtmap"), std::string::npos) << r.status().message();
}

TYPED_TEST_P(FmIndexFileContract, FailedSaveLeavesNoFile) {
  const std::string in_missing_dir = this->dir_.file("no-such-dir") + "/index.wtmap";
  EXPECT_FALSE(this->index_->save(in_missing_dir).ok());
  EXPECT_FALSE(fs::exists(in_missing_dir));

  // The final name is taken by a directory: the rename fails, and the temporary file goes.
  const auto before = this->dir_.entries();
  const std::string taken = this->dir_.file("taken");
  fs::create_directory(taken);
  EXPECT_FALSE(this->index_->save(taken).ok());
  EXPECT_TRUE(fs::is_directory(taken));
  EXPECT_TRUE(fs::is_empty(taken));
  auto after = this->dir_.entries();
  after.erase(std::remove(after.begin(), after.end(), "taken"), after.end());
  EXPECT_EQ(after, before) << "a temporary file was left behind";
}

TYPED_TEST_P(FmIndexFileContract, SaveReplacesAnExistingFile) {
  write_file(this->bad_path_, "an old file");
  ASSERT_TRUE(this->index_->save(this->bad_path_).ok());
  EXPECT_EQ(read_file(this->bad_path_), this->good_);
}

REGISTER_TYPED_TEST_SUITE_P(FmIndexFileContract, TheUntouchedFileLoads, EverySingleByteCorruptionIsDetected,
                            TruncationIsAnError, TrailingBytesAreAnError, FutureVersionSaysNewer,
                            WrongMagicSaysNotAnIndex, MissingFileIsAnError, FailedSaveLeavesNoFile,
                            SaveReplacesAnExistingFile);

// ---- the CPU and the GPU agree, per kind ------------------------------------------------------

template <class Kind>
class FmIndexBackendsAgree : public ::testing::Test {
 protected:
  void SetUp() override { WTMAP_FM_SKIP_WITHOUT(Backend::gpu); }
};

TYPED_TEST_SUITE_P(FmIndexBackendsAgree);

TYPED_TEST_P(FmIndexBackendsAgree, SameAnswersAndSameIndexFile) {
  using Kind = TypeParam;
  for (const NamedRecords& shape : Kind::shapes()) {
    for (std::uint32_t rate : {1u, 37u}) {
      SCOPED_TRACE(shape.name + "S" + std::to_string(rate));
      TempDir dir;
      const auto cpu = build_kind<Kind>(dir, shape.records, Backend::cpu, rate);
      const auto gpu = build_kind<Kind>(dir, shape.records, Backend::gpu, rate);
      std::vector<std::string> patterns = Kind::substrings(shape.records, 3, 300, 20);
      append(patterns, Kind::boundary_patterns(shape.records));
      append(patterns, Kind::absent(shape.records, 4));
      EXPECT_TRUE(query_kind<Kind>(cpu, patterns) == query_kind<Kind>(gpu, patterns));
      EXPECT_TRUE(MatchesKindNaiveScan<Kind>(gpu, shape.records, patterns));
      ASSERT_TRUE(cpu.save(dir.file("cpu.wtmap")).ok());
      ASSERT_TRUE(gpu.save(dir.file("gpu.wtmap")).ok());
      EXPECT_TRUE(read_file(dir.file("cpu.wtmap")) == read_file(dir.file("gpu.wtmap"))) << "index files differ";
    }
  }
}

// A batch whose pattern codes span several pieces of the staged upload (pinned buffers of at
// most 4 MiB, upload_staged): 40 MB of codes, every interval equal to the CPU backend's.
TYPED_TEST_P(FmIndexBackendsAgree, PatternBatchLargerThanTheUploadPieces) {
  using Kind = TypeParam;
  TempDir dir;
  const std::vector<TestContig> records = Kind::large();
  const auto cpu = build_kind<Kind>(dir, records, Backend::cpu, 32);
  const auto gpu = build_kind<Kind>(dir, records, Backend::gpu, 32);
  constexpr std::size_t kPatterns = 400000, kLength = 100;
  std::mt19937_64 rng(99);
  std::vector<std::uint8_t> codes;
  std::vector<fmindex::PatternRef> refs;
  for (std::size_t i = 0; i < kPatterns; ++i) {
    const std::string& s = records[rng() % records.size()].sequence;
    std::string p = s.size() >= kLength ? s.substr(rng() % (s.size() - kLength + 1), kLength) : s;
    if (i % 3 != 0) std::reverse(p.begin(), p.end());  // mostly absent
    const std::vector<std::uint8_t> c = Kind::encode(cpu, p);
    refs.push_back({codes.size(), static_cast<std::uint32_t>(c.size())});
    codes.insert(codes.end(), c.begin(), c.end());
  }
  ASSERT_GT(codes.size(), std::size_t{2} * (4 << 20));
  std::vector<fmindex::SaInterval> on_cpu(kPatterns), on_gpu(kPatterns);
  ASSERT_TRUE(cpu.search(codes.data(), codes.size(), refs.data(), kPatterns, on_cpu.data()).ok());
  ASSERT_TRUE(gpu.search(codes.data(), codes.size(), refs.data(), kPatterns, on_gpu.data()).ok());
  std::size_t differ = 0, found = 0;
  for (std::size_t i = 0; i < kPatterns; ++i) {
    differ += on_cpu[i].lo != on_gpu[i].lo || on_cpu[i].hi != on_gpu[i].hi;
    found += !on_cpu[i].empty();
  }
  EXPECT_EQ(differ, 0u);
  EXPECT_GT(found, kPatterns * Kind::batch_found_percent / 100);  // the comparison is not between empty answers
}

REGISTER_TYPED_TEST_SUITE_P(FmIndexBackendsAgree, SameAnswersAndSameIndexFile, PatternBatchLargerThanTheUploadPieces);

}  // namespace wtmap::fmtest
