// sampled_suffix_array.hpp: the sample rate an index gets by default, against its definition
// (the smallest of 8, 16 and 32 whose n / s samples of 8 bytes fit 256 MiB), at the edges of
// each rate and past 2^32 rows.
#include <gtest/gtest.h>

#include <cstdint>

#include "wtmap/fmindex/sampled_suffix_array.hpp"

namespace wtmap::fmindex {
namespace {

TEST(DefaultSampleRate, DensestRateWhoseSamplesFit256MiB) {
  constexpr std::uint64_t kBudget = std::uint64_t{1} << 28;  // bytes
  // Rows that give exactly the budget at rate s: n / s * 8 = 2^28, i.e. n in [2^25 s, 2^25 s + s).
  for (std::uint64_t s : {8u, 16u}) {
    const std::uint64_t last = (kBudget / 8) * s + (s - 1);  // the most rows rate s still takes
    EXPECT_EQ(default_sample_rate(last), s);
    EXPECT_EQ(default_sample_rate(last + 1), 2 * s);
    EXPECT_LE(last / s * 8, kBudget);
    EXPECT_GT((last + 1) / s * 8, kBudget);
  }
  EXPECT_EQ(default_sample_rate(0), 8u);
  EXPECT_EQ(default_sample_rate(10), 8u);
  EXPECT_EQ(default_sample_rate(9'300'000), 8u);  // E. coli, both strands
  EXPECT_EQ(default_sample_rate(std::uint64_t{1} << 32), 32u);
  EXPECT_EQ(default_sample_rate(std::uint64_t{6'200'000'000}), 32u);  // GRCh38, both strands
  EXPECT_EQ(default_sample_rate(~std::uint64_t{0}), 32u);
}

}  // namespace
}  // namespace wtmap::fmindex
