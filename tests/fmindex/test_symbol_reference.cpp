// read_symbol_fasta (symbol_reference.hpp) and the alphabets (alphabet.hpp): protein and byte
// records, their fragments and the forward text joined by separators, from plain and gzip FASTA;
// the errors, each naming the file, the line and the record; normalized_symbol and SymbolMap.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fm_support.hpp"
#include "general_support.hpp"
#include "wtmap/fmindex/alphabet.hpp"
#include "wtmap/fmindex/symbol_reference.hpp"

namespace wtmap::fmindex {
namespace {

using fmtest::TempDir;

enum class Compression { plain, gzip };

class ReadSymbolFasta : public ::testing::TestWithParam<Compression> {
 protected:
  Result<SymbolReference> read(const std::string& text, Alphabet alphabet) {
    path_ = dir_.file(GetParam() == Compression::gzip ? "ref.fa.gz" : "ref.fa");
    if (GetParam() == Compression::gzip) {
      fmtest::write_gzip(path_, text);
    } else {
      fmtest::write_file(path_, text);
    }
    return read_symbol_fasta(path_, alphabet);
  }
  SymbolReference read_ok(const std::string& text, Alphabet alphabet) {
    auto r = read(text, alphabet);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(r).value() : SymbolReference{};
  }
  // An error whose message names the file, "<file>:<line>:" when line > 0, and each of `names`.
  void expect_error(const std::string& text, Alphabet alphabet, int line, const std::vector<std::string>& names) {
    auto r = read(text, alphabet);
    ASSERT_FALSE(r.ok()) << "accepted:\n" << text;
    fmtest::expect_message_names(r.status().message(), path_, line, names);
  }

  TempDir dir_;
  std::string path_;
};

INSTANTIATE_TEST_SUITE_P(Fasta, ReadSymbolFasta, ::testing::Values(Compression::plain, Compression::gzip),
                         [](const auto& info) { return info.param == Compression::gzip ? "Gzip" : "Plain"; });

std::string text_of(const SymbolReference& r) { return std::string(r.forward.begin(), r.forward.end()); }

TEST_P(ReadSymbolFasta, ProteinRecordsFragmentsAndText) {
  const SymbolReference ref = read_ok(">sp|P1 first protein\nMKV\nlaa*\n>p2\tx\nW\n>p3\nggH\n", Alphabet::protein);
  EXPECT_EQ(ref.alphabet, Alphabet::protein);
  ASSERT_EQ(ref.contigs.size(), 3u);
  EXPECT_EQ(ref.contigs[0].name, "sp|P1");
  EXPECT_EQ(ref.contigs[0].length, 7u);
  EXPECT_EQ(ref.contigs[1].name, "p2");
  EXPECT_EQ(ref.contigs[2].length, 3u);
  EXPECT_EQ(text_of(ref), "MKVLAA*\nW\nGGH") << "upper-cased, records joined by one separator";
  ASSERT_EQ(ref.fragments.size(), 3u);
  const std::uint64_t starts[3] = {0, 8, 10};
  for (std::uint32_t k = 0; k < 3; ++k) {
    EXPECT_EQ(ref.fragments[k].text_start, starts[k]);
    EXPECT_EQ(ref.fragments[k].length, ref.contigs[k].length);
    EXPECT_EQ(ref.fragments[k].contig, k);
    EXPECT_EQ(ref.fragments[k].contig_offset, 0u);
  }
}

TEST_P(ReadSymbolFasta, EveryProteinSymbolInEitherCase) {
  std::string lower;
  for (char c : fmtest::protein_letters()) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  const SymbolReference ref = read_ok(">u\n" + fmtest::protein_letters() + "\n>l\n" + lower + "\n", Alphabet::protein);
  EXPECT_EQ(text_of(ref), fmtest::protein_letters() + "\n" + fmtest::protein_letters());
}

TEST_P(ReadSymbolFasta, BytesAreTakenVerbatim) {
  // NUL, 0xff, blanks, tabs, '>' and '@' inside lines, '@' and ';' opening a line: all symbols.
  const std::string odd = std::string("a B\t") + '\0' + "\xff>x;";
  const SymbolReference ref = read_ok(">b1\n" + odd + "\n@at\n;semi\n>b2\n  \n", Alphabet::byte);
  ASSERT_EQ(ref.contigs.size(), 2u);
  EXPECT_EQ(text_of(ref), odd + "@at;semi\n  ");
  EXPECT_EQ(ref.contigs[0].length, odd.size() + 8);
  EXPECT_EQ(ref.contigs[1].length, 2u);
  EXPECT_EQ(ref.fragments[1].text_start, odd.size() + 9);
}

TEST_P(ReadSymbolFasta, EveryByteAFastaLineCanHold) {
  const std::string all = fmtest::all_record_bytes().substr(1) + std::string(1, '\0');  // no line may begin with '>'
  const SymbolReference ref = read_ok(">all\n" + all + "\n", Alphabet::byte);
  EXPECT_EQ(text_of(ref), all);
  EXPECT_EQ(all.size(), 254u);
}

TEST_P(ReadSymbolFasta, CrlfLineEndsAndMissingFinalNewline) {
  EXPECT_EQ(text_of(read_ok(">a\r\nMK\r\nV\r\n>b\r\nW", Alphabet::protein)), "MKV\nW");
  EXPECT_EQ(text_of(read_ok(">a\r\nx y\r\nz\r\n>b\r\nw", Alphabet::byte)), "x yz\nw");
}

TEST_P(ReadSymbolFasta, RandomRecordsRoundTrip) {
  for (const auto kind : {fmtest::SymbolKind::protein, fmtest::SymbolKind::byte}) {
    const bool protein = kind == fmtest::SymbolKind::protein;
    const auto records =
        fmtest::random_records(3, 9, 1, 300, protein ? fmtest::protein_letters() : fmtest::all_record_bytes(), kind);
    const SymbolReference ref = read_ok(fmtest::symbol_fasta_text(records, 17), protein ? Alphabet::protein : Alphabet::byte);
    std::string expected;
    for (const auto& r : records) expected += (expected.empty() ? "" : "\n") + fmtest::normalized_symbols(r.sequence, kind);
    EXPECT_EQ(text_of(ref), expected);
    ASSERT_EQ(ref.contigs.size(), records.size());
  }
}

TEST_P(ReadSymbolFasta, BytesOutsideTheProteinAlphabet) {
  expect_error(">a\nMK\nM1V\n", Alphabet::protein, 3, {"'a'", "'1'", "column 2", "amino-acid"});
  expect_error(">a\nMK\n>b\nMKV-\n", Alphabet::protein, 4, {"'b'", "'-'"});
  expect_error(">a\nMK V\n", Alphabet::protein, 2, {"'a'", "' '"});
  expect_error(">a\nMK.\n", Alphabet::protein, 2, {"'a'", "'.'"});
  expect_error(">a\nMK\x01G\n", Alphabet::protein, 2, {"'a'", "0x01"});
}

TEST_P(ReadSymbolFasta, CarriageReturnInsideAByteLine) {
  expect_error(">a\nxy\n>b\nx\ry\n", Alphabet::byte, 4, {"'b'", "0x0d", "column 2"});
  // The '\r' before a CRLF is inside the line (found by tests/fuzz/fuzz_reference).
  expect_error(">a\nxy\r\r\n", Alphabet::byte, 2, {"'a'", "0x0d", "column 3"});
}

TEST_P(ReadSymbolFasta, FastaErrorsAsForDna) {
  for (Alphabet a : {Alphabet::protein, Alphabet::byte}) {
    SCOPED_TRACE(alphabet_name(a));
    expect_error("", a, 0, {});
    expect_error("MK\n>c\nAC\n", a, 1, {});
    expect_error(">a\nAC\n>b\nGG\n>a x\nTT\n", a, 5, {"'a'", "duplicate"});
    expect_error(">x\nAC\n>\nAC\n", a, 3, {});
    expect_error(">a\n>b\nAC\n", a, 1, {"'a'"});  // a record without symbols
    expect_error(">a\nAC\n>b\n\n", a, 3, {"'b'"});
  }
}

TEST(ReadSymbolFastaFile, MissingFileAndDnaAlphabet) {
  TempDir dir;
  const std::string path = dir.file("does-not-exist.fa");
  auto r = read_symbol_fasta(path, Alphabet::protein);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::io_error);
  EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
  fmtest::write_file(dir.file("a.fa"), ">a\nACGT\n");
  EXPECT_EQ(read_symbol_fasta(dir.file("a.fa"), Alphabet::dna).status().code(), StatusCode::invalid_argument);
}

TEST(Alphabet, NamesParseBack) {
  for (Alphabet a : {Alphabet::dna, Alphabet::protein, Alphabet::byte}) EXPECT_EQ(parse_alphabet(alphabet_name(a)), a);
  EXPECT_FALSE(parse_alphabet("Protein"));
  EXPECT_FALSE(parse_alphabet("rna"));
  EXPECT_FALSE(parse_alphabet(""));
}

TEST(Alphabet, NormalizedSymbols) {
  for (int b = 0; b < 256; ++b) {
    const auto c = static_cast<unsigned char>(b);
    const bool letter = (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z');
    const int upper = b >= 'a' && b <= 'z' ? b - 'a' + 'A' : b;
    EXPECT_EQ(normalized_symbol(Alphabet::protein, c), letter || b == '*' ? upper : -1) << "byte " << b;
    EXPECT_EQ(normalized_symbol(Alphabet::byte, c), b == '\n' || b == '\r' ? -1 : b) << "byte " << b;
  }
}

TEST(Alphabet, SymbolMapCodes) {
  const SymbolMap protein(Alphabet::protein, {'*', 'A', 'M', 'W'});
  EXPECT_EQ(protein.size(), 4u);
  EXPECT_EQ(protein.code('*'), 1);
  EXPECT_EQ(protein.code('A'), 2);
  EXPECT_EQ(protein.code('a'), 2);
  EXPECT_EQ(protein.code('w'), 4);
  for (char c : std::string("BCz1\n\r-")) EXPECT_EQ(protein.code(c), 0) << c;
  EXPECT_EQ(protein.code('m'), 3);

  std::vector<std::uint8_t> all;
  for (char c : fmtest::all_record_bytes()) all.push_back(static_cast<std::uint8_t>(c));
  const SymbolMap bytes(Alphabet::byte, all);
  for (int b = 0; b < 256; ++b) {
    const int expected = b < '\n' ? b + 1 : b < '\r' ? (b == '\n' ? 0 : b) : (b == '\r' ? 0 : b - 1);
    EXPECT_EQ(bytes.code(static_cast<char>(b)), expected) << "byte " << b;
  }
  EXPECT_EQ(bytes.code('a') == bytes.code('A'), false) << "bytes keep their case";
}

}  // namespace
}  // namespace wtmap::fmindex
