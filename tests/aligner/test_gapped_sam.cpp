// sam_writer.hpp, gapped records: hand-made GappedReadAlignments (forward, reverse, soft clips,
// insertions and deletions, a chimeric read with supplementary hits on both strands, alternatives,
// an unmapped read, a read without qualities) written, read back through htslib and checked field
// by field against values worked out in the test from the reference: SEQ as the read or its reverse
// complement, cut to the aligned part where bwa mem hard-clips a supplementary line; NM and MD
// recomputed from the reference, CIGAR and SEQ as read back (an independent calmd); SA and XA as
// bwa mem spells them. Where samtools is installed, `samtools calmd -e` finds no NM or MD to change
// and `samtools view` parses the file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fm_support.hpp"
#include "gapped_sam_support.hpp"
#include "sam_readback.hpp"
#include "wtmap/aligner/pairing.hpp"
#include "wtmap/aligner/sam_writer.hpp"

namespace wtmap::altest {
namespace {

using aligner::SeqRecord;
using aligner::gapped::GappedHit;
using aligner::gapped::GappedReadAlignment;

const std::string kChr1 = pseudo_random_bases(400, 7);
const std::string kChr2 = pseudo_random_bases(200, 11);
const std::vector<fmtest::TestContig> kContigs = {{"chr1", kChr1}, {"chr2", kChr2}};

std::uint32_t op(std::uint32_t length, char code) {
  return bam_cigar_gen(length, std::string("MIDNSHP=X").find(code));
}

SeqRecord read_of(const std::string& name, const std::string& bases, bool with_quality = true) {
  SeqRecord r{name, bases, ""};
  for (std::size_t i = 0; with_quality && i < bases.size(); ++i) r.quality += static_cast<char>('#' + (i * 5) % 40);
  return r;
}

GappedHit hit(std::uint32_t contig, std::uint64_t position, std::uint64_t reference_length, bool reverse,
              std::vector<std::uint32_t> cigar, std::int32_t score, std::uint32_t nm, const std::string& md) {
  GappedHit h;
  h.contig = contig;
  h.position = position;
  h.reference_end = position + reference_length;
  h.reverse = reverse;
  h.cigar = std::move(cigar);
  h.score = score;
  h.edit_distance = nm;
  h.md = md;
  return h;
}

std::string reversed(std::string s) { return std::string(s.rbegin(), s.rend()); }

struct Case {
  std::vector<SeqRecord> reads;
  std::vector<GappedReadAlignment> alignments;
};

// The reads, each built from the reference so that its fields follow from how it was built.
Case cases() {
  Case c;
  // 0: exact, forward, chr1:51-80. XS from csub, the larger.
  c.reads.push_back(read_of("exact_forward", kChr1.substr(50, 30)));
  GappedReadAlignment a;
  a.mapped = true;
  a.primary = hit(0, 50, 30, false, {op(30, 'M')}, 30, 0, "30");
  a.mapq = 60;
  a.sub_score = 19;
  a.chain_sub_score = 21;
  c.alignments.push_back(a);
  // 1: reverse strand, soft clips, a 2-base insertion, a 3-base deletion, one mismatch. Along the
  // forward strand: 5 junk bases, chr1[100,110), "AC" inserted, chr1[110,120) with its base 115
  // changed, chr1[120,123) deleted, chr1[123,133), 3 junk bases; the read is its reverse complement.
  std::string mutated = kChr1.substr(110, 10);
  mutated[5] = mutated[5] == 'A' ? 'C' : 'A';
  const std::string forward = "NNTTT" + kChr1.substr(100, 10) + "AC" + mutated + kChr1.substr(123, 10) + "GGG";
  c.reads.push_back(read_of("reverse_indels", fmtest::revcomp(forward)));
  a = GappedReadAlignment{};
  a.mapped = true;
  a.primary = hit(0, 100, 33, true, {op(5, 'S'), op(10, 'M'), op(2, 'I'), op(10, 'M'), op(3, 'D'), op(10, 'M'), op(3, 'S')},
                  29 - 4 - (6 + 2) - (6 + 3), 6, "15" + kChr1.substr(115, 1) + "4^" + kChr1.substr(120, 3) + "10");
  a.mapq = 17;
  c.alignments.push_back(a);
  // 2: unmapped.
  c.reads.push_back(read_of("unmapped", "ACGTACGTACGTNNNN"));
  c.alignments.push_back(GappedReadAlignment{});
  // 3: chimeric, no qualities: chr1[200,230) + chr2[10,40) + revcomp(chr2[50,80)). The primary
  // and two supplementary hits, one on each strand; the reverse one's own MAPQ 7, the forward
  // one's 50, capped at the primary's 40.
  c.reads.push_back(read_of("chimeric", kChr1.substr(200, 30) + kChr2.substr(10, 30) + fmtest::revcomp(kChr2.substr(50, 30)), false));
  a = GappedReadAlignment{};
  a.mapped = true;
  a.primary = hit(0, 200, 30, false, {op(30, 'M'), op(60, 'S')}, 30, 0, "30");
  a.mapq = 40;
  a.supplementary.push_back(hit(1, 10, 30, false, {op(30, 'S'), op(30, 'M'), op(30, 'S')}, 30, 0, "30"));
  a.supplementary.back().mapq = 50;
  a.supplementary.push_back(hit(1, 50, 30, true, {op(30, 'M'), op(60, 'S')}, 30, 0, "30"));
  a.supplementary.back().mapq = 7;
  a.supplementary.back().sub_score = 23;  // its region's max(sub, csub): its XS
  c.alignments.push_back(a);
  // 4: a repeat with two alternatives: the read is chr2[100,130); alternatives on chr1 (one
  // mismatch, reverse) and chr2 (forward).
  c.reads.push_back(read_of("repeat", kChr2.substr(100, 30)));
  a = GappedReadAlignment{};
  a.mapped = true;
  a.primary = hit(1, 100, 30, false, {op(30, 'M')}, 30, 0, "30");
  a.sub_score = 30;
  a.alternatives.push_back(hit(0, 299, 30, true, {op(30, 'M')}, 25, 1, "12A17"));
  a.alternatives.push_back(hit(1, 4, 30, false, {op(2, 'S'), op(28, 'M')}, 28, 0, "28"));
  c.alignments.push_back(a);
  return c;
}

std::string write_cases(const fmtest::TempDir& dir, const std::string& name, bool soft_clip_supplementary) {
  aligner::SamOptions options;
  options.path = dir.file(name);
  options.threads = 2;
  options.read_group = "@RG\\tID:lane1\\tSM:s";
  options.soft_clip_supplementary = soft_clip_supplementary;
  auto writer = aligner::SamWriter::open(options, {{"chr1", kChr1.size()}, {"chr2", kChr2.size()}});
  EXPECT_TRUE(writer.ok()) << writer.status().message();
  const Case c = cases();
  // Two batches, the second with the chimeric read (records beyond one per read).
  const std::vector<SeqRecord> first_reads(c.reads.begin(), c.reads.begin() + 2), second_reads(c.reads.begin() + 2, c.reads.end());
  const std::vector<GappedReadAlignment> first(c.alignments.begin(), c.alignments.begin() + 2),
      second(c.alignments.begin() + 2, c.alignments.end());
  Status s = writer->write(first_reads, first);
  EXPECT_TRUE(s.ok()) << s.message();
  s = writer->write(second_reads, second);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(writer->finish().ok());
  return options.path;
}

// Every mapped record's NM and MD as recomputed from the reference, and its SEQ's length as its CIGAR's.
void expect_consistent_with_reference(const SamRecord& r) {
  if (r.flag & 4) return;
  SCOPED_TRACE(r.name + " flag " + std::to_string(r.flag));
  const MdTags md = recompute_md(kContigs[r.tid].sequence, r.pos, r.cigar, r.seq);
  EXPECT_EQ(r.nm, md.nm);
  EXPECT_EQ(r.md, md.md);
}

TEST(GappedSam, RecordsAsBwaMemWritesThem) {
  const fmtest::TempDir dir;
  const SamContents back = read_alignments(write_cases(dir, "out.bam", false));
  const Case c = cases();
  ASSERT_EQ(back.records.size(), 7u);  // 5 reads, 2 supplementary lines
  for (const SamRecord& r : back.records) {
    expect_consistent_with_reference(r);
    EXPECT_EQ(r.rg, "lane1");
  }

  const SamRecord& exact = back.records[0];
  EXPECT_EQ(exact.name, "exact_forward");
  EXPECT_EQ(exact.flag, 0);
  EXPECT_EQ(exact.tid, 0);
  EXPECT_EQ(exact.pos, 50);
  EXPECT_EQ(exact.mapq, 60);
  EXPECT_EQ(exact.cigar, "30M");
  EXPECT_EQ(exact.seq, kChr1.substr(50, 30));
  EXPECT_EQ(exact.qual, c.reads[0].quality);
  EXPECT_EQ(exact.nm, 0);
  EXPECT_EQ(exact.md, "30");
  EXPECT_EQ(exact.as, 30);
  EXPECT_EQ(exact.xs, 21);  // max(sub 19, csub 21), as bwa mem's XS
  EXPECT_FALSE(exact.sa || exact.xa || exact.x0 || exact.x1);

  const SamRecord& rev = back.records[1];
  EXPECT_EQ(rev.flag, 16);
  EXPECT_EQ(rev.pos, 100);
  EXPECT_EQ(rev.mapq, 17);
  EXPECT_EQ(rev.cigar, "5S10M2I10M3D10M3S");
  EXPECT_EQ(rev.seq, fmtest::revcomp(c.reads[1].sequence));  // the forward-strand bases built above
  EXPECT_EQ(rev.qual, reversed(c.reads[1].quality));
  EXPECT_EQ(rev.nm, 6);  // 1 mismatch + 2 inserted + 3 deleted
  EXPECT_EQ(rev.as, 8);
  EXPECT_EQ(rev.xs, 0) << "no other alignment: bwa writes XS:i:0";

  const SamRecord& unmapped = back.records[2];
  EXPECT_EQ(unmapped.flag, 4);
  EXPECT_EQ(unmapped.tid, -1);
  EXPECT_EQ(unmapped.cigar, "");
  EXPECT_EQ(unmapped.seq, "ACGTACGTACGTNNNN");
  EXPECT_FALSE(unmapped.nm || unmapped.md || unmapped.sa || unmapped.xa);
  EXPECT_EQ(unmapped.as, 0);  // bwa's unmapped record: score and sub 0, written
  EXPECT_EQ(unmapped.xs, 0);

  const std::string& chimeric = c.reads[3].sequence;
  const SamRecord& primary = back.records[3];
  EXPECT_EQ(primary.name, "chimeric");
  EXPECT_EQ(primary.flag, 0);
  EXPECT_EQ(primary.mapq, 40);
  EXPECT_EQ(primary.cigar, "30M60S");
  EXPECT_EQ(primary.seq, chimeric);
  EXPECT_EQ(primary.qual, "");
  EXPECT_EQ(primary.sa, "chr2,11,+,30S30M30S,40,0;chr2,51,-,30M60S,7,0;");
  const SamRecord& supp_forward = back.records[4];
  EXPECT_EQ(supp_forward.name, "chimeric");
  EXPECT_EQ(supp_forward.flag, 0x800);
  EXPECT_EQ(supp_forward.tid, 1);
  EXPECT_EQ(supp_forward.pos, 10);
  EXPECT_EQ(supp_forward.mapq, 40);  // its own 50, capped by the primary's
  EXPECT_EQ(supp_forward.cigar, "30H30M30H");
  EXPECT_EQ(supp_forward.seq, kChr2.substr(10, 30));
  EXPECT_EQ(supp_forward.as, 30);
  EXPECT_EQ(supp_forward.xs, 0);  // XS on a supplementary line too: its own region's
  EXPECT_FALSE(supp_forward.xa);
  EXPECT_EQ(supp_forward.sa, "chr1,201,+,30M60S,40,0;chr2,51,-,30M60S,7,0;");
  const SamRecord& supp_reverse = back.records[5];
  EXPECT_EQ(supp_reverse.flag, 0x800 | 16);
  EXPECT_EQ(supp_reverse.pos, 50);
  EXPECT_EQ(supp_reverse.mapq, 7);
  EXPECT_EQ(supp_reverse.xs, 23);
  EXPECT_EQ(supp_reverse.cigar, "30M60H");
  EXPECT_EQ(supp_reverse.seq, kChr2.substr(50, 30));
  EXPECT_EQ(supp_reverse.sa, "chr1,201,+,30M60S,40,0;chr2,11,+,30S30M30S,40,0;");

  const SamRecord& repeat = back.records[6];
  EXPECT_EQ(repeat.name, "repeat");
  EXPECT_EQ(repeat.mapq, 0);
  EXPECT_EQ(repeat.xs, 30);
  EXPECT_EQ(repeat.xa, "chr1,-300,30M,1;chr2,+5,2S28M,0;");
  EXPECT_FALSE(repeat.sa);
}

TEST(GappedSam, SoftClippedSupplementaryKeepsTheWholeRead) {  // -Y
  const fmtest::TempDir dir;
  const SamContents back = read_alignments(write_cases(dir, "out.sam", true));
  ASSERT_EQ(back.records.size(), 7u);
  const std::string chimeric = cases().reads[3].sequence;
  EXPECT_EQ(back.records[4].cigar, "30S30M30S");
  EXPECT_EQ(back.records[4].seq, chimeric);
  EXPECT_EQ(back.records[5].cigar, "30M60S");
  EXPECT_EQ(back.records[5].seq, fmtest::revcomp(chimeric));
  for (const SamRecord& r : back.records) expect_consistent_with_reference(r);
}

TEST(GappedSam, SamtoolsFindsNothingToRecompute) {
  if (std::system("samtools --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "samtools is not installed";
  const fmtest::TempDir dir;
  fmtest::write_file(dir.file("ref.fa"), fmtest::fasta_text(kContigs));
  for (const bool soft : {false, true}) {
    const std::string sam = write_cases(dir, soft ? "soft.sam" : "hard.sam", soft);
    const std::string log = dir.file("calmd.log");
    const std::string calmd = "samtools calmd -e " + fmtest::shell_quote(sam) + " " + fmtest::shell_quote(dir.file("ref.fa")) +
                              " > " + fmtest::shell_quote(dir.file("calmd.sam")) + " 2> " + fmtest::shell_quote(log);
    ASSERT_EQ(std::system(calmd.c_str()), 0) << fmtest::read_file(log);
    // calmd names every record whose NM or MD it would change ("different NM", "different MD").
    EXPECT_EQ(fmtest::read_file(log).find("different"), std::string::npos) << fmtest::read_file(log);
    const std::string view = "samtools view -c " + fmtest::shell_quote(sam) + " > " + fmtest::shell_quote(dir.file("count"));
    ASSERT_EQ(std::system(view.c_str()), 0);
    EXPECT_EQ(fmtest::read_file(dir.file("count")), "7\n");
  }
}

// A pair whose mate 1 is the chimeric read above (primary chr1:201 forward, supplementary lines
// chr2:11 forward and chr2:51 reverse) and mate 2 reverse on chr2 [100, 130): every line names
// mate 2's primary (RNEXT chr2, PNEXT 100, MC, MQ), as bwa mem's mem_reg2sam passes it to each
// line, and TLEN is measured from each line's own 5' end to mate 2's (130, a reverse read's end)
// by samtools fixmate's rule: 0 for the primary on another contig, 130 - 10 for the forward line,
// 130 - 80 for the reverse one (whose 5' end is its end, 80; bwa mem writes 51 here).
TEST(GappedSam, SupplementaryLinesOfAMateMeasureTlenFromThemselves) {
  const fmtest::TempDir dir;
  aligner::SamOptions options;
  options.path = dir.file("pair.bam");
  auto writer = aligner::SamWriter::open(options, {{"chr1", kChr1.size()}, {"chr2", kChr2.size()}});
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  const Case c = cases();
  const std::vector<SeqRecord> reads = {c.reads[3], read_of("chimeric", fmtest::revcomp(kChr2.substr(100, 30)))};
  std::vector<GappedReadAlignment> mates = {c.alignments[3], GappedReadAlignment{}};
  mates[1].mapped = true;
  mates[1].primary = hit(1, 100, 30, true, {op(30, 'M')}, 30, 0, "30");
  mates[1].mapq = 25;
  const aligner::WrittenMate written[2] = {{true, 0, 200, 230, false, 40, "30M60S"}, {true, 1, 100, 130, true, 25, "30M"}};
  aligner::MateFields fields[2];
  aligner::mate_fields(written, false, fields);
  ASSERT_TRUE(writer->write_pairs(reads, mates, {fields[0], fields[1]}).ok());
  ASSERT_TRUE(writer->finish().ok());
  const SamContents back = read_alignments(options.path);
  // The pair's primaries first, then mate 1's two supplementary lines (the order samtools fixmate
  // keeps).
  ASSERT_EQ(back.records.size(), 4u);
  const std::int64_t tlen[3] = {0, 130 - 10, 130 - 80};
  const int mate1_lines[3] = {0, 2, 3};
  for (int line = 0; line < 3; ++line) {
    const SamRecord& r = back.records[mate1_lines[line]];
    SCOPED_TRACE(line);
    EXPECT_EQ(r.flag & ~(0x800 | 0x10), 0x1 | 0x20 | 0x40);
    EXPECT_EQ(r.mate_tid, 1);
    EXPECT_EQ(r.mate_pos, 100);
    EXPECT_EQ(r.tlen, tlen[line]);
    EXPECT_EQ(r.mc, "30M");
    EXPECT_EQ(r.mq, 25);
  }
  EXPECT_EQ(back.records[0].flag & 0x800, 0);
  EXPECT_EQ(back.records[2].flag & 0x800, 0x800);
  EXPECT_EQ(back.records[3].flag & 0x810, 0x810);
  EXPECT_EQ(back.records[3].mapq, 7);  // its own MAPQ, as single-end
  EXPECT_EQ(back.records[1].flag & 0x880, 0x80);  // mate 2's primary
  EXPECT_EQ(back.records[1].tlen, 0);  // its mate's primary is on chr1
}

// bwa mem's mem_aln2sam places an unmapped mate at its mapped mate on that mate's strand: 0x10,
// SEQ reverse complemented and QUAL reversed (with and without qualities); the mapped mate's
// 0x20 is then its own strand; MQ:i:0 names the unmapped mate, and MC:Z:* its CIGAR (samtools
// fixmate's; bwa writes no MC there).
TEST(GappedSam, UnmappedMateTakesItsMatesStrand) {
  for (const bool with_quality : {true, false}) {
    SCOPED_TRACE(with_quality);
    const fmtest::TempDir dir;
    aligner::SamOptions options;
    options.path = dir.file("pair.bam");
    auto writer = aligner::SamWriter::open(options, {{"chr1", kChr1.size()}, {"chr2", kChr2.size()}});
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    const std::string lost = "ACGTTGCAAGGNCTTA";  // odd and even positions, an N
    const std::vector<SeqRecord> reads = {read_of("p", fmtest::revcomp(kChr2.substr(100, 30)), with_quality),
                                          read_of("p", lost, with_quality)};
    std::vector<GappedReadAlignment> mates = {GappedReadAlignment{}, GappedReadAlignment{}};
    mates[0].mapped = true;
    mates[0].primary = hit(1, 100, 30, true, {op(30, 'M')}, 30, 0, "30");
    mates[0].mapq = 25;
    const aligner::WrittenMate written[2] = {{true, 1, 100, 130, true, 25, "30M"}, {}};
    aligner::MateFields fields[2];
    aligner::mate_fields(written, false, fields);
    ASSERT_TRUE(writer->write_pairs(reads, mates, {fields[0], fields[1]}).ok());
    ASSERT_TRUE(writer->finish().ok());
    const SamContents back = read_alignments(options.path);
    ASSERT_EQ(back.records.size(), 2u);
    const SamRecord& mapped = back.records[0];
    const SamRecord& unmapped = back.records[1];
    EXPECT_EQ(mapped.flag, 0x1 | 0x8 | 0x10 | 0x20 | 0x40);
    EXPECT_EQ(unmapped.flag, 0x1 | 0x4 | 0x10 | 0x20 | 0x80);
    EXPECT_EQ(unmapped.tid, 1);
    EXPECT_EQ(unmapped.pos, 100);
    EXPECT_EQ(unmapped.seq, fmtest::revcomp(lost));
    std::string reversed = reads[1].quality;
    std::reverse(reversed.begin(), reversed.end());
    EXPECT_EQ(unmapped.qual, reversed);
    EXPECT_EQ(mapped.mq, 0);
    EXPECT_EQ(mapped.mc, "*");
    EXPECT_EQ(unmapped.mq, 25);
    EXPECT_EQ(unmapped.mc, "30M");
    EXPECT_EQ(mapped.mate_tid, 1);
    EXPECT_EQ(mapped.mate_pos, 100);
    EXPECT_EQ(mapped.tlen, 0);
    EXPECT_EQ(unmapped.tlen, 0);
  }
}

TEST(GappedSam, HitsTheOutputCannotWriteAreRefused) {
  const fmtest::TempDir dir;
  aligner::SamOptions options;
  options.path = dir.file("out.sam");
  auto writer = aligner::SamWriter::open(options, {{"chr1", kChr1.size()}});
  ASSERT_TRUE(writer.ok());
  const std::vector<SeqRecord> reads = {read_of("r", kChr1.substr(0, 20))};
  GappedReadAlignment a;
  a.mapped = true;
  a.primary = hit(1, 0, 20, false, {op(20, 'M')}, 20, 0, "20");  // no contig 1
  EXPECT_FALSE(writer->write(reads, {a}).ok());
  a.primary = hit(0, 0, 19, false, {op(19, 'M')}, 19, 0, "19");  // 19 of 20 bases
  EXPECT_FALSE(writer->write(reads, {a}).ok());
  a.primary = hit(0, 0, 20, false, {op(20, 'M')}, 20, 0, "20");
  a.alternatives.push_back(hit(0, 0, 20, false, {op(5, 'H'), op(15, 'M')}, 15, 0, "15"));  // H in a hit
  EXPECT_FALSE(writer->write(reads, {a}).ok());
  EXPECT_FALSE(writer->write(reads, std::vector<GappedReadAlignment>{}).ok()) << "one alignment per read";
}

}  // namespace
}  // namespace wtmap::altest
