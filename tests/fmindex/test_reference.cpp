// read_fasta: contigs, fragments (runs of A/C/G/T) and forward codes from plain and gzip FASTA,
// and the errors, each naming the file, the line and the contig.
#include <gtest/gtest.h>

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "fm_support.hpp"
#include "wtmap/fmindex/reference.hpp"

namespace wtmap::fmindex {

// Readable failure output (outside the unnamed namespace, for argument-dependent lookup).
std::ostream& operator<<(std::ostream& os, const Fragment& f) {
  return os << "{text_start " << f.text_start << ", length " << f.length << ", contig " << f.contig << ", contig_offset "
            << f.contig_offset << "}";
}
bool operator==(const Fragment& a, const Fragment& b) {
  return a.text_start == b.text_start && a.length == b.length && a.contig == b.contig &&
         a.contig_offset == b.contig_offset;
}

namespace {

using fmtest::TempDir;

constexpr std::uint8_t A = 0, C = 1, G = 2, T = 3, S = kSeparator;

enum class Compression { plain, gzip };

class ReadFasta : public ::testing::TestWithParam<Compression> {
 protected:
  // Writes `text` (compressed per the parameter) and reads it back.
  Result<Reference> read(const std::string& text) {
    path_ = dir_.file(GetParam() == Compression::gzip ? "ref.fa.gz" : "ref.fa");
    if (GetParam() == Compression::gzip) {
      fmtest::write_gzip(path_, text);
    } else {
      fmtest::write_file(path_, text);
    }
    return read_fasta(path_);
  }
  // The reference read from `text`, failing the test if it does not load.
  Reference read_ok(const std::string& text) {
    auto r = read(text);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(r).value() : Reference{};
  }
  // An error whose message names the file, "<file>:<line>:" when line > 0, and each of `names`.
  void expect_error(const std::string& text, int line, const std::vector<std::string>& names) {
    auto r = read(text);
    ASSERT_FALSE(r.ok()) << "accepted:\n" << text;
    fmtest::expect_message_names(r.status().message(), path_, line, names);
  }

  TempDir dir_;
  std::string path_;
};

INSTANTIATE_TEST_SUITE_P(Fasta, ReadFasta, ::testing::Values(Compression::plain, Compression::gzip),
                         [](const auto& info) { return info.param == Compression::gzip ? "Gzip" : "Plain"; });

TEST_P(ReadFasta, ContigsNamesAndLengths) {
  const Reference ref = read_ok(">chr1 first contig\nACGT\nacgt\n>chr2\tdescribed\nGGC\n>chr3\nT\n");
  ASSERT_EQ(ref.contigs.size(), 3u);
  EXPECT_EQ(ref.contigs[0].name, "chr1");
  EXPECT_EQ(ref.contigs[0].length, 8u);
  EXPECT_EQ(ref.contigs[1].name, "chr2");
  EXPECT_EQ(ref.contigs[1].length, 3u);
  EXPECT_EQ(ref.contigs[2].name, "chr3");
  EXPECT_EQ(ref.contigs[2].length, 1u);
  // One fragment per contig, separated by one separator each: ACGTACGT # GGC # T
  EXPECT_EQ(ref.fragments, (std::vector<Fragment>{{0, 8, 0, 0}, {9, 3, 0, 1}, {13, 1, 0, 2}}));
  EXPECT_EQ(ref.forward, (std::vector<std::uint8_t>{A, C, G, T, A, C, G, T, S, G, G, C, S, T}));
  EXPECT_EQ(ref.ambiguous_bases, 0u);
}

TEST_P(ReadFasta, LowerCaseAndUracil) {
  const Reference ref = read_ok(">r\nacgu\nUuTt\n");
  ASSERT_EQ(ref.contigs.size(), 1u);
  EXPECT_EQ(ref.contigs[0].length, 8u);
  EXPECT_EQ(ref.forward, (std::vector<std::uint8_t>{A, C, G, T, T, T, T, T}));
}

TEST_P(ReadFasta, AmbiguityRunsBecomeOneSeparatorEach) {
  // AC NNN GT R A Y C: the N run, the R and the Y are three separators.
  const Reference ref = read_ok(">c\nACNNNGTRAYC\n");
  ASSERT_EQ(ref.contigs.size(), 1u);
  EXPECT_EQ(ref.contigs[0].length, 11u);
  EXPECT_EQ(ref.ambiguous_bases, 5u);
  EXPECT_EQ(ref.fragments, (std::vector<Fragment>{{0, 2, 0, 0}, {3, 2, 5, 0}, {6, 1, 8, 0}, {8, 1, 10, 0}}));
  EXPECT_EQ(ref.forward, (std::vector<std::uint8_t>{A, C, S, G, T, S, A, S, C}));
}

TEST_P(ReadFasta, AmbiguityRunAcrossLinesAndMixedCodes) {
  // The run n N | N R y spans a line break and mixes codes: still one separator.
  const Reference ref = read_ok(">c\nGGnN\nNRyTT\n");
  EXPECT_EQ(ref.ambiguous_bases, 5u);
  EXPECT_EQ(ref.fragments, (std::vector<Fragment>{{0, 2, 0, 0}, {3, 2, 7, 0}}));
  EXPECT_EQ(ref.forward, (std::vector<std::uint8_t>{G, G, S, T, T}));
}

TEST_P(ReadFasta, AmbiguityAtContigEndsAndAllAmbiguousContig) {
  // Leading and trailing N runs add no separator beyond the contig boundary; a contig of only
  // N has a length but no fragment.
  const Reference ref = read_ok(">a\nNNACGNN\n>n\nNNNN\n>b\nNTT\n");
  ASSERT_EQ(ref.contigs.size(), 3u);
  EXPECT_EQ(ref.contigs[0].length, 7u);
  EXPECT_EQ(ref.contigs[1].length, 4u);
  EXPECT_EQ(ref.contigs[2].length, 3u);
  EXPECT_EQ(ref.ambiguous_bases, 9u);
  EXPECT_EQ(ref.fragments, (std::vector<Fragment>{{0, 3, 2, 0}, {4, 2, 1, 2}}));
  EXPECT_EQ(ref.forward, (std::vector<std::uint8_t>{A, C, G, S, T, T}));
  EXPECT_EQ(ref.fragment_at(5).contig, 2u);
}

TEST_P(ReadFasta, CrlfLineEndingsAndMissingFinalNewline) {
  const Reference ref = read_ok(">c1 desc\r\nACGT\r\nTT\r\n\r\n>c2\r\nGA");
  ASSERT_EQ(ref.contigs.size(), 2u);
  EXPECT_EQ(ref.contigs[0].name, "c1");
  EXPECT_EQ(ref.contigs[0].length, 6u);
  EXPECT_EQ(ref.contigs[1].name, "c2");
  EXPECT_EQ(ref.contigs[1].length, 2u);
  EXPECT_EQ(ref.forward, (std::vector<std::uint8_t>{A, C, G, T, T, T, S, G, A}));
}

TEST_P(ReadFasta, RandomReferenceMatchesItsContigStrings) {
  // Fragments, read back through the forward codes, reproduce every contig's A/C/G/T runs.
  fmtest::RandomReferenceSpec spec;
  spec.seed = 11;
  spec.contigs = 6;
  spec.n_run_rate = 0.03;
  spec.iupac_rate = 0.02;
  const auto contigs = fmtest::random_reference(spec);
  const Reference ref = read_ok(fmtest::fasta_text(contigs, 61));
  ASSERT_EQ(ref.contigs.size(), contigs.size());
  std::vector<std::string> rebuilt;
  std::uint64_t ambiguous = 0;
  for (std::size_t k = 0; k < contigs.size(); ++k) {
    EXPECT_EQ(ref.contigs[k].name, contigs[k].name);
    EXPECT_EQ(ref.contigs[k].length, contigs[k].sequence.size());
    const std::string s = fmtest::normalized(contigs[k].sequence);
    rebuilt.emplace_back(s.size(), 'N');
    for (char c : s) ambiguous += std::string("ACGT").find(c) == std::string::npos;
  }
  EXPECT_EQ(ref.ambiguous_bases, ambiguous);
  std::uint64_t expected_start = 0;
  for (const Fragment& f : ref.fragments) {
    ASSERT_LT(f.contig, contigs.size());
    EXPECT_EQ(f.text_start, expected_start);
    expected_start = f.text_start + f.length + 1;
    for (std::uint64_t i = 0; i < f.length; ++i) {
      ASSERT_LT(f.text_start + i, ref.forward.size());
      rebuilt[f.contig][f.contig_offset + i] = "ACGT"[ref.forward[f.text_start + i]];
    }
    if (f.text_start + f.length < ref.forward.size()) {
      EXPECT_EQ(ref.forward[f.text_start + f.length], kSeparator);
    }
  }
  EXPECT_EQ(expected_start, ref.forward.size() + 1);
  for (std::size_t k = 0; k < contigs.size(); ++k) {
    std::string expected = fmtest::normalized(contigs[k].sequence);
    for (char& c : expected) c = std::string("ACGT").find(c) == std::string::npos ? 'N' : c;
    EXPECT_EQ(rebuilt[k], expected) << contigs[k].name;
  }
}

// ---- errors --------------------------------------------------------------------------------

TEST_P(ReadFasta, EmptyFileIsAnError) { expect_error("", 0, {}); }

TEST_P(ReadFasta, OnlyAmbiguousBasesIsAnError) { expect_error(">a\nNNNN\n", 0, {}); }

TEST_P(ReadFasta, SequenceBeforeTheFirstHeader) { expect_error("ACGT\n>c\nAC\n", 1, {}); }

TEST_P(ReadFasta, DuplicateContigName) { expect_error(">a\nAC\n>b\nGG\n>a x\nTT\n", 5, {"'a'", "duplicate"}); }

TEST_P(ReadFasta, EmptyContigName) {
  expect_error(">x\nAC\n>\nAC\n", 3, {});
  expect_error(">x\nAC\n> described\nAC\n", 3, {});
}

TEST_P(ReadFasta, ContigWithoutBases) {
  // The empty contig 'a' is followed by a header (line 2); 'b' ends the file (line 5).
  auto r = read(">a\n>b\nAC\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(std::regex_search(r.status().message(), std::regex(":(1|2): .*'a'"))) << r.status().message();
  expect_error(">a\nAC\n>b\n\n", 0, {"'b'"});
}

TEST_P(ReadFasta, NonNucleotideBytes) {
  expect_error(">a\nAC\nA1G\n", 3, {"'a'", "'1'"});
  // A CRLF's '\r' ends the line; a second one before it is a byte of the sequence (found by
  // tests/fuzz/fuzz_reference: both used to be dropped).
  expect_error(">a\nAC\r\r\nGT\n", 2, {"'a'", "0x0d", "column 3"});
  expect_error(">a\nAC\nGT\r\r", 3, {"'a'", "0x0d", "column 3"});
  expect_error(">a\nAC\n>b\nACGT#\n", 4, {"'b'", "'#'"});
  expect_error(">a\nAC G\n", 2, {"'a'"});
  expect_error(">a\nAC\x01G\n", 2, {"'a'", "0x01"});
}

TEST_P(ReadFasta, ContigNamesSamCannotHoldAreRefused) {
  // '*' means "no reference" in SAM, ',' splits XA and SA lists, and bytes below 0x21 break lines.
  expect_error(">a\nAC\n>*\nAC\n", 3, {"'*'", "SAM"});
  expect_error(">a,b\nAC\n", 1, {"'a,b'", "SAM"});
  expect_error(">=x\nAC\n", 1, {"'=x'"});
  expect_error(std::string(">a\0b\nAC\n", 8), 1, {"\\x00"});
  expect_error(">a\x01" "b\nAC\n", 1, {"\\x01"});
  EXPECT_TRUE(read(">chr1\nAC\n>HLA-A*01:01:01:01\nAC\n>x=y|z\nAC\n").ok());
}

// The rule against SAM v1.6's regular expression for reference names, for every byte as a first
// and as a later character.
TEST(ContigName, SamRegularExpression) {
  const std::regex sam_name("[0-9A-Za-z!#$%&+./:;?@^_|~-][0-9A-Za-z!#$%&*+./:;=?@^_|~-]*");
  for (int first = 0; first < 256; ++first) {
    for (const char* rest : {"", "a", "*", "=", ",", " "}) {
      const std::string name = std::string(1, static_cast<char>(first)) + rest;
      EXPECT_EQ(is_valid_contig_name(name), std::regex_match(name, sam_name)) << "byte " << first << " then '" << rest << "'";
    }
  }
  EXPECT_FALSE(is_valid_contig_name(""));
}

TEST(ReadFastaFile, MissingFileIsAnIoError) {
  TempDir dir;
  const std::string path = dir.file("does-not-exist.fa");
  auto r = read_fasta(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::io_error);
  EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
}

TEST(ReadFastaFile, GzipAndPlainGiveTheSameReference) {
  TempDir dir;
  fmtest::RandomReferenceSpec spec;
  spec.seed = 5;
  const std::string text = fmtest::fasta_text(fmtest::random_reference(spec), 70);
  fmtest::write_file(dir.file("a.fa"), text);
  fmtest::write_gzip(dir.file("a.fa.gz"), text);
  auto plain = read_fasta(dir.file("a.fa"));
  auto gz = read_fasta(dir.file("a.fa.gz"));
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  ASSERT_TRUE(gz.ok()) << gz.status().message();
  EXPECT_EQ(plain->forward, gz->forward);
  EXPECT_EQ(plain->fragments, gz->fragments);
  EXPECT_EQ(plain->ambiguous_bases, gz->ambiguous_bases);
}

TEST(NucleotideCode, Alphabet) {
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    const std::string upper(1, static_cast<char>(b >= 'a' && b <= 'z' ? b - 'a' + 'A' : b));
    int expected = -1;
    if (std::string("ACGTU").find(upper) != std::string::npos && b != 0) {
      expected = upper == "U" ? 3 : static_cast<int>(std::string("ACGT").find(upper));
    } else if (std::string("NRYKMSWBDHV").find(upper) != std::string::npos && b != 0) {
      expected = 4;
    }
    EXPECT_EQ(nucleotide_code(c), expected) << "byte " << b;
    EXPECT_EQ(search_code(c), expected >= 0 && expected < 4 ? expected : 4) << "byte " << b;
  }
}

}  // namespace
}  // namespace wtmap::fmindex
