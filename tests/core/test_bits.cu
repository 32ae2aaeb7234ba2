// bits.hpp: the word-level helpers against naive bit loops, on the host and (where a GPU is
// usable) on the device, whose code paths use CUDA intrinsics instead of compiler builtins.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "reference.hpp"
#include "support.hpp"
#include "view_drivers.cuh"
#include "wtmap/core/bits.hpp"

namespace wtmap::test {
namespace {

// ---- Naive references -----------------------------------------------------------------------

int naive_popcount(std::uint64_t x) {
  int c = 0;
  for (int b = 0; b < 64; ++b) c += (x >> b) & 1;
  return c;
}
int naive_clz(std::uint64_t x) {
  int c = 0;
  for (int b = 63; b >= 0 && !((x >> b) & 1); --b) ++c;
  return c;
}
int naive_ctz(std::uint64_t x) {
  int c = 0;
  for (int b = 0; b < 64 && !((x >> b) & 1); ++b) ++c;
  return c;
}
std::uint64_t naive_byte_swap(std::uint64_t x) {
  std::uint64_t y = 0;
  for (int b = 0; b < 8; ++b) y |= ((x >> (8 * b)) & 0xFF) << (8 * (7 - b));
  return y;
}
unsigned naive_ceil_log2(std::uint64_t x) {
  unsigned l = 0;
  while (l < 64 && (std::uint64_t{1} << l) < x) ++l;
  return l;
}
std::uint64_t naive_split_size(std::uint64_t x) {  // largest power of two strictly below x
  std::uint64_t p = 1;
  while (p < (std::uint64_t{1} << 63) && 2 * p < x) p *= 2;
  return p;
}
unsigned naive_select_in_word(std::uint64_t w, unsigned k) {
  for (unsigned b = 0; b < 64; ++b) {
    if (((w >> b) & 1) && k-- == 0) return b;
  }
  return 64;
}

// Words with few, many, clustered and random bits, and the extremes.
std::vector<std::uint64_t> test_words() {
  std::mt19937_64 rng(kSeed);
  std::vector<std::uint64_t> w = {1, 2, 3, ~std::uint64_t{0}, std::uint64_t{1} << 63, 0x8000000000000001ULL,
                                  0x5555555555555555ULL, 0xAAAAAAAAAAAAAAAAULL, 0x00000000FFFFFFFFULL,
                                  0xFFFFFFFF00000000ULL};
  for (int b = 0; b < 64; ++b) w.push_back(std::uint64_t{1} << b);
  for (int j = 0; j < 1000; ++j) {
    w.push_back(rng());
    w.push_back(rng() & rng() & rng());  // sparse
    w.push_back(rng() | rng() | rng());  // dense
  }
  return w;
}

TEST(Bits, PopcountAndLeadingAndTrailingZeros) {
  for (std::uint64_t x : test_words()) {
    EXPECT_EQ(bits::popcount64(x), naive_popcount(x)) << std::hex << x;
    EXPECT_EQ(bits::count_leading_zeros64(x), naive_clz(x)) << std::hex << x;
    EXPECT_EQ(bits::count_trailing_zeros64(x), naive_ctz(x)) << std::hex << x;
  }
  EXPECT_EQ(bits::popcount64(0), 0);
}

TEST(Bits, ByteSwap) {
  for (std::uint64_t x : test_words()) EXPECT_EQ(bits::byte_swap64(x), naive_byte_swap(x)) << std::hex << x;
  EXPECT_EQ(bits::byte_swap64(0x0102030405060708ULL), 0x0807060504030201ULL);
}

TEST(Bits, LowMask) {
  for (unsigned c = 0; c <= 64; ++c) {
    std::uint64_t expected = 0;
    for (unsigned b = 0; b < c; ++b) expected |= std::uint64_t{1} << b;
    EXPECT_EQ(bits::low_mask64(c), expected) << c;
  }
}

TEST(Bits, CeilLog2AndSplitSize) {
  EXPECT_EQ(bits::ceil_log2(0), 0u);
  std::vector<std::uint64_t> xs;
  for (std::uint64_t x = 1; x <= 70000; ++x) xs.push_back(x);
  for (int b = 17; b < 64; ++b) {
    for (int d : {-1, 0, 1}) xs.push_back((std::uint64_t{1} << b) + d);
  }
  xs.push_back(~std::uint64_t{0});
  for (std::uint64_t x : xs) {
    ASSERT_EQ(bits::ceil_log2(x), naive_ceil_log2(x)) << x;
    if (x >= 2) {
      ASSERT_EQ(bits::split_size(x), naive_split_size(x)) << x;
    }
  }
  // The thesis' reduced code sizes: 5 = 4 + 1, 6 = 4 + 2, 7 = 4 + 3, 243 = 128 + 115.
  EXPECT_EQ(bits::split_size(5), 4u);
  EXPECT_EQ(bits::split_size(7), 4u);
  EXPECT_EQ(bits::split_size(8), 4u);
  EXPECT_EQ(bits::split_size(243), 128u);
}

TEST(Bits, SelectInWord) {
  for (std::uint64_t x : test_words()) {
    const int ones = naive_popcount(x);
    for (int k = 0; k < ones; ++k) {
      ASSERT_EQ(bits::select_in_word64(x, k), naive_select_in_word(x, k)) << std::hex << x << std::dec << " k = " << k;
    }
  }
}

TEST(Bits, CeilDivAndRoundUp) {
  for (std::uint64_t a = 0; a < 300; ++a) {
    for (std::uint64_t b : {1, 2, 3, 32, 64, 128}) {
      const std::uint64_t q = a / b + (a % b != 0 ? 1 : 0);
      EXPECT_EQ(bits::ceil_div(a, b), q);
      EXPECT_EQ(bits::round_up(a, b), q * b);
    }
  }
  EXPECT_EQ(bits::ceil_div<std::uint64_t>((std::uint64_t{1} << 32) + 1, 32), (std::uint64_t{1} << 27) + 1);
}

// ---- The same on the device ---------------------------------------------------------------

struct WordFacts {
  int popcount, clz, ctz;        // ctz 64 when x is 0
  std::uint64_t byte_swap;
  unsigned ceil_log2;
  std::uint64_t split;       // split_size(x) for x >= 2, else 0
  unsigned select_first, select_last, select_middle;  // 64 when x has no ones
};

struct DeviceWordFacts {
  __host__ __device__ WordFacts operator()(std::uint64_t x) const {
    const int ones = bits::popcount64(x);
    return {ones,
            x == 0 ? 64 : bits::count_leading_zeros64(x),
            x == 0 ? 64 : bits::count_trailing_zeros64(x),
            bits::byte_swap64(x),
            bits::ceil_log2(x),
            x >= 2 ? bits::split_size(x) : 0,
            ones > 0 ? bits::select_in_word64(x, 0) : 64u,
            ones > 0 ? bits::select_in_word64(x, static_cast<unsigned>(ones - 1)) : 64u,
            ones > 0 ? bits::select_in_word64(x, static_cast<unsigned>(ones / 2)) : 64u};
  }
};

TEST(Bits, DeviceMatchesNaive) {
  WTMAP_SKIP_WITHOUT(Backend::gpu);
  auto words = test_words();
  words.push_back(0);
  auto got = run_on_device<WordFacts>(DeviceWordFacts{}, words);
  ASSERT_TRUE(IsOk(got));
  for (std::size_t j = 0; j < words.size(); ++j) {
    const std::uint64_t x = words[j];
    const WordFacts& f = (*got)[j];
    const int ones = naive_popcount(x);
    SCOPED_TRACE(::testing::Message() << std::hex << x);
    EXPECT_EQ(f.popcount, ones);
    EXPECT_EQ(f.clz, naive_clz(x));
    EXPECT_EQ(f.ctz, naive_ctz(x));
    EXPECT_EQ(f.byte_swap, naive_byte_swap(x));
    EXPECT_EQ(f.ceil_log2, naive_ceil_log2(x));
    EXPECT_EQ(f.split, x >= 2 ? naive_split_size(x) : 0);
    EXPECT_EQ(f.select_first, naive_select_in_word(x, 0));
    EXPECT_EQ(f.select_last, ones > 0 ? naive_select_in_word(x, ones - 1) : 64u);
    EXPECT_EQ(f.select_middle, ones > 0 ? naive_select_in_word(x, ones / 2) : 64u);
  }
}

}  // namespace
}  // namespace wtmap::test
