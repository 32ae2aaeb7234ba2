#include "wtmap/fmindex/reference.hpp"

#include <htslib/bgzf.h>
#include <htslib/kstring.h>

#include <algorithm>
#include <array>
#include <memory>
#include <cstdio>
#include <cstdlib>
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

Result<Reference> read_fasta(const std::string& path) {
  std::unique_ptr<BGZF, BgzfCloser> in(path == "-" ? bgzf_dopen(0, "r") : bgzf_open(path.c_str(), "r"));
  if (!in) return Status{StatusCode::io_error, path + ": cannot open for reading"};
  Reference ref;
  std::unordered_set<std::string> names;
  kstring_t line = {0, 0, nullptr};
  struct LineGuard {
    kstring_t* s;
    ~LineGuard() { free(s->s); }
  } guard{&line};
  std::uint64_t line_no = 0;
  bool in_run = false;       // inside a fragment of unambiguous bases
  auto where = [&](const std::string& what) {
    return path + ":" + std::to_string(line_no) + ": " + what;
  };
  std::uint64_t header_line = 0;
  auto close_contig = [&]() -> Status {
    if (ref.contigs.empty()) return {};
    if (ref.contigs.back().length == 0) {
      return invalid_argument(path + ":" + std::to_string(header_line) + ": contig '" + ref.contigs.back().name +
                              "' has no bases");
    }
    in_run = false;
    return {};
  };
  int r = 0;
  while ((r = bgzf_getline(in.get(), '\n', &line)) >= 0) {
    ++line_no;
    std::size_t len = line.l;
    if (len > 0 && line.s[len - 1] == '\r') --len;
    if (len == 0) continue;
    if (line.s[0] == '>') {
      WTMAP_TRY(close_contig());
      std::size_t end = 1;
      while (end < len && line.s[end] != ' ' && line.s[end] != '\t') ++end;
      std::string name(line.s + 1, end - 1);
      if (name.empty()) return invalid_argument(where("header without a contig name"));
      if (!names.insert(name).second) return invalid_argument(where("duplicate contig name '" + name + "'"));
      if (ref.contigs.size() >= UINT32_MAX) return invalid_argument(where("too many contigs"));
      ref.contigs.push_back({std::move(name), 0});
      header_line = line_no;
      continue;
    }
    if (ref.contigs.empty()) return invalid_argument(where("sequence before the first '>' header (not FASTA?)"));
    Contig& contig = ref.contigs.back();
    const auto contig_id = static_cast<std::uint32_t>(ref.contigs.size() - 1);
    for (std::size_t i = 0; i < len; ++i) {
      const int code = kCodes[static_cast<unsigned char>(line.s[i])];
      if (code < 0) {
        const unsigned char byte = static_cast<unsigned char>(line.s[i]);
        char shown[16];
        std::snprintf(shown, sizeof shown, byte >= 32 && byte < 127 ? "'%c'" : "byte 0x%02x", byte);
        return invalid_argument(where("contig '" + contig.name + "', column " + std::to_string(i + 1) + ": " + shown +
                                      " is not a nucleotide code"));
      }
      if (code == 4) {
        in_run = false;
        ++ref.ambiguous_bases;
      } else {
        if (!in_run) {  // a new fragment, separated from the previous one
          if (!ref.fragments.empty()) ref.forward.push_back(kSeparator);
          ref.fragments.push_back({ref.forward.size(), 0, contig.length, contig_id});
          in_run = true;
        }
        ref.forward.push_back(static_cast<std::uint8_t>(code));
        ++ref.fragments.back().length;
      }
      ++contig.length;
    }
  }
  if (r < -1) return Status{StatusCode::io_error, path + ": read error after line " + std::to_string(line_no) + " (corrupt gzip?)"};
  WTMAP_TRY(close_contig());
  if (ref.contigs.empty()) return invalid_argument(path + ": no FASTA records (empty input?)");
  if (ref.fragments.empty()) return invalid_argument(path + ": the reference holds no A, C, G or T");
  return ref;
}

}  // namespace wtmap::fmindex
