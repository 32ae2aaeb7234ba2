// wtmap aligner: reading FASTA and FASTQ records (plain or gzip, file or "-" for stdin) with
// errors that name the file, the record number and the reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "wtmap/core/status.hpp"

namespace wtmap::aligner {

struct SeqRecord {
  std::string name;
  std::string sequence;
  std::string quality;  // empty for FASTA
};

class SeqReader {
 public:
  // The input is inflated on a second thread in chunks of this many bytes; lines may span them.
  static constexpr std::size_t kChunkBytes = std::size_t{4} << 20;

  SeqReader(SeqReader&&) noexcept;
  SeqReader& operator=(SeqReader&&) noexcept;
  ~SeqReader();

  static Result<SeqReader> open(const std::string& path);

  // Reads the next record into `record`; false at the end of the input. A malformed record
  // (truncated, no '+' line, sequence and quality of different lengths, bytes that are no
  // sequence letters, a header without '>' or '@', a gzip error) is an invalid_argument or
  // io_error naming "<file>: record <n>".
  Result<bool> next(SeqRecord& record);
  std::uint64_t records_read() const { return records_; }

 private:
  struct Impl;
  explicit SeqReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::uint64_t records_ = 0;
};

}  // namespace wtmap::aligner
