// libFuzzer harness: the index loaders (FmIndex::load for DNA, GeneralFmIndex::load for protein
// and byte; fmindex/src/index_file.cpp and the .cu loaders) on the CPU backend, then searches and
// locates on what loaded. The input is an index file. The custom mutator mostly edits one
// section's payload and recomputes its size and CRC-32 (index_sections.hpp), so edits reach the
// structural checks behind the checksums (issue 23: an index file is untrusted, a crafted one can
// carry valid checksums); now and then it edits the raw bytes, framing and checksums included.
//
// A loaded index must answer without a crash, a hang (libFuzzer's -timeout) or a sanitizer
// report, with SA intervals inside [0, rows], located text positions < rows, and every position
// of a match mapped to one of the index's contigs.
#include <cstddef>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "index_sections.hpp"
#include "wtmap/fmindex/fm_index.hpp"
#include "wtmap/fmindex/general_fm_index.hpp"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

using wtmap::Backend;
using wtmap::fmindex::PatternRef;
using wtmap::fmindex::SaInterval;

// Every pattern of 1..`longest` symbols over `codes`, concatenated into `text`.
void all_patterns(const std::vector<std::uint8_t>& codes, std::uint32_t longest, std::vector<std::uint8_t>& text,
                  std::vector<PatternRef>& patterns) {
  std::vector<std::vector<std::uint8_t>> level = {{}};
  for (std::uint32_t length = 1; length <= longest; ++length) {
    std::vector<std::vector<std::uint8_t>> next;
    for (const auto& prefix : level) {
      for (std::uint8_t c : codes) {
        next.push_back(prefix);
        next.back().push_back(c);
        patterns.push_back({text.size(), length});
        text.insert(text.end(), next.back().begin(), next.back().end());
      }
    }
    level = std::move(next);
  }
}

// Searches every short pattern, locates up to 16 rows of each interval and maps the positions.
template <class Index>
void query(const Index& index, const std::vector<std::uint8_t>& codes, std::uint32_t longest) {
  std::vector<std::uint8_t> text;
  std::vector<PatternRef> patterns;
  all_patterns(codes, longest, text, patterns);
  std::vector<SaInterval> intervals(patterns.size());
  if (!index.search(text.data(), text.size(), patterns.data(), patterns.size(), intervals.data()).ok()) return;
  const std::uint64_t rows = index.view().rows;
  std::vector<std::uint64_t> located_rows;
  std::vector<std::uint32_t> lengths;
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    const SaInterval iv = intervals[i];
    WTMAP_FUZZ_CHECK(iv.lo <= iv.hi && iv.hi <= rows, "an SA interval outside the index's rows");
    for (std::uint64_t r = iv.lo; r < iv.hi && r < iv.lo + 16; ++r) {
      located_rows.push_back(r);
      lengths.push_back(patterns[i].length);
    }
  }
  if (!index.can_locate() || located_rows.empty()) return;
  std::vector<std::uint64_t> positions(located_rows.size());
  if (!index.locate(located_rows.data(), positions.data(), positions.size()).ok()) return;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    WTMAP_FUZZ_CHECK(positions[i] < rows, "a located text position past the text");
    if (positions[i] + lengths[i] > rows) continue;  // no match runs past the text's end
    const auto hit = index.to_reference(positions[i], lengths[i]);
    WTMAP_FUZZ_CHECK(hit.contig < index.contigs().size(), "a match mapped to no contig");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = wtmap::fuzz::scratch_path(".wtmap");
  wtmap::fuzz::write_file(path, std::string_view(reinterpret_cast<const char*>(data), size));
  auto alphabet = wtmap::fmindex::read_index_alphabet(path);
  if (!alphabet.ok()) return 0;
  if (*alphabet == wtmap::fmindex::Alphabet::dna) {
    auto index = wtmap::fmindex::FmIndex::load(path, Backend::cpu);
    if (index.ok()) query(*index, {0, 1, 2, 3}, 3);
    return 0;
  }
  auto index = wtmap::fmindex::GeneralFmIndex::load(path, Backend::cpu);
  if (!index.ok()) return 0;
  std::set<std::uint8_t> present;  // the codes of the index's symbols, at most 8 of them
  for (int b = 0; b < 256 && present.size() < 8; ++b) {
    const std::uint8_t c = index->code(static_cast<char>(b));
    if (c != 0) present.insert(c);
  }
  query(*index, std::vector<std::uint8_t>(present.begin(), present.end()), 2);
  return 0;
}

// One edit in 8 is raw (framing and checksums may break, so their checks are fuzzed too); the
// rest edit one section's payload and keep the file well framed and its checksums valid.
extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  std::minstd_rand random(seed);
  std::vector<wtmap::fuzz::IndexSection> sections;
  if (random() % 8 == 0 || !wtmap::fuzz::split_sections(data, size, sections)) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  wtmap::fuzz::IndexSection& s = sections[random() % sections.size()];
  const std::size_t room = max_size - size;
  std::string payload = s.payload;
  payload.resize(s.payload.size() + room);
  payload.resize(LLVMFuzzerMutate(reinterpret_cast<std::uint8_t*>(payload.data()), s.payload.size(), payload.size()));
  s.payload = std::move(payload);
  const std::string joined = wtmap::fuzz::join_sections(sections);
  if (joined.size() > max_size) return size;
  std::memcpy(data, joined.data(), joined.size());
  return joined.size();
}
