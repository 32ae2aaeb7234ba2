// libFuzzer harness: the reference FASTA readers (fmindex/src/reference.cpp) -- read_fasta for DNA
// and read_symbol_fasta for protein and byte references -- on FASTA stored plain, as gzip and as
// BGZF. The contigs, fragments and forward text are checked against a reference parse written
// from the documented rules (reference.hpp, symbol_reference.hpp; contig names as SAM allows
// them), and so is whether the input is rejected.
#include <cstddef>
#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "wtmap/fmindex/alphabet.hpp"
#include "wtmap/fmindex/reference.hpp"
#include "wtmap/fmindex/symbol_reference.hpp"

namespace {

using wtmap::fmindex::Alphabet;
using wtmap::fmindex::Contig;
using wtmap::fmindex::Fragment;

struct Parsed {
  std::vector<Contig> contigs;
  std::vector<Fragment> fragments;
  std::vector<std::uint8_t> forward;
  std::uint64_t ambiguous = 0;
  bool failed = false;
};

// A DNA byte: 0..3 for ACGT/U in either case, 4 for the other IUPAC codes, -1 for anything else.
int dna_code(unsigned char c) {
  const std::string_view bases = "ACGT", ambiguous = "NRYKMSWBDHV";
  const auto upper = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  if (upper == 'U') return 3;
  if (bases.find(upper) != std::string_view::npos && upper != '\0') return static_cast<int>(bases.find(upper));
  return upper != '\0' && ambiguous.find(upper) != std::string_view::npos ? 4 : -1;
}

// Appends one sequence line of the last contig: DNA opens a fragment at each base after a
// separator (a contig start or a run of ambiguity codes); protein and byte have one fragment per
// record. False if a byte is not in the alphabet.
bool add_line(Parsed& p, Alphabet alphabet, std::string_view line, bool& in_fragment) {
  Contig& contig = p.contigs.back();
  const auto contig_id = static_cast<std::uint32_t>(p.contigs.size() - 1);
  if (alphabet != Alphabet::dna && contig.length == 0) {
    if (!p.fragments.empty()) p.forward.push_back(wtmap::fmindex::kRecordSeparator);
    p.fragments.push_back({p.forward.size(), 0, 0, contig_id});
  }
  for (std::size_t i = 0; i < line.size(); ++i) {
    const auto byte = static_cast<unsigned char>(line[i]);
    const int code = alphabet == Alphabet::dna ? dna_code(byte) : wtmap::fmindex::normalized_symbol(alphabet, byte);
    if (code < 0) return false;
    if (alphabet != Alphabet::dna) {
      p.forward.push_back(static_cast<std::uint8_t>(code));
      ++p.fragments.back().length;
    } else if (code == 4) {
      in_fragment = false;
      ++p.ambiguous;
    } else {
      if (!in_fragment) {
        if (!p.fragments.empty()) p.forward.push_back(wtmap::fmindex::kSeparator);
        p.fragments.push_back({p.forward.size(), 0, contig.length + i, contig_id});
        in_fragment = true;
      }
      p.forward.push_back(static_cast<std::uint8_t>(code));
      ++p.fragments.back().length;
    }
  }
  contig.length += line.size();
  return true;
}

Parsed reference_parse(std::string_view text, Alphabet alphabet) {
  Parsed p;
  std::set<std::string> names;
  bool in_fragment = false;
  auto fail = [&p] {
    p.failed = true;
    return p;
  };
  for (std::string_view line : wtmap::fuzz::split_lines(text)) {
    if (line.empty()) continue;
    if (line[0] == '>') {
      if (!p.contigs.empty() && p.contigs.back().length == 0) return fail();
      const std::size_t blank = line.find_first_of(" \t", 1);
      std::string name(line.substr(1, blank == std::string_view::npos ? std::string_view::npos : blank - 1));
      // SAM v1.6 section 1.2.1's reference names (is_valid_contig_name's rule).
      static const std::regex sam_name("[0-9A-Za-z!#$%&+./:;?@^_|~-][0-9A-Za-z!#$%&*+./:;=?@^_|~-]*");
      if (!std::regex_match(name, sam_name) || !names.insert(name).second) return fail();
      p.contigs.push_back({name, 0});
      in_fragment = false;
      continue;
    }
    if (p.contigs.empty() || !add_line(p, alphabet, line, in_fragment)) return fail();
  }
  if (p.contigs.empty() || p.contigs.back().length == 0) return fail();
  if (alphabet == Alphabet::dna && p.fragments.empty()) return fail();
  return p;
}

bool same_fragments(const std::vector<Fragment>& a, const std::vector<Fragment>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].text_start != b[i].text_start || a[i].length != b[i].length || a[i].contig_offset != b[i].contig_offset ||
        a[i].contig != b[i].contig) {
      return false;
    }
  }
  return true;
}

bool same_contigs(const std::vector<Contig>& a, const std::vector<Contig>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].length != b[i].length) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const wtmap::fuzz::StoredInput in = wtmap::fuzz::split_input(data, size);
  const unsigned kind = (in.flags >> 2) % 3;
  const Alphabet alphabet = kind == 0 ? Alphabet::dna : kind == 1 ? Alphabet::protein : Alphabet::byte;
  const std::string& path = wtmap::fuzz::scratch_path();
  wtmap::fuzz::write_stored(path, in);

  Parsed got;
  if (alphabet == Alphabet::dna) {
    auto ref = wtmap::fmindex::read_fasta(path);
    got.failed = !ref.ok();
    if (ref.ok()) {
      got.contigs = ref->contigs;
      got.fragments = ref->fragments;
      got.forward = ref->forward;
      got.ambiguous = ref->ambiguous_bases;
    }
  } else {
    auto ref = wtmap::fmindex::read_symbol_fasta(path, alphabet);
    got.failed = !ref.ok();
    if (ref.ok()) {
      got.contigs = ref->contigs;
      got.fragments = ref->fragments;
      got.forward = ref->forward;
    }
  }
  if (!in.payload_is_content()) return 0;  // forged gzip: no crash, no hang is all we can ask

  const Parsed expected = reference_parse(in.payload, alphabet);
  WTMAP_FUZZ_CHECK(got.failed == expected.failed, got.failed ? "rejected a well-formed reference" : "accepted a malformed reference");
  if (got.failed) return 0;
  WTMAP_FUZZ_CHECK(same_contigs(got.contigs, expected.contigs), "contigs differ from the reference parse");
  WTMAP_FUZZ_CHECK(same_fragments(got.fragments, expected.fragments), "fragments differ from the reference parse");
  WTMAP_FUZZ_CHECK(got.forward == expected.forward, "forward text differs from the reference parse");
  WTMAP_FUZZ_CHECK(got.ambiguous == expected.ambiguous, "ambiguous base count differs");
  return 0;
}
