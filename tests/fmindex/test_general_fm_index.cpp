// GeneralFmIndex (protein and byte references, one strand): counts and located positions against
// a naive scan of the records, on the CPU and the GPU backends, for random, repetitive, one- and
// two-symbol, multi-record and full-byte-alphabet references and several SA sample rates; pattern
// sets at record ends, across records, absent, and with symbols outside the alphabet; builds of a
// foreign alphabet or symbol; the index file's alphabet (header field, unknown alphabets, DNA and
// protein files given to the wrong loader). What FmIndex keeps too (locate, round trip, the index
// file's checks, CPU/GPU agreement, arguments) is in test_fm_index_contract.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "fm_index_kinds.hpp"
#include "fm_queries.hpp"
#include "fm_support.hpp"
#include "general_cases.hpp"
#include "general_support.hpp"
#include "wtmap/fmindex/fm_index.hpp"
#include "wtmap/fmindex/general_fm_index.hpp"

namespace wtmap::fmtest {
namespace {

using fmindex::Alphabet;
using fmindex::GeneralFmIndex;

// ---- pattern sets (the others: general_cases.hpp) --------------------------------------------

// Prefixes and suffixes of every record, lengths 1..12, and each whole record.
std::vector<std::string> record_ends(const std::vector<TestContig>& records) {
  std::vector<std::string> out;
  for (const TestContig& r : records) {
    for (std::size_t len = 1; len <= std::min<std::size_t>(12, r.sequence.size()); ++len) {
      out.push_back(r.sequence.substr(0, len));
      out.push_back(r.sequence.substr(r.sequence.size() - len));
    }
    out.push_back(r.sequence);
  }
  return out;
}

// ---- queries against the naive scan, per backend x shape x sample rate ----------------------

using QueryParam = std::tuple<Backend, SymbolShape, std::uint32_t>;

class GeneralFmIndexQueries : public ::testing::TestWithParam<QueryParam> {
 protected:
  void SetUp() override {
    WTMAP_FM_SKIP_WITHOUT(backend());
    records_ = make_records(shape());
    reference_ = load_symbol_reference(dir_, records_, alphabet_of(shape()));
    index_.emplace(build_general(reference_, backend(), std::get<2>(GetParam())));
  }
  Backend backend() const { return std::get<0>(GetParam()); }
  SymbolShape shape() const { return std::get<1>(GetParam()); }
  SymbolKind kind() const { return kind_of(shape()); }
  const GeneralFmIndex& index() const { return *index_; }

  TempDir dir_;
  std::vector<TestContig> records_;
  fmindex::SymbolReference reference_;
  std::optional<GeneralFmIndex> index_;
};

INSTANTIATE_TEST_SUITE_P(
    General, GeneralFmIndexQueries,
    ::testing::Combine(::testing::Values(Backend::cpu, Backend::gpu),
                       ::testing::ValuesIn(all_symbol_shapes()),
                       ::testing::Values(1u, 3u, 32u)),
    [](const auto& info) {
      return std::string(backend_label(std::get<0>(info.param))) + shape_name(std::get<1>(info.param)) + "S" +
             std::to_string(std::get<2>(info.param));
    });

TEST_P(GeneralFmIndexQueries, Shape) {
  std::uint64_t symbols = 0;
  for (const TestContig& r : records_) symbols += r.sequence.size();
  EXPECT_EQ(index().alphabet(), alphabet_of(shape()));
  EXPECT_EQ(index().forward_length(), symbols + records_.size() - 1) << "the records and one separator between each";
  EXPECT_EQ(index().view().rows, symbols + records_.size());
  EXPECT_EQ(index().sample_rate(), std::get<2>(GetParam()));
  EXPECT_EQ(index().backend(), backend());
  const std::string distinct = distinct_symbols(records_, kind());
  EXPECT_EQ(std::string(index().symbols().symbols().begin(), index().symbols().symbols().end()), distinct);
  EXPECT_EQ(index().view().bwt.sigma, distinct.size() + 1) << "the minimal alphabet plus the separator code";
  ASSERT_EQ(index().contigs().size(), records_.size());
  for (std::size_t k = 0; k < records_.size(); ++k) {
    EXPECT_EQ(index().contigs()[k].name, records_[k].name);
    EXPECT_EQ(index().contigs()[k].length, records_[k].sequence.size());
  }
  if (shape() == SymbolShape::byte_all) {
    EXPECT_EQ(distinct.size(), 254u) << "every byte a FASTA line can hold";
  }
  if (shape() == SymbolShape::protein_one_symbol || shape() == SymbolShape::byte_one_symbol) {
    EXPECT_EQ(distinct.size(), 1u);
  }
  if (shape() == SymbolShape::protein_two_symbols || shape() == SymbolShape::byte_two_symbols) {
    EXPECT_EQ(distinct.size(), 2u);
  }
}

TEST_P(GeneralFmIndexQueries, RandomSubstrings) {
  EXPECT_TRUE(MatchesNaiveScan(index(), records_, kind(), random_substrings_of(records_, 7, 300, 30)));
}

TEST_P(GeneralFmIndexQueries, RecordStartsAndEnds) {
  EXPECT_TRUE(MatchesNaiveScan(index(), records_, kind(), record_ends(records_)));
}

TEST_P(GeneralFmIndexQueries, NoMatchSpansTwoRecords) {
  EXPECT_TRUE(MatchesNaiveScan(index(), records_, kind(), across_records(records_)));
}

TEST_P(GeneralFmIndexQueries, AbsentPatternsAndSymbolsOutsideTheAlphabet) {
  const auto patterns = absent_patterns(records_, kind(), 9);
  EXPECT_TRUE(MatchesNaiveScan(index(), records_, kind(), patterns));
  const Answers got = query_general(index(), patterns);
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    if (naive_symbol_hits(records_, patterns[i], kind()).empty()) {
      EXPECT_EQ(got.counts[i], 0u) << shown(patterns[i]);
    }
  }
}

// Every byte value as a one-symbol pattern: the symbols count their occurrences, the rest 0.
TEST_P(GeneralFmIndexQueries, EveryByteAsAPattern) {
  std::vector<std::string> patterns;
  for (int b = 0; b < 256; ++b) patterns.push_back(std::string(1, static_cast<char>(b)));
  EXPECT_TRUE(MatchesNaiveScan(index(), records_, kind(), patterns));
}

// ---- hand-checked answers and arguments ------------------------------------------------------

class GeneralFmIndexBackend : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { WTMAP_FM_SKIP_WITHOUT(GetParam()); }
  TempDir dir_;
};

INSTANTIATE_TEST_SUITE_P(General, GeneralFmIndexBackend, ::testing::Values(Backend::cpu, Backend::gpu),
                         [](const auto& info) { return std::string(backend_label(info.param)); });

TEST_P(GeneralFmIndexBackend, HandCheckedProteinExamples) {
  //                                    0123456789
  const std::vector<TestContig> records = {{"p1", "MKVLAAGHMK"}, {"p2", "mkvW"}, {"p3", "AA*"}};
  const auto index = build_general(load_symbol_reference(dir_, records, Alphabet::protein), GetParam(), 3);
  struct Case {
    std::string pattern;
    std::vector<Hit> hits;
  };
  const std::vector<Case> cases = {
      {"MK", {{0, 0, '+'}, {0, 8, '+'}, {1, 0, '+'}}},
      {"mkv", {{0, 0, '+'}, {1, 0, '+'}}},  // lower case pattern and record, upper-cased alike
      {"AA", {{0, 4, '+'}, {2, 0, '+'}}},
      {"A*", {{2, 1, '+'}}},
      {"KW", {}},          // mkv|W: no, K V W
      {"MKM", {}},         // ...HMK|mkvW: spans a record end
      {"KMK", {}},
      {"WAA", {}},         // mkvW|AA*
      {"*M", {}},          // AA*|$ and the wrap-around to MKV...
      {"MK1", {}},         // a byte outside the alphabet
      {"B", {}},           // a protein letter the reference lacks
      {"AAGHMK", {{0, 4, '+'}}},
  };
  std::vector<std::string> patterns;
  for (const Case& c : cases) patterns.push_back(c.pattern);
  const Answers got = query_general(index, patterns);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(got.counts[i], cases[i].hits.size()) << cases[i].pattern;
    EXPECT_EQ(got.hits[i], cases[i].hits) << cases[i].pattern;
    EXPECT_EQ(naive_symbol_hits(records, cases[i].pattern, SymbolKind::protein), cases[i].hits)
        << "the oracle itself, " << cases[i].pattern;
  }
  EXPECT_EQ(index.code('M'), index.code('m'));
  EXPECT_EQ(index.code('1'), 0);
  EXPECT_EQ(index.code('B'), 0);
}

// What only a general index checks when built: the reference's alphabet and its symbols.
TEST_P(GeneralFmIndexBackend, BuildRejectsAnotherAlphabetOrASymbolOutsideIt) {
  const auto ref = load_symbol_reference(dir_, {{"p", "MKVL"}}, Alphabet::protein);
  fmindex::FmIndexOptions options;
  options.backend = GetParam();
  options.sample_rate = 8;
  fmindex::SymbolReference dna = ref;
  dna.alphabet = Alphabet::dna;
  EXPECT_EQ(GeneralFmIndex::build(dna, options).status().code(), StatusCode::invalid_argument);
  fmindex::SymbolReference digit = ref;  // a byte the protein alphabet does not hold
  digit.forward[1] = '7';
  auto bad_symbol = GeneralFmIndex::build(digit, options);
  ASSERT_FALSE(bad_symbol.ok());
  EXPECT_EQ(bad_symbol.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(bad_symbol.status().message().find("0x37"), std::string::npos) << bad_symbol.status().message();
}

// ---- the index file's alphabet ----------------------------------------------------------------

// The header payload of version 2 (kHeaderPayload, fix_header_crc: fm_support.hpp): magic (8),
// version (4), alphabet (4), sample rate (4), m (8), n (8). A small protein index, saved on the CPU.
class GeneralFmIndexFile : public SavedIndexFile<OnBackend<ProteinKind, Backend::cpu>> {
 protected:
  void SetUp() override {
    SavedIndexFile::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    ASSERT_GT(good_.size(), kHeaderPayload + 36 + 4);
  }
};

TEST_F(GeneralFmIndexFile, HeaderRecordsTheAlphabetAndTheSymbolMap) {
  EXPECT_EQ(header_field(12), static_cast<std::uint32_t>(Alphabet::protein));
  EXPECT_NE(good_.find("SYMB"), std::string::npos) << "no symbol map section";
}

TEST_F(GeneralFmIndexFile, UnknownAlphabetIsAnError) {
  for (std::uint32_t alphabet : {0u, 3u, 0xFFFFFFFFu}) {  // 0 is dna: never written as version 2
    std::string bad = good_;
    std::memcpy(&bad[kHeaderPayload + 12], &alphabet, 4);
    fix_header_crc(bad);
    const Status s = load_bytes(bad);
    ASSERT_FALSE(s.ok()) << "alphabet " << alphabet;
    EXPECT_NE(s.message().find("alphabet"), std::string::npos) << s.message();
  }
}

// Each loader names what it was given instead of misreading it.
TEST_F(GeneralFmIndexFile, WrongLoaderNamesTheAlphabet) {
  auto as_dna = fmindex::FmIndex::load(good_path_, Backend::cpu);
  ASSERT_FALSE(as_dna.ok());
  EXPECT_NE(as_dna.status().message().find("protein index"), std::string::npos) << as_dna.status().message();

  const fmindex::FmIndex dna = build_index(load_reference(dir_, {{"c", "ACGTTGCA"}}), Backend::cpu, 4);
  ASSERT_TRUE(dna.save(dir_.file("dna.wtmap")).ok());
  auto as_general = GeneralFmIndex::load(dir_.file("dna.wtmap"), Backend::cpu);
  ASSERT_FALSE(as_general.ok());
  EXPECT_NE(as_general.status().message().find("DNA index"), std::string::npos) << as_general.status().message();
  EXPECT_EQ(fmindex::read_index_alphabet(dir_.file("dna.wtmap")).value(), Alphabet::dna);
}

// A byte index too: its header names the byte alphabet and it loads back.
TEST(GeneralFmIndexByteFile, RecordsTheByteAlphabet) {
  TempDir dir;
  const auto records = make_records(SymbolShape::byte_text);
  const auto index = build_general(load_symbol_reference(dir, records, Alphabet::byte), Backend::cpu, 5);
  ASSERT_TRUE(index.save(dir.file("b.wtmap")).ok());
  EXPECT_EQ(fmindex::read_index_alphabet(dir.file("b.wtmap")).value(), Alphabet::byte);
  auto loaded = GeneralFmIndex::load(dir.file("b.wtmap"), Backend::cpu);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->alphabet(), Alphabet::byte);
  EXPECT_EQ(loaded->code('T'), 0) << "byte patterns are case-sensitive";
  EXPECT_NE(loaded->code('t'), 0);
}

}  // namespace
}  // namespace wtmap::fmtest
