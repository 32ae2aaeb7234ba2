// Building an FmIndex from test contigs, asking it for the hits of a pattern set, and comparing
// with the naive scan (fm_support.hpp).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "fm_support.hpp"
#include "wtmap/core/config.hpp"
#include "wtmap/fmindex/fm_index.hpp"
#include "wtmap/fmindex/reference.hpp"

namespace wtmap {
// Test names in ctest show "cpu"/"gpu" rather than bytes.
inline void PrintTo(Backend b, std::ostream* os) { *os << backend_name(b); }
}  // namespace wtmap

namespace wtmap::fmtest {

// "Cpu"/"Gpu", for test names.
inline const char* backend_label(Backend b) { return b == Backend::gpu ? "Gpu" : "Cpu"; }

inline bool skip_backend(Backend b) { return b == Backend::gpu && !gpu_available(); }

#define WTMAP_FM_SKIP_WITHOUT(backend)                                                     \
  do {                                                                                     \
    if (::wtmap::fmtest::skip_backend(backend)) GTEST_SKIP() << "no usable CUDA device"; \
  } while (0)

// The reference of `contigs`, through a FASTA file in `dir` and read_fasta.
inline fmindex::Reference load_reference(const TempDir& dir, const std::vector<TestContig>& contigs) {
  const std::string path = dir.file("reference.fa");
  write_file(path, fasta_text(contigs, 50));
  auto ref = fmindex::read_fasta(path);
  if (!ref.ok()) throw std::runtime_error("read_fasta: " + ref.status().message());
  return std::move(ref).value();
}

inline fmindex::FmIndex build_index(const fmindex::Reference& ref, Backend backend, std::uint32_t sample_rate) {
  fmindex::FmIndexOptions options;
  options.backend = backend;
  options.sample_rate = sample_rate;
  auto index = fmindex::FmIndex::build(ref, options);
  if (!index.ok()) throw std::runtime_error("FmIndex::build: " + index.status().message());
  return std::move(index).value();
}

// What the index answers for each pattern: the interval size and the located hits, sorted.
struct Answers {
  std::vector<std::uint64_t> counts;
  std::vector<std::vector<Hit>> hits;
  bool operator==(const Answers& o) const { return counts == o.counts && hits == o.hits; }
};

// The SA interval of each pattern through the index's batch search (either index kind), the
// patterns' codes laid one after another; encode(pattern) gives a pattern's codes.
template <class Index, class Encode>
std::vector<fmindex::SaInterval> search_intervals(const Index& index, const std::vector<std::string>& patterns,
                                                  Encode encode) {
  std::vector<std::uint8_t> codes;
  std::vector<fmindex::PatternRef> refs;
  for (const std::string& p : patterns) {
    const std::vector<std::uint8_t> c = encode(p);
    refs.push_back({codes.size(), static_cast<std::uint32_t>(c.size())});
    codes.insert(codes.end(), c.begin(), c.end());
  }
  std::vector<fmindex::SaInterval> intervals(patterns.size());
  const Status searched = index.search(codes.data(), codes.size(), refs.data(), refs.size(), intervals.data());
  if (!searched.ok()) throw std::runtime_error("search: " + searched.message());
  return intervals;
}

// DNA patterns (A/C/G/T, anything else never matches).
inline std::vector<fmindex::SaInterval> search_intervals(const fmindex::FmIndex& index,
                                                         const std::vector<std::string>& patterns) {
  return search_intervals(index, patterns, [](const std::string& p) { return pattern_codes(p); });
}

// Counts and locates the patterns through the index's batch API (either index kind);
// encode(pattern) gives a pattern's codes.
template <class Index, class Encode>
Answers query_with(const Index& index, const std::vector<std::string>& patterns, Encode encode) {
  const std::vector<fmindex::SaInterval> intervals = search_intervals(index, patterns, encode);
  std::vector<std::uint64_t> rows;
  for (const auto& iv : intervals) {
    if (iv.lo > iv.hi || iv.hi > index.view().rows) throw std::runtime_error("search returned an interval out of range");
    for (std::uint64_t r = iv.lo; r < iv.hi; ++r) rows.push_back(r);
  }
  std::vector<std::uint64_t> positions(rows.size());
  const Status located = index.locate(rows.data(), positions.data(), rows.size());
  if (!located.ok()) throw std::runtime_error("locate: " + located.message());
  Answers a;
  std::size_t next = 0;
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    a.counts.push_back(intervals[i].size());
    std::vector<Hit> hits;
    for (std::uint64_t k = 0; k < intervals[i].size(); ++k, ++next) {
      const auto h = index.to_reference(positions[next], patterns[i].size());
      hits.push_back({h.contig, h.position, h.reverse ? '-' : '+'});
    }
    std::sort(hits.begin(), hits.end());
    a.hits.push_back(std::move(hits));
  }
  return a;
}

inline Answers query(const fmindex::FmIndex& index, const std::vector<std::string>& patterns) {
  return query_with(index, patterns, [](const std::string& p) { return pattern_codes(p); });
}

inline std::string describe(const std::vector<Hit>& hits) {
  std::ostringstream s;
  s << hits.size() << " [";
  for (std::size_t i = 0; i < hits.size() && i < 8; ++i) s << (i ? " " : "") << hits[i];
  if (hits.size() > 8) s << " ...";
  return s.str() + "]";
}

// Printable form of a pattern that may hold any byte.
inline std::string shown(const std::string& p) {
  std::ostringstream s;
  for (unsigned char c : p) {
    if (c >= 32 && c < 127 && c != '\\') {
      s << c;
    } else {
      static const char* hex = "0123456789abcdef";
      s << "\\x" << hex[c >> 4] << hex[c & 15];
    }
  }
  return s.str();
}

// Compares the index's counts and located hits (patterns encoded by encode(pattern)) with
// expected_hits(pattern), the naive scan; names up to 10 patterns that disagree.
template <class Index, class Encode, class ExpectedHits>
::testing::AssertionResult AnswersMatch(const Index& index, const std::vector<std::string>& patterns, Encode encode,
                                        ExpectedHits expected_hits) {
  Answers got;
  try {
    got = query_with(index, patterns, encode);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << e.what();
  }
  std::size_t wrong = 0, found = 0;
  std::ostringstream details;
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const std::vector<Hit> expected = expected_hits(patterns[i]);
    found += !expected.empty();
    if (got.counts[i] == expected.size() && got.hits[i] == expected) continue;
    if (++wrong <= 10) {
      details << "\n  pattern '" << shown(patterns[i]) << "': count " << got.counts[i] << ", hits "
              << describe(got.hits[i]) << "; expected " << describe(expected);
    }
  }
  if (wrong == 0) return ::testing::AssertionSuccess() << found << " of " << patterns.size() << " patterns occur";
  return ::testing::AssertionFailure() << wrong << " of " << patterns.size() << " patterns disagree with the naive scan"
                                       << details.str();
}

// The DNA index against the naive scan of both strands of the contigs.
inline ::testing::AssertionResult MatchesNaiveScan(const fmindex::FmIndex& index, const std::vector<TestContig>& contigs,
                                                   const std::vector<std::string>& patterns) {
  return AnswersMatch(index, patterns, pattern_codes, [&](const std::string& p) { return naive_hits(contigs, p); });
}

}  // namespace wtmap::fmtest
