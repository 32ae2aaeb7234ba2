// bam_block_writer.hpp (aligner/src): wtmap's own BGZF BAM writer against htslib's. The reference
// is htslib itself: the same header and records written by htslib (level 1) and by ours, both
// inflated by htslib's BGZF reader, must be the same bytes, in blocks that end at the same places.
// Every block is checked as a gzip member by zlib (its BSIZE, CRC-32 and ISIZE), whatever ISA-L
// made of it. (htslib 1.16's uncompressed BAM, mode "wbu", crashes in bgzf_compress: not used.)
#include <gtest/gtest.h>
#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/sam.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bam_block_writer.hpp"
#include "fm_support.hpp"

namespace wtmap::altest {
namespace {

using aligner::bgzf_block_ends;
using aligner::kBgzfBlockData;

struct RecordDeleter {
  void operator()(bam1_t* b) const { bam_destroy1(b); }
};
using Record = std::unique_ptr<bam1_t, RecordDeleter>;
struct HeaderDeleter {
  void operator()(sam_hdr_t* h) const { sam_hdr_destroy(h); }
};
using Header = std::unique_ptr<sam_hdr_t, HeaderDeleter>;

Header make_header(int contigs) {
  Header h(sam_hdr_init());
  EXPECT_EQ(sam_hdr_add_line(h.get(), "HD", "VN", "1.6", "SO", "unsorted", nullptr), 0);
  for (int c = 0; c < contigs; ++c) {
    const std::string name = "contig_" + std::to_string(c), length = std::to_string(1000 + 37 * c);
    EXPECT_EQ(sam_hdr_add_line(h.get(), "SQ", "SN", name.c_str(), "LN", length.c_str(), nullptr), 0);
  }
  EXPECT_EQ(sam_hdr_add_pg(h.get(), "wtmap", "VN", "test", nullptr), 0);
  return h;
}

// Record k of a set: names of 1 to 60 characters (every count of bam1_t's padding NULs), mapped
// with CIGARs of one to five operations or unmapped, some without qualities, tags of several
// types, and every `long_every`th one a read of `long_length` bases (over a block).
Record make_record(std::size_t k, std::mt19937_64& random, std::size_t long_every = 0, std::size_t long_length = 0) {
  Record b(bam_init1());
  const std::string name = "r" + std::to_string(k) + std::string(k % 60, 'x');
  const std::size_t length = long_every != 0 && k % long_every == long_every - 1 ? long_length : 20 + random() % 300;
  std::string seq(length, 'A'), qual(length, 0);
  for (std::size_t i = 0; i < length; ++i) {
    seq[i] = "ACGTN"[random() % 5];
    qual[i] = static_cast<char>(random() % 42);
  }
  const bool mapped = k % 5 != 2;
  std::vector<std::uint32_t> cigar;
  if (mapped && k % 3 == 0) {
    cigar = {bam_cigar_gen(3, BAM_CSOFT_CLIP), bam_cigar_gen(length - 5, BAM_CMATCH), bam_cigar_gen(2, BAM_CDEL),
             bam_cigar_gen(1, BAM_CINS), bam_cigar_gen(1, BAM_CSOFT_CLIP)};
  } else if (mapped) {
    cigar = {bam_cigar_gen(length, BAM_CMATCH)};
  }
  const int tid = mapped ? static_cast<int>(k % 3) : -1;
  const hts_pos_t pos = mapped ? static_cast<hts_pos_t>(random() % 900) : -1;
  EXPECT_GE(bam_set1(b.get(), name.size(), name.c_str(), mapped ? (k % 2 ? BAM_FREVERSE : 0) : BAM_FUNMAP, tid, pos,
                     static_cast<std::uint8_t>(k % 61), cigar.size(), cigar.data(), mapped ? tid : -1, pos, -static_cast<hts_pos_t>(k % 500),
                     length, seq.c_str(), k % 7 == 4 ? nullptr : qual.c_str(), 0),
            0);
  if (mapped) {
    EXPECT_EQ(bam_aux_update_int(b.get(), "NM", static_cast<std::int64_t>(k % 9)), 0);
    EXPECT_EQ(bam_aux_update_str(b.get(), "MD", -1, std::to_string(length).c_str()), 0);
    EXPECT_EQ(bam_aux_update_int(b.get(), "AS", -static_cast<std::int64_t>(k % 300)), 0);
  }
  if (k % 4 == 1) {
    const std::vector<std::int16_t> values{1, -2, 300, static_cast<std::int16_t>(k)};
    EXPECT_EQ(bam_aux_update_array(b.get(), "ZB", 's', values.size(), const_cast<std::int16_t*>(values.data())), 0);
  }
  return b;
}

std::vector<Record> make_records(std::size_t n, std::size_t long_every = 0, std::size_t long_length = 0) {
  std::mt19937_64 random(n * 7919 + long_every);
  std::vector<Record> records;
  for (std::size_t k = 0; k < n; ++k) records.push_back(make_record(k, random, long_every, long_length));
  return records;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// htslib's BAM of `header` and `records`, level 1.
void write_with_htslib(const std::string& path, sam_hdr_t* header, const std::vector<Record>& records) {
  samFile* out = sam_open(path.c_str(), "wb1");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(sam_hdr_write(out, header), 0);
  for (const Record& r : records) ASSERT_GE(sam_write1(out, header, r.get()), 0);
  ASSERT_EQ(sam_close(out), 0);
}

// Ours, the records handed over in batches of `batch` (0: all at once).
void write_with_ours(const std::string& path, sam_hdr_t* header, const std::vector<Record>& records, std::size_t batch) {
  aligner::BamBlockWriter writer(hopen(path.c_str(), "w"), path);
  Status s = writer.write_header(header);
  ASSERT_TRUE(s.ok()) << s.message();
  const std::size_t step = batch == 0 ? std::max<std::size_t>(records.size(), 1) : batch;
  for (std::size_t first = 0; first < records.size(); first += step) {
    std::vector<const bam1_t*> some;
    for (std::size_t i = first; i < std::min(records.size(), first + step); ++i) some.push_back(records[i].get());
    s = writer.write(some);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  s = writer.close();
  ASSERT_TRUE(s.ok()) << s.message();
}

// A BGZF file's bytes inflated by htslib.
std::string inflated_by_htslib(const std::string& path) {
  BGZF* in = bgzf_open(path.c_str(), "r");
  EXPECT_NE(in, nullptr);
  if (in == nullptr) return {};
  EXPECT_EQ(bgzf_check_EOF(in), 1) << "no end-of-file marker";
  std::string out;
  char buffer[1 << 16];
  for (ssize_t got; (got = bgzf_read(in, buffer, sizeof(buffer))) > 0;) out.append(buffer, static_cast<std::size_t>(got));
  EXPECT_EQ(bgzf_close(in), 0);
  return out;
}

// A BGZF block parsed and inflated by zlib: its uncompressed size, with every field checked.
struct Block {
  std::size_t compressed = 0, size = 0;
  bool stored = false;  // its deflate data is one stored block
};
std::vector<Block> parse_blocks(const std::string& file) {
  static const unsigned char kHeader[16] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0};
  std::vector<Block> blocks;
  for (std::size_t at = 0; at < file.size();) {
    EXPECT_GE(file.size() - at, 28u) << "a truncated block at " << at;
    if (file.size() - at < 28) break;
    EXPECT_EQ(std::memcmp(file.data() + at, kHeader, 16), 0) << "the block at " << at;
    std::uint16_t bsize = 0;
    std::uint32_t crc = 0, isize = 0;
    std::memcpy(&bsize, file.data() + at + 16, 2);
    const std::size_t length = std::size_t{bsize} + 1;
    EXPECT_LE(at + length, file.size());
    if (at + length > file.size()) break;
    std::memcpy(&crc, file.data() + at + length - 8, 4);
    std::memcpy(&isize, file.data() + at + length - 4, 4);
    std::string data(isize, '\0');
    z_stream z{};
    EXPECT_EQ(inflateInit2(&z, -15), Z_OK);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(file.data() + at + 18));
    z.avail_in = static_cast<uInt>(length - 26);
    z.next_out = reinterpret_cast<Bytef*>(data.data());
    z.avail_out = isize;
    EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END) << "the block at " << at;
    EXPECT_EQ(z.total_out, isize);
    EXPECT_EQ(z.avail_in, 0u) << "bytes after the deflate data of the block at " << at;
    inflateEnd(&z);
    EXPECT_EQ(crc32(0, reinterpret_cast<const Bytef*>(data.data()), isize), crc) << "the block at " << at;
    blocks.push_back({length, isize, (static_cast<unsigned char>(file[at + 18]) & 7) == 1});
    at += length;
  }
  return blocks;
}

// ---- where blocks end: closed forms --------------------------------------------------------------

TEST(BgzfBlockEnds, ARecordThatDoesNotFitStartsTheNextBlock) {
  using Ends = std::vector<std::size_t>;
  EXPECT_EQ(bgzf_block_ends(0, {}), Ends{});
  EXPECT_EQ(bgzf_block_ends(0, {100, 200}), Ends{});                              // all still open
  EXPECT_EQ(bgzf_block_ends(0, {kBgzfBlockData}), Ends{kBgzfBlockData});          // exactly full
  EXPECT_EQ(bgzf_block_ends(100, {kBgzfBlockData - 100}), Ends{kBgzfBlockData});  // fills the open one
  EXPECT_EQ(bgzf_block_ends(100, {kBgzfBlockData - 99}), Ends{100});              // one byte over
  EXPECT_EQ(bgzf_block_ends(0, {65000, 400, 500}), Ends{65000});
  // Longer than a block: cut every kBgzfBlockData bytes from where it starts.
  EXPECT_EQ(bgzf_block_ends(0, {3 * kBgzfBlockData + 5}), (Ends{kBgzfBlockData, 2 * kBgzfBlockData, 3 * kBgzfBlockData}));
  EXPECT_EQ(bgzf_block_ends(10, {2 * kBgzfBlockData}), (Ends{10, 10 + kBgzfBlockData, 10 + 2 * kBgzfBlockData}));
}

// ---- our files against htslib's ------------------------------------------------------------------

class BamBlockWriterAgainstHtslib : public ::testing::TestWithParam<std::size_t> {};

INSTANTIATE_TEST_SUITE_P(Aligner, BamBlockWriterAgainstHtslib, ::testing::Values(0, 1, 7, 1000),
                         [](const auto& info) { return "batch" + std::to_string(info.param); });

// 3000 records of 20-320 bases (some 2 MB, ~30 blocks), every 500th one of 100,000 bases.
TEST_P(BamBlockWriterAgainstHtslib, InflatedBytesAndBlockEndsAreHtslibs) {
  const fmtest::TempDir dir;
  const Header header = make_header(3);
  const std::vector<Record> records = make_records(3000, 500, 100000);
  write_with_htslib(dir.file("htslib.bam"), header.get(), records);
  write_with_ours(dir.file("ours.bam"), header.get(), records, GetParam());

  const std::string raw = inflated_by_htslib(dir.file("htslib.bam"));
  ASSERT_GT(raw.size(), 1500000u);
  ASSERT_EQ(raw.compare(0, 4, "BAM\1"), 0);
  const std::string ours = inflated_by_htslib(dir.file("ours.bam"));
  ASSERT_EQ(ours.size(), raw.size());
  EXPECT_TRUE(ours == raw) << "first difference at byte "
                           << std::mismatch(ours.begin(), ours.end(), raw.begin()).first - ours.begin();

  const std::vector<Block> theirs = parse_blocks(file_bytes(dir.file("htslib.bam")));
  const std::vector<Block> mine = parse_blocks(file_bytes(dir.file("ours.bam")));
  ASSERT_EQ(mine.size(), theirs.size());
  for (std::size_t i = 0; i < mine.size(); ++i) {
    EXPECT_EQ(mine[i].size, theirs[i].size) << "block " << i;
    EXPECT_LE(mine[i].compressed, aligner::kBgzfMaxBlock);
  }
  EXPECT_EQ(mine.back().size, 0u) << "the end-of-file marker";
}

// A header over several blocks (10^4 contigs) and no records.
TEST(BamBlockWriter, AHeaderOfManyBlocksAndNoRecords) {
  const fmtest::TempDir dir;
  const Header header = make_header(10000);
  write_with_htslib(dir.file("htslib.bam"), header.get(), {});
  write_with_ours(dir.file("ours.bam"), header.get(), {}, 0);
  EXPECT_TRUE(inflated_by_htslib(dir.file("ours.bam")) == inflated_by_htslib(dir.file("htslib.bam")));
  const std::vector<Block> theirs = parse_blocks(file_bytes(dir.file("htslib.bam")));
  const std::vector<Block> mine = parse_blocks(file_bytes(dir.file("ours.bam")));
  ASSERT_EQ(mine.size(), theirs.size());
  ASSERT_GT(mine.size(), 3u);
  for (std::size_t i = 0; i < mine.size(); ++i) EXPECT_EQ(mine[i].size, theirs[i].size) << "block " << i;
}

// Bytes deflate cannot shrink (a tag of 200,000 random bytes) go into stored blocks that still fit
// BGZF's 64 KiB, and read back.
TEST(BamBlockWriter, IncompressibleBytesAreStoredWithinABlock) {
  const fmtest::TempDir dir;
  const Header header = make_header(1);
  std::mt19937_64 random(5);
  std::vector<Record> records = make_records(3);
  std::vector<std::uint8_t> noise(200000);
  for (std::uint8_t& byte : noise) byte = static_cast<std::uint8_t>(random());
  ASSERT_EQ(bam_aux_update_array(records[1].get(), "ZN", 'C', noise.size(), noise.data()), 0);
  write_with_htslib(dir.file("htslib.bam"), header.get(), records);
  write_with_ours(dir.file("ours.bam"), header.get(), records, 0);
  EXPECT_TRUE(inflated_by_htslib(dir.file("ours.bam")) == inflated_by_htslib(dir.file("htslib.bam")));
  std::size_t stored = 0;
  for (const Block& b : parse_blocks(file_bytes(dir.file("ours.bam")))) {
    EXPECT_LE(b.compressed, aligner::kBgzfMaxBlock);
    stored += b.stored;
  }
  EXPECT_GE(stored, 2u) << "the noise fills three blocks; at least two whole ones cannot be deflated";
}

// What a BAM record cannot hold is refused, naming the read.
TEST(BamBlockWriter, RefusesWhatABamRecordCannotHold) {
  std::mt19937_64 random(1);
  Record far = make_record(0, random);
  far->core.pos = std::int64_t{1} << 31;
  Result<std::size_t> size = aligner::bam_record_size(*far);
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.status().message().find("read 'r0'"), std::string::npos) << size.status().message();

  Record mate_far = make_record(0, random);
  mate_far->core.mpos = std::int64_t{1} << 31;
  EXPECT_FALSE(aligner::bam_record_size(*mate_far).ok());

  Record many_ops(bam_init1());
  const std::size_t ops = 70000;
  std::vector<std::uint32_t> cigar(ops, bam_cigar_gen(1, BAM_CMATCH));
  const std::string seq(ops, 'A');
  ASSERT_GE(bam_set1(many_ops.get(), 4, "long", 0, 0, 0, 0, cigar.size(), cigar.data(), -1, -1, 0, seq.size(), seq.c_str(), nullptr, 0), 0);
  size = aligner::bam_record_size(*many_ops);
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.status().message().find("70000 CIGAR operations"), std::string::npos) << size.status().message();
  EXPECT_TRUE(aligner::bam_record_size(*make_record(1, random)).ok());
}

}  // namespace
}  // namespace wtmap::altest
