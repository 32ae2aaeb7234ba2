// SeqReader (seq_reader.hpp): the records read back are the records written -- FASTQ and
// multi-line FASTA, plain and gzip, LF and CRLF line ends -- with line ends placed on purpose
// at the edges of the chunks the reader inflates on its second thread (SeqReader::kChunkBytes):
// a line end as the last byte of a chunk, as the first byte of the next one (for CRLF: "\r" and
// "\n" in different chunks), and a header line cut in two. BGZF input (bgzip's blocked gzip,
// written here by htslib's own writer) is read with several inflate threads. Plain gzip: several
// members in one file, and every kind of damage.
#include <gtest/gtest.h>

#include <random>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "bgzf_support.hpp"
#include "fm_support.hpp"
#include "wtmap/aligner/seq_reader.hpp"

namespace wtmap::altest {
namespace {

using aligner::SeqReader;
using aligner::SeqRecord;

enum class Compression { plain, gzip, bgzf };

struct Format {
  bool fastq;
  bool crlf;
  Compression compression;
};

std::string format_name(const Format& f) {
  const char* compression[] = {"Plain", "Gzip", "Bgzf"};
  return std::string(f.fastq ? "Fastq" : "Fasta") + (f.crlf ? "Crlf" : "Lf") + compression[static_cast<int>(f.compression)];
}

// The bytes of a file and the records they hold, built record by record.
class FileBuilder {
 public:
  explicit FileBuilder(const Format& f) : format_(f), eol_(f.crlf ? "\r\n" : "\n") {}

  // A record of random length.
  void add_random() { add(next_name(), random_length(rng_)); }

  // Records of random length, then one whose last line end finishes exactly at byte `end`
  // (exclusive) of the file.
  void fill_to(std::uint64_t end) {
    while (bytes_.size() + 2000 < end) add_random();
    for (std::string name = next_name();; name += 'x') {  // a longer name fixes the parity
      for (std::uint64_t length = 1; length < 4000; ++length) {
        if (bytes_.size() + record_bytes(name, length) == end) return add(name, length);
        if (bytes_.size() + record_bytes(name, length) > end) break;
      }
    }
  }

  const std::string& bytes() const { return bytes_; }
  const std::vector<SeqRecord>& records() const { return records_; }

 private:
  static constexpr std::uint64_t kFastaWidth = 60;
  inline static const std::string kComment = " comment";  // after the name: not part of it

  std::string next_name() { return "read" + std::to_string(records_.size()); }

  std::uint64_t record_bytes(const std::string& name, std::uint64_t length) const {
    const std::uint64_t e = eol_.size(), header = 1 + name.size() + kComment.size() + e;
    if (format_.fastq) return header + length + e + 1 + e + length + e;
    return header + length + (length + kFastaWidth - 1) / kFastaWidth * e;
  }

  void add(const std::string& name, std::uint64_t length) {
    SeqRecord r;
    r.name = name;
    for (std::uint64_t i = 0; i < length; ++i) r.sequence += "ACGTNacgtRY"[rng_() % 11];
    bytes_ += (format_.fastq ? "@" : ">") + name + kComment + eol_;
    if (format_.fastq) {
      for (std::uint64_t i = 0; i < length; ++i) r.quality += static_cast<char>('!' + rng_() % 94);
      bytes_ += r.sequence + eol_ + "+" + eol_ + r.quality + eol_;
    } else {
      for (std::uint64_t i = 0; i < length; i += kFastaWidth) bytes_ += r.sequence.substr(i, kFastaWidth) + eol_;
    }
    records_.push_back(std::move(r));
  }

  Format format_;
  std::string eol_;
  std::string bytes_;
  std::vector<SeqRecord> records_;
  std::mt19937_64 rng_{12345};
  std::uniform_int_distribution<std::uint64_t> random_length{1, 400};
};

std::vector<SeqRecord> read_all(const std::string& path, unsigned threads = 1) {
  std::vector<SeqRecord> out;
  auto reader = SeqReader::open(path, threads);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return out;
  SeqRecord r;
  while (true) {
    auto got = reader->next(r);
    EXPECT_TRUE(got.ok()) << got.status().message();
    if (!got.ok() || !*got) break;
    out.push_back(r);
  }
  EXPECT_EQ(reader->records_read(), out.size());
  return out;
}

// The index of the first record that differs, or the shorter size; -1 when equal.
long first_difference(const std::vector<SeqRecord>& a, const std::vector<SeqRecord>& b) {
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i].name != b[i].name || a[i].sequence != b[i].sequence || a[i].quality != b[i].quality) return static_cast<long>(i);
  }
  return a.size() == b.size() ? -1 : static_cast<long>(std::min(a.size(), b.size()));
}

class SeqReaderFormats : public ::testing::TestWithParam<Format> {};

INSTANTIATE_TEST_SUITE_P(SeqReader, SeqReaderFormats,
                         ::testing::Values(Format{true, false, Compression::plain}, Format{true, false, Compression::gzip},
                                           Format{true, false, Compression::bgzf}, Format{true, true, Compression::plain},
                                           Format{true, true, Compression::gzip}, Format{true, true, Compression::bgzf},
                                           Format{false, false, Compression::plain}, Format{false, false, Compression::gzip},
                                           Format{false, false, Compression::bgzf}, Format{false, true, Compression::plain},
                                           Format{false, true, Compression::gzip}, Format{false, true, Compression::bgzf}),
                         [](const auto& info) { return format_name(info.param); });

TEST_P(SeqReaderFormats, RecordsAcrossChunkEdgesReadBackUnchanged) {
  const std::uint64_t chunk = SeqReader::kChunkBytes;
  FileBuilder file(GetParam());
  file.fill_to(chunk);          // a line end is the last byte of chunk 1
  file.fill_to(2 * chunk + 1);  // LF: "\n" opens chunk 3; CRLF: "\r" ends chunk 2, "\n" opens chunk 3
  file.fill_to(3 * chunk - 3);  // the next header line runs across the edge of chunks 3 and 4
  for (int i = 0; i < 100; ++i) file.add_random();
  ASSERT_EQ(file.bytes()[chunk - 1], '\n');
  ASSERT_EQ(file.bytes()[2 * chunk], '\n');
  ASSERT_EQ(file.bytes()[3 * chunk - 3], GetParam().fastq ? '@' : '>');

  fmtest::TempDir dir;
  const Compression compression = GetParam().compression;
  const std::string path = dir.file(compression == Compression::plain ? "reads.txt" : "reads.gz");
  switch (compression) {
    case Compression::plain: fmtest::write_file(path, file.bytes()); break;
    case Compression::gzip: fmtest::write_gzip(path, file.bytes()); break;
    case Compression::bgzf: write_bgzf(path, file.bytes()); break;
  }
  // Four inflate threads: used for BGZF, ignored for the others.
  const std::vector<SeqRecord> got = read_all(path, 4);
  EXPECT_EQ(got.size(), file.records().size());
  const long diff = first_difference(got, file.records());
  EXPECT_EQ(diff, -1) << "record " << diff + 1 << " differs";
}

TEST(SeqReader, LastLineWithoutLineEndIsRead) {
  fmtest::TempDir dir;
  fmtest::write_file(dir.file("r.fq"), "@a\nACGT\n+\nIIII\n@b\nGG\n+\nII");
  const std::vector<SeqRecord> got = read_all(dir.file("r.fq"));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].name, "b");
  EXPECT_EQ(got[1].sequence, "GG");
  EXPECT_EQ(got[1].quality, "II");
}

// A CRLF file whose last line has no line end: the '\r' goes as on every other line (found by
// tests/fuzz/fuzz_seq_reader: it stayed, and the last record failed or kept it).
TEST(SeqReader, LastCrlfLineWithoutLineEndLosesItsCarriageReturn) {
  fmtest::TempDir dir;
  fmtest::write_file(dir.file("r.fq"), "@a\r\nACGT\r\n+\r\nIIII\r");
  fmtest::write_file(dir.file("r.fa"), ">a\r\nAC\r\nGT\r");
  for (const char* name : {"r.fq", "r.fa"}) {
    const std::vector<SeqRecord> got = read_all(dir.file(name));
    ASSERT_EQ(got.size(), 1u) << name;
    EXPECT_EQ(got[0].sequence, "ACGT") << name;
    EXPECT_EQ(got[0].quality, name == std::string("r.fq") ? "IIII" : "") << name;
  }
  fmtest::write_file(dir.file("cr.fq"), "\r");
  EXPECT_TRUE(read_all(dir.file("cr.fq")).empty());
}

TEST(SeqReader, EmptyInputHasNoRecords) {
  fmtest::TempDir dir;
  fmtest::write_file(dir.file("empty.fq"), "");
  fmtest::write_gzip(dir.file("empty.fq.gz"), "");
  EXPECT_TRUE(read_all(dir.file("empty.fq")).empty());
  EXPECT_TRUE(read_all(dir.file("empty.fq.gz")).empty());
}

TEST(SeqReader, TruncatedRecordNamesFileAndRecordNumber) {
  fmtest::TempDir dir;
  const std::string path = dir.file("cut.fq");
  fmtest::write_file(path, "@a\nACGT\n+\nIIII\n@b\nACGT\n");
  auto reader = SeqReader::open(path);
  ASSERT_TRUE(reader.ok());
  SeqRecord r;
  ASSERT_TRUE(reader->next(r).ok());
  const auto second = reader->next(r);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find(path + ": record 2"), std::string::npos) << second.status().message();
}

TEST(SeqReader, MultiLineFastqIsNamedAsUnsupported) {
  fmtest::TempDir dir;
  const std::string wrapped = dir.file("wrapped.fq"), broken = dir.file("broken.fq");
  fmtest::write_file(wrapped, "@a\nACGT\nACGT\n+\nIIIIIIII\n");
  fmtest::write_file(broken, "@a\nACGT\n=\nIIII\n");
  auto reader = SeqReader::open(wrapped);
  ASSERT_TRUE(reader.ok());
  SeqRecord r;
  auto got = reader->next(r);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find(wrapped + ": record 1: "), std::string::npos) << got.status().message();
  EXPECT_NE(got.status().message().find("multi-line FASTQ is not supported"), std::string::npos) << got.status().message();
  reader = SeqReader::open(broken);
  ASSERT_TRUE(reader.ok());
  got = reader->next(r);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("missing the '+' separator line"), std::string::npos) << got.status().message();
}

TEST(SeqReader, ADirectoryIsNamedAsOne) {
  fmtest::TempDir dir;
  auto reader = SeqReader::open(dir.path().string());
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(reader.status().message().find("is a directory"), std::string::npos) << reader.status().message();
  reader = SeqReader::open(dir.file("missing.fq"));
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.status().message().find("No such file"), std::string::npos) << reader.status().message();
}

// ---- plain gzip (ISA-L's inflate, igzip_input.hpp) -------------------------------------------

// The bytes of a one-member gzip file holding `text`.
std::string gzip_bytes(const std::string& text) {
  fmtest::TempDir dir;
  fmtest::write_gzip(dir.file("member.gz"), text);
  return fmtest::read_file(dir.file("member.gz"));
}

// The status that stops reading `path` to its end: ok when every record reads.
Status read_to_end(const std::string& path) {
  auto reader = SeqReader::open(path);
  if (!reader.ok()) return reader.status();
  SeqRecord r;
  while (true) {
    auto got = reader->next(r);
    if (!got.ok()) return got.status();
    if (!*got) return {};
  }
}

// gzip writes `cat a.gz b.gz` files: members one after another, each with its own trailer. Cut
// points inside a line and inside a record, an empty member, and members spanning the 1 MiB
// input reads and the 4 MiB chunks.
TEST(SeqReaderGzip, ConcatenatedMembersReadAsOneFile) {
  FileBuilder file(Format{true, false, Compression::gzip});
  file.fill_to(SeqReader::kChunkBytes + 12345);
  const std::string& text = file.bytes();
  const std::vector<std::size_t> cuts = {0, 7, 7, 1000, text.size() / 2, text.size() - 3, text.size()};
  std::string bytes;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) bytes += gzip_bytes(text.substr(cuts[i], cuts[i + 1] - cuts[i]));
  fmtest::TempDir dir;
  fmtest::write_file(dir.file("members.fq.gz"), bytes);
  const std::vector<SeqRecord> got = read_all(dir.file("members.fq.gz"));
  EXPECT_EQ(got.size(), file.records().size());
  EXPECT_EQ(first_difference(got, file.records()), -1);
}

// Every damage to a gzip file stops the run with a message that names the file and says what
// is wrong, never with records made of garbage or a silent early end.
TEST(SeqReaderGzip, DamagedFilesAreErrorsThatSayWhy) {
  FileBuilder file(Format{true, false, Compression::gzip});
  for (int i = 0; i < 2000; ++i) file.add_random();
  const std::string good = gzip_bytes(file.bytes());
  ASSERT_GT(good.size(), 1000u);
  auto flipped = [&](std::size_t at) {
    std::string b = good;
    b[at] = static_cast<char>(b[at] ^ 0x55);
    return b;
  };
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"cut in the middle", good.substr(0, good.size() / 2), "truncated"},
      {"no trailer", good.substr(0, good.size() - 8), "truncated"},
      {"half a trailer", good.substr(0, good.size() - 3), "truncated"},
      {"CRC-32", flipped(good.size() - 8), "CRC-32"},
      {"length", flipped(good.size() - 1), "length mismatch"},
      {"deflate data", flipped(good.size() / 3), "gzip member 1"},
      {"bytes after the member", good + "not gzip at all", "gzip member 2"},
  };
  fmtest::TempDir dir;
  for (const auto& [what, bytes, expected] : cases) {
    SCOPED_TRACE(what);
    const std::string path = dir.file("bad.fq.gz");
    fmtest::write_file(path, bytes);
    const Status s = read_to_end(path);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(expected), std::string::npos) << s.message();
  }
}

// SequenceBytes::any (patterns for a byte-alphabet index): every byte a line can hold is kept
// verbatim -- digits, punctuation, blanks, NUL, bytes above 0x7f, a line that begins with '@' --
// while SequenceBytes::letters (the default) stops at the first of them naming the record.
TEST(SeqReader, AnyBytesKeepsSequencesVerbatim) {
  fmtest::TempDir dir;
  const std::string odd = std::string("a1 ;\t") + '\0' + "\xff\x80~";
  fmtest::write_file(dir.file("p.fa"), ">p1\n" + odd + "\n@2+\n>p2 x\nGATTACA\n");
  fmtest::write_file(dir.file("p.fq"), "@q1\n" + odd + "\n+\n" + std::string(odd.size(), 'I') + "\n");
  for (const auto& [file, expected] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"p.fa", {odd + "@2+", "GATTACA"}}, {"p.fq", {odd}}}) {
    SCOPED_TRACE(file);
    auto reader = SeqReader::open(dir.file(file), 1, aligner::SequenceBytes::any);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    std::vector<std::string> got;
    SeqRecord r;
    while (true) {
      auto next = reader->next(r);
      ASSERT_TRUE(next.ok()) << next.status().message();
      if (!*next) break;
      got.push_back(r.sequence);
    }
    EXPECT_EQ(got, expected);

    auto letters = SeqReader::open(dir.file(file));
    ASSERT_TRUE(letters.ok());
    const auto first = letters->next(r);
    ASSERT_FALSE(first.ok()) << "letters mode accepted '" << r.sequence << "'";
    EXPECT_NE(first.status().message().find("record 1"), std::string::npos) << first.status().message();
  }
}

// input_progress(): as parsing crosses each chunk, the records completed and the stored bytes
// through the chunk before; with records of R bytes the two agree to within two records, and at
// the end they are every record and the whole file (BGZF: all but its 28-byte end-of-file block,
// which holds no data). input_size() is the file's size.
TEST(SeqReader, InputProgressPairsRecordsWithTheBytesTheyCameFrom) {
  const std::string sequence(150, 'A');
  const std::string one = "@read\n" + sequence + "\n+\n" + std::string(150, 'I') + "\n";  // R bytes
  const std::size_t records = 3 * SeqReader::kChunkBytes / one.size();  // some three chunks
  std::string text;
  for (std::size_t i = 0; i < records; ++i) text += one;
  const fmtest::TempDir dir;
  for (Compression compression : {Compression::plain, Compression::gzip, Compression::bgzf}) {
    SCOPED_TRACE(static_cast<int>(compression));
    const std::string path = dir.file("progress" + std::to_string(static_cast<int>(compression)) + ".fq");
    switch (compression) {
      case Compression::plain: fmtest::write_file(path, text); break;
      case Compression::gzip: fmtest::write_gzip(path, text); break;
      case Compression::bgzf: write_bgzf(path, text); break;
    }
    const std::uint64_t size = fmtest::read_file(path).size();
    auto reader = SeqReader::open(path, 2);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    EXPECT_EQ(reader->input_size(), size);
    SeqRecord record;
    std::size_t read = 0, changes = 0;
    SeqReader::InputProgress last;
    while (true) {
      auto more = reader->next(record);
      ASSERT_TRUE(more.ok()) << more.status().message();
      if (!*more) break;
      ++read;
      const SeqReader::InputProgress p = reader->input_progress();
      ASSERT_LE(p.records, read);
      ASSERT_LE(p.bytes, size);
      if (p.records != last.records) ++changes;
      if (compression == Compression::plain && p.records > 0) {
        ASSERT_LE(p.records * one.size(), p.bytes);
        ASSERT_LT(p.bytes, (p.records + 2) * one.size());
      }
      last = p;
    }
    EXPECT_EQ(read, records);
    EXPECT_GE(changes, 2u) << "the progress moved at the chunk edges";
    const SeqReader::InputProgress end = reader->input_progress();
    EXPECT_EQ(end.records, records);
    EXPECT_EQ(end.bytes, compression == Compression::bgzf ? size - 28 : size);
  }
}

}  // namespace
}  // namespace wtmap::altest
