// The index kinds the FM-index contract (fm_index_contract.hpp) runs on -- DNA (FmIndex), protein
// and byte (GeneralFmIndex) -- one traits struct each, OnBackend<Kind, backend> to run one on a
// backend, and the fixture of a small saved index file that the contract's file tests and the
// kind-specific file tests share.
//
// A kind says how to make its reference from test records, how to encode a pattern, what the
// naive scan finds, which references and pattern sets exercise it, and what its index file says
// of itself; the contract knows nothing else of DNA, protein or bytes:
//   Index                          FmIndex or GeneralFmIndex
//   name(), alphabet, format_version  what its tests are called, what its file header records
//   sample_rates(), shapes()       the sample rates and named references of its query suite
//   small(), tiny(), large()       a reference small enough to corrupt every byte of its index
//                                  file, one for argument checks, one for a 40 MB pattern batch
//   reference(dir, records)        the Reference or SymbolReference, through a FASTA file
//   encode(index, pattern)         the pattern's search codes
//   expected_hits(records, pattern)  the naive scan
//   substrings(records, seed, count, max_length), boundary_patterns(records),
//   absent(records, seed)          pattern sets: present, across separators, absent
//   expect_same_symbols(a, b)      the two indexes have the same alphabet and symbol map
//   batch_found_percent            how much of the large batch must occur (it is not all empty)
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dna_cases.hpp"
#include "fm_queries.hpp"
#include "fm_support.hpp"
#include "general_cases.hpp"
#include "general_support.hpp"
#include "wtmap/fmindex/fm_index.hpp"
#include "wtmap/fmindex/general_fm_index.hpp"

namespace wtmap::fmtest {

// One reference of a kind's suite, with the name its failures are traced by.
struct NamedRecords {
  std::string name;
  std::vector<TestContig> records;
};

struct DnaKind {
  using Index = fmindex::FmIndex;
  static std::string name() { return "Dna"; }
  static constexpr fmindex::Alphabet alphabet = fmindex::Alphabet::dna;
  static constexpr std::uint32_t format_version = fmindex::kDnaIndexVersion;  // DNA indexes keep version 1
  static constexpr std::size_t batch_found_percent = 10;  // 15 % on the CPU

  static std::vector<std::uint32_t> sample_rates() { return {1, 2, 32, 37}; }
  static std::vector<NamedRecords> shapes() {
    std::vector<NamedRecords> out;
    for (DnaShape s : all_dna_shapes()) out.push_back({shape_name(s), make_contigs(s)});
    return out;
  }
  static std::vector<TestContig> small() {
    RandomReferenceSpec spec;
    spec.seed = 77;
    spec.contigs = 3;
    spec.min_length = 40;
    spec.max_length = 90;
    spec.n_run_rate = 0.03;
    return random_reference(spec);
  }
  static std::vector<TestContig> tiny() { return {{"c", "ACGTTGCA"}}; }
  static std::vector<TestContig> large() { return make_contigs(DnaShape::random_large); }

  static fmindex::Reference reference(const TempDir& dir, const std::vector<TestContig>& records) {
    return load_reference(dir, records);
  }
  static std::vector<std::uint8_t> encode(const Index&, const std::string& p) { return pattern_codes(p); }
  static std::vector<Hit> expected_hits(const std::vector<TestContig>& records, const std::string& p) {
    return naive_hits(records, p);
  }
  // Random substrings and their reverse complements.
  static std::vector<std::string> substrings(const std::vector<TestContig>& records, std::uint32_t seed, int count,
                                             std::size_t max_length) {
    return random_substrings(records, seed, count, max_length);
  }
  static std::vector<std::string> boundary_patterns(const std::vector<TestContig>& records) {
    return across_separators(records);
  }
  static std::vector<std::string> absent(const std::vector<TestContig>&, std::uint32_t seed) {
    return absent_patterns(seed);
  }
  static void expect_same_symbols(const Index&, const Index&) {}  // always A, C, G, T
};

template <SymbolKind K>
struct SymbolKindTraits {
  using Index = fmindex::GeneralFmIndex;
  static std::string name() { return K == SymbolKind::protein ? "Protein" : "Byte"; }
  static constexpr fmindex::Alphabet alphabet =
      K == SymbolKind::protein ? fmindex::Alphabet::protein : fmindex::Alphabet::byte;
  static constexpr std::uint32_t format_version = fmindex::kGeneralIndexVersion;
  static constexpr std::size_t batch_found_percent = 25;  // a third of the batch is read forwards

  static std::vector<std::uint32_t> sample_rates() { return {1, 3, 32}; }
  static std::vector<NamedRecords> shapes() {
    std::vector<NamedRecords> out;
    for (SymbolShape s : all_symbol_shapes()) {
      if (kind_of(s) == K) out.push_back({shape_name(s), make_records(s)});
    }
    return out;
  }
  static std::vector<TestContig> small() { return random_records(77, 3, 20, 60, symbols(), K); }
  static std::vector<TestContig> tiny() { return {{"p", K == SymbolKind::protein ? "MKVL" : "a\tZ\xff"}}; }
  static std::vector<TestContig> large() {
    return make_records(K == SymbolKind::protein ? SymbolShape::protein_large : SymbolShape::byte_all);
  }

  static fmindex::SymbolReference reference(const TempDir& dir, const std::vector<TestContig>& records) {
    return load_symbol_reference(dir, records, alphabet);
  }
  static std::vector<std::uint8_t> encode(const Index& index, const std::string& p) { return symbol_codes(index, p); }
  static std::vector<Hit> expected_hits(const std::vector<TestContig>& records, const std::string& p) {
    return naive_symbol_hits(records, p, K);
  }
  static std::vector<std::string> substrings(const std::vector<TestContig>& records, std::uint32_t seed, int count,
                                             std::size_t max_length) {
    return random_substrings_of(records, seed, count, max_length);
  }
  static std::vector<std::string> boundary_patterns(const std::vector<TestContig>& records) {
    return across_records(records);
  }
  static std::vector<std::string> absent(const std::vector<TestContig>& records, std::uint32_t seed) {
    return absent_patterns(records, K, seed);
  }
  static void expect_same_symbols(const Index& a, const Index& b) {
    EXPECT_EQ(a.alphabet(), b.alphabet());
    EXPECT_EQ(a.symbols().symbols(), b.symbols().symbols());
  }

 private:
  static const std::string& symbols() { return K == SymbolKind::protein ? protein_letters() : all_record_bytes(); }
};

using ProteinKind = SymbolKindTraits<SymbolKind::protein>;
using ByteKind = SymbolKindTraits<SymbolKind::byte>;

// A kind on one backend: a configuration of the contract.
template <class Kind, Backend B>
struct OnBackend : Kind {
  static constexpr Backend backend = B;
  static std::string name() { return Kind::name() + backend_label(B); }
};

// Test names say the configuration ("DnaCpu", "Byte") rather than a number.
struct KindName {
  template <class T>
  static std::string GetName(int) {
    return T::name();
  }
};

// ---- building and asking an index of a kind ------------------------------------------------

template <class Kind>
typename Kind::Index build_kind(const TempDir& dir, const std::vector<TestContig>& records, Backend backend,
                                std::uint32_t sample_rate) {
  fmindex::FmIndexOptions options;
  options.backend = backend;
  options.sample_rate = sample_rate;
  auto index = Kind::Index::build(Kind::reference(dir, records), options);
  if (!index.ok()) throw std::runtime_error(Kind::name() + " build: " + index.status().message());
  return std::move(index).value();
}

template <class Kind>
Answers query_kind(const typename Kind::Index& index, const std::vector<std::string>& patterns) {
  return query_with(index, patterns, [&](const std::string& p) { return Kind::encode(index, p); });
}

template <class Kind>
::testing::AssertionResult MatchesKindNaiveScan(const typename Kind::Index& index,
                                                const std::vector<TestContig>& records,
                                                const std::vector<std::string>& patterns) {
  return AnswersMatch(
      index, patterns, [&](const std::string& p) { return Kind::encode(index, p); },
      [&](const std::string& p) { return Kind::expected_hits(records, p); });
}

// ---- a saved index file ----------------------------------------------------------------------

// The index of Config::small() (sample rate 8), built and saved on Config::backend; load_bytes
// loads edited copies of its file on that backend.
template <class Config>
class SavedIndexFile : public ::testing::Test {
 protected:
  void SetUp() override {
    WTMAP_FM_SKIP_WITHOUT(Config::backend);
    records_ = Config::small();
    index_.emplace(build_kind<Config>(dir_, records_, Config::backend, 8));
    good_path_ = dir_.file("good.wtmap");
    ASSERT_TRUE(index_->save(good_path_).ok());
    good_ = read_file(good_path_);
    ASSERT_GT(good_.size(), kHeaderPayload + 12 + 4);  // the magic and version at least, and a CRC
    ASSERT_EQ(good_.substr(0, 4), "HEAD");
    ASSERT_EQ(good_.substr(kHeaderPayload, 8), "WTMAPIDX");
  }
  // Loads `bytes` written to a fresh file; the status, or ok.
  Status load_bytes(const std::string& bytes) {
    write_file(bad_path_, bytes);
    auto r = Config::Index::load(bad_path_, Config::backend);
    return r.ok() ? Status{} : r.status();
  }
  // The 32-bit header field at `offset` in the header payload.
  std::uint32_t header_field(std::size_t offset) const {
    std::uint32_t v = 0;
    std::memcpy(&v, good_.data() + kHeaderPayload + offset, 4);
    return v;
  }

  TempDir dir_;
  std::vector<TestContig> records_;
  std::optional<typename Config::Index> index_;
  std::string good_path_, good_, bad_path_ = dir_.file("bad.wtmap");
};

}  // namespace wtmap::fmtest
