// GeneralFmIndex (protein and byte references, one strand): counts and located positions against
// a naive scan of the records, on the CPU and the GPU backends, for random, repetitive, one- and
// two-symbol, multi-record and full-byte-alphabet references and several SA sample rates; pattern
// sets at record ends, across records, absent, and with symbols outside the alphabet; the index
// file (round trip, header, every single-byte corruption and truncation of a protein index, future
// versions, DNA and protein files given to the wrong loader); CPU/GPU agreement byte for byte.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "fm_queries.hpp"
#include "fm_support.hpp"
#include "general_support.hpp"
#include "wtmap/fmindex/general_fm_index.hpp"

namespace wtmap::fmtest {
namespace {

using fmindex::Alphabet;
using fmindex::GeneralFmIndex;

// ---- references --------------------------------------------------------------------------

enum class Shape {
  protein_random,     // 7 records, every protein letter, mixed case
  protein_large,      // 24 records, 80 k symbols: several rank blocks and select samples per level
  protein_repetitive, // tandem repeats of 1, 2, 3 and 7 letters, and one record of one letter
  protein_one_symbol, // every record the same letter: 1 symbol (tree sigma 2)
  protein_two_symbols,// A and W only: 2 symbols
  protein_tiny,       // one-letter records and a two-letter one
  byte_all,           // every one of the 254 possible bytes (256 text symbols with # and $)
  byte_text,          // repetitive text with blanks, punctuation and tabs
  byte_one_symbol,    // one byte value
  byte_two_symbols,   // NUL and 0xff
};

SymbolKind kind_of(Shape s) { return s >= Shape::byte_all ? SymbolKind::byte : SymbolKind::protein; }
Alphabet alphabet_of(Shape s) { return kind_of(s) == SymbolKind::byte ? Alphabet::byte : Alphabet::protein; }

std::string repeat(const std::string& unit, std::size_t times) {
  std::string s;
  for (std::size_t i = 0; i < times; ++i) s += unit;
  return s;
}

std::vector<TestContig> make_records(Shape shape) {
  switch (shape) {
    case Shape::protein_random:
      return random_records(11, 7, 30, 400, protein_letters(), SymbolKind::protein);
    case Shape::protein_large:
      return random_records(12, 24, 3000, 3700, "ACDEFGHIKLMNPQRSTVWY", SymbolKind::protein);
    case Shape::protein_repetitive:
      return {{"mono", std::string(250, 'W')},
              {"di", repeat("GA", 80)},
              {"tri", repeat("MKV", 70) + "M"},
              {"hepta", repeat("PEPTIDE", 30)},
              {"mixed", repeat("ga", 10) + repeat("MKV", 5) + "*" + repeat("W", 9)}};
    case Shape::protein_one_symbol:
      return {{"a1", std::string(300, 'L')}, {"a2", "l"}, {"a3", std::string(37, 'L')}};
    case Shape::protein_two_symbols:
      return random_records(13, 4, 1, 200, "AW", SymbolKind::protein);
    case Shape::protein_tiny:
      return {{"t1", "A"}, {"t2", "*"}, {"t3", "c"}, {"t4", "AC"}, {"t5", "A"}};
    case Shape::byte_all: {
      auto records = random_records(14, 6, 100, 2500, all_record_bytes(), SymbolKind::byte);
      records.push_back({"every_byte", all_record_bytes().substr(1) + all_record_bytes().substr(0, 1)});  // '\0' last
      return records;
    }
    case Shape::byte_text:
      return {{"t1", repeat("the cat sat on the mat. ", 12)},
              {"t2", "tab\tseparated\tvalues\t42, 7; the end!"},
              {"t3", repeat("ab", 40) + " " + repeat("abc", 20)},
              {"t4", "the"},
              {"t5", "x> not a header inside a line, nor @"}};
    case Shape::byte_one_symbol:
      return {{"z1", std::string(200, 'z')}, {"z2", std::string(3, 'z')}};
    case Shape::byte_two_symbols: {
      auto records = random_records(15, 3, 50, 300, std::string("\0\xff", 2), SymbolKind::byte);
      records.push_back({"nul", std::string(1, '\0')});
      return records;
    }
  }
  return {};
}

const char* shape_name(Shape s) {
  switch (s) {
    case Shape::protein_random: return "ProteinRandom";
    case Shape::protein_large: return "ProteinLarge";
    case Shape::protein_repetitive: return "ProteinRepetitive";
    case Shape::protein_one_symbol: return "ProteinOneSymbol";
    case Shape::protein_two_symbols: return "ProteinTwoSymbols";
    case Shape::protein_tiny: return "ProteinTiny";
    case Shape::byte_all: return "ByteAll254";
    case Shape::byte_text: return "ByteText";
    case Shape::byte_one_symbol: return "ByteOneSymbol";
    case Shape::byte_two_symbols: return "ByteTwoSymbols";
  }
  return "?";
}

void PrintTo(Shape s, std::ostream* os) { *os << shape_name(s); }

const char* backend_label(Backend b) { return b == Backend::gpu ? "Gpu" : "Cpu"; }

// Distinct normalised symbols of the records, sorted.
std::string distinct_symbols(const std::vector<TestContig>& records, SymbolKind kind) {
  std::set<unsigned char> seen;
  for (const TestContig& r : records) {
    for (char c : normalized_symbols(r.sequence, kind)) seen.insert(static_cast<unsigned char>(c));
  }
  return std::string(seen.begin(), seen.end());
}

// The reference of `records`, through a FASTA file in `dir` and read_symbol_fasta.
fmindex::SymbolReference load_symbol_reference(const TempDir& dir, const std::vector<TestContig>& records, Alphabet a) {
  const std::string path = dir.file("reference.fa");
  write_file(path, symbol_fasta_text(records, 61));
  auto ref = fmindex::read_symbol_fasta(path, a);
  if (!ref.ok()) throw std::runtime_error("read_symbol_fasta: " + ref.status().message());
  return std::move(ref).value();
}

GeneralFmIndex build_general(const fmindex::SymbolReference& ref, Backend backend, std::uint32_t sample_rate) {
  fmindex::FmIndexOptions options;
  options.backend = backend;
  options.sample_rate = sample_rate;
  auto index = GeneralFmIndex::build(ref, options);
  if (!index.ok()) throw std::runtime_error("GeneralFmIndex::build: " + index.status().message());
  return std::move(index).value();
}

// What the index answers for each pattern, encoded with its own symbol map.
Answers query_general(const GeneralFmIndex& index, const std::vector<std::string>& patterns) {
  return query_with(index, patterns, [&](const std::string& p) {
    std::vector<std::uint8_t> codes;
    for (char c : p) codes.push_back(index.code(c));
    return codes;
  });
}

// Printable form of a pattern that may hold any byte.
std::string shown(const std::string& p) {
  std::ostringstream s;
  for (unsigned char c : p) {
    if (c >= 32 && c < 127 && c != '\\') {
      s << c;
    } else {
      static const char* hex = "0123456789abcdef";
      s << "\\x" << hex[c >> 4] << hex[c & 15];
    }
  }
  return s.str();
}

::testing::AssertionResult MatchesNaiveScan(const GeneralFmIndex& index, const std::vector<TestContig>& records,
                                            SymbolKind kind, const std::vector<std::string>& patterns) {
  Answers got;
  try {
    got = query_general(index, patterns);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << e.what();
  }
  std::size_t wrong = 0, found = 0;
  std::ostringstream details;
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const std::vector<Hit> expected = naive_symbol_hits(records, patterns[i], kind);
    found += !expected.empty();
    if (got.counts[i] == expected.size() && got.hits[i] == expected) continue;
    if (++wrong <= 10) {
      details << "\n  pattern '" << shown(patterns[i]) << "': count " << got.counts[i] << ", hits "
              << describe(got.hits[i]) << "; expected " << describe(expected);
    }
  }
  if (wrong == 0) return ::testing::AssertionSuccess() << found << " of " << patterns.size() << " patterns occur";
  return ::testing::AssertionFailure() << wrong << " of " << patterns.size() << " patterns disagree with the naive scan"
                                       << details.str();
}

// ---- pattern sets --------------------------------------------------------------------------

// Random substrings of the records, as written (protein in mixed case).
std::vector<std::string> random_substrings_of(const std::vector<TestContig>& records, std::uint32_t seed, int count,
                                              std::size_t max_length) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    const std::string& s = records[rng() % records.size()].sequence;
    const std::size_t pos = rng() % s.size();
    out.push_back(s.substr(pos, 1 + rng() % std::min(max_length, s.size() - pos)));
  }
  return out;
}

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

// The end of each record joined to the start of the next (and of the first: wrap-around), which
// an index that let a match cross a separator or the terminator would find; and the same with the
// newline that separates records in the FASTA text.
std::vector<std::string> across_records(const std::vector<TestContig>& records) {
  std::vector<std::string> out;
  for (std::size_t len : {1, 2, 3, 5, 8}) {
    for (std::size_t k = 0; k < records.size(); ++k) {
      const std::string& a = records[k].sequence;
      const std::string& b = records[(k + 1) % records.size()].sequence;
      const std::string tail = a.substr(a.size() - std::min(len, a.size())), head = b.substr(0, len);
      out.push_back(tail + head);
      out.push_back(tail + "\n" + head);
    }
  }
  return out;
}

// Patterns that cannot occur: random long ones, and ones holding a symbol outside the index's
// alphabet -- a byte the records lack, a byte no reference of the alphabet can hold ('\n', '\r'),
// a digit or gap symbol in protein -- alone, at the start, in the middle and at the end of
// patterns that otherwise occur.
std::vector<std::string> absent_patterns(const std::vector<TestContig>& records, SymbolKind kind, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const std::string present = distinct_symbols(records, kind);
  std::string outside = "\n\r";
  const std::string candidates = kind == SymbolKind::protein ? protein_letters() + "1-. #\x01\xff" : all_record_bytes();
  for (char c : candidates) {
    if (present.find(normalized_symbols(std::string(1, c), kind)[0]) == std::string::npos) outside += c;
  }
  std::vector<std::string> out;
  for (int i = 0; i < 40; ++i) {
    std::string p;
    for (int k = 0; k < 40; ++k) p += present[rng() % present.size()];
    out.push_back(p);
  }
  out.push_back(std::string(400, present[0]));
  const auto real = random_substrings_of(records, seed + 1, 60, 12);
  for (std::size_t i = 0; i < outside.size(); ++i) {
    const char c = outside[i];
    const std::string& r = real[i % real.size()];
    out.push_back(std::string(1, c));
    out.push_back(c + r);
    out.push_back(r + c);
    out.push_back(r.substr(0, r.size() / 2) + c + r.substr(r.size() / 2));
  }
  return out;
}

// ---- queries against the naive scan, per backend x shape x sample rate ----------------------

using QueryParam = std::tuple<Backend, Shape, std::uint32_t>;

class GeneralFmIndexQueries : public ::testing::TestWithParam<QueryParam> {
 protected:
  void SetUp() override {
    WTMAP_FM_SKIP_WITHOUT(backend());
    records_ = make_records(shape());
    reference_ = load_symbol_reference(dir_, records_, alphabet_of(shape()));
    index_.emplace(build_general(reference_, backend(), std::get<2>(GetParam())));
  }
  Backend backend() const { return std::get<0>(GetParam()); }
  Shape shape() const { return std::get<1>(GetParam()); }
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
                       ::testing::Values(Shape::protein_random, Shape::protein_large, Shape::protein_repetitive,
                                         Shape::protein_one_symbol, Shape::protein_two_symbols, Shape::protein_tiny,
                                         Shape::byte_all, Shape::byte_text, Shape::byte_one_symbol,
                                         Shape::byte_two_symbols),
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
  if (shape() == Shape::byte_all) {
    EXPECT_EQ(distinct.size(), 254u) << "every byte a FASTA line can hold";
  }
  if (shape() == Shape::protein_one_symbol || shape() == Shape::byte_one_symbol) {
    EXPECT_EQ(distinct.size(), 1u);
  }
  if (shape() == Shape::protein_two_symbols || shape() == Shape::byte_two_symbols) {
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

// Every row locates, and the rows' text positions are exactly 0..n-1 (the suffix array).
TEST_P(GeneralFmIndexQueries, LocateOfEveryRowIsAPermutation) {
  const std::uint64_t n = index().view().rows;
  std::vector<std::uint64_t> rows(n), positions(n, ~0ull);
  std::iota(rows.begin(), rows.end(), 0);
  ASSERT_TRUE(index().locate(rows.data(), positions.data(), n).ok());
  std::sort(positions.begin(), positions.end());
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(positions[i], i) << "text positions are not 0.." << n - 1;
}

TEST_P(GeneralFmIndexQueries, SaveLoadRoundTrip) {
  const std::string path = dir_.file("index.wtmap");
  ASSERT_TRUE(index().save(path).ok());
  auto alphabet = fmindex::read_index_alphabet(path);
  ASSERT_TRUE(alphabet.ok()) << alphabet.status().message();
  EXPECT_EQ(*alphabet, alphabet_of(shape()));
  std::vector<std::string> patterns = random_substrings_of(records_, 21, 100, 25);
  for (const auto& p : across_records(records_)) patterns.push_back(p);
  const Answers before = query_general(index(), patterns);
  for (Backend target : {Backend::cpu, Backend::gpu}) {
    if (skip_backend(target)) continue;
    SCOPED_TRACE(backend_name(target));
    auto loaded = GeneralFmIndex::load(path, target);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    EXPECT_EQ(loaded->backend(), target);
    EXPECT_EQ(loaded->alphabet(), index().alphabet());
    EXPECT_EQ(loaded->symbols().symbols(), index().symbols().symbols());
    EXPECT_EQ(loaded->sample_rate(), index().sample_rate());
    EXPECT_EQ(loaded->forward_length(), index().forward_length());
    EXPECT_EQ(loaded->view().rows, index().view().rows);
    EXPECT_EQ(loaded->contigs().size(), index().contigs().size());
    EXPECT_EQ(loaded->fragments().size(), index().fragments().size());
    EXPECT_TRUE(query_general(*loaded, patterns) == before);
    EXPECT_TRUE(MatchesNaiveScan(*loaded, records_, kind(), patterns));
    ASSERT_TRUE(loaded->save(dir_.file("again.wtmap")).ok());
    EXPECT_TRUE(read_file(dir_.file("again.wtmap")) == read_file(path)) << "a loaded index saves other bytes";
  }
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

TEST_P(GeneralFmIndexBackend, InvalidArguments) {
  const auto ref = load_symbol_reference(dir_, {{"p", "MKVL"}}, Alphabet::protein);
  const auto index = build_general(ref, GetParam(), 4);
  const std::uint8_t codes[4] = {1, 2, 3, 4};
  const fmindex::PatternRef past_end[2] = {{0, 4}, {2, 3}};
  fmindex::SaInterval out[2];
  EXPECT_FALSE(index.search(codes, 4, past_end, 2, out).ok()) << "a pattern running past the codes";
  const std::uint64_t rows[2] = {0, index.view().rows};
  std::uint64_t positions[2];
  EXPECT_FALSE(index.locate(rows, positions, 2).ok()) << "row == rows";

  fmindex::FmIndexOptions options;
  options.backend = GetParam();
  options.sample_rate = 0;
  auto bad = GeneralFmIndex::build(ref, options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::invalid_argument);

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

// ---- the index file --------------------------------------------------------------------------

// The header payload of version 2 (kHeaderPayload, fix_header_crc: fm_support.hpp): magic (8),
// version (4), alphabet (4), sample rate (4), m (8), n (8).

class GeneralFmIndexFile : public ::testing::Test {
 protected:
  void SetUp() override {
    // Small: every byte of its file is corrupted once below.
    records_ = random_records(77, 3, 20, 60, protein_letters(), SymbolKind::protein);
    index_.emplace(build_general(load_symbol_reference(dir_, records_, Alphabet::protein), Backend::cpu, 8));
    good_path_ = dir_.file("good.wtmap");
    ASSERT_TRUE(index_->save(good_path_).ok());
    good_ = read_file(good_path_);
    ASSERT_GT(good_.size(), kHeaderPayload + 36 + 4);
    ASSERT_EQ(good_.substr(0, 4), "HEAD");
    ASSERT_EQ(good_.substr(kHeaderPayload, 8), "WTMAPIDX");
  }
  Status load_bytes(const std::string& bytes, Backend backend = Backend::cpu) {
    write_file(bad_path_, bytes);
    auto r = GeneralFmIndex::load(bad_path_, backend);
    return r.ok() ? Status{} : r.status();
  }
  std::uint32_t header_field(std::size_t offset) const {
    std::uint32_t v = 0;
    std::memcpy(&v, good_.data() + kHeaderPayload + offset, 4);
    return v;
  }

  TempDir dir_;
  std::vector<TestContig> records_;
  std::optional<GeneralFmIndex> index_;
  std::string good_path_, good_, bad_path_ = dir_.file("bad.wtmap");
};

TEST_F(GeneralFmIndexFile, TheUntouchedFileLoadsAndRecordsItsAlphabet) {
  EXPECT_TRUE(load_bytes(good_).ok());
  std::string same = good_;
  fix_header_crc(same);
  EXPECT_EQ(same, good_) << "the test's CRC disagrees with the writer's";
  EXPECT_EQ(header_field(8), fmindex::kGeneralIndexVersion);
  EXPECT_EQ(header_field(12), static_cast<std::uint32_t>(Alphabet::protein));
  EXPECT_NE(good_.find("SYMB"), std::string::npos) << "no symbol map section";
  auto alphabet = fmindex::read_index_alphabet(good_path_);
  ASSERT_TRUE(alphabet.ok()) << alphabet.status().message();
  EXPECT_EQ(*alphabet, Alphabet::protein);
}

TEST_F(GeneralFmIndexFile, EverySingleByteCorruptionIsDetected) {
  EXPECT_TRUE(EveryFlippedByteIsRejected(good_, bad_path_, [&](const std::string& bytes) { return load_bytes(bytes); }));
}

TEST_F(GeneralFmIndexFile, TruncationIsAnError) {
  for (std::size_t len = 0; len < good_.size(); ++len) {
    const Status s = load_bytes(good_.substr(0, len));
    ASSERT_FALSE(s.ok()) << "truncated to " << len << " of " << good_.size();
    ASSERT_NE(s.message().find(bad_path_), std::string::npos) << s.message();
  }
}

TEST_F(GeneralFmIndexFile, TrailingBytesAreAnError) { EXPECT_FALSE(load_bytes(good_ + std::string(1, '\0')).ok()); }

TEST_F(GeneralFmIndexFile, FutureVersionSaysNewer) {
  std::string future = good_;
  const std::uint32_t version = fmindex::kIndexFormatVersion + 1;
  std::memcpy(&future[kHeaderPayload + 8], &version, 4);
  fix_header_crc(future);
  const Status s = load_bytes(future);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("newer"), std::string::npos) << s.message();
  EXPECT_FALSE(fmindex::read_index_alphabet(bad_path_).ok());
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

TEST_F(GeneralFmIndexFile, FailedSaveLeavesNoFile) {
  const std::string in_missing_dir = dir_.file("no-such-dir") + "/index.wtmap";
  EXPECT_FALSE(index_->save(in_missing_dir).ok());
  EXPECT_FALSE(fs::exists(in_missing_dir));
  const auto before = dir_.entries();
  fs::create_directory(dir_.file("taken"));
  EXPECT_FALSE(index_->save(dir_.file("taken")).ok());
  auto after = dir_.entries();
  after.erase(std::remove(after.begin(), after.end(), "taken"), after.end());
  EXPECT_EQ(after, before) << "a temporary file was left behind";
}

// A byte index too: its header names the byte alphabet and it loads back.
TEST(GeneralFmIndexByteFile, RecordsTheByteAlphabet) {
  TempDir dir;
  const auto records = make_records(Shape::byte_text);
  const auto index = build_general(load_symbol_reference(dir, records, Alphabet::byte), Backend::cpu, 5);
  ASSERT_TRUE(index.save(dir.file("b.wtmap")).ok());
  EXPECT_EQ(fmindex::read_index_alphabet(dir.file("b.wtmap")).value(), Alphabet::byte);
  auto loaded = GeneralFmIndex::load(dir.file("b.wtmap"), Backend::cpu);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->alphabet(), Alphabet::byte);
  EXPECT_EQ(loaded->code('T'), 0) << "byte patterns are case-sensitive";
  EXPECT_NE(loaded->code('t'), 0);
}

// ---- CPU and GPU agree -----------------------------------------------------------------------

class GeneralCpuVsGpu : public ::testing::TestWithParam<Shape> {};

INSTANTIATE_TEST_SUITE_P(General, GeneralCpuVsGpu,
                         ::testing::Values(Shape::protein_random, Shape::protein_large, Shape::protein_repetitive,
                                           Shape::protein_one_symbol, Shape::protein_tiny, Shape::byte_all,
                                           Shape::byte_text, Shape::byte_two_symbols),
                         [](const auto& info) { return std::string(shape_name(info.param)); });

TEST_P(GeneralCpuVsGpu, SameAnswersAndSameIndexFile) {
  WTMAP_FM_SKIP_WITHOUT(Backend::gpu);
  TempDir dir;
  const auto records = make_records(GetParam());
  const auto reference = load_symbol_reference(dir, records, alphabet_of(GetParam()));
  for (std::uint32_t rate : {1u, 37u}) {
    SCOPED_TRACE("sample rate " + std::to_string(rate));
    const GeneralFmIndex cpu = build_general(reference, Backend::cpu, rate);
    const GeneralFmIndex gpu = build_general(reference, Backend::gpu, rate);
    std::vector<std::string> patterns = random_substrings_of(records, 3, 300, 20);
    for (const auto& p : across_records(records)) patterns.push_back(p);
    for (const auto& p : absent_patterns(records, kind_of(GetParam()), 4)) patterns.push_back(p);
    const Answers on_cpu = query_general(cpu, patterns);
    EXPECT_TRUE(on_cpu == query_general(gpu, patterns));
    EXPECT_TRUE(MatchesNaiveScan(gpu, records, kind_of(GetParam()), patterns));
    ASSERT_TRUE(cpu.save(dir.file("cpu.wtmap")).ok());
    ASSERT_TRUE(gpu.save(dir.file("gpu.wtmap")).ok());
    EXPECT_TRUE(read_file(dir.file("cpu.wtmap")) == read_file(dir.file("gpu.wtmap"))) << "index files differ";
  }
}

// A pattern batch larger than the staged upload's pieces (16 MiB), on a protein index: every
// interval equal to the CPU backend's.
TEST(GeneralFmIndexGpu, PatternBatchLargerThanTheUploadPieces) {
  WTMAP_FM_SKIP_WITHOUT(Backend::gpu);
  TempDir dir;
  const auto records = make_records(Shape::protein_large);
  const auto reference = load_symbol_reference(dir, records, Alphabet::protein);
  const GeneralFmIndex cpu = build_general(reference, Backend::cpu, 32);
  const GeneralFmIndex gpu = build_general(reference, Backend::gpu, 32);
  constexpr std::size_t kPatterns = 400000, kLength = 100;
  std::mt19937_64 rng(99);
  std::vector<std::uint8_t> codes;
  std::vector<fmindex::PatternRef> refs;
  for (std::size_t i = 0; i < kPatterns; ++i) {
    const std::string& s = records[rng() % records.size()].sequence;
    std::string p = s.substr(rng() % (s.size() - kLength + 1), kLength);
    if (i % 3 != 0) std::reverse(p.begin(), p.end());  // mostly absent
    refs.push_back({codes.size(), static_cast<std::uint32_t>(p.size())});
    for (char c : p) codes.push_back(cpu.code(c));
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
  EXPECT_GT(found, kPatterns / 4);
}

}  // namespace
}  // namespace wtmap::fmtest
