#include "wtmap/aligner/seq_reader.hpp"

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/hts.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "igzip_input.hpp"
#include "wtmap/aligner/bounded_queue.hpp"
#include "wtmap/core/detail/thread_name.hpp"
#include "wtmap/io/bgzf_input.hpp"
#include "wtmap/io/input_file.hpp"
#include "wtmap/fmindex/reference.hpp"

namespace wtmap::aligner {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// Lines come from a second thread that inflates the input in large chunks: the inflate of a
// plain .gz (which cannot be split) is the slowest single step of an alignment run, so it runs
// beside the parsing instead of before it. A plain .gz goes through ISA-L (igzip_input.hpp);
// BGZF, on htslib's threads, and uncompressed input through htslib's BGZF reader.
struct SeqReader::Impl {
  struct Chunk {
    std::vector<char> bytes;  // empty: the end of the input
    Status error;
    std::uint64_t input_end = 0;  // bytes of the input as stored (compressed) read through this chunk
  };

  std::string path;
  BGZF* file = nullptr;                 // BGZF or uncompressed input, or
  std::unique_ptr<IgzipInput> gzip;    // plain gzip
  BoundedQueue<Chunk> chunks{4};
  std::thread inflater;
  Chunk current;
  std::size_t position = 0;  // in current.bytes
  bool at_end = false;
  // The current line: a view into the chunk (no copy) or, for a line that runs across two
  // chunks, into `spill`; valid until the next read_line().
  std::string_view line;
  std::string spill;
  bool have_line = false;  // `line` holds a header read ahead (FASTA)
  SequenceBytes allowed = SequenceBytes::letters;
  std::atomic<double> inflate_seconds{0};  // written by the inflater, read by times()
  // Progress (input_progress): the records parsed before the current one, the stored bytes
  // through the chunk being parsed, and, taken as each chunk is done, a pair of them that agree.
  std::uint64_t records_parsed = 0, current_input_end = 0;
  mutable std::mutex progress_mutex;
  InputProgress progress;
  std::uint64_t size = 0;  // of a regular file; 0: unknown
  double waiting_seconds = 0;

  ~Impl() {
    chunks.close();  // stops an inflater blocked on a full queue
    if (inflater.joinable()) inflater.join();
    if (file != nullptr) bgzf_close(file);
  }

  void start_inflater() {
    inflater = std::thread([this] {
      while (true) {
        Chunk c;
        try {
          c.bytes.resize(kChunkBytes);
        } catch (const std::bad_alloc&) {
          c.error = Status{StatusCode::out_of_memory, path + ": no host memory for the input buffer"};
          chunks.push(std::move(c));
          break;
        }
        const auto start = std::chrono::steady_clock::now();
        Result<std::size_t> n = inflate(c.bytes.data(), kChunkBytes);
        inflate_seconds = inflate_seconds + seconds_since(start);
        // BGZF or plain: the offset of the block being read (bgzf_tell's upper 48 bits), which
        // the reading thread keeps, threads or not.
        c.input_end = gzip != nullptr ? gzip->compressed_bytes_read() : static_cast<std::uint64_t>(bgzf_tell(file) >> 16);
        if (!n.ok()) {
          c.bytes.clear();
          c.error = n.status();
        } else {
          c.bytes.resize(*n);
        }
        const bool last = !n.ok() || *n == 0;
        if (!chunks.push(std::move(c)) || last) break;
      }
      chunks.close();  // the parser drains what is queued, then sees the end
    });
    wtmap::detail::name_thread(inflater, "wtmap-inflate");
  }

  // Up to `capacity` bytes of the inflated input; 0 at its end.
  Result<std::size_t> inflate(char* out, std::size_t capacity) {
    if (gzip != nullptr) return gzip->read(out, capacity);
    const ssize_t n = bgzf_read(file, out, capacity);
    if (n < 0) {
      return Status{StatusCode::io_error, path + (bgzf_compression(file) == bgzf ? ": corrupt BGZF data" : ": read error")};
    }
    if (n == 0) WTMAP_TRY(io::check_bgzf_ended(file, path));
    return static_cast<std::size_t>(n);
  }

  // A record that ends its chunk completes the chunk: progress counts it at once, not when the
  // next call looks past the chunk, so that the batch holding an input's last record is never
  // written before progress knows the input is read (the share shown then is 100 %).
  void note_chunk_done_with(std::uint64_t records) {
    if (position != current.bytes.size()) return;
    const std::lock_guard<std::mutex> lock(progress_mutex);
    progress = {records, current_input_end};
  }

  // Next line without the line terminator into `line`; false at the end of the input.
  Result<bool> read_line() {
    spill.clear();
    while (true) {
      if (position == current.bytes.size()) {
        if (at_end) {  // a last line without '\n' counts, its CRLF's '\r' dropped below
          if (spill.empty()) return false;
          line = spill;
          break;
        }
        const auto start = std::chrono::steady_clock::now();
        std::optional<Chunk> next = chunks.pop();
        waiting_seconds += seconds_since(start);
        {  // the chunk before is parsed but for the record in hand
          const std::lock_guard<std::mutex> lock(progress_mutex);
          progress = {records_parsed, current_input_end};
        }
        if (!next || next->bytes.empty()) {
          if (next && !next->error.ok()) return next->error;
          at_end = true;
          continue;
        }
        current_input_end = next->input_end;
        current = std::move(*next);
        position = 0;
      }
      const char* begin = current.bytes.data() + position;
      const std::size_t left = current.bytes.size() - position;
      const auto* newline = static_cast<const char*>(std::memchr(begin, '\n', left));
      if (newline == nullptr) {  // the line goes on in the next chunk
        spill.append(begin, left);
        position += left;
        continue;
      }
      const auto length = static_cast<std::size_t>(newline - begin);
      if (spill.empty()) {
        line = std::string_view(begin, length);
      } else {
        spill.append(begin, length);
        line = spill;
      }
      position += length + 1;
      break;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  }
};

SeqReader::SeqReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SeqReader::SeqReader(SeqReader&&) noexcept = default;
SeqReader& SeqReader::operator=(SeqReader&&) noexcept = default;
SeqReader::~SeqReader() = default;

SeqReader::Times SeqReader::times() const { return {impl_->inflate_seconds.load(), impl_->waiting_seconds}; }

SeqReader::InputProgress SeqReader::input_progress() const {
  const std::lock_guard<std::mutex> lock(impl_->progress_mutex);
  return impl_->progress;
}
std::uint64_t SeqReader::input_size() const { return impl_->size; }

Result<SeqReader> SeqReader::open(const std::string& path, unsigned threads, SequenceBytes bytes) {
  auto impl = std::make_unique<Impl>();
  impl->path = path == "-" ? "<stdin>" : path;
  impl->allowed = bytes;
  WTMAP_TRY(io::check_input_path(path));
  hFILE* input = path == "-" ? hdopen(0, "r") : hopen(path.c_str(), "r");
  if (input == nullptr) return Status{StatusCode::io_error, path + ": cannot open for reading"};
  struct stat info {};
  const int stated = path == "-" ? fstat(0, &info) : stat(path.c_str(), &info);
  if (stated == 0 && S_ISREG(info.st_mode)) impl->size = static_cast<std::uint64_t>(info.st_size);
  htsFormat format{};
  if (hts_detect_format2(input, impl->path.c_str(), &format) < 0) {
    hclose_abruptly(input);
    return Status{StatusCode::io_error, impl->path + ": read error"};
  }
  if (format.compression == gzip) {
    impl->gzip = std::make_unique<IgzipInput>(input, impl->path);
    impl->start_inflater();
    return SeqReader(std::move(impl));
  }
  impl->file = bgzf_hopen(input, "r");
  if (impl->file == nullptr) {
    hclose_abruptly(input);
    return Status{StatusCode::io_error, impl->path + ": cannot open for reading"};
  }
  WTMAP_TRY(io::check_bgzf_marker(impl->file, impl->path));
  // BGZF blocks inflate independently, so htslib can spread them over a thread pool (it declines
  // for plain gzip, whose one stream has to inflate in order).
  if (threads > 1 && bgzf_compression(impl->file) == bgzf && bgzf_mt(impl->file, static_cast<int>(threads), 256) != 0) {
    return Status{StatusCode::out_of_memory, impl->path + ": cannot start the threads that inflate the input"};
  }
  impl->start_inflater();
  return SeqReader(std::move(impl));
}

namespace {

// A-Z, a-z, '.', '-', '*': a table, since every byte of every read goes through it.
const std::array<bool, 256> kSequenceLetter = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '.' || c == '-' || c == '*';
  return t;
}();

bool is_sequence_letter(char c) { return kSequenceLetter[static_cast<unsigned char>(c)]; }

}  // namespace

Result<bool> SeqReader::next(SeqRecord& record) {
  Impl& in = *impl_;
  in.records_parsed = records_;
  const std::uint64_t number = records_ + 1;
  auto fail = [&](const std::string& why) {
    return invalid_argument(in.path + ": record " + std::to_string(number) + ": " + why);
  };
  // Header line (skipping blank lines between records).
  if (!in.have_line) {
    do {
      auto got = in.read_line();
      if (!got.ok()) return got.status();
      if (!*got) return false;
    } while (in.line.size() == 0);
  }
  in.have_line = false;
  const char kind = in.line[0];
  if (kind != '>' && kind != '@') return fail("expected a '>' or '@' header line, found another line (not FASTA/FASTQ?)");
  std::size_t end = 1;
  while (end < in.line.size() && in.line[end] != ' ' && in.line[end] != '\t') ++end;
  record.name.assign(in.line.data() + 1, end - 1);
  record.sequence.clear();
  record.quality.clear();
  auto check_sequence = [&](const std::string& s) -> Status {
    if (in.allowed == SequenceBytes::any) return {};
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (!is_sequence_letter(s[i])) {
        const auto byte = static_cast<unsigned char>(s[i]);
        return fail("byte " + std::to_string(byte) + " at sequence position " + std::to_string(i + 1) + " is not a base letter");
      }
    }
    return {};
  };
  if (kind == '>') {  // FASTA: sequence lines up to the next header
    while (true) {
      auto got = in.read_line();
      if (!got.ok()) return got.status();
      if (!*got) break;
      if (in.line.size() > 0 && (in.line[0] == '>' || (in.line[0] == '@' && in.allowed == SequenceBytes::letters))) {
        in.have_line = true;
        break;
      }
      record.sequence.append(in.line.data(), in.line.size());
    }
    WTMAP_TRY(check_sequence(record.sequence));
    ++records_;
    if (!in.have_line) in.note_chunk_done_with(records_);  // (else the next header is read already)
    return true;
  }
  // FASTQ: sequence, '+', quality of the same length (single-line records, as Illumina writes).
  auto got = in.read_line();
  if (!got.ok()) return got.status();
  if (!*got) return fail("truncated record (no sequence line)");
  record.sequence.assign(in.line.data(), in.line.size());
  WTMAP_TRY(check_sequence(record.sequence));
  got = in.read_line();
  if (!got.ok()) return got.status();
  if (!*got) return fail("truncated record (no '+' line)");
  if (in.line.size() == 0 || in.line[0] != '+') {
    // Nucleotide codes only: a quality line of letters ("IIII") that lost its '+' is no sequence.
    const bool more_bases = !in.line.empty() && std::all_of(in.line.begin(), in.line.end(),
                                                            [](char c) { return fmindex::nucleotide_code(c) >= 0; });
    return fail(more_bases ? "the sequence goes on over a second line: multi-line FASTQ is not supported (write "
                             "one line per sequence, e.g. seqtk seq -l 0)"
                           : "missing the '+' separator line");
  }
  got = in.read_line();
  if (!got.ok()) return got.status();
  if (!*got) return fail("truncated record (no quality line)");
  record.quality.assign(in.line.data(), in.line.size());
  if (record.quality.size() != record.sequence.size()) {
    return fail("sequence and quality differ in length (" + std::to_string(record.sequence.size()) + " vs " +
                std::to_string(record.quality.size()) + ")");
  }
  for (char q : record.quality) {
    if (q < '!' || q > '~') return fail("quality byte " + std::to_string(static_cast<unsigned char>(q)) + " is outside '!'..'~'");
  }
  ++records_;
  in.note_chunk_done_with(records_);
  return true;
}

}  // namespace wtmap::aligner
