// libFuzzer harness: SeqReader (aligner/src/seq_reader.cpp, igzip_input.cpp) on FASTA and FASTQ
// stored plain, as gzip (ISA-L's inflate) and as BGZF (htslib's), with one or two inflate
// threads, under both SequenceBytes modes. Every record and the point of failure are checked
// against a reference parse of the payload written from the reader's documented contract
// (seq_reader.hpp), so a record lost, invented or altered on any storage path is a finding too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "wtmap/aligner/seq_reader.hpp"

namespace {

using wtmap::aligner::SequenceBytes;
using wtmap::aligner::SeqRecord;

struct Parsed {
  std::vector<SeqRecord> records;
  bool failed = false;  // the input ends in a malformed record
};

bool sequence_letter(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '.' || c == '-' || c == '*';
}

// The contract, line by line: blank lines before a header are skipped; a header starts with '>'
// (FASTA) or '@' (FASTQ) and names the record up to its first blank; a FASTA sequence runs to the
// next line starting with '>' (or '@' under letters); a FASTQ record is four lines, '+' and a
// quality of the sequence's length in '!'..'~'.
Parsed reference_parse(std::string_view text, SequenceBytes bytes) {
  const std::vector<std::string_view> lines = wtmap::fuzz::split_lines(text);
  Parsed out;
  auto letters_ok = [&](const std::string& s) {
    if (bytes == SequenceBytes::any) return true;
    for (char c : s) {
      if (!sequence_letter(static_cast<unsigned char>(c))) return false;
    }
    return true;
  };
  std::size_t i = 0;
  while (true) {
    while (i < lines.size() && lines[i].empty()) ++i;
    if (i == lines.size()) return out;
    const std::string_view header = lines[i++];
    if (header[0] != '>' && header[0] != '@') break;
    SeqRecord r;
    const std::size_t blank = header.find_first_of(" \t", 1);
    r.name = std::string(header.substr(1, blank == std::string_view::npos ? std::string_view::npos : blank - 1));
    if (header[0] == '>') {
      while (i < lines.size() &&
             !(!lines[i].empty() && (lines[i][0] == '>' || (lines[i][0] == '@' && bytes == SequenceBytes::letters)))) {
        r.sequence += lines[i++];
      }
      if (!letters_ok(r.sequence)) break;
    } else {
      if (i + 3 > lines.size()) break;
      r.sequence = std::string(lines[i]);
      const std::string_view plus = lines[i + 1];
      r.quality = std::string(lines[i + 2]);
      i += 3;
      if (!letters_ok(r.sequence) || plus.empty() || plus[0] != '+' || r.quality.size() != r.sequence.size()) break;
      bool quality_ok = true;
      for (char q : r.quality) quality_ok = quality_ok && q >= '!' && q <= '~';
      if (!quality_ok) break;
    }
    out.records.push_back(std::move(r));
  }
  out.failed = true;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const wtmap::fuzz::StoredInput in = wtmap::fuzz::split_input(data, size);
  const SequenceBytes bytes = (in.flags & 4u) != 0 ? SequenceBytes::any : SequenceBytes::letters;
  const unsigned threads = (in.flags & 8u) != 0 ? 2 : 1;
  const std::string& path = wtmap::fuzz::scratch_path();
  wtmap::fuzz::write_stored(path, in);

  auto reader = wtmap::aligner::SeqReader::open(path, threads, bytes);
  WTMAP_FUZZ_CHECK(reader.ok() || !in.payload_is_content(), "a readable file did not open: " + reader.status().message());
  if (!reader.ok()) return 0;
  Parsed got;
  SeqRecord r;
  while (true) {
    auto more = reader->next(r);
    if (!more.ok()) {
      WTMAP_FUZZ_CHECK(!more.status().message().empty(), "an error without a message");
      got.failed = true;
      break;
    }
    if (!*more) break;
    WTMAP_FUZZ_CHECK(reader->records_read() == got.records.size() + 1, "records_read() is off");
    got.records.push_back(r);
  }
  if (!in.payload_is_content()) return 0;  // forged gzip: no crash, no hang is all we can ask

  const Parsed expected = reference_parse(in.payload, bytes);
  WTMAP_FUZZ_CHECK(got.failed == expected.failed, got.failed ? "rejected a well-formed input" : "accepted a malformed input");
  WTMAP_FUZZ_CHECK(got.records.size() == expected.records.size(),
                   std::to_string(got.records.size()) + " records read, " + std::to_string(expected.records.size()) + " expected");
  for (std::size_t i = 0; i < got.records.size(); ++i) {
    const SeqRecord& a = got.records[i];
    const SeqRecord& b = expected.records[i];
    WTMAP_FUZZ_CHECK(a.name == b.name && a.sequence == b.sequence && a.quality == b.quality,
                     "record " + std::to_string(i + 1) + " differs from the reference parse");
  }
  return 0;
}
