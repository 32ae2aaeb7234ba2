// Reads cut from a test reference for the suites that run `wtmap align` on whole files (--sort,
// CRAM): single reads from both strands with ties, unmapped reads and chimeras, and FR pairs.
#pragma once

#include <cstddef>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "align_oracle.hpp"
#include "cli_support.hpp"
#include "fm_support.hpp"

namespace wtmap::altest {

// `length` bases from a random place of a random contig, as the FASTA holds them.
inline std::string cut_piece(const std::vector<fmtest::TestContig>& contigs, std::mt19937& rng, std::size_t length) {
  const std::string& s = contigs[rng() % contigs.size()].sequence;
  return s.substr(rng() % (s.size() - length), length);
}

// `n` reads of 100 bases from both strands (the odd ones reverse-complemented); of every ten, read
// 3 is random bases (unmapped), 5 repeats the read before (a tie), 7 is a chimera of two pieces of
// 60 (a primary and a supplementary line).
inline std::vector<fmtest::Pattern> mixed_reads(const std::vector<fmtest::TestContig>& contigs, std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<fmtest::Pattern> reads;
  for (std::size_t i = 0; i < n; ++i) {
    std::string s = cut_piece(contigs, rng, 100);
    if (i % 10 == 3) s = random_bases(rng, 100);
    if (i % 10 == 5) s = reads.back().sequence;
    if (i % 10 == 7) s = cut_piece(contigs, rng, 60) + cut_piece(contigs, rng, 60);
    if (i % 2 == 1) s = fmtest::revcomp(s);
    reads.push_back({"r" + std::to_string(i), s});
  }
  return reads;
}

// Mates 1 and 2 of `n` fragments of 300 bases in FR orientation: mate 1 the fragment's first 100
// bases, mate 2 its last 100 reverse-complemented, but every ninth (i % 9 == 4) random (unmapped,
// placed at its mate).
inline std::pair<std::vector<fmtest::Pattern>, std::vector<fmtest::Pattern>> fr_pairs(
    const std::vector<fmtest::TestContig>& contigs, std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<fmtest::Pattern> first, second;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string fragment = cut_piece(contigs, rng, 300);
    first.push_back({"p" + std::to_string(i) + "/1", fragment.substr(0, 100)});
    second.push_back({"p" + std::to_string(i) + "/2", i % 9 == 4 ? random_bases(rng, 100) : fmtest::revcomp(fragment.substr(200))});
  }
  return {std::move(first), std::move(second)};
}

}  // namespace wtmap::altest
