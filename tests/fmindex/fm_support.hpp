// Helpers shared by the fmindex and CLI suites: temporary directories, plain and gzip files,
// reference generators with fixed seeds, and the independent oracle -- a naive scan of the
// contig strings for a pattern and its reverse complement.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace wtmap::fmtest {

namespace fs = std::filesystem;

// A fresh directory under $TMPDIR, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string name = (fs::temp_directory_path() / "wtmap-test-XXXXXX").string();
    if (mkdtemp(name.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + name);
    path_ = name;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }
  // Names of the entries in the directory, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A word for /bin/sh, single-quoted.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The wtmap program under test: $WTMAP_PROGRAM where set (on the GPU host the binaries live
// elsewhere than in the build tree), else the one this build made.
inline std::string wtmap_program(const char* built) {
  const char* env = std::getenv("WTMAP_PROGRAM");
  return env != nullptr && *env != '\0' ? env : built;
}

inline void write_gzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("gzopen failed for " + path);
  const int written = bytes.empty() ? 0 : gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  const int closed = gzclose(f);
  if (written != static_cast<int>(bytes.size()) || closed != Z_OK) throw std::runtime_error("gzwrite failed for " + path);
}

// ---- references ------------------------------------------------------------------------

// `unit` written `times` times: tandem repeats for the reference shapes.
inline std::string repeat(const std::string& unit, std::size_t times) {
  std::string s;
  for (std::size_t i = 0; i < times; ++i) s += unit;
  return s;
}

struct TestContig {
  std::string name;
  std::string sequence;  // as written to the FASTA: any case, U, IUPAC ambiguity codes
};

// FASTA text with `width` bases per line (0: one line per contig).
inline std::string fasta_text(const std::vector<TestContig>& contigs, std::size_t width = 60,
                              const std::string& eol = "\n") {
  std::string s;
  for (const TestContig& c : contigs) {
    s += ">" + c.name + eol;
    const std::size_t w = width == 0 ? std::max<std::size_t>(c.sequence.size(), 1) : width;
    for (std::size_t i = 0; i < c.sequence.size(); i += w) s += c.sequence.substr(i, w) + eol;
  }
  return s;
}

// Upper case, U read as T; other letters (ambiguity codes) are kept.
inline std::string normalized(const std::string& s) {
  std::string r = s;
  for (char& c : r) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c == 'U') c = 'T';
  }
  return r;
}

// Reverse complement of A/C/G/T; anything else becomes N.
inline std::string revcomp(const std::string& s) {
  std::string r;
  for (auto it = s.rbegin(); it != s.rend(); ++it) {
    switch (*it) {
      case 'A': r += 'T'; break;
      case 'C': r += 'G'; break;
      case 'G': r += 'C'; break;
      case 'T': r += 'A'; break;
      default: r += 'N';
    }
  }
  return r;
}

// Pattern codes as the index takes them: A/C/G/T/U (any case) 0..3, anything else 4.
inline std::vector<std::uint8_t> pattern_codes(const std::string& p) {
  std::vector<std::uint8_t> codes;
  for (char c : normalized(p)) {
    const auto at = std::string("ACGT").find(c);
    codes.push_back(static_cast<std::uint8_t>(at == std::string::npos ? 4 : at));
  }
  return codes;
}

// Random contigs: bases in mixed case (some U), N runs of 1..max_n_run (some lower case n),
// isolated IUPAC codes; lengths in [min_length, max_length].
struct RandomReferenceSpec {
  std::uint32_t seed = 1;
  int contigs = 4;
  std::size_t min_length = 50, max_length = 400;
  double n_run_rate = 0.01;       // chance per base of starting an N run
  std::size_t max_n_run = 10;
  double iupac_rate = 0.005;      // chance per base of one isolated R, Y, K, ...
};

inline std::vector<TestContig> random_reference(const RandomReferenceSpec& spec) {
  std::mt19937 rng(spec.seed);
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  auto pick = [&](const std::string& from) { return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(rng)]; };
  std::vector<TestContig> contigs;
  for (int k = 0; k < spec.contigs; ++k) {
    const std::size_t length = std::uniform_int_distribution<std::size_t>(spec.min_length, spec.max_length)(rng);
    std::string s;
    while (s.size() < length) {
      if (chance(spec.n_run_rate)) {
        const std::size_t run = std::uniform_int_distribution<std::size_t>(1, spec.max_n_run)(rng);
        s += std::string(std::min(run, length - s.size()), chance(0.2) ? 'n' : 'N');
      } else if (chance(spec.iupac_rate)) {
        s += pick("RYKMSWBDHVryk");
      } else if (chance(0.1)) {
        s += pick("acgtU");
      } else {
        s += pick("ACGT");
      }
    }
    contigs.push_back({"ctg" + std::to_string(k + 1), s});
  }
  return contigs;
}

// ---- the oracle -------------------------------------------------------------------------

struct Hit {
  std::uint32_t contig = 0;
  std::uint64_t position = 0;  // 0-based leftmost base on the forward strand
  char strand = '+';
  friend bool operator<(const Hit& a, const Hit& b) {
    return std::tie(a.contig, a.position, a.strand) < std::tie(b.contig, b.position, b.strand);
  }
  friend bool operator==(const Hit& a, const Hit& b) {
    return std::tie(a.contig, a.position, a.strand) == std::tie(b.contig, b.position, b.strand);
  }
  friend std::ostream& operator<<(std::ostream& os, const Hit& h) {
    return os << h.contig << ":" << h.position << ":" << h.strand;
  }
};

// Every (contig, position, strand) where the pattern (strand '+') or its reverse complement
// (strand '-') equals the contig's substring; a pattern with anything but A/C/G/T/U has none,
// and since it then holds only bases, no hit spans an ambiguity code. Sorted.
inline std::vector<Hit> naive_hits(const std::vector<TestContig>& contigs, const std::string& pattern) {
  std::vector<Hit> hits;
  const std::string p = normalized(pattern);
  if (p.empty() || p.find_first_not_of("ACGT") != std::string::npos) return hits;
  const std::string rc = revcomp(p);
  for (std::uint32_t k = 0; k < contigs.size(); ++k) {
    const std::string s = normalized(contigs[k].sequence);
    for (std::size_t pos = 0; pos + p.size() <= s.size(); ++pos) {
      if (s.compare(pos, p.size(), p) == 0) hits.push_back({k, pos, '+'});
      if (s.compare(pos, p.size(), rc) == 0) hits.push_back({k, pos, '-'});
    }
  }
  std::sort(hits.begin(), hits.end());
  return hits;
}

// ---- error messages --------------------------------------------------------------------------

// A reader's error message names the file, "<file>:<line>:" when line > 0, and each of `names`.
inline void expect_message_names(const std::string& message, const std::string& path, int line,
                                 const std::vector<std::string>& names) {
  EXPECT_NE(message.find(path), std::string::npos) << "message does not name the file: " << message;
  if (line > 0) {
    EXPECT_NE(message.find(path + ":" + std::to_string(line) + ":"), std::string::npos)
        << "message does not name line " << line << ": " << message;
  }
  for (const std::string& n : names) EXPECT_NE(message.find(n), std::string::npos) << "message lacks '" << n << "': " << message;
}

// ---- index files ----------------------------------------------------------------------------

// Section layout: 4-byte tag, u64 payload size, payload, u32 CRC-32 of the payload; the header
// section comes first, so its payload starts at byte 12.
constexpr std::size_t kHeaderPayload = 12;

inline std::uint64_t header_payload_size(const std::string& file) {
  std::uint64_t size = 0;
  std::memcpy(&size, file.data() + 4, 8);
  return size;
}

// Recomputes the CRC of the first (header) section after a test edited its payload.
inline void fix_header_crc(std::string& file) {
  const std::uint64_t size = header_payload_size(file);
  const auto crc = static_cast<std::uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(file.data() + kHeaderPayload), static_cast<uInt>(size)));
  std::memcpy(&file[kHeaderPayload + size], &crc, 4);
}

// Flips each byte of an index file in turn and loads the result with load(bytes) -> Status:
// every load must fail with a message that names `path`.
template <class Load>
::testing::AssertionResult EveryFlippedByteIsRejected(const std::string& good, const std::string& path, Load load) {
  std::vector<std::size_t> undetected;
  for (std::size_t offset = 0; offset < good.size(); ++offset) {
    std::string bad = good;
    bad[offset] = static_cast<char>(bad[offset] ^ 0xFF);
    const auto s = load(bad);
    if (s.ok()) {
      undetected.push_back(offset);
    } else if (s.message().find(path) == std::string::npos) {
      return ::testing::AssertionFailure() << "offset " << offset << ": " << s.message();
    }
  }
  if (undetected.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << undetected.size() << " of " << good.size()
                                       << " flipped bytes load without an error, the first at offset " << undetected.front();
}

}  // namespace wtmap::fmtest
