// sam_writer.hpp: SamWriter's records read back through htslib, field by field, against the
// reads and alignments it was given; with and without records made ahead (reserve), fewer and
// more of them than a batch needs, and reads shorter and longer than the ones reserve sizes for;
// positions past 2^31 and 2^32, which only SAM holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fm_support.hpp"
#include "sam_readback.hpp"
#include "wtmap/aligner/sam_writer.hpp"

namespace wtmap::altest {
namespace {

using aligner::Placement;
using aligner::ReadAlignment;
using aligner::SeqRecord;

// A read of `length` bases cycling through ACGTN from `shift`, with quality characters cycling too.
SeqRecord make_read(const std::string& name, std::size_t length, std::size_t shift, bool with_quality) {
  SeqRecord r{name, "", ""};
  for (std::size_t i = 0; i < length; ++i) {
    r.sequence += "ACGTN"[(i + shift) % 5];
    if (with_quality) r.quality += static_cast<char>('!' + (i * 7 + shift) % 41);
  }
  return r;
}

ReadAlignment unique_hit(std::uint32_t contig, std::uint64_t position, bool reverse) {
  ReadAlignment a;
  a.mapped = true;
  a.best_count = 1;
  a.primary = Placement{contig, position, reverse, {}};
  return a;
}

struct Batch {
  std::vector<SeqRecord> reads;
  std::vector<ReadAlignment> alignments;
};

// Two batches: unmapped, forward, reverse and repeat reads of 10 to 400 bases, one without
// qualities (FASTA), one with an alternative hit (XA).
std::vector<Batch> batches() {
  Batch first, second;
  first.reads = {make_read("short", 10, 0, true), make_read("placeholder_length", 150, 1, true),
                 make_read("unmapped", 151, 2, true), make_read("long_reverse", 400, 3, true)};
  first.alignments = {unique_hit(0, 5, false), unique_hit(1, 100, false), ReadAlignment{}, unique_hit(0, 300, true)};
  for (int i = 0; i < 6; ++i) {
    second.reads.push_back(make_read("second" + std::to_string(i), 40 + 60 * i, i, i != 2));
    ReadAlignment a = i == 4 ? ReadAlignment{} : unique_hit(i % 2, 10 * i, i % 3 == 1);
    if (i == 3) {  // a repeat: two best hits, the other one listed
      a.best_count = 2;
      a.alternatives.push_back(Placement{1, 7, true, {}});
    }
    second.alignments.push_back(a);
  }
  return {first, second};
}

void expect_record(const SamRecord& got, const SeqRecord& read, const ReadAlignment& a) {
  SCOPED_TRACE("read " + read.name);
  EXPECT_EQ(got.name, read.name);
  const std::size_t len = read.sequence.size();
  if (!a.mapped) {
    EXPECT_EQ(got.flag, 4);
    EXPECT_EQ(got.tid, -1);
    EXPECT_EQ(got.cigar, "");
    EXPECT_EQ(got.seq, read.sequence);
    EXPECT_EQ(got.qual, read.quality);
    EXPECT_FALSE(got.nm || got.x0 || got.x1 || got.md || got.xa) << "tags on an unmapped read";
    return;
  }
  const bool reverse = a.primary.reverse;
  EXPECT_EQ(got.flag, reverse ? 16 : 0);
  EXPECT_EQ(got.tid, static_cast<int>(a.primary.contig));
  EXPECT_EQ(got.pos, static_cast<std::int64_t>(a.primary.position));
  EXPECT_EQ(got.cigar, std::to_string(len) + "M");
  EXPECT_EQ(got.seq, reverse ? fmtest::revcomp(read.sequence) : read.sequence);
  std::string qual = read.quality;
  if (reverse) std::reverse(qual.begin(), qual.end());
  EXPECT_EQ(got.qual, qual);
  EXPECT_EQ(got.mapq, a.best_count == 1 ? 37 : 0);  // unique, no mismatches, no second-best hits
  EXPECT_EQ(got.nm, 0);
  EXPECT_EQ(got.md, std::to_string(len));
  EXPECT_EQ(got.x0, static_cast<std::int64_t>(a.best_count));
  EXPECT_EQ(got.x1, 0);
  EXPECT_EQ(got.xa.has_value(), !a.alternatives.empty());
}

// The records read back are the batches' reads, in order, each as expect_record has it, and no more.
void expect_records_as_written(const SamContents& back, const std::vector<Batch>& written) {
  std::size_t r = 0;
  for (const Batch& b : written) {
    for (std::size_t i = 0; i < b.reads.size(); ++i, ++r) {
      ASSERT_LT(r, back.records.size());
      expect_record(back.records[r], b.reads[i], b.alignments[i]);
    }
  }
  EXPECT_EQ(back.records.size(), r);
}

// Reserved records (none, fewer and more than a batch needs), and BAM written by htslib (its
// default level) or by wtmap's own BGZF writer (level 1).
class SamWriterReserve : public ::testing::TestWithParam<std::tuple<std::size_t, int>> {};

INSTANTIATE_TEST_SUITE_P(Aligner, SamWriterReserve, ::testing::Combine(::testing::Values(0, 3, 64), ::testing::Values(-1, 1)),
                         [](const auto& info) {
                           const int level = std::get<1>(info.param);
                           return "reserve" + std::to_string(std::get<0>(info.param)) +
                                  (level < 0 ? std::string("_htslib") : "_level" + std::to_string(level));
                         });

TEST_P(SamWriterReserve, RecordsReadBackAsWritten) {
  const auto [reserve, level] = GetParam();
  const fmtest::TempDir dir;
  aligner::SamOptions options;
  options.path = dir.file("out.bam");
  options.threads = 2;
  options.compression_level = level;
  auto writer = aligner::SamWriter::open(options, {{"chr1", 1000}, {"chr2", 500}});
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  if (reserve > 0) {
    ASSERT_TRUE(writer->reserve(reserve).ok());
  }
  const std::vector<Batch> written = batches();
  for (const Batch& b : written) {
    const Status s = writer->write(b.reads, b.alignments);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  ASSERT_TRUE(writer->finish().ok());

  const SamContents back = read_alignments(options.path);
  ASSERT_NO_FATAL_FAILURE(expect_records_as_written(back, written));
}

// Output made on threads with more work at once than the queues hold (SamWriter queues 512 BAM
// blocks of 64 KiB, or 64 SAM jobs of 1000 records): two batches of 30,000 reads of 400 bases,
// some 40 MB of BAM records and 60 MB of SAM text, read back in order through htslib.
TEST(SamWriterThreads, BatchesOfMoreThanTheQueueHoldsReadBackInOrder) {
  std::vector<Batch> written(2);
  for (std::size_t b = 0; b < written.size(); ++b) {
    for (std::size_t i = 0; i < 30000; ++i) {
      const std::size_t k = b * 30000 + i;
      written[b].reads.push_back(make_read("r" + std::to_string(k), 400, k % 5, true));
      written[b].alignments.push_back(k % 7 == 3 ? ReadAlignment{} : unique_hit(k % 2, k % 600, k % 3 == 1));
    }
  }
  // BAM at level 1 is written by wtmap's own BGZF writer, at the other levels by htslib.
  const std::vector<std::pair<const char*, int>> outputs{{"out.bam", 1}, {"out.bam", 6}, {"out.sam", 1}, {"out.sam.gz", 1}};
  for (const auto& [name, level] : outputs) {
    SCOPED_TRACE(std::string(name) + " level " + std::to_string(level));
    const fmtest::TempDir dir;
    aligner::SamOptions options;
    options.path = dir.file(name);
    options.threads = 2;
    options.compression_level = level;
    auto writer = aligner::SamWriter::open(options, {{"chr1", 1000}, {"chr2", 1000}});
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    for (const Batch& b : written) ASSERT_TRUE(writer->write(b.reads, b.alignments).ok());
    ASSERT_TRUE(writer->finish().ok());
    ASSERT_NO_FATAL_FAILURE(expect_records_as_written(read_alignments(options.path), written));
  }
}

// CRAM: the records read back as written (against the reference given); a reference whose
// contigs are not the output's is refused before any file is made (prepare_cram_reference).
TEST(SamWriterCram, RecordsReadBackAndAMismatchedReferenceMakesNothing) {
  const fmtest::TempDir dir;
  const std::string reference = dir.file("ref.fa");
  fmtest::RandomReferenceSpec spec;
  spec.contigs = 2;
  spec.min_length = 500;
  spec.max_length = 1000;
  std::vector<fmtest::TestContig> contigs = fmtest::random_reference(spec);
  contigs[0].name = "chr1";
  contigs[1].name = "chr2";
  fmtest::write_file(reference, fmtest::fasta_text(contigs, 60));
  const std::vector<fmindex::Contig> sq = {{"chr1", contigs[0].sequence.size()}, {"chr2", contigs[1].sequence.size()}};
  aligner::SamOptions options;
  options.path = dir.file("out.cram");
  options.reference = reference;
  options.threads = 2;
  auto writer = aligner::SamWriter::open(options, sq);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  const std::vector<Batch> written = batches();
  for (const Batch& b : written) ASSERT_TRUE(writer->write(b.reads, b.alignments).ok());
  ASSERT_TRUE(writer->finish().ok());
  const SamContents back = read_alignments(options.path, reference);
  ASSERT_NO_FATAL_FAILURE(expect_records_as_written(back, written));

  const std::vector<std::string> before = dir.entries();  // ref.fa, its .fai, out.cram
  options.path = dir.file("other.cram");
  auto refused = aligner::SamWriter::open(options, {{"chr1", contigs[0].sequence.size() + 1}, sq[1]});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), reference + " does not match the index (give the FASTA the index was built from): contig chr1 has " +
                                            std::to_string(contigs[0].sequence.size()) + " bases there, " +
                                            std::to_string(contigs[0].sequence.size() + 1) + " in the index");
  EXPECT_EQ(dir.entries(), before);
}

// -R lines SAM cannot hold are refused before anything is written: a newline would inject header
// lines (issue 23), a literal tab is refused as bwa does, other control bytes and an empty ID make
// an invalid header or RG tag. The message names the rule.
TEST(SamWriterReadGroup, RefusesLinesSamCannotHold) {
  const fmtest::TempDir dir;
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"@RG\\tID:a\n@CO\\tinjected", "line break"},
      {"@RG\\tID:a\r", "line break"},
      {"@RG\tID:a", "literal tab"},
      {"@RG\\tID:a\x01" "b", "byte 1"},
      {"@RG\\tID:a\xc3\xa9", "byte 195"},
      {"@RG\\tID:\\tSM:s", "-R must look like"},
      {"@RG\\tSM:s", "-R must look like"},
      {"RG\\tID:a", "-R must look like"}};
  for (const auto& [line, why] : refused) {
    aligner::SamOptions options;
    options.path = dir.file("out.sam");
    options.read_group = line;
    auto writer = aligner::SamWriter::open(options, {{"chr1", 100}});
    ASSERT_FALSE(writer.ok()) << "accepted -R " << line;
    EXPECT_NE(writer.status().message().find(why), std::string::npos) << writer.status().message();
    EXPECT_TRUE(dir.entries().empty()) << "a file is left behind after refusing " << line;
  }
}

TEST(SamWriterReadGroup, TheLineAndItsIdReadBack) {
  const fmtest::TempDir dir;
  aligner::SamOptions options;
  options.path = dir.file("out.sam");
  options.read_group = "@RG\\tSM:s 1\\tID:g~1\\tPL:ILLUMINA";
  auto writer = aligner::SamWriter::open(options, {{"chr1", 100}});
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  ASSERT_TRUE(writer->write({make_read("r", 12, 0, true)}, {ReadAlignment{}}).ok());
  ASSERT_TRUE(writer->finish().ok());
  const SamContents back = read_alignments(options.path);
  EXPECT_NE(back.header.find("\n@RG\tSM:s 1\tID:g~1\tPL:ILLUMINA\n"), std::string::npos) << back.header;
  ASSERT_EQ(back.records.size(), 1u);
  EXPECT_EQ(back.records[0].rg, "g~1");
}

// The format follows -O where given, else the path: .bam BAM, .cram CRAM (given a reference), SAM
// to .gz or .bgz BGZF-compressed (the format then from the name before it), "-" SAM; unknown
// names, CRAM without a reference and a reference without CRAM refused.
TEST(SamWriterFormat, FollowsTheOptionThenThePath) {
  using aligner::SamFormat;
  struct Case {
    const char* path;
    const char* format;
    SamFormat expected;
  };
  for (const Case& c : {Case{"-", "", SamFormat::sam}, Case{"x.sam", "", SamFormat::sam}, Case{"x", "", SamFormat::sam},
                        Case{"x.bam", "", SamFormat::bam}, Case{"X.BAM", "", SamFormat::bam},
                        Case{"x.sam.gz", "", SamFormat::sam_bgzf}, Case{"x.gz", "", SamFormat::sam_bgzf},
                        Case{"x.sam.bgz", "", SamFormat::sam_bgzf}, Case{"x.bam.gz", "", SamFormat::bam},
                        Case{"-", "bam", SamFormat::bam}, Case{"x.sam", "bam", SamFormat::bam},
                        Case{"x.bam", "sam", SamFormat::sam}, Case{"x.bam.gz", "sam", SamFormat::sam_bgzf},
                        Case{"x.gzip", "", SamFormat::sam}}) {
    aligner::SamOptions options;
    options.path = c.path;
    options.format = c.format;
    const Result<SamFormat> format = aligner::sam_format(options);
    ASSERT_TRUE(format.ok()) << c.path << " " << c.format << ": " << format.status().message();
    EXPECT_EQ(format.value(), c.expected) << c.path << " " << c.format;
    EXPECT_EQ(aligner::requested_format(options), c.expected == SamFormat::bam ? "bam" : "sam") << c.path << " " << c.format;
  }
  for (const Case& c : {Case{"x.cram", "", SamFormat::cram}, Case{"X.CRAM", "", SamFormat::cram},
                        Case{"x.CRAM.gz", "", SamFormat::cram}, Case{"x.bam", "cram", SamFormat::cram},
                        Case{"-", "cram", SamFormat::cram}, Case{"x.cram", "bam", SamFormat::bam}}) {
    aligner::SamOptions options;
    options.path = c.path;
    options.format = c.format;
    options.reference = c.expected == SamFormat::cram ? "ref.fa" : "";
    const Result<SamFormat> format = aligner::sam_format(options);
    ASSERT_TRUE(format.ok()) << c.path << " " << c.format << ": " << format.status().message();
    EXPECT_EQ(format.value(), c.expected) << c.path << " " << c.format;
  }
  struct Refused {
    const char *path, *format, *reference, *message;
  };
  for (const Refused& c : {Refused{"-", "json", "", "the output format must be SAM, BAM or CRAM, not 'json'"},
                           Refused{"x.cram", "", "", "CRAM output needs the reference FASTA it is encoded against: give "
                                                     "--reference FILE (an index does not record its FASTA; -x FILE.fa names it)"},
                           Refused{"x.bam", "cram", "", "CRAM output needs the reference FASTA it is encoded against: give "
                                                        "--reference FILE (an index does not record its FASTA; -x FILE.fa names it)"},
                           Refused{"x.bam", "", "ref.fa", "--reference is the reference of CRAM output, and the output is BAM "
                                                          "(-O cram or -o FILE.cram writes CRAM)"},
                           Refused{"x.cram", "sam", "ref.fa", "--reference is the reference of CRAM output, and the output is SAM "
                                                              "(-O cram or -o FILE.cram writes CRAM)"}}) {
    aligner::SamOptions options;
    options.path = c.path;
    options.format = c.format;
    options.reference = c.reference;
    EXPECT_EQ(aligner::sam_format(options).status().message(), c.message) << c.path << " " << c.format;
  }
}

// BAM and CRAM positions are signed 32-bit (SAM spec 4.2): a contig of 2^31 bases or more is
// refused for them, naming the contig and saying to write SAM; one base less passes; SAM and
// BGZF SAM take any length.
TEST(SamWriterPositions, AContigOf2To31BasesFitsSamOnly) {
  using aligner::SamFormat;
  const std::uint64_t limit = std::uint64_t{1} << 31;
  const std::vector<fmindex::Contig> big = {{"a", 100}, {"big", limit}, {"bigger", limit << 3}};
  EXPECT_EQ(aligner::check_contigs_fit(SamFormat::bam, big).message(),
            "BAM cannot hold contig big of 2147483648 bases (BAM and CRAM positions end at 2^31): write SAM (-o FILE.sam or FILE.sam.gz)");
  EXPECT_EQ(aligner::check_contigs_fit(SamFormat::cram, big).message(),
            "CRAM cannot hold contig big of 2147483648 bases (BAM and CRAM positions end at 2^31): write SAM (-o FILE.sam or FILE.sam.gz)");
  for (SamFormat f : {SamFormat::sam, SamFormat::sam_bgzf}) EXPECT_TRUE(aligner::check_contigs_fit(f, big).ok());
  for (SamFormat f : {SamFormat::sam, SamFormat::sam_bgzf, SamFormat::bam, SamFormat::cram}) {
    EXPECT_TRUE(aligner::check_contigs_fit(f, {{"a", limit - 1}}).ok());
  }
}

// The writer itself refuses such a BAM before it makes any file.
TEST(SamWriterPositions, BamOfALongerContigMakesNoFile) {
  const fmtest::TempDir dir;
  aligner::SamOptions options;
  options.path = dir.file("out.bam");
  const auto writer = aligner::SamWriter::open(options, {{"chr1", 1000}, {"long", (std::uint64_t{1} << 31) + 1}});
  EXPECT_EQ(writer.status().message(),
            "BAM cannot hold contig long of 2147483649 bases (BAM and CRAM positions end at 2^31): write SAM (-o FILE.sam or FILE.sam.gz)");
  EXPECT_TRUE(dir.entries().empty());
}

// SAM holds 64-bit positions: hits past 2^31 and 2^32 on a contig of 5*10^9 bases, on both
// strands, plain and BGZF, read back through htslib where they were written, @SQ's LN too.
TEST(SamWriterPositions, SamHoldsPositionsPast2To32) {
  const fmtest::TempDir dir;
  const std::uint64_t length = 5'000'000'000;
  const std::vector<std::uint64_t> positions = {(std::uint64_t{1} << 31) - 1, std::uint64_t{1} << 31, (std::uint64_t{1} << 32) + 77,
                                                length - 150};
  Batch batch;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    batch.reads.push_back(make_read("far" + std::to_string(i), 150, i, true));
    batch.alignments.push_back(unique_hit(1, positions[i], i % 2 == 1));
  }
  for (const char* name : {"out.sam", "out.sam.gz"}) {
    aligner::SamOptions options;
    options.path = dir.file(name);
    auto writer = aligner::SamWriter::open(options, {{"chr1", 1000}, {"far", length}});
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    ASSERT_TRUE(writer->write(batch.reads, batch.alignments).ok());
    ASSERT_TRUE(writer->finish().ok());
    const SamContents back = read_alignments(options.path);
    ASSERT_EQ(back.targets.size(), 2u);
    EXPECT_EQ(back.targets[1].second, static_cast<std::int64_t>(length));
    ASSERT_NO_FATAL_FAILURE(expect_records_as_written(back, {batch}));
  }
}

}  // namespace
}  // namespace wtmap::altest
