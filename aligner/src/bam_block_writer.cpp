#include "bam_block_writer.hpp"

#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

namespace wtmap::aligner {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "BAM's integers are little-endian; the writer copies them as the host holds them");

// A BGZF block's gzip header (SAM spec 4.1: ID1 ID2 CM FLG, MTIME, XFL, OS, XLEN, the "BC"
// subfield of two bytes), then BSIZE; after the deflated data CRC32 and ISIZE.
constexpr unsigned char kBgzfHeader[16] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0};
constexpr std::size_t kBgzfHeaderSize = sizeof(kBgzfHeader) + 2;
constexpr std::size_t kBgzfFooterSize = 8;
// The end-of-file marker: an empty block (SAM spec 4.1.2).
constexpr unsigned char kBgzfEof[28] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0,
                                        0x1b, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0};

void put_u16(char* out, std::uint16_t v) { std::memcpy(out, &v, 2); }
void put_u32(char* out, std::uint32_t v) { std::memcpy(out, &v, 4); }
void put_i32(char* out, std::int32_t v) { std::memcpy(out, &v, 4); }

// The read name as bam1_t holds it: NUL-terminated, then l_extranul NULs of padding.
std::size_t name_bytes(const bam1_t& b) { return b.core.l_qname - b.core.l_extranul; }

// `size` bytes in one deflate block of type 0 (stored; RFC 1951, 3.2.4): what htslib too falls
// back to where deflating would not fit a block.
std::size_t store(const char* data, std::size_t size, char* out) {
  out[0] = 1;  // BFINAL, BTYPE 00, the rest of the byte padding
  put_u16(out + 1, static_cast<std::uint16_t>(size));
  put_u16(out + 3, static_cast<std::uint16_t>(~size));
  std::memcpy(out + 5, data, size);
  return size + 5;
}

}  // namespace

Result<std::size_t> bam_record_size(const bam1_t& b) {
  const bam1_core_t& c = b.core;
  const char* name = bam_get_qname(&b);
  if (c.pos > INT32_MAX || c.mpos > INT32_MAX || c.isize < INT32_MIN || c.isize > INT32_MAX) {
    return invalid_argument(std::string("read '") + name + "': a position past 2^31 - 1, which BAM cannot hold");
  }
  if (c.n_cigar > 0xffff) {
    return invalid_argument(std::string("read '") + name + "': " + std::to_string(c.n_cigar) +
                            " CIGAR operations, more than a BAM record holds");
  }
  if (name_bytes(b) > 255 || c.l_qname > static_cast<std::uint32_t>(b.l_data)) {
    return invalid_argument(std::string("read '") + name + "': the record's name is not one BAM can hold");
  }
  return 4 + 32 + name_bytes(b) + static_cast<std::size_t>(b.l_data - c.l_qname);
}

void put_bam_record(const bam1_t& b, char* out) {
  const bam1_core_t& c = b.core;
  const std::size_t rest = static_cast<std::size_t>(b.l_data - c.l_qname);
  put_u32(out, static_cast<std::uint32_t>(32 + name_bytes(b) + rest));
  put_i32(out + 4, c.tid);
  put_i32(out + 8, static_cast<std::int32_t>(c.pos));
  out[12] = static_cast<char>(name_bytes(b));
  out[13] = static_cast<char>(c.qual);
  put_u16(out + 14, c.bin);
  put_u16(out + 16, static_cast<std::uint16_t>(c.n_cigar));
  put_u16(out + 18, c.flag);
  put_i32(out + 20, c.l_qseq);
  put_i32(out + 24, c.mtid);
  put_i32(out + 28, static_cast<std::int32_t>(c.mpos));
  put_i32(out + 32, static_cast<std::int32_t>(c.isize));
  std::memcpy(out + 36, b.data, name_bytes(b));
  std::memcpy(out + 36 + name_bytes(b), b.data + c.l_qname, rest);
}

Result<std::string> bam_header_bytes(sam_hdr_t* header) {
  const char* text = sam_hdr_str(header);
  const std::size_t text_size = sam_hdr_length(header);
  if (text == nullptr && text_size != 0) return invalid_argument("the SAM header cannot be made into text");
  if (text_size > INT32_MAX) return invalid_argument("a SAM header of 2 GiB or more, which BAM cannot hold");
  const int references = sam_hdr_nref(header);
  std::string out("BAM\1", 4);
  char field[4];
  auto put_int = [&](std::int64_t v) {
    put_i32(field, static_cast<std::int32_t>(v));
    out.append(field, 4);
  };
  put_int(static_cast<std::int64_t>(text_size));
  out.append(text, text_size);
  put_int(references);
  for (int i = 0; i < references; ++i) {
    const char* name = sam_hdr_tid2name(header, i);
    const std::size_t length = std::strlen(name) + 1;
    put_int(static_cast<std::int64_t>(length));
    out.append(name, length);
    put_int(sam_hdr_tid2len(header, i));
  }
  return out;
}

std::size_t deflate_bgzf_block(const char* data, std::size_t size, char* out) {
  // ISA-L's level 1 wants a buffer of its own (hash tables and tokens, ~276 KiB): one a thread.
  thread_local std::vector<std::uint8_t> level_buffer(ISAL_DEF_LVL1_DEFAULT);
  isal_zstream z;
  isal_deflate_stateless_init(&z);
  z.level = 1;
  z.level_buf = level_buffer.data();
  z.level_buf_size = static_cast<std::uint32_t>(level_buffer.size());
  z.gzip_flag = IGZIP_DEFLATE;
  z.end_of_stream = 1;
  z.flush = NO_FLUSH;
  z.next_in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(data));
  z.avail_in = static_cast<std::uint32_t>(size);
  z.next_out = reinterpret_cast<std::uint8_t*>(out + kBgzfHeaderSize);
  z.avail_out = static_cast<std::uint32_t>(kBgzfMaxBlock - kBgzfHeaderSize - kBgzfFooterSize);
  const std::size_t deflated = isal_deflate_stateless(&z) == COMP_OK ? z.total_out : store(data, size, out + kBgzfHeaderSize);
  const std::size_t block = kBgzfHeaderSize + deflated + kBgzfFooterSize;
  std::memcpy(out, kBgzfHeader, sizeof(kBgzfHeader));
  put_u16(out + sizeof(kBgzfHeader), static_cast<std::uint16_t>(block - 1));
  char* footer = out + kBgzfHeaderSize + deflated;
  put_u32(footer, crc32_gzip_refl(0, reinterpret_cast<const unsigned char*>(data), size));
  put_u32(footer + 4, static_cast<std::uint32_t>(size));
  return block;
}

struct BamBlockWriter::Block {
  std::size_t size = 0, deflated = 0;
  char data[kBgzfBlockData];
  char out[kBgzfMaxBlock];
};

namespace {

void* deflate_job(void* arg) {
  auto* block = static_cast<BamBlockWriter::Block*>(arg);
  block->deflated = deflate_bgzf_block(block->data, block->size, block->out);
  return block;
}
// A block the pool discards (the writer destroyed before its blocks came back).
void delete_block(void* block) { delete static_cast<BamBlockWriter::Block*>(block); }

}  // namespace

BamBlockWriter::BamBlockWriter(hFILE* file, std::string name, hts_tpool* pool, int queued)
    : file_(file), name_(std::move(name)), pool_(pool), open_(std::make_unique<Block>()) {
  // No queue (out of memory): the blocks are deflated on the calling thread.
  if (pool_ != nullptr) queue_ = hts_tpool_process_init(pool_, std::max(queued, 1), 0);
}

BamBlockWriter::~BamBlockWriter() {
  if (queue_ != nullptr) hts_tpool_process_destroy(queue_);  // waits for running jobs; frees the rest
  if (file_ != nullptr) hclose_abruptly(file_);
}

Status BamBlockWriter::write_header(sam_hdr_t* header) {
  Result<std::string> bytes = bam_header_bytes(header);
  if (!bytes.ok()) return Status{bytes.status().code(), name_ + ": " + bytes.status().message()};
  WTMAP_TRY(append(bytes->data(), bytes->size()));
  if (open_->size > 0) WTMAP_TRY(end_block());
  return flush_unwritten();
}

Status BamBlockWriter::write(const std::vector<const bam1_t*>& records) {
  for (const bam1_t* record : records) {
    Result<std::size_t> size = bam_record_size(*record);
    if (!size.ok()) return Status{size.status().code(), name_ + ": " + size.status().message()};
    // bam_write1's bgzf_flush_try: a record that does not fit in the open block starts the next.
    if (open_->size > 0 && open_->size + *size > kBgzfBlockData) WTMAP_TRY(end_block());
    if (*size <= kBgzfBlockData - open_->size) {
      put_bam_record(*record, open_->data + open_->size);
      open_->size += *size;
      if (open_->size == kBgzfBlockData) WTMAP_TRY(end_block());
    } else {
      spill_.resize(*size);
      put_bam_record(*record, spill_.data());
      WTMAP_TRY(append(spill_.data(), *size));
    }
  }
  return flush_unwritten();
}

Status BamBlockWriter::append(const char* data, std::size_t size) {
  while (size > 0) {
    const std::size_t n = std::min(size, kBgzfBlockData - open_->size);
    std::memcpy(open_->data + open_->size, data, n);
    open_->size += n;
    data += n;
    size -= n;
    if (open_->size == kBgzfBlockData) WTMAP_TRY(end_block());  // bgzf_write: a full block goes
  }
  return {};
}

Status BamBlockWriter::end_block() {
  std::unique_ptr<Block> block = std::move(open_);
  if (spare_.empty()) {
    open_ = std::make_unique<Block>();
  } else {
    open_ = std::move(spare_.back());
    spare_.pop_back();
    open_->size = 0;
  }
  if (queue_ == nullptr) {
    deflate_job(block.get());
    return write_deflated(std::move(block));
  }
  // Non-blocking: with the queue full, the next block back is written while the pool works on.
  while (hts_tpool_dispatch3(pool_, queue_, deflate_job, block.get(), delete_block, delete_block, 1) != 0) {
    if (errno != EAGAIN) return {StatusCode::out_of_memory, name_ + ": cannot queue a block to compress"};
    Result<bool> next = write_result(true);
    if (!next.ok()) return next.status();
  }
  block.release();  // the pool's until it comes back
  ++in_flight_;
  for (bool wrote = true; wrote;) {  // the blocks back already, in order
    Result<bool> next = write_result(false);
    if (!next.ok()) return next.status();
    wrote = *next;
  }
  return {};
}

Result<bool> BamBlockWriter::write_result(bool wait) {
  if (in_flight_ == 0) return false;
  hts_tpool_result* result = wait ? hts_tpool_next_result_wait(queue_) : hts_tpool_next_result(queue_);
  if (result == nullptr) {
    if (!wait) return false;
    return Status{StatusCode::io_error, name_ + ": the compression threads stopped"};
  }
  std::unique_ptr<Block> block(static_cast<Block*>(hts_tpool_result_data(result)));
  hts_tpool_delete_result(result, 0);
  --in_flight_;
  WTMAP_TRY(write_deflated(std::move(block)));
  return true;
}

Status BamBlockWriter::write_deflated(std::unique_ptr<Block> block) {
  WTMAP_TRY(put(block->out, block->deflated));
  spare_.push_back(std::move(block));
  return {};
}

Status BamBlockWriter::put(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  unwritten_.insert(unwritten_.end(), bytes, bytes + size);
  return unwritten_.size() >= kWriteBytes ? flush_unwritten() : Status{};
}

Status BamBlockWriter::flush_unwritten() {
  const bool ok = unwritten_.empty() || hwrite(file_, unwritten_.data(), unwritten_.size()) == static_cast<ssize_t>(unwritten_.size());
  unwritten_.clear();
  if (!ok) return {StatusCode::io_error, name_ + ": write failed"};
  return {};
}

Status BamBlockWriter::close() {
  if (open_->size > 0) WTMAP_TRY(end_block());
  while (in_flight_ > 0) {
    Result<bool> next = write_result(true);
    if (!next.ok()) return next.status();
  }
  WTMAP_TRY(put(kBgzfEof, sizeof(kBgzfEof)));
  WTMAP_TRY(flush_unwritten());
  const int rc = hclose(std::exchange(file_, nullptr));
  if (rc != 0) return {StatusCode::io_error, name_ + ": closing the output failed"};
  return {};
}

}  // namespace wtmap::aligner
