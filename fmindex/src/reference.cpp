#include "wtmap/fmindex/reference.hpp"
#include "wtmap/fmindex/symbol_reference.hpp"
#include "wtmap/io/bgzf_input.hpp"
#include "wtmap/io/input_file.hpp"

#include <htslib/bgzf.h>
#include <htslib/kstring.h>

#include <algorithm>
#include <array>
#include <memory>
#include <new>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unordered_set>

namespace wtmap::fmindex {
namespace {

constexpr std::array<signed char, 256> make_codes() {
  std::array<signed char, 256> t{};
  for (auto& v : t) v = -1;
  const char* ambiguous = "NRYKMSWBDHV";
  for (const char* p = ambiguous; *p; ++p) {
    t[static_cast<unsigned char>(*p)] = 4;
    t[static_cast<unsigned char>(*p - 'A' + 'a')] = 4;
  }
  const char* bases = "ACGT";
  for (int i = 0; i < 4; ++i) {
    t[static_cast<unsigned char>(bases[i])] = static_cast<signed char>(i);
    t[static_cast<unsigned char>(bases[i] - 'A' + 'a')] = static_cast<signed char>(i);
  }
  t['U'] = t['u'] = 3;
  return t;
}
constexpr std::array<signed char, 256> kCodes = make_codes();

struct BgzfCloser {
  void operator()(BGZF* f) const { bgzf_close(f); }
};

}  // namespace

int nucleotide_code(char c) { return kCodes[static_cast<unsigned char>(c)]; }

const Fragment& Reference::fragment_at(std::uint64_t p) const {
  auto it = std::upper_bound(fragments.begin(), fragments.end(), p,
                             [](std::uint64_t pos, const Fragment& f) { return pos < f.text_start; });
  return *(it - 1);
}

namespace {

// "'x'" for a printable byte, "byte 0x01" for any other: how errors show an offending byte.
std::string shown_byte(unsigned char byte) {
  char shown[16];
  std::snprintf(shown, sizeof shown, byte >= 32 && byte < 127 ? "'%c'" : "byte 0x%02x", byte);
  return shown;
}

// A name with every unprintable byte as \xNN, for messages.
std::string shown_name(const std::string& name) {
  std::string shown;
  for (const char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 32 && byte < 127) {
      shown += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", byte);
      shown += hex;
    }
  }
  return shown;
}

// The FASTA parsing every alphabet shares: headers (names up to the first blank, unique, not
// empty), sequence lines with a CRLF's '\r' dropped and blank lines skipped, records without
// sequence, sequence before the first header, gzip errors and empty input. Each sequence line
// goes to sink(contig_id, contig, line, length, where) -> Status, which consumes its bytes
// (`where(what)` prefixes a message with "<file>:<line>: "); the parser then adds the line's
// length to the contig's.
// `unit` names what a record holds ("bases", "symbols") in the error for a record without any.
template <class Sink>
Status parse_fasta(const std::string& path, const char* unit, std::vector<Contig>& contigs, Sink&& sink) {
  WTMAP_TRY(io::check_input_path(path));
  std::unique_ptr<BGZF, BgzfCloser> in(path == "-" ? bgzf_dopen(0, "r") : bgzf_open(path.c_str(), "r"));
  if (!in) return Status{StatusCode::io_error, path + ": cannot open for reading"};
  WTMAP_TRY(io::check_bgzf_marker(in.get(), path));
  std::unordered_set<std::string> names;
  kstring_t line = {0, 0, nullptr};
  struct LineGuard {
    kstring_t* s;
    ~LineGuard() { free(s->s); }
  } guard{&line};
  std::uint64_t line_no = 0;
  auto where = [&](const std::string& what) {
    return path + ":" + std::to_string(line_no) + ": " + what;
  };
  std::uint64_t header_line = 0;
  auto close_contig = [&]() -> Status {
    if (contigs.empty() || contigs.back().length > 0) return {};
    return invalid_argument(path + ":" + std::to_string(header_line) + ": contig '" + contigs.back().name +
                            "' has no " + unit);
  };
  int r = 0;
  while ((r = bgzf_getline(in.get(), '\n', &line)) >= 0) {
    ++line_no;
    // bgzf_getline has already dropped the '\r' of a CRLF (htslib does for a '\n' delimiter);
    // dropping one more would swallow a stray '\r' that must be rejected as a sequence byte.
    const std::size_t len = line.l;
    if (len == 0) continue;
    if (line.s[0] == '>') {
      WTMAP_TRY(close_contig());
      std::size_t end = 1;
      while (end < len && line.s[end] != ' ' && line.s[end] != '\t') ++end;
      std::string name(line.s + 1, end - 1);
      if (name.empty()) return invalid_argument(where("header without a contig name"));
      if (!is_valid_contig_name(name)) {
        return invalid_argument(where("contig name '" + shown_name(name) + "' cannot be written in SAM (it must match "
                                      "[0-9A-Za-z!#$%&+./:;?@^_|~-][0-9A-Za-z!#$%&*+./:;=?@^_|~-]*); rename the record"));
      }
      if (!names.insert(name).second) return invalid_argument(where("duplicate contig name '" + name + "'"));
      if (contigs.size() >= UINT32_MAX) return invalid_argument(where("too many contigs"));
      contigs.push_back({std::move(name), 0});
      header_line = line_no;
      continue;
    }
    if (contigs.empty()) return invalid_argument(where("sequence before the first '>' header (not FASTA?)"));
    const auto contig_id = static_cast<std::uint32_t>(contigs.size() - 1);
    WTMAP_TRY(sink(contig_id, contigs.back(), line.s, len, where));
    contigs.back().length += len;
  }
  if (r < -1) return Status{StatusCode::io_error, path + ": read error after line " + std::to_string(line_no) + " (corrupt gzip?)"};
  WTMAP_TRY(io::check_bgzf_ended(in.get(), path));
  WTMAP_TRY(close_contig());
  if (contigs.empty()) return invalid_argument(path + ": no FASTA records (empty input?)");
  return {};
}

}  // namespace

bool is_valid_contig_name(std::string_view name) {
  auto allowed = [](unsigned char c, bool first) {
    if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) return true;
    if (c == '*' || c == '=') return !first;
    return std::strchr("!#$%&+./:;?@^_|~-", c) != nullptr && c != '\0';
  };
  if (name.empty() || !allowed(static_cast<unsigned char>(name[0]), true)) return false;
  for (std::size_t i = 1; i < name.size(); ++i) {
    if (!allowed(static_cast<unsigned char>(name[i]), false)) return false;
  }
  return true;
}

Result<Reference> read_fasta(const std::string& path) {
  Reference ref;
  // Room for a plain file's bases at once (no copies of a growing gigabyte text; pages are touched
  // only as written); a compressed one grows from there.
  std::error_code size_error;  // no size (stdin, a missing file): the parser says what is wrong
  const std::uintmax_t file_bytes = path == "-" ? 0 : std::filesystem::file_size(path, size_error);
  try {
    if (!size_error) ref.forward.reserve(static_cast<std::size_t>(file_bytes));
  } catch (const std::bad_alloc&) {  // no room at once: the text grows as it did before
  }
  std::uint32_t run_contig = UINT32_MAX;  // the contig of the open fragment of unambiguous bases, if any
  // The open fragment's length, kept up to date where a run ends and after each line.
  const auto close_run = [&](std::uint64_t at) {
    if (run_contig != UINT32_MAX) ref.fragments.back().length = at - ref.fragments.back().text_start;
  };
  WTMAP_TRY(parse_fasta(path, "bases", ref.contigs, [&](std::uint32_t contig_id, const Contig& contig, const char* line,
                                                        std::size_t len, const auto& where) -> Status {
    // The line's codes go straight into the text (room for them and one separator made first):
    // 1 Gbp took 5 s base by base on a GPU host; the fragments change only at ambiguity codes.
    std::uint64_t at = ref.forward.size();
    ref.forward.resize(at + len + 1);
    std::uint8_t* out = ref.forward.data();
    if (run_contig == contig_id) {  // inside a fragment: a line of A/C/G/T alone (most) at one pass
      std::uint8_t seen = 0;  // bit 2 set by an ambiguity code (4) or a byte that is none (-1)
      for (std::size_t i = 0; i < len; ++i) {
        const auto code = static_cast<std::uint8_t>(kCodes[static_cast<unsigned char>(line[i])]);
        out[at + i] = code;
        seen |= code;
      }
      if ((seen & 4) == 0) {
        at += len;
        close_run(at);
        ref.forward.resize(at);
        return {};
      }
    }
    for (std::size_t i = 0; i < len; ++i) {  // base by base, writing the line again
      const int code = kCodes[static_cast<unsigned char>(line[i])];
      if (code >= 0 && code < 4 && run_contig == contig_id) {
        out[at++] = static_cast<std::uint8_t>(code);
        continue;
      }
      if (code < 0) {
        return invalid_argument(where("contig '" + contig.name + "', column " + std::to_string(i + 1) + ": " +
                                      shown_byte(static_cast<unsigned char>(line[i])) + " is not a nucleotide code"));
      }
      close_run(at);
      if (code == 4) {
        run_contig = UINT32_MAX;
        ++ref.ambiguous_bases;
        continue;
      }
      // A new fragment, separated from the previous one.
      if (!ref.fragments.empty()) out[at++] = kSeparator;
      ref.fragments.push_back({at, 0, contig.length + i, contig_id});
      run_contig = contig_id;
      out[at++] = static_cast<std::uint8_t>(code);
    }
    close_run(at);
    ref.forward.resize(at);
    return {};
  }));
  if (ref.fragments.empty()) return invalid_argument(path + ": the reference holds no A, C, G or T");
  return ref;
}

Result<SymbolReference> read_symbol_fasta(const std::string& path, Alphabet alphabet) {
  if (alphabet == Alphabet::dna) return invalid_argument("read_symbol_fasta reads protein and byte references; DNA has read_fasta");
  SymbolReference ref;
  ref.alphabet = alphabet;
  WTMAP_TRY(parse_fasta(path, "symbols", ref.contigs, [&](std::uint32_t contig_id, const Contig& contig, const char* line,
                                                          std::size_t len, const auto& where) -> Status {
    if (contig.length == 0) {  // the record's first line: its fragment starts after a separator
      if (!ref.fragments.empty()) ref.forward.push_back(kRecordSeparator);
      ref.fragments.push_back({ref.forward.size(), 0, 0, contig_id});
    }
    for (std::size_t i = 0; i < len; ++i) {
      const auto byte = static_cast<unsigned char>(line[i]);
      const int symbol = normalized_symbol(alphabet, byte);
      if (symbol < 0) {
        return invalid_argument(where("contig '" + contig.name + "', column " + std::to_string(i + 1) + ": " +
                                      shown_byte(byte) +
                                      (alphabet == Alphabet::protein ? " is not an amino-acid code"
                                                                     : " (a carriage return inside a line) is not allowed in a byte reference")));
      }
      ref.forward.push_back(static_cast<std::uint8_t>(symbol));
    }
    ref.fragments.back().length += len;
    return {};
  }));
  return ref;
}

}  // namespace wtmap::fmindex
