// libFuzzer harness: the -R read-group line (SamOptions::read_group, checked and unescaped by
// SamWriter::open in aligner/src/sam_writer.cpp). The input is the line as typed. A line the rules
// refuse (a literal tab, a byte outside printable ASCII, no "@RG\t" start, no non-empty ID) must
// be refused; one they accept must give a SAM file that htslib reads back with exactly the four
// header lines @HD, @SQ, that @RG line and @PG (nothing injected) and the ID in the record's RG tag.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "sam_readback.hpp"
#include "wtmap/aligner/sam_writer.hpp"

namespace {

// The rules of SamOptions::read_group, restated: "\t" escapes become tabs.
bool acceptable(const std::string& typed, std::string& line, std::string& id) {
  for (std::size_t i = 0; i < typed.size(); ++i) {
    const char c = typed[i];
    if (c < ' ' || c > '~') return false;
    const bool tab = c == '\\' && i + 1 < typed.size() && typed[i + 1] == 't';
    line += tab ? '\t' : c;
    i += tab ? 1 : 0;
  }
  if (line.compare(0, 4, "@RG\t") != 0) return false;
  const std::size_t at = line.find("\tID:");
  if (at == std::string::npos) return false;
  id = line.substr(at + 4, line.find('\t', at + 4) - (at + 4));
  return !id.empty();
}

// Whether htslib itself takes `line` as a header line (it refuses e.g. a field without a colon).
bool htslib_takes(const std::string& line) {
  sam_hdr_t* h = sam_hdr_init();
  const bool ok = h != nullptr && sam_hdr_add_lines(h, line.c_str(), line.size()) == 0;
  sam_hdr_destroy(h);
  return ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  wtmap::aligner::SamOptions options;
  options.read_group.assign(reinterpret_cast<const char*>(data), size);
  if (options.read_group.empty()) return 0;  // no -R
  options.path = wtmap::fuzz::scratch_path(".sam");
  options.command_line = "wtmap align ref reads.fq";
  std::string line, id;
  const bool valid = acceptable(options.read_group, line, id);

  auto writer = wtmap::aligner::SamWriter::open(options, {{"chr1", 100}});
  if (!writer.ok()) {
    WTMAP_FUZZ_CHECK(!valid || !htslib_takes(line), "refused a valid -R: " + writer.status().message());
    return 0;
  }
  WTMAP_FUZZ_CHECK(valid, "accepted an invalid -R line");
  const std::vector<wtmap::aligner::SeqRecord> reads = {{"read1", "ACGT", "IIII"}};
  WTMAP_FUZZ_CHECK(writer->write(reads, {wtmap::aligner::ReadAlignment{}}).ok(), "write failed");
  WTMAP_FUZZ_CHECK(writer->finish().ok(), "finish failed");

  wtmap::altest::SamContents sam;
  try {
    sam = wtmap::altest::read_alignments(options.path);
  } catch (const std::exception& e) {
    WTMAP_FUZZ_CHECK(false, std::string("htslib cannot read the output back: ") + e.what());
  }
  const std::vector<std::string_view> lines = wtmap::fuzz::split_lines(sam.header);
  WTMAP_FUZZ_CHECK(lines.size() == 4 && lines[0].substr(0, 4) == "@HD\t" && lines[1].substr(0, 4) == "@SQ\t" &&
                       lines[2] == line && lines[3].substr(0, 4) == "@PG\t",
                   "the header is not @HD, @SQ, the -R line, @PG:\n" + sam.header);
  WTMAP_FUZZ_CHECK(sam.records.size() == 1 && sam.records[0].rg == id, "the record's RG tag is not the -R ID");
  return 0;
}
