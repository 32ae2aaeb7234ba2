// wtmap aligner (internal): unsorted BAM written by wtmap itself, its BGZF blocks deflated by
// ISA-L (Intel ISA-L's igzip, Debian libisal) on the output's htslib thread pool.
//
// Why: BAM compression was the largest single cost of a run (perf, H200 host, 5*10^5 E. coli
// pairs: libdeflate 27 % of all CPU samples) and is in the I/O floor too. On wtmap's own BAM
// records (10^5 E. coli pairs, cut in 65,280-byte blocks, one core of the build machine), ISA-L's
// level 1 deflates 235-268 MB/s against htslib's libdeflate level 1 at 98-116 MB/s, its output
// 1.7 % larger (ratio 0.486 against 0.478). A run on an H200 host took a fifth less user time
// (9.2 s against 11.5 for 10^6 reads), its wall time unchanged (bench/RESULTS.md).
//
// The bytes are the SAM specification's (SAMv1.pdf, section 4.2, the BAM record; 4.1, BGZF
// blocks and the end-of-file marker), and blocks end where htslib's writer ends them (a record
// that does not fit in a block's free room starts the next one; a block ends when it holds
// kBgzfBlockData bytes; the header is flushed in blocks of its own), so that a file's
// decompressed bytes equal htslib's for the same header and records. What a BAM record cannot
// hold (a position past 2^31 - 1, more than 65,535 CIGAR operations, which htslib moves into a
// CG tag) is refused, naming the read: wtmap's aligner makes neither.
#pragma once

#include <htslib/hfile.h>
#include <htslib/sam.h>
#include <htslib/thread_pool.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wtmap/core/status.hpp"

namespace wtmap::aligner {

// Uncompressed bytes of a BGZF block as htslib fills them (BGZF_BLOCK_SIZE), and the most a whole
// block may take (its BSIZE field holds the size less one in 16 bits).
constexpr std::size_t kBgzfBlockData = 0xff00;
constexpr std::size_t kBgzfMaxBlock = std::size_t{1} << 16;

// The bytes BAM stores for a record, its block_size field first (SAM spec 4.2: 4 + 32 bytes of
// fixed fields, the read name without bam1_t's extra NULs, then CIGAR, SEQ, QUAL and tags as
// bam1_t holds them): the size, and the bytes written to `out`, which has room for that many.
// invalid_argument naming the read for what a BAM record cannot hold.
Result<std::size_t> bam_record_size(const bam1_t& record);
void put_bam_record(const bam1_t& record, char* out);

// The BAM header's bytes (SAM spec 4.2: "BAM\1", the text, the reference names and lengths).
Result<std::string> bam_header_bytes(sam_hdr_t* header);

// One BGZF block of `size` <= kBgzfBlockData bytes, deflated by ISA-L's level 1 (or stored, where
// deflating would not fit the block), into `out` (room for kBgzfMaxBlock bytes): its size.
std::size_t deflate_bgzf_block(const char* data, std::size_t size, char* out);

// Records go into blocks on the calling thread as they come; a full block is deflated on htslib's
// thread pool (as htslib's own multi-threaded BGZF writer does), up to `queued` at once, and the
// deflated blocks are written in order as they come back. Space: one block of 128 KiB (its bytes
// and its deflated copy) for each block queued or waiting to be written, up to kWriteBytes of
// deflated blocks before a write, and one ISA-L level buffer (~276 KiB) a pool thread. Time: one
// copy of each record, the deflating spread over the threads.
class BamBlockWriter {
 public:
  // Takes `file` (closed by close() or by the destructor); `name` goes into every message. `pool`
  // (which must outlive the writer): where blocks are deflated, `queued` of them at most; none:
  // deflated on the calling thread.
  BamBlockWriter(hFILE* file, std::string name, hts_tpool* pool = nullptr, int queued = 0);
  BamBlockWriter(const BamBlockWriter&) = delete;
  BamBlockWriter& operator=(const BamBlockWriter&) = delete;
  ~BamBlockWriter();

  // The header, in blocks of its own (bam_hdr_write's way); before any record.
  Status write_header(sam_hdr_t* header);
  // Writes `records` in order; the last block stays open for the next call's records.
  Status write(const std::vector<const bam1_t*>& records);
  // The open block, every block still being deflated, the end-of-file marker; the file closed.
  Status close();

  struct Block;  // a block's bytes and its deflated copy

 private:
  Status append(const char* data, std::size_t size);  // across blocks, filling each
  Status end_block();                                 // the open block deflated and written
  Status write_deflated(std::unique_ptr<Block> block);
  Result<bool> write_result(bool wait);  // the next block back from the pool, if any (or waited for)
  // Deflated blocks go out in writes of kWriteBytes (and at the end of each write()), not one
  // system call a 64 KiB block.
  static constexpr std::size_t kWriteBytes = std::size_t{4} << 20;
  Status put(const void* data, std::size_t size);
  Status flush_unwritten();

  hFILE* file_ = nullptr;
  std::string name_;
  hts_tpool* pool_ = nullptr;
  hts_tpool_process* queue_ = nullptr;
  std::size_t in_flight_ = 0;  // blocks handed to the pool and not yet written
  std::unique_ptr<Block> open_;
  std::vector<std::unique_ptr<Block>> spare_;  // written blocks, reused
  std::vector<char> spill_;                    // a record longer than a block
  std::vector<char> unwritten_;                // deflated blocks not yet handed to the file
};

}  // namespace wtmap::aligner
