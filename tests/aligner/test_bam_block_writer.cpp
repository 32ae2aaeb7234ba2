// bam_block_writer.hpp (aligner/src): wtmap's own BGZF BAM writer against htslib's. The reference
// is htslib itself: the same header and records written by htslib (level 1) and by ours, both
// inflated by htslib's BGZF reader, must be the same bytes, in blocks that end at the same places.
// Every block is checked as a gzip member by zlib (its BSIZE, CRC-32 and ISIZE), whatever ISA-L
// made of it. (htslib 1.16's uncompressed BAM, mode "wbu", crashes in bgzf_compress: not used.)
#include <gtest/gtest.h>
#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/sam.h>
#include <htslib/thread_pool.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "bam_block_writer.hpp"
#include "fm_support.hpp"

namespace wtmap::altest {
namespace {


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
  const auto bases = static_cast<std::uint32_t>(length);
  if (mapped && k % 3 == 0) {
    cigar = {bam_cigar_gen(3u, BAM_CSOFT_CLIP), bam_cigar_gen(bases - 5, BAM_CMATCH), bam_cigar_gen(2u, BAM_CDEL),
             bam_cigar_gen(1u, BAM_CINS), bam_cigar_gen(1u, BAM_CSOFT_CLIP)};
  } else if (mapped) {
    cigar = {bam_cigar_gen(bases, BAM_CMATCH)};
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

struct PoolDeleter {
  void operator()(hts_tpool* p) const { hts_tpool_destroy(p); }
};

// Ours, the records handed over in batches of `batch` (0: all at once), the blocks deflated on
// the calling thread (threads 0) or on a pool of `threads` with two blocks queued at most (so
// that the writer waits for the pool again and again, and blocks come back out of order).
void write_with_ours(const std::string& path, sam_hdr_t* header, const std::vector<Record>& records, std::size_t batch,
                     int threads = 0) {
  std::unique_ptr<hts_tpool, PoolDeleter> pool(threads > 0 ? hts_tpool_init(threads) : nullptr);
  ASSERT_EQ(pool != nullptr, threads > 0);
  aligner::BamBlockWriter writer(hopen(path.c_str(), "w"), path, pool.get(), 2);
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

// ---- our files against htslib's ------------------------------------------------------------------

// (records a batch, pool threads)
class BamBlockWriterAgainstHtslib : public ::testing::TestWithParam<std::tuple<std::size_t, int>> {};

INSTANTIATE_TEST_SUITE_P(Aligner, BamBlockWriterAgainstHtslib,
                         ::testing::Combine(::testing::Values(0, 1, 7, 1000), ::testing::Values(0, 3)),
                         [](const auto& info) {
                           return "batch" + std::to_string(std::get<0>(info.param)) + "_threads" +
                                  std::to_string(std::get<1>(info.param));
                         });

std::size_t record_bytes(const bam1_t& b) {
  Result<std::size_t> size = aligner::bam_record_size(b);
  EXPECT_TRUE(size.ok());
  return size.ok() ? *size : 0;
}

// Ours and htslib's files of `records` (from header and records alike): the same bytes inflated,
// in blocks of the same sizes, each a valid BGZF block of at most 64 KiB; the last the end-of-file
// marker. Our blocks into `our_blocks` where given.
void expect_htslibs_bytes_and_blocks(sam_hdr_t* header, const std::vector<Record>& records, std::size_t batch, int threads,
                                     std::vector<Block>* our_blocks = nullptr) {
  const fmtest::TempDir dir;
  write_with_htslib(dir.file("htslib.bam"), header, records);
  write_with_ours(dir.file("ours.bam"), header, records, batch, threads);
  const std::string raw = inflated_by_htslib(dir.file("htslib.bam"));
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
  if (our_blocks != nullptr) *our_blocks = mine;
}

// 3000 records of 20-320 bases (some 1.9 MB, ~30 blocks), every 500th one of 100,000 bases.
TEST_P(BamBlockWriterAgainstHtslib, InflatedBytesAndBlockEndsAreHtslibs) {
  const auto [batch, threads] = GetParam();
  const Header header = make_header(3);
  const std::vector<Record> records = make_records(3000, 500, 100000);
  std::size_t bytes = 0;
  for (const Record& r : records) bytes += record_bytes(*r);
  ASSERT_GT(bytes, 1500000u);
  expect_htslibs_bytes_and_blocks(header.get(), records, batch, threads);
}

// One write of many blocks (more than the pool's queue in the threads' case) and no record longer
// than a block: some 9 MB, ~140 blocks.
TEST_P(BamBlockWriterAgainstHtslib, ManyBlocksInOneWriteAreHtslibs) {
  const auto [batch, threads] = GetParam();
  const Header header = make_header(3);
  const std::vector<Record> records = make_records(30000);
  std::size_t bytes = 0;
  for (const Record& r : records) bytes += record_bytes(*r);
  ASSERT_GT(bytes, 65u * aligner::kBgzfBlockData);
  expect_htslibs_bytes_and_blocks(header.get(), records, batch, threads);
}

// An unmapped record of `name_length` characters and `length` bases, no tags.
Record bare_record(std::size_t name_length, std::size_t length) {
  Record b(bam_init1());
  const std::string name(name_length, 'n'), seq(length, 'C');
  EXPECT_GE(bam_set1(b.get(), name.size(), name.c_str(), BAM_FUNMAP, -1, -1, 0, 0, nullptr, -1, -1, 0, seq.size(), seq.c_str(), nullptr, 0), 0);
  return b;
}

// A bare record of exactly `bytes` bytes in BAM (a name of 1-4 characters, the bases about two
// thirds of the bytes), or none.
Record bare_record_of_size(std::size_t bytes) {
  const std::size_t about = bytes * 2 / 3;
  for (std::size_t name = 1; name <= 4; ++name) {
    for (std::size_t length = about - 40; length < about + 40; ++length) {
      Record r = bare_record(name, length);
      if (record_bytes(*r) == bytes) return r;
    }
  }
  return nullptr;
}

// Two records that fill a block to its last byte, then one more: htslib ends the block after the
// second (full) record, and so must we, not before it; and a record of exactly a block's bytes.
TEST(BamBlockWriter, RecordsThatFillABlockExactly) {
  const Header header = make_header(1);
  std::vector<Record> records;
  records.push_back(bare_record(5, 1000));
  records.push_back(bare_record_of_size(aligner::kBgzfBlockData - record_bytes(*records[0])));
  ASSERT_NE(records.back(), nullptr) << "no record makes the block exactly full";
  records.push_back(bare_record(3, 50));
  records.push_back(bare_record_of_size(aligner::kBgzfBlockData));
  ASSERT_NE(records.back(), nullptr) << "no record of exactly a block";
  records.push_back(bare_record(3, 50));
  for (const int threads : {0, 2}) expect_htslibs_bytes_and_blocks(header.get(), records, 0, threads);
}

// A header over several blocks (10^4 contigs) and no records.
TEST(BamBlockWriter, AHeaderOfManyBlocksAndNoRecords) {
  const Header header = make_header(10000);
  std::vector<Block> mine;
  ASSERT_NO_FATAL_FAILURE(expect_htslibs_bytes_and_blocks(header.get(), {}, 0, 0, &mine));
  ASSERT_GT(mine.size(), 3u);
}

// Bytes deflate cannot shrink (a tag of 200,000 random bytes) go into stored blocks that still fit
// BGZF's 64 KiB, and read back.
TEST(BamBlockWriter, IncompressibleBytesAreStoredWithinABlock) {
  const Header header = make_header(1);
  std::mt19937_64 random(5);
  std::vector<Record> records = make_records(3);
  std::vector<std::uint8_t> noise(200000);
  for (std::uint8_t& byte : noise) byte = static_cast<std::uint8_t>(random());
  ASSERT_EQ(bam_aux_update_array(records[1].get(), "ZN", 'C', noise.size(), noise.data()), 0);
  std::vector<Block> mine;
  ASSERT_NO_FATAL_FAILURE(expect_htslibs_bytes_and_blocks(header.get(), records, 0, 2, &mine));
  std::size_t stored = 0;
  for (const Block& b : mine) stored += b.stored;
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
