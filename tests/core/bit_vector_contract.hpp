// The behavioural contract of RankSelectBitVector / RankSelectView, written once and instantiated
// per configuration (a driver from batch_drivers.hpp or view_drivers.cuh):
//
//   INSTANTIATE_TYPED_TEST_SUITE_P(Name, BitVectorContract, ::testing::Types<Driver...>, DriverNames);
//
// A driver D provides kBackend and rank1/rank0/select1/select0/access(bv, queries) returning
// Result<std::vector<...>>. Expectations come from BitsReference (naive prefix counts) or from
// closed forms.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "reference.hpp"
#include "support.hpp"
#include "wtmap/core/bit_vector.hpp"

namespace wtmap::test {

// Lengths around the 512-bit blocks, the 6144-bit count records, 65536 bits, and several of those.
inline const std::vector<std::uint64_t>& bit_vector_lengths() {
  static const std::vector<std::uint64_t> lengths = {0,    1,    31,    32,    33,    511,   512,   513,
                                                     6143, 6144, 6145,  65535, 65536, 65537, 3 * 65536 + 17};
  return lengths;
}

// k values to select among `count` ones or zeros: all of them when few, else the first, the last,
// both sides of every select sample (every 4096th) and random ones.
inline std::vector<std::uint64_t> select_ks(std::uint64_t count, std::mt19937_64& rng) {
  std::vector<std::uint64_t> ks;
  for (std::uint64_t p : query_positions(count + 1, RankSelectLayout::kSampleRate, 1000, rng)) {
    if (p >= 1) ks.push_back(p);
  }
  return ks;
}

// Queries `bv` through driver D everywhere that matters and compares with the naive reference.
template <class D>
void check_bit_vector(const RankSelectBitVector& bv, const Bits& bits, std::mt19937_64& rng) {
  const BitsReference ref(bits);
  const std::uint64_t n = bits.size();
  ASSERT_EQ(bv.size(), n);
  ASSERT_EQ(bv.ones(), ref.ones());

  const auto positions = query_positions(n + 1, RankSelectLayout::kBlockBits, 1000, rng);  // includes 0 and n
  std::vector<std::uint64_t> in_range;  // positions < n, for access
  for (std::uint64_t p : positions) {
    if (p < n) in_range.push_back(p);
  }
  const auto ones_k = select_ks(ref.ones(), rng);
  const auto zeros_k = select_ks(ref.zeros(), rng);

  auto expect = [](const auto& queries, auto f) {
    std::vector<decltype(f(queries[0]))> e;
    for (auto q : queries) e.push_back(f(q));
    return e;
  };
  auto at = [](const std::vector<std::uint64_t>& q, const char* what) {
    return [&q, what](std::size_t i) { return std::string(what) + "(" + std::to_string(q[i]) + ")"; };
  };

  if (!positions.empty()) {
    auto r1 = D::rank1(bv, positions);
    ASSERT_TRUE(IsOk(r1));
    EXPECT_TRUE(SameAnswers(expect(positions, [&](std::uint64_t i) { return ref.rank1(i); }), *r1, at(positions, "rank1")));
    auto r0 = D::rank0(bv, positions);
    ASSERT_TRUE(IsOk(r0));
    EXPECT_TRUE(SameAnswers(expect(positions, [&](std::uint64_t i) { return ref.rank0(i); }), *r0, at(positions, "rank0")));
  }
  if (!in_range.empty()) {
    auto a = D::access(bv, in_range);
    ASSERT_TRUE(IsOk(a));
    EXPECT_TRUE(SameAnswers(expect(in_range, [&](std::uint64_t i) { return ref.access(i); }), *a, at(in_range, "access")));
  }
  if (!ones_k.empty()) {
    auto s1 = D::select1(bv, ones_k);
    ASSERT_TRUE(IsOk(s1));
    EXPECT_TRUE(SameAnswers(expect(ones_k, [&](std::uint64_t k) { return ref.select1(k); }), *s1, at(ones_k, "select1")));
  }
  if (!zeros_k.empty()) {
    auto s0 = D::select0(bv, zeros_k);
    ASSERT_TRUE(IsOk(s0));
    EXPECT_TRUE(SameAnswers(expect(zeros_k, [&](std::uint64_t k) { return ref.select0(k); }), *s0, at(zeros_k, "select0")));
  }
}

template <class D>
void build_and_check(const Bits& bits, std::mt19937_64& rng) {
  const auto words = bits.words();
  auto bv = RankSelectBitVector::build(words.data(), bits.size(), D::kBackend);
  ASSERT_TRUE(IsOk(bv));
  check_bit_vector<D>(*bv, bits, rng);
}

// ---- A vector longer than 2^32 bits, in closed form: bit i is set iff i % 3 == 0 ----------

struct EveryThirdBit {
  static constexpr std::uint64_t kSize = (std::uint64_t{1} << 32) + 1000;
  static std::uint64_t ones() { return (kSize + 2) / 3; }
  static std::uint64_t rank1(std::uint64_t i) { return (i + 2) / 3; }
  static std::uint64_t rank0(std::uint64_t i) { return i - rank1(i); }
  static std::uint64_t select1(std::uint64_t k) { return 3 * (k - 1); }
  static std::uint64_t select0(std::uint64_t k) { return 3 * ((k - 1) / 2) + 1 + (k - 1) % 2; }  // 1, 2, 4, 5, ...
  static std::uint8_t access(std::uint64_t i) { return i % 3 == 0 ? 1 : 0; }

  static std::vector<std::uint32_t> words() {
    std::uint32_t pattern[3] = {0, 0, 0};  // by (32 w) % 3, the offset of word w's first bit
    for (unsigned r = 0; r < 3; ++r) {
      for (unsigned j = 0; j < 32; ++j) {
        if ((r + j) % 3 == 0) pattern[r] |= std::uint32_t{1} << j;
      }
    }
    std::vector<std::uint32_t> w(kSize / 32 + 1);
    for (std::uint64_t i = 0; i < w.size(); ++i) w[i] = pattern[(32 * i) % 3];
    return w;
  }
  // Positions around 2^31 and 2^32 (+- one bit, block, record and 65536 bits), the ends, random.
  static std::vector<std::uint64_t> positions(std::mt19937_64& rng) {
    std::vector<std::uint64_t> p = {0, 1, 2, 3, kSize - 1, kSize};
    for (std::uint64_t center : {std::uint64_t{1} << 31, std::uint64_t{1} << 32}) {
      for (std::uint64_t d : {0, 1, 2, 3, 63, 64, 65, 511, 512, 513, 6144, 65536}) {
        p.push_back(center - d);
        p.push_back(center + d);
      }
    }
    std::uniform_int_distribution<std::uint64_t> any(0, kSize);
    for (int j = 0; j < 1000; ++j) p.push_back(any(rng));
    p.erase(std::remove_if(p.begin(), p.end(), [](std::uint64_t i) { return i > kSize; }), p.end());
    return p;
  }
};

template <class D>
void check_every_third_bit(std::mt19937_64& rng) {
  using E = EveryThirdBit;
  const std::uint64_t n = E::kSize;
  auto bv = [] {
    const auto words = E::words();
    return RankSelectBitVector::build(words.data(), n, D::kBackend);
  }();
  ASSERT_TRUE(IsOk(bv));
  ASSERT_EQ(bv->size(), n);
  ASSERT_EQ(bv->ones(), E::ones());

  const auto positions = E::positions(rng);
  std::vector<std::uint64_t> in_range, ones_k, zeros_k;
  for (std::uint64_t p : positions) {
    if (p < n) in_range.push_back(p);
    // The k whose answers lie at or just after p.
    if (E::rank1(p) + 1 <= E::ones()) ones_k.push_back(E::rank1(p) + 1);
    if (E::rank0(p) + 1 <= n - E::ones()) zeros_k.push_back(E::rank0(p) + 1);
  }
  ones_k.push_back(E::ones());
  zeros_k.push_back(n - E::ones());

  auto expect = [](const std::vector<std::uint64_t>& q, auto f) {
    std::vector<decltype(f(0))> e;
    for (std::uint64_t x : q) e.push_back(f(x));
    return e;
  };
  auto at = [](const std::vector<std::uint64_t>& q) { return [&q](std::size_t i) { return std::to_string(q[i]); }; };
  auto r1 = D::rank1(*bv, positions);
  ASSERT_TRUE(IsOk(r1));
  EXPECT_TRUE(SameAnswers(expect(positions, E::rank1), *r1, at(positions)));
  auto r0 = D::rank0(*bv, positions);
  ASSERT_TRUE(IsOk(r0));
  EXPECT_TRUE(SameAnswers(expect(positions, E::rank0), *r0, at(positions)));
  auto a = D::access(*bv, in_range);
  ASSERT_TRUE(IsOk(a));
  EXPECT_TRUE(SameAnswers(expect(in_range, E::access), *a, at(in_range)));
  auto s1 = D::select1(*bv, ones_k);
  ASSERT_TRUE(IsOk(s1));
  EXPECT_TRUE(SameAnswers(expect(ones_k, E::select1), *s1, at(ones_k)));
  auto s0 = D::select0(*bv, zeros_k);
  ASSERT_TRUE(IsOk(s0));
  EXPECT_TRUE(SameAnswers(expect(zeros_k, E::select0), *s0, at(zeros_k)));
}

// ---- The typed contract ---------------------------------------------------------------------

template <class D>
class BitVectorContract : public ::testing::Test {
 protected:
  void SetUp() override {
    if (skip_backend(D::kBackend)) GTEST_SKIP() << "no usable CUDA device";
  }
  std::mt19937_64 rng{kSeed};
};
TYPED_TEST_SUITE_P(BitVectorContract);

TYPED_TEST_P(BitVectorContract, UniformFills) {
  for (std::uint64_t n : bit_vector_lengths()) {
    for (double percent : {0.0, 10.0, 50.0, 90.0, 100.0}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", " + std::to_string(percent) + " % ones");
      build_and_check<TypeParam>(uniform_bits(n, percent, this->rng), this->rng);
    }
  }
}

TYPED_TEST_P(BitVectorContract, AdversarialFills) {
  for (std::uint64_t n : bit_vector_lengths()) {
    for (double tail : {1.0, 10.0}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", 99 % of the ones in the last " + std::to_string(tail) + " %");
      build_and_check<TypeParam>(adversarial_bits(n, tail, this->rng), this->rng);
    }
  }
}

// Sparse ones far apart: select must cross many empty records between two samples.
TYPED_TEST_P(BitVectorContract, IsolatedOnesAndZeros) {
  const std::uint64_t n = 3 * 65536 + 17;
  for (bool value : {true, false}) {
    Bits b{std::vector<bool>(n, !value)};
    for (std::uint64_t i : {std::uint64_t{0}, std::uint64_t{511}, std::uint64_t{6144}, std::uint64_t{65536 + 3}, n - 1}) {
      b.bit[i] = value;
    }
    SCOPED_TRACE(value ? "isolated ones" : "isolated zeros");
    build_and_check<TypeParam>(b, this->rng);
  }
}

// 2^32 + 1000 bits (512 MiB): positions and counts past 32 bits, in closed form.
TYPED_TEST_P(BitVectorContract, Beyond32BitsClosedForm) { check_every_third_bit<TypeParam>(this->rng); }

REGISTER_TYPED_TEST_SUITE_P(BitVectorContract, UniformFills, AdversarialFills, IsolatedOnesAndZeros,
                            Beyond32BitsClosedForm);

// ---- Errors of the host batch API (the views leave range checks to their callers) ---------

template <class D>
class BitVectorBatchErrors : public BitVectorContract<D> {};
TYPED_TEST_SUITE_P(BitVectorBatchErrors);

// Out-of-range queries fail the whole call with invalid_argument naming the first bad query
// (index 3 here, before another bad one at index 5), and the structure stays usable.
TYPED_TEST_P(BitVectorBatchErrors, OutOfRangeQueriesNameTheFirstOne) {
  using D = TypeParam;
  const Bits bits = uniform_bits(1000, 50, this->rng);
  const BitsReference ref(bits);
  const std::uint64_t n = bits.size();
  const auto words = bits.words();
  auto bv = RankSelectBitVector::build(words.data(), n, D::kBackend);
  ASSERT_TRUE(IsOk(bv));
  auto batch = [](std::uint64_t bad, std::uint64_t later_bad) {  // valid queries are 1
    return std::vector<std::uint64_t>{1, 1, 1, bad, 1, later_bad, 1};
  };
  EXPECT_TRUE(RejectsQuery(D::rank1(*bv, batch(n + 1, n + 2)), 3));
  EXPECT_TRUE(RejectsQuery(D::rank0(*bv, batch(n + 1, ~std::uint64_t{0})), 3));
  EXPECT_TRUE(RejectsQuery(D::access(*bv, batch(n, n + 1)), 3));
  EXPECT_TRUE(RejectsQuery(D::access(*bv, batch(~std::uint64_t{0}, n)), 3));
  EXPECT_TRUE(RejectsQuery(D::select1(*bv, batch(0, ref.ones() + 1)), 3));
  EXPECT_TRUE(RejectsQuery(D::select1(*bv, batch(ref.ones() + 1, 0)), 3));
  EXPECT_TRUE(RejectsQuery(D::select0(*bv, batch(0, ref.zeros() + 1)), 3));
  EXPECT_TRUE(RejectsQuery(D::select0(*bv, batch(ref.zeros() + 1, 0)), 3));
  // The largest valid queries still work after the failures.
  auto r = D::rank1(*bv, {n, 0});
  ASSERT_TRUE(IsOk(r));
  EXPECT_EQ(*r, (std::vector<std::uint64_t>{ref.ones(), 0}));
  auto s = D::select1(*bv, {ref.ones()});
  ASSERT_TRUE(IsOk(s));
  EXPECT_EQ(*s, std::vector<std::uint64_t>{ref.select1(ref.ones())});
  // An empty batch is fine.
  EXPECT_TRUE(IsOk(D::rank1(*bv, {})));
}

// A bad query far into a batch large enough to be cut in chunks (index past 2^16).
TYPED_TEST_P(BitVectorBatchErrors, OutOfRangeQueryInALaterChunk) {
  using D = TypeParam;
  const Bits bits = uniform_bits(5000, 50, this->rng);
  const auto words = bits.words();
  auto bv = RankSelectBitVector::build(words.data(), bits.size(), D::kBackend);
  ASSERT_TRUE(IsOk(bv));
  std::vector<std::uint64_t> q(300000, 17);
  q[200001] = bits.size() + 1;
  q[250000] = bits.size() + 1;
  EXPECT_TRUE(RejectsQuery(D::rank1(*bv, q), 200001));
}

TYPED_TEST_P(BitVectorBatchErrors, EmptyVector) {
  using D = TypeParam;
  const std::uint32_t word = 0xFFFFFFFFu;  // bits past n = 0 are ignored
  auto bv = RankSelectBitVector::build(&word, 0, D::kBackend);
  ASSERT_TRUE(IsOk(bv));
  EXPECT_EQ(bv->size(), 0u);
  EXPECT_EQ(bv->ones(), 0u);
  auto r1 = D::rank1(*bv, {0});
  ASSERT_TRUE(IsOk(r1));
  EXPECT_EQ(*r1, std::vector<std::uint64_t>{0});
  auto r0 = D::rank0(*bv, {0});
  ASSERT_TRUE(IsOk(r0));
  EXPECT_EQ(*r0, std::vector<std::uint64_t>{0});
  EXPECT_TRUE(RejectsQuery(D::rank1(*bv, {0, 1}), 1));
  EXPECT_TRUE(RejectsQuery(D::access(*bv, {0}), 0));
  EXPECT_TRUE(RejectsQuery(D::select1(*bv, {1}), 0));
  EXPECT_TRUE(RejectsQuery(D::select0(*bv, {1}), 0));
}

// Bits of the last word past n do not count.
TYPED_TEST_P(BitVectorBatchErrors, BitsPastTheEndAreIgnored) {
  using D = TypeParam;
  const std::uint32_t words[2] = {0xFFFFFFFFu, 0xFFFFFFFFu};
  auto bv = RankSelectBitVector::build(words, 33, D::kBackend);
  ASSERT_TRUE(IsOk(bv));
  EXPECT_EQ(bv->ones(), 33u);
  EXPECT_TRUE(RejectsQuery(D::select1(*bv, {34}), 0));
  EXPECT_TRUE(RejectsQuery(D::select0(*bv, {1}), 0));
}

TYPED_TEST_P(BitVectorBatchErrors, CorruptStreamsAreRejected) {
  const Bits bits = uniform_bits(1000, 30, this->rng);
  const auto words = bits.words();
  auto bv = RankSelectBitVector::build(words.data(), bits.size(), TypeParam::kBackend);
  ASSERT_TRUE(IsOk(bv));
  expect_corrupt_streams_rejected<RankSelectBitVector>(saved_bytes(*bv), TypeParam::kBackend);
  // A header claiming more ones than bits (n is the u64 after the version, ones the next).
  const std::string good = saved_bytes(*bv);
  EXPECT_TRUE(HasCode(load_bytes<RankSelectBitVector>(with_u64(good, 24, 1001), TypeParam::kBackend),
                      StatusCode::corrupt_data));
  // A header whose n does not match the stored block.
  EXPECT_TRUE(HasCode(load_bytes<RankSelectBitVector>(with_u64(good, 16, 100000), TypeParam::kBackend),
                      StatusCode::corrupt_data));
}

REGISTER_TYPED_TEST_SUITE_P(BitVectorBatchErrors, OutOfRangeQueriesNameTheFirstOne, OutOfRangeQueryInALaterChunk,
                            EmptyVector, BitsPastTheEndAreIgnored, CorruptStreamsAreRejected);

}  // namespace wtmap::test
