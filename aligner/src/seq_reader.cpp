#include "wtmap/aligner/seq_reader.hpp"

#include <htslib/bgzf.h>
#include <htslib/kstring.h>

#include <cstdlib>

namespace wtmap::aligner {

struct SeqReader::Impl {
  std::string path;
  BGZF* file = nullptr;
  kstring_t line = {0, 0, nullptr};
  bool have_line = false;  // `line` holds a header read ahead (FASTA)
  bool eof = false;
  ~Impl() {
    if (file != nullptr) bgzf_close(file);
    std::free(line.s);
  }
  // Next line without the line terminator; false at end of input; -2 from htslib on errors.
  Result<bool> read_line() {
    const int r = bgzf_getline(file, '\n', &line);
    if (r == -1) return false;
    if (r < -1) return Status{StatusCode::io_error, path + ": read error (corrupt gzip data?)"};
    if (line.l > 0 && line.s[line.l - 1] == '\r') line.s[--line.l] = '\0';
    return true;
  }
};

SeqReader::SeqReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SeqReader::SeqReader(SeqReader&&) noexcept = default;
SeqReader& SeqReader::operator=(SeqReader&&) noexcept = default;
SeqReader::~SeqReader() = default;

Result<SeqReader> SeqReader::open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->path = path == "-" ? "<stdin>" : path;
  impl->file = path == "-" ? bgzf_dopen(0, "r") : bgzf_open(path.c_str(), "r");
  if (impl->file == nullptr) return Status{StatusCode::io_error, path + ": cannot open for reading"};
  return SeqReader(std::move(impl));
}

namespace {

bool is_sequence_letter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '.' || c == '-' || c == '*'; }

}  // namespace

Result<bool> SeqReader::next(SeqRecord& record) {
  Impl& in = *impl_;
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
    } while (in.line.l == 0);
  }
  in.have_line = false;
  const char kind = in.line.s[0];
  if (kind != '>' && kind != '@') return fail("expected a '>' or '@' header line, found another line (not FASTA/FASTQ?)");
  std::size_t end = 1;
  while (end < in.line.l && in.line.s[end] != ' ' && in.line.s[end] != '\t') ++end;
  record.name.assign(in.line.s + 1, end - 1);
  record.sequence.clear();
  record.quality.clear();
  auto check_sequence = [&](const std::string& s) -> Status {
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
      if (in.line.l > 0 && (in.line.s[0] == '>' || in.line.s[0] == '@')) {
        in.have_line = true;
        break;
      }
      record.sequence.append(in.line.s, in.line.l);
    }
    WTMAP_TRY(check_sequence(record.sequence));
    ++records_;
    return true;
  }
  // FASTQ: sequence, '+', quality of the same length (single-line records, as Illumina writes).
  auto got = in.read_line();
  if (!got.ok()) return got.status();
  if (!*got) return fail("truncated record (no sequence line)");
  record.sequence.assign(in.line.s, in.line.l);
  WTMAP_TRY(check_sequence(record.sequence));
  got = in.read_line();
  if (!got.ok()) return got.status();
  if (!*got) return fail("truncated record (no '+' line)");
  if (in.line.l == 0 || in.line.s[0] != '+') return fail("missing the '+' separator line");
  got = in.read_line();
  if (!got.ok()) return got.status();
  if (!*got) return fail("truncated record (no quality line)");
  record.quality.assign(in.line.s, in.line.l);
  if (record.quality.size() != record.sequence.size()) {
    return fail("sequence and quality differ in length (" + std::to_string(record.sequence.size()) + " vs " +
                std::to_string(record.quality.size()) + ")");
  }
  for (char q : record.quality) {
    if (q < '!' || q > '~') return fail("quality byte " + std::to_string(static_cast<unsigned char>(q)) + " is outside '!'..'~'");
  }
  ++records_;
  return true;
}

}  // namespace wtmap::aligner
