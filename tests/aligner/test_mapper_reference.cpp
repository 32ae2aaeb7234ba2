// MapperReference (aligner/src/gapped/mapper_reference.hpp), the gapped mapper's view of the
// reference, against the FASTA it was built from: every base on both strands, copies of windows,
// the long ambiguity runs and the windows clipped at them, each against a naive scan of the
// contig text. The contigs hold
// ambiguity runs of every length around kLongAmbiguityRun, at contig ends, IUPAC codes other
// than N, a contig of nothing but N, and one of several million bases, decoded by many threads
// (ranges that start and end inside fragments).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fm_queries.hpp"
#include "fm_support.hpp"
#include "mapper_reference.hpp"
#include "wtmap/core/config.hpp"

namespace wtmap {
namespace {

using aligner::gapped::kLongAmbiguityRun;
using aligner::gapped::MapperReference;

std::uint8_t code_of(char c) {
  switch (c) {
    case 'A': case 'a': return 0;
    case 'C': case 'c': return 1;
    case 'G': case 'g': return 2;
    case 'T': case 't': case 'U': case 'u': return 3;
    default: return 4;
  }
}

// The naive view: code of strand position i, and whether [a, b) of a strand holds a base of an
// ambiguity run (maximal, on the contig) of kLongAmbiguityRun bases or more.
struct NaiveContig {
  std::vector<std::uint8_t> codes;
  std::vector<std::uint8_t> in_long_run;
  explicit NaiveContig(const std::string& text) {
    for (char c : text) codes.push_back(code_of(c));
    in_long_run.assign(codes.size(), 0);
    for (std::size_t i = 0; i < codes.size();) {
      std::size_t j = i;
      while (j < codes.size() && codes[j] == 4) ++j;
      if (j - i >= kLongAmbiguityRun) std::fill(in_long_run.begin() + i, in_long_run.begin() + j, 1);
      i = j > i ? j : i + 1;
    }
  }
  std::int64_t length() const { return static_cast<std::int64_t>(codes.size()); }
  std::uint8_t base(bool reverse, std::int64_t i) const {
    if (!reverse) return codes[i];
    const std::uint8_t b = codes[codes.size() - 1 - i];
    return b < 4 ? static_cast<std::uint8_t>(3 - b) : b;
  }
  bool long_run_between(bool reverse, std::int64_t a, std::int64_t b) const {
    for (std::int64_t i = a; i < b; ++i)
      if (in_long_run[reverse ? length() - 1 - i : i]) return true;
    return false;
  }
};

// The naive clip_window: from keep_lo down, the first ambiguity base of a run of
// kLongAmbiguityRun or more ends the window above it, and from keep_hi up one begins where the
// window ends; shorter runs are aligned across.
void naive_clip(const NaiveContig& n, bool reverse, std::int64_t keep_lo, std::int64_t keep_hi, std::int64_t& lo,
                std::int64_t& hi) {
  lo = std::max<std::int64_t>(lo, 0);
  hi = std::min<std::int64_t>(hi, n.length());
  auto in_long = [&](std::int64_t i) { return n.in_long_run[reverse ? n.length() - 1 - i : i] != 0; };
  for (std::int64_t i = keep_lo - 1; i >= lo; --i) {
    if (in_long(i)) {
      lo = i + 1;
      break;
    }
  }
  for (std::int64_t i = keep_hi; i < hi; ++i) {
    if (in_long(i)) {
      hi = i;
      break;
    }
  }
}

std::string random_bases(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, 'A');
  for (char& c : s) c = "ACGT"[rng() % 4];
  return s;
}

std::vector<fmtest::TestContig> contigs() {
  std::mt19937_64 rng(31);
  // Runs of 1 and 9 to 11 Ns, lower case, IUPAC codes (R, Y: ambiguous as N), and long runs.
  std::string first = std::string(12, 'N') + random_bases(rng, 300);
  for (std::size_t run : {1, 9, 10, 11, 2, 40})
    first += std::string(run, run == 2 ? 'R' : 'N') + random_bases(rng, 97 + run);
  first += "acgtnnnnnnnnnnnacgt" + random_bases(rng, 50) + "NNN";
  // Several million bases with runs scattered over them: the decode's ranges fall inside fragments.
  std::string big = random_bases(rng, 3'300'000);
  for (std::size_t at = 1000; at + 5000 < big.size(); at += 250'000 + rng() % 1000)
    big.replace(at, 1 + rng() % 30, std::string(1 + rng() % 30, rng() % 2 ? 'N' : 'Y'));
  return {{"ends", first}, {"all_n", std::string(60, 'N')}, {"short", random_bases(rng, 15) + std::string(10, 'N')},
          {"big", big}, {"tiny", "ACGTACGTACGTACGTACGTA"}};
}

class MapperReferenceTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { WTMAP_FM_SKIP_WITHOUT(GetParam()); }
};

TEST_P(MapperReferenceTest, EveryBaseAndLongRunMatchesTheFasta) {
  const std::vector<fmtest::TestContig> input = contigs();
  fmtest::TempDir dir;
  const fmindex::Reference fasta = fmtest::load_reference(dir, input);
  const fmindex::FmIndex index = fmtest::build_index(fasta, GetParam(), 8);
  set_cpu_threads(7);  // many decode ranges on any machine
  Result<MapperReference> made = MapperReference::create(index);
  set_cpu_threads(0);
  ASSERT_TRUE(made.ok()) << made.status().message();
  const MapperReference& ref = *made;
  std::mt19937_64 rng(5);
  for (std::uint32_t k = 0; k < input.size(); ++k) {
    SCOPED_TRACE(input[k].name);
    const NaiveContig naive(input[k].sequence);
    ASSERT_EQ(ref.contig_length(k), static_cast<std::uint64_t>(naive.length()));
    for (bool reverse : {false, true}) {
      for (std::int64_t i = 0; i < naive.length(); ++i) {
        if (ref.base(k, reverse, i) != naive.base(reverse, i)) {
          FAIL() << (reverse ? "reverse" : "forward") << " position " << i;
        }
      }
      // Reference windows around kept bases (no ambiguity code, as a chain's seeds), reaching up
      // to 400 bases either way, clipped as the naive scan clips them.
      for (int w = 0; w < 4000 && naive.length() > 0; ++w) {
        const auto keep_lo = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(naive.length()));
        std::int64_t keep_hi = keep_lo;
        while (keep_hi < naive.length() && keep_hi - keep_lo < 1 + static_cast<std::int64_t>(rng() % 30) &&
               naive.base(reverse, keep_hi) != 4)
          ++keep_hi;
        if (keep_hi == keep_lo) continue;  // an ambiguity code: no seed starts here
        const std::int64_t lo = keep_lo - static_cast<std::int64_t>(rng() % 400);
        const std::int64_t hi = keep_hi + static_cast<std::int64_t>(rng() % 400);
        std::int64_t got_lo = lo, got_hi = hi, want_lo = lo, want_hi = hi;
        ref.clip_window(k, reverse, keep_lo, keep_hi, got_lo, got_hi);
        naive_clip(naive, reverse, keep_lo, keep_hi, want_lo, want_hi);
        ASSERT_EQ(got_lo, want_lo) << (reverse ? "reverse " : "forward ") << keep_lo << "-" << keep_hi << " in " << lo << "-" << hi;
        ASSERT_EQ(got_hi, want_hi) << (reverse ? "reverse " : "forward ") << keep_lo << "-" << keep_hi << " in " << lo << "-" << hi;
      }
      // Windows of up to 40 bases: at every start of the small contigs, at random ones of the big.
      const bool every = naive.length() < 10000;
      const std::int64_t starts = every ? naive.length() : 3000;
      for (std::int64_t s = 0; s < starts; ++s) {
        const std::int64_t a = every ? s : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(naive.length()));
        for (std::int64_t b = a; b <= std::min(naive.length(), a + 40); b += every ? 1 : 13) {
          ASSERT_EQ(ref.long_run_between(k, reverse, a, b), naive.long_run_between(reverse, a, b))
              << (reverse ? "reverse [" : "forward [") << a << ", " << b << ")";
          std::vector<std::uint8_t> copy(static_cast<std::size_t>(b - a));
          ref.copy_bases(k, reverse, a, b, copy.data());
          for (std::int64_t i = a; i < b; ++i) ASSERT_EQ(copy[i - a], naive.base(reverse, i)) << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, MapperReferenceTest, ::testing::Values(Backend::cpu, Backend::gpu),
                         [](const auto& info) { return std::string(fmtest::backend_label(info.param)); });

// complement_codes (copy_bases' eight bases at a time) on every word of eight codes 0..4: codes
// 0..3 become 3 - code, 4 stays, byte by byte.
TEST(ComplementCodes, EveryWordOfCodesTurnsByteByByte) {
  constexpr std::uint32_t kWords = 390625;  // 5^8
  for (std::uint32_t w = 0; w < kWords; ++w) {
    std::uint8_t bytes[8], want[8], got[8];
    for (std::uint32_t i = 0, v = w; i < 8; ++i, v /= 5) {
      bytes[i] = static_cast<std::uint8_t>(v % 5);
      want[i] = bytes[i] == 4 ? 4 : static_cast<std::uint8_t>(3 - bytes[i]);
    }
    std::uint64_t word = 0;
    std::memcpy(&word, bytes, 8);
    word = aligner::gapped::complement_codes(word);
    std::memcpy(got, &word, 8);
    ASSERT_TRUE(std::equal(got, got + 8, want)) << "word " << w;
  }
}

}  // namespace
}  // namespace wtmap
