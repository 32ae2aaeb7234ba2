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

// Which bytes a sequence may hold. letters: A-Z, a-z, '.', '-', '*' (reads, DNA and protein
// patterns); anything else stops the run naming the record. any: every byte a line can hold,
// taken verbatim (patterns for a byte-alphabet index); a FASTA record's sequence then runs to the
// next line that begins with '>' only, since '@' may begin a line of it.
enum class SequenceBytes { letters, any };

class SeqReader {
 public:
  // The input is inflated on a second thread in chunks of this many bytes; lines may span them.
  static constexpr std::size_t kChunkBytes = std::size_t{4} << 20;

  SeqReader(SeqReader&&) noexcept;
  SeqReader& operator=(SeqReader&&) noexcept;
  ~SeqReader();

  // `threads` inflate BGZF input (bgzip's blocked gzip) in parallel; a plain .gz is one deflate
  // stream, which inflates on one thread whatever `threads` says. `bytes`: which bytes a
  // sequence may hold (above).
  static Result<SeqReader> open(const std::string& path, unsigned threads = 1,
                                SequenceBytes bytes = SequenceBytes::letters);

  // Reads the next record into `record`; false at the end of the input. A malformed record
  // (truncated, no '+' line, sequence and quality of different lengths, bytes that are no
  // sequence letters under SequenceBytes::letters, a header without '>' or '@', a gzip error) is
  // an invalid_argument or
  // io_error naming "<file>: record <n>".
  Result<bool> next(SeqRecord& record);
  std::uint64_t records_read() const { return records_; }

  // For progress lines, safe on any thread: as each chunk of the inflated input is parsed,
  // the records it completed the input through, and the bytes of the input as stored
  // (compressed ones of a .gz) that it came from, so that their ratio sizes the whole input
  // however far inflating runs ahead; and the input's size, where it is a regular file (0 for
  // a pipe or a terminal).
  struct InputProgress {
    std::uint64_t records = 0, bytes = 0;
  };
  InputProgress input_progress() const;
  std::uint64_t input_size() const;

  // Where the reading time went (for `wtmap align -v`): seconds the inflate thread spent in
  // reading and inflating, and seconds next() waited for it.
  struct Times {
    double inflate = 0, waiting = 0;
  };
  Times times() const;

 private:
  struct Impl;
  explicit SeqReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::uint64_t records_ = 0;
};

}  // namespace wtmap::aligner
